"""An as-built cabling sheet: clusterc's own cabling.csv (or its workbook saved as CSV)
with what was actually done written into the end columns.

Format: a CSV with a header holding at least `a_device, a_port, b_device, b_port`
(cabling.csv's columns; `cable_id` and the rest are read when present and ignored
otherwise). One row per cable as installed (a cable of several logical links lists them
`;`-separated, as cabling.csv writes it); a row whose ends are blank is a cable not
installed. Every device named in the sheet counts as inspected (its absent cables are
missing), so give the whole sheet, not a filtered view.
"""

from __future__ import annotations

import csv
import io

from ..diagnostics import Diagnostic, SpecInvalid
from .discovery import Discovery

FORMAT = "as-built-csv"
COLUMNS = ("a_device", "a_port", "b_device", "b_port")


def looks_like(header: list[str]) -> bool:
    return all(c in header for c in COLUMNS)


def node_key(device: str) -> str:
    return f"sheet:{device}"


def parse(text: str, file: str) -> Discovery:
    disc = Discovery(formats=[FORMAT], files=[file])
    reader = csv.reader(io.StringIO(text))
    header = [h.strip() for h in next(reader, [])]
    col = {c: header.index(c) for c in COLUMNS}
    for lineno, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"{len(row)} cells, the header has {len(header)}", file=file,
                                          line=lineno, hint="a cell with a comma must be quoted")])
        source = f"{file}:{lineno}"
        for a_dev, a_port, b_dev, b_port in _logical_links(tuple(row[col[c]].strip() for c in COLUMNS), file, lineno):
            for dev in (a_dev, b_dev):
                if dev:
                    disc.node(node_key(dev), dev, "system", source).reported = True
            if a_dev and a_port and b_dev and b_port:  # else: recorded as not (fully) installed
                disc.link(node_key(a_dev), (a_port,), node_key(b_dev), (b_port,), source)
    return disc


def _logical_links(cells: tuple[str, ...], file: str, lineno: int) -> list[tuple[str, ...]]:
    """The logical links of one physical cable's row: cabling.csv writes a cable carrying
    several links (twin-port copper, splitters) as one row whose columns hold the links'
    values `;`-separated, or one value that all of them share."""
    parts = [[v.strip() for v in cell.split(";")] if ";" in cell else [cell] for cell in cells]
    n = max(len(p) for p in parts)
    if any(len(p) not in (1, n) for p in parts):
        raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"the end columns list {', '.join(str(len(p)) for p in parts)} "
                                      f"values; a cable's row lists one value or one per logical link", file=file,
                                      line=lineno, hint="a_device;a_port;b_device;b_port: the same number of ;-separated values")])
    return [tuple(p[i] if len(p) == n else p[0] for p in parts) for i in range(n)]
