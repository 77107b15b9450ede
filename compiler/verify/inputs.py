"""Read every as-built input a user points at, whatever its format.

A path is a file or a folder (every regular, non-hidden file below it, in sorted
order). The format is recognised from the content; the registry below is the one
list of formats (a new one is a module with `looks_like` and `parse`, and a line
here). LLDP tables name no local host: the file's stem is the reporting switch.
Unreadable input raises SpecInvalid (exit 2) naming the file and, where the parser
knows it, the line.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ..diagnostics import Diagnostic, SpecInvalid
from . import asbuilt, eos, ibnetdiscover, lldpd, netbox_csv, nvue, sonic
from .discovery import Discovery

# format name -> (kind of content, module). JSON ones are tried in this order.
FORMATS = {
    ibnetdiscover.FORMAT: ("text", ibnetdiscover),
    sonic.FORMAT: ("text", sonic),
    lldpd.FORMAT: ("json", lldpd),
    eos.FORMAT: ("json", eos),
    nvue.FORMAT: ("json", nvue),
    asbuilt.FORMAT: ("csv", asbuilt),
    netbox_csv.FORMAT: ("csv", netbox_csv),
}


def input_files(paths: list[Path]) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files += sorted(f for f in p.rglob("*") if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts))
        elif p.exists():
            files.append(p)
        else:
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "no such file or folder", file=str(p))])
    if not files:
        raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "no input files", file=", ".join(map(str, paths)),
                                      hint="give ibnetdiscover output, LLDP tables (one file per switch) or an as-built CSV")])
    return files


def read_file(path: Path) -> Discovery:
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig", errors="strict")
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"cannot read: {getattr(exc, 'strerror', None) or exc}",
                                      file=file)]) from None
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"not valid JSON: {exc.msg}", file=file, line=exc.lineno,
                                          column=exc.colno)]) from None
        for kind, module in FORMATS.values():
            if kind == "json" and module.looks_like(data):
                return module.parse(data, file, path.stem)
        raise _unknown(file, "JSON that is neither `lldpcli -f json show neighbors details`, `nv show interface -o json` "
                             "nor EOS `show lldp neighbors detail | json`")
    if ibnetdiscover.looks_like(text):
        return ibnetdiscover.parse(text, file)
    if sonic.looks_like(text):
        return sonic.parse(text, file, path.stem)
    header = next(csv.reader(io.StringIO(text.splitlines()[0] if text else "")), [])
    header = [h.strip().lstrip("\ufeff") for h in header]
    if asbuilt.looks_like(header):
        return asbuilt.parse(text, file)
    if netbox_csv.looks_like(header):
        return netbox_csv.parse(text, file)
    raise _unknown(file, "no known discovery format")


def _unknown(file: str, what: str) -> SpecInvalid:
    return SpecInvalid([Diagnostic("ASBUILT_FORMAT_UNKNOWN", what, file=file, line=1,
                                   hint="known: " + ", ".join(FORMATS))])


def read_inputs(paths: list[Path]) -> Discovery:
    disc = Discovery()
    errors: list[Diagnostic] = []
    for f in input_files(paths):
        try:
            disc.merge(read_file(f))
        except SpecInvalid as exc:
            errors += exc.diagnostics
    if errors:
        raise SpecInvalid(errors)
    return disc
