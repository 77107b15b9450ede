"""cabling.xlsx: the workbook the floor team works from (XlsxWriter, render/xlsx.py).

A summary sheet (design, totals, the length model, cables by part and length, racks),
then one sheet per rack with the rows of its pull sheet (render/floor.py): every cable
with an end in it, this rack's end first (U, device, port as the NOS names it, panel
name, transceiver), then the far end (rack, U, device, port), the orderable length, the
exact part, the cable id, the label on this end and a `done` column to mark. Frozen
header, filters, landscape and fitted to the page width with the header repeated and the
rack and page n of m in the page header of every printed page.

Written only for plans with a physical layout. Byte-identical across runs (a fixed
created date: render/xlsx.py).
"""

from __future__ import annotations

import math

import numpy as np

from ..check import CheckResults
from ..plan.bom import bill_of_materials
from ..plan.model import Plan
from ..plan.power import rack_draw
from .floor_rows import floor_rows, rack_entries
from .summary import speed_text, summarize
from .writer import OutputDir
from .xlsx import workbook

COLUMNS = ["done", "u", "device", "port", "panel", "transceiver", "far_rack", "far_u", "far_device", "far_port",
           "length_m", "part_number", "cable_id", "label", "media"]
WIDTHS = [6, 5, 16, 12, 10, 16, 10, 6, 16, 12, 9, 18, 0, 0, 6]  # 0: as wide as the longest value (ids, labels)


def _sheet(wb, title: str, widths: list[int], header: list, bold):
    """A sheet with its columns' widths, the first row bold and frozen, landscape, fitted
    to the page width with the first row repeated on every printed page."""
    ws = wb.add_worksheet(title)
    for i, w in enumerate(widths):
        ws.set_column(i, i, w)
    ws.freeze_panes(1, 0)
    ws.set_landscape()
    ws.fit_to_pages(1, 0)
    ws.repeat_rows(0)
    ws.write_row(0, 0, header, bold)
    return ws


def _summary(wb, bold, plan: Plan, checks: CheckResults) -> None:
    phys = plan.physical
    assert phys is not None  # the workbook is written only for a plan with a physical layout
    s = summarize(plan, checks)
    rows: list[list] = [["GPUs", s["gpus"]], ["servers", f"{s['servers']} x {s['server']}"],
                        ["topology", f"{s['topology']}, {s['tiers']} tiers, {speed_text(s)}"]]
    rows += [[f"{role} switches", n] for role, n in s["switches"].items()]
    rows += [[f"{kind} cables", n] for kind, n in s["cables"].items()]
    for name, fab in s.get("fabrics", {}).items():  # extra fabrics share the hall (their kinds carry the prefix)
        if name != "compute":
            rows += [[f"{name} {role} switches", n] for role, n in fab["switches"].items()]
            rows += [[f"{kind} cables", n] for kind, n in fab["cables"].items()]
    rows += [["racks", len(phys.racks)], ["length model", phys.model["statement"]],
             ["defaults", phys.model["confidence"]], [], ["part_number", "description", "quantity", "unit_power_w"]]
    rows += [[line.part_number, line.description, line.quantity, line.unit_power_w]
             for line in plan.memo("bom", bill_of_materials) if line.category in ("cable", "transceiver")]
    rows += [[], ["rack", "kind", "devices", "power_kw", "used_u"]]
    counts = np.bincount(phys.dev_rack, minlength=len(phys.racks))
    power = rack_draw(plan).known_w
    used = phys.rack_used_u()
    rows += [[r.name, r.kind, int(c), round(float(p) / 1000, 1), int(u)] for r, c, p, u in zip(phys.racks, counts, power, used, strict=True)]
    ws = _sheet(wb, "Summary", [28, 60, 12, 14, 10], ["design", plan.name], bold)
    for r, row in enumerate(rows, start=1):
        ws.write_row(r, 0, row)


def rack_sheet_rows(plan: Plan) -> tuple[np.ndarray, list[list]]:
    """Every rack sheet's rows (COLUMNS) as the pull sheets list them (render/floor_rows.py:
    this rack's end first, by U then port), and per rack where its rows start (rack count + 1)."""
    phys = plan.physical
    assert phys is not None
    rows = floor_rows(plan)
    rack, row, end = rack_entries(rows)
    bounds = np.searchsorted(rack, np.arange(len(phys.racks) + 1))
    names = np.array([r.name for r in phys.racks], dtype=object)
    length = [t if math.isnan(x) else x for x, t in zip(rows.length_m.tolist(), rows.length_text.tolist(), strict=True)]
    out = []
    ends = rows.ends
    for i, e in zip(row.tolist(), end.tolist(), strict=True):
        near, far = ends[e], ends[1 - e]
        out.append(["", int(near.u[i]), near.device[i], near.port[i], near.panel[i], near.transceiver[i],
                    names[far.rack[i]], int(far.u[i]), far.device[i], far.port[i], length[i], rows.part[i],
                    rows.cable_id[i], near.label[i], rows.media[i]])
    return bounds, out


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if plan.physical is None or plan.physical.order_m is None:
        return
    bounds, table = rack_sheet_rows(plan)
    rows = floor_rows(plan)
    longest = {"cable_id": max((len(t) for t in rows.cable_id.tolist()), default=8),
               "label": max((len(t) for e in rows.ends for t in e.label.tolist()), default=20)}
    widths = [w or min(longest[c] + 2, 80) for c, w in zip(COLUMNS, WIDTHS, strict=True)]
    with workbook() as (wb, buf):
        bold = wb.add_format({"bold": True})
        _summary(wb, bold, plan, checks)
        for r, rec in enumerate(plan.physical.racks):
            ws = _sheet(wb, rec.name, widths, COLUMNS, bold)
            ws.set_header(f"&L&B{rec.name}&B  row {rec.row}&R&P of &N")  # rack and page n of m on every printed page
            lo, hi = int(bounds[r]), int(bounds[r + 1])
            for row, values in enumerate(table[lo:hi], start=1):
                ws.write_row(row, 0, values)
            ws.autofilter(0, 0, hi - lo, len(COLUMNS) - 1)
    out.write_bytes("cabling.xlsx", buf.getvalue())
