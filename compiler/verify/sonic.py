"""SONiC `show lldp table` (sonic-utilities scripts/lldpshow).

Format (lldpshow: `tabulate(rows, header)` in tabulate's "simple" style, then a rule
and a count):

    Capability codes: (R) Router, (B) Bridge, (O) Other
    LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr
    -----------  --------------  --------------  ------------  -----------------
    Ethernet0    spine-01        Ethernet8       BR            leaf-001:Ethernet0
    --------------------------------------------------
    Total entries displayed:  1

tabulate sizes every column to its longest value and puts two spaces between columns,
so a row is cut where the dashed rule under the header puts the columns (a RemoteDevice
or a Capability can be empty). A row where a value runs across a column's start (a
table retyped or printed with fixed widths, long FQDNs overrunning them) is read by its
words instead: LocalPort, RemoteDevice and RemotePortID are single words, Capability is
R/B/O letters or absent, RemotePortDescr the rest; a word goes to the column it starts in
unless the value before it overran, which shifts it to the next one (so an empty
RemoteDevice stays empty). A row that holds a LocalPort and no neighbour, or where
columns overrun and no LocalPort and RemotePortID can be told, is an input error at its
line. The reporting switch is the prompt's host (`admin@leaf-001:~$ show lldp table`)
when the capture has one, else the file name.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, SpecInvalid
from .discovery import Discovery
from .lldp import neighbour, reporter

FORMAT = "sonic-show-lldp-table"
_HEADER = re.compile(r"^\s*LocalPort\s+RemoteDevice\s+RemotePortID\s+Capability\s+RemotePortDescr\s*$")
_PROMPT = re.compile(r"^\S+@([A-Za-z0-9._-]+):\S*\$\s+(?:show lldp table|lldpshow)")


def looks_like(text: str) -> bool:
    return any(_HEADER.match(line) for line in text.splitlines()[:20])


def parse(text: str, file: str, device: str) -> Discovery:
    lines = text.splitlines()
    for line in lines[:5]:
        m = _PROMPT.match(line)
        if m:
            device = m.group(1)
    head = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if head is None or head + 1 >= len(lines) or not re.fullmatch(r"\s*-+(\s+-+)*\s*", lines[head + 1]):
        raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "no `show lldp table` header with its dashed rule", file=file,
                                      line=(head or 0) + 1, hint="give the command's output unchanged")])
    spans = [m.span() for m in re.finditer(r"-+", lines[head + 1])]
    disc = Discovery(formats=[FORMAT], files=[file])
    local = reporter(disc, device, f"{file}:{head + 1}")
    for lineno in range(head + 2, len(lines)):
        line = lines[lineno]
        if not line.strip():
            continue
        if re.fullmatch(r"-+", line.strip()) or line.startswith("Total entries"):
            break
        cells = _cells(line, spans)
        if cells is None:
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "a value runs across the columns and the row's LocalPort "
                                          "and RemotePortID cannot be told apart", file=file, line=lineno + 1,
                                          hint="give the command's output unchanged")])
        local_port, remote, port_id, _cap, descr = cells
        if not local_port:
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "row without a LocalPort", file=file, line=lineno + 1)])
        if not remote and not port_id:
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"row for {local_port} names no neighbour (no RemoteDevice, "
                                          "no RemotePortID)", file=file, line=lineno + 1,
                                          hint="give the command's output unchanged (a cut-off line?)")])
        # RemotePortDescr on a SONiC neighbour reads "<its host>:<description>"; the id is the interface
        neighbour(disc, local, local_port, remote, port_id, descr or None, True, f"{file}:{lineno + 1}")
    return disc


_CAPABILITY = re.compile(r"[RBO]+")  # lldpshow's codes: Router, Bridge, anything else Other


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str] | None:
    """The row's five cells: cut where the rule's columns start when no value runs across a
    column's start (tabulate's own output), else by words (module doc); None when a row
    whose values overrun leaves no LocalPort or RemotePortID."""
    starts = [s for s, _ in spans]
    if not any(b < len(line) and line[b - 1] != " " and line[b] != " " for b in starts[1:]):
        bounds = starts + [len(line) + 1]
        fixed = [line[bounds[i]:bounds[i + 1]].strip() for i in range(len(spans))]
        return (fixed + [""] * 5)[:5]
    words = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", line)]
    if len(words) < 3:
        return None
    cells: list[list[str]] = [[] for _ in range(5)]
    col, shifted = -1, False
    for start, end, word in words:
        at = max(i for i, b in enumerate(starts) if b <= start) if start >= starts[0] else 0
        # after a value that ran into the next column every later one is shifted: take the next
        # column; otherwise a word far right of the last one means the columns between are empty
        col = 4 if col == 4 else (col + 1 if shifted else max(col + 1, at))
        if col == 3 and not _CAPABILITY.fullmatch(word):
            col = 4  # no capability codes: this is the description
        cells[col].append(word)
        shifted = col < 4 and col + 1 < len(starts) and end > starts[col + 1]
    if not cells[0] or not cells[2]:
        return None
    return [" ".join(c) for c in cells]
