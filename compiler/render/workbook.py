"""cabling.xlsx: the workbook the floor team works from (XlsxWriter, render/xlsx.py).

A summary sheet (design, totals, the length model, cables by part and length, racks),
then one sheet per rack listing every cable that ends in it, sorted by U and port,
both ends with row/rack/U/device/port, the medium, the exact part, the orderable
length and the label text for each end. Frozen header, filters, landscape and fitted
to the page width with the header repeated on every printed page.

Written only for plans with a physical layout. Byte-identical across runs (a fixed
created date: render/xlsx.py).
"""

from __future__ import annotations

import numpy as np

from ..check import CheckResults
from ..plan.bom import bill_of_materials
from ..plan.model import Plan
from ..plan.power import rack_draw
from .summary import speed_text, summarize
from ..plan.views import cable_ids, cable_labels, cable_part, floor_port_names
from .rack_rows import rack_order
from .writer import OutputDir
from .xlsx import workbook

COLUMNS = ["cable_id", "a_row", "a_rack", "a_ru", "a_device", "a_port", "b_row", "b_rack", "b_ru", "b_device", "b_port",
           "media", "part_number", "length_m", "label_a", "label_b", "kind", "speed_gbps", "jacket_color"]
WIDTHS = [10, 5, 10, 5, 16, 10, 5, 10, 5, 16, 10, 6, 16, 8, 42, 42, 12, 8, 8]


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


def link_columns(plan: Plan) -> dict[str, list]:
    """Every workbook column per link, as Python lists (built once with numpy indexing)."""
    phys = plan.physical
    links = plan.links
    offsets = plan.port_offsets()
    names = plan.memo("floor_port_names", floor_port_names)  # as cabling.csv names them: the NOS's
    racks = phys.racks
    dev_rack, dev_u = phys.dev_rack, phys.dev_u
    dev_names = np.array([d.name for d in plan.devices], dtype=object)
    rack_names = np.array([r.name for r in racks], dtype=object)
    rack_rows = np.array([r.row for r in racks], dtype=object)
    label_a, label_b = plan.memo("cable_labels", cable_labels)
    media_rec = [plan.view.facts.media[m] for m in plan.media]
    cols: dict[str, list] = {"cable_id": plan.memo("cable_ids", cable_ids),
                             "label_a": label_a, "label_b": label_b}
    for end in ("a", "b"):
        dev = getattr(links, f"{end}_dev")
        cols[f"{end}_row"] = rack_rows[dev_rack[dev]].tolist()
        cols[f"{end}_rack"] = rack_names[dev_rack[dev]].tolist()
        cols[f"{end}_ru"] = dev_u[dev].tolist()
        cols[f"{end}_device"] = dev_names[dev].tolist()
        cols[f"{end}_port"] = names[offsets[dev] + getattr(links, f"{end}_port")].tolist()
    media_idx = links.media.tolist()
    order = phys.order_m.tolist()
    cols["media"] = [media_rec[m].fiber.upper() for m in media_idx]
    cols["part_number"] = [cable_part(media_rec[m], o) if o == o else "NO MEDIUM REACHES"
                           for m, o in zip(media_idx, order)]
    cols["length_m"] = [o if o == o else None for o in order]
    cols["kind"] = np.array(plan.link_kinds, dtype=object)[links.kind].tolist()
    cols["speed_gbps"] = links.speed_gbps.tolist()
    cols["jacket_color"] = [media_rec[m].jacket for m in media_idx]
    return cols


def _summary(wb, bold, plan: Plan, checks: CheckResults) -> None:
    phys = plan.physical
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
    rows += [[r.name, r.kind, int(c), round(float(p) / 1000, 1), int(u)] for r, c, p, u in zip(phys.racks, counts, power, used)]
    ws = _sheet(wb, "Summary", [28, 60, 12, 14, 10], ["design", plan.name], bold)
    for r, row in enumerate(rows, start=1):
        ws.write_row(r, 0, row)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if plan.physical is None or plan.physical.order_m is None:
        return
    cols = link_columns(plan)
    table = [cols[c] for c in COLUMNS]
    rack, link, _ = rack_order(plan)
    bounds = np.searchsorted(rack, np.arange(len(plan.physical.racks) + 1))
    with workbook() as (wb, buf):
        bold = wb.add_format({"bold": True})
        _summary(wb, bold, plan, checks)
        for r, rec in enumerate(plan.physical.racks):
            ws = _sheet(wb, rec.name, WIDTHS, COLUMNS, bold)
            chosen = link[bounds[r]:bounds[r + 1]].tolist()
            for row, i in enumerate(chosen, start=1):
                ws.write_row(row, 0, [col[i] for col in table])
            ws.autofilter(0, 0, len(chosen), len(COLUMNS) - 1)
    out.write_bytes("cabling.xlsx", buf.getvalue())
