"""A NetBox cable export: the cable list exported from the NetBox UI (table columns
`Device A`, `Termination A`, `Device B`, `Termination B`, `Status`, ...) or a CSV in
NetBox's bulk-import form (`side_a_device`, `side_a_name`, `side_b_device`,
`side_b_name`, `status`), which is also what clusterc writes in netbox/cables.csv.

Column names from netbox-community/netbox dcim/tables/cables.py (CableTable verbose
names) and dcim/forms/bulk_import.py (CableImportForm). Only cables whose status is connected count as built (planned and
decommissioning ones are not); a termination cell listing several interfaces
(`swp1,swp2`) is a multi-termination cable and is read as its first pair.
"""

from __future__ import annotations

import csv
import io

from ..diagnostics import Diagnostic, SpecInvalid
from .discovery import Discovery

FORMAT = "netbox-cables-csv"
_FORMS = (
    ("Device A", "Termination A", "Device B", "Termination B", "Status"),
    ("side_a_device", "side_a_name", "side_b_device", "side_b_name", "status"),
)


def _form(header: list[str]):
    for form in _FORMS:
        if all(c in header for c in form[:4]):
            return form
    return None


def looks_like(header: list[str]) -> bool:
    return _form(header) is not None


def node_key(device: str) -> str:
    return f"netbox:{device}"


def parse(text: str, file: str) -> Discovery:
    disc = Discovery(formats=[FORMAT], files=[file])
    reader = csv.reader(io.StringIO(text))
    header = [h.strip().lstrip("\ufeff") for h in next(reader, [])]
    form = _form(header)
    col = {c: header.index(c) for c in form if c in header}
    for lineno, row in enumerate(reader, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"{len(row)} cells, the header has {len(header)}", file=file,
                                          line=lineno)])
        a_dev, a_port, b_dev, b_port = (row[col[c]].strip() for c in form[:4])
        status = row[col[form[4]]].strip().lower() if form[4] in col else "connected"
        source = f"{file}:{lineno}"
        for dev in (a_dev, b_dev):
            if dev:
                disc.node(node_key(dev), dev, "system", source).reported = True
        if status == "connected" and a_dev and a_port and b_dev and b_port:
            disc.link(node_key(a_dev), (a_port.split(",")[0].strip(),), node_key(b_dev),
                      (b_port.split(",")[0].strip(),), source)
    return disc
