"""cabling.csv: one row per cable, both ends, for the people who pull them.

Columns follow the cable-schedule layout in formats.md 7.2; the physical columns
(row, rack, RU, length) stay empty until the spec has a physical layout.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..plan.model import Plan
from ..plan.views import cable_ids, per_port, port_table
from .csvtext import csv_field
from .writer import OutputDir

HEADER = [
    "cable_id", "kind",
    "a_device", "a_role", "a_port", "a_cage", "a_lane", "a_transceiver", "a_row", "a_rack", "a_ru",
    "b_device", "b_role", "b_port", "b_cage", "b_lane", "b_transceiver", "b_row", "b_rack", "b_ru",
    "speed_gbps", "media", "connector", "part_number", "length_m", "jacket_color", "polarity",
]
PHYSICAL_EMPTY = ",,"  # row, rack, RU: set by the physical-layout stage


def render(plan: Plan, out: OutputDir) -> None:
    links = plan.links
    ports = plan.memo("port_table", port_table)
    offsets = plan.port_offsets()
    a_gid = offsets[links.a_dev] + links.a_port
    b_gid = offsets[links.b_dev] + links.b_port
    # Pre-joined, pre-escaped pieces: per device "name,role"; per port "name,cage,lane".
    dev_piece = np.array([f"{csv_field(d.name)},{csv_field(d.role)}" for d in plan.devices], dtype=object)
    port_piece = per_port(plan, {lid: np.array([f"{csv_field(p.name)},{csv_field(p.cage)},{p.lane}" for p in lay.ports],
                                                dtype=object) for lid, lay in plan.layouts.items()})
    kinds = np.array([csv_field(k) for k in plan.link_kinds], dtype=object)
    media_piece = []
    for media_id in plan.media:
        rec = plan.facts["media"][media_id]
        optical = rec["fiber"] in ("mmf", "smf")
        media_piece.append(",".join(csv_field(v) for v in (
            rec["fiber"].upper(), "MPO-12/APC" if optical else "", rec["cable_part_number"], "",
            rec["jacket"], "Type-B" if optical else "")))
    media_piece = np.array(media_piece, dtype=object)
    a_tr, b_tr = transceiver_columns(plan, a_gid, b_gid, ports)
    rows = zip(plan.memo("cable_ids", lambda pl: cable_ids(len(pl.links))), kinds[links.kind].tolist(),
               dev_piece[links.a_dev].tolist(), port_piece[a_gid].tolist(), a_tr,
               dev_piece[links.b_dev].tolist(), port_piece[b_gid].tolist(), b_tr,
               links.speed_gbps.tolist(), media_piece[links.media].tolist())
    # Board traces and backplanes are links of the plan but not cables anyone pulls.
    pulled = np.array([plan.facts["media"][m].get("field_cable", True) for m in plan.media], dtype=bool)
    if len(links) and not pulled[links.media].all():
        rows = itertools.compress(rows, pulled[links.media].tolist())
    fmt = "%s,%s,%s,%s,%s," + PHYSICAL_EMPTY + ",%s,%s,%s," + PHYSICAL_EMPTY + ",%d,%s\n"
    out.write_text("cabling.csv", ",".join(HEADER) + "\n" + "".join(fmt % row for row in rows))


def transceiver_columns(plan: Plan, a_gid, b_gid, ports) -> tuple[list[str], list[str]]:
    """The transceiver part at each end, from the link's medium and the end's cage type."""
    out = []
    for gid in (a_gid, b_gid):
        keys = ports["cage_key"][gid]
        parts = np.empty(len(plan.links), dtype=object)
        for mi, media_id in enumerate(plan.media):
            table = plan.facts["media"][media_id]["transceivers"]
            sel = plan.links.media == mi
            if sel.any():
                uniq, inverse = np.unique(keys[sel], return_inverse=True)
                parts[sel] = np.array([csv_field(table.get(k) or "") for k in uniq], dtype=object)[inverse]
        out.append(parts.tolist())
    return out[0], out[1]
