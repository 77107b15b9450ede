"""floor/<rack>.html: a pull sheet per rack, and floor/index.html listing them in walking order.

What a technician works from at the rack: every cable with an end in it (render/floor_rows.py),
this rack's end first (U, device, port as the NOS names it and the panel name, transceiver),
then the far end (rack, U, device, port), the length as ordered, the part, the cable id and
the label on this end, sorted by U then port, with a box to tick. Printed on A4 or Letter
portrait at 9 pt or more (long names wrap rather than shrink); the rack heading repeats on
every printed page (a table <thead>) and the page margin says page n of m. HTML and CSS in
templates/floor/. floor/marks.csv is the sheet the technician's marks go back into
(done / problem per cable id), read by `clusterc verify --marks`. Written only for plans
with a physical layout.
"""

from __future__ import annotations

import html

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from .csvtext import csv_field
from .floor_rows import FloorRows, floor_rows, rack_entries
from .templates import render_template, row_format
from .writer import OutputDir

FOLDER = "floor"
MARKS_COLUMNS = ["cable_id", "a_rack", "a_device", "b_rack", "b_device", "status", "note"]


def sheet_path(rack_name: str) -> str:
    return f"{FOLDER}/{rack_name}.html"


def _css_string(text: str) -> str:
    """Text inside a CSS string literal (the page margin box's content)."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    phys = plan.physical
    if phys is None:
        return
    rows = floor_rows(plan)
    rack, row, end = rack_entries(rows)
    bounds = np.searchsorted(rack, np.arange(len(phys.racks) + 1))
    esc = np.frompyfunc(html.escape, 1, 1)
    rack_names = np.array([r.name for r in phys.racks], dtype=object)
    cell = row_format("floor/elements.j2", "cable", 13)
    a, b = rows.ends
    # Both orientations of every column, escaped once: [near is A, near is B].
    near_far = []
    for near, far in ((a, b), (b, a)):
        panel = np.where(near.panel == near.port, "", " (" + near.panel + ")")
        near_far.append([near.u, esc(near.device), esc(near.port), esc(panel), esc(near.transceiver),
                         esc(rack_names[far.rack]), far.u, esc(far.device), esc(far.port)])
    common = [esc(rows.length_text), esc(rows.part), esc(rows.cable_id)]
    labels = (esc(a.label), esc(b.label))
    hall = str(phys.model.get("hall", ""))  # the spec's layout.hall
    design = html.escape(plan.name)
    index = []
    for r in sorted(range(len(phys.racks)), key=lambda k: (phys.racks[k].row_index, phys.racks[k].position)):
        rec = phys.racks[r]
        lo, hi = int(bounds[r]), int(bounds[r + 1])
        cells = []
        for i, e in zip(row[lo:hi].tolist(), end[lo:hi].tolist(), strict=True):
            cols = near_far[e]
            cells.append(cell % (tuple(c[i] for c in cols) + tuple(c[i] for c in common) + (labels[e][i],)))
        name = html.escape(rec.name)
        out.write_text(sheet_path(rec.name), render_template(
            "floor/sheet.html.j2", title=html.escape(f"{rec.name} pull sheet, {plan.name}"), rack=name,
            css_rack=_css_string(rec.name), css_design=_css_string(plan.name), row=html.escape(rec.row),
            hall=html.escape(hall), kind=html.escape(rec.kind), cables=hi - lo, design=design, rows=cells))
        index.append((html.escape(f"{rec.name}.html"), name, html.escape(rec.row), rec.position, html.escape(rec.kind), hi - lo))
    out.write_text(f"{FOLDER}/marks.csv", marks_template(rack_names, rows))
    out.write_text(f"{FOLDER}/index.html", render_template(
        "floor/index.html.j2", title=html.escape(f"{plan.name} pull sheets"), racks=index, total=len(rows)))


def marks_template(rack_names: np.ndarray, rows: FloorRows) -> str:
    """floor/marks.csv: every cable once, in cabling.csv's order, with both ends' rack and
    device, and `status` (done or problem) and `note` blank for the technician; what
    `clusterc verify --marks` reads back (verify/marks.py)."""
    a, b = rows.ends
    cols = [rows.cable_id, rack_names[a.rack], a.device, rack_names[b.rack], b.device]
    body = "".join(",".join(csv_field(str(c[i])) for c in cols) + ",,\n" for i in range(len(rows)))
    return ",".join(MARKS_COLUMNS) + "\n" + body
