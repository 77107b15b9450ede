"""cabling.csv: one row per cable, both ends, for the people who pull them.

Columns follow the cable-schedule layout in formats.md 7.2; the physical columns
(row, rack, RU, length) stay empty until the spec has a physical layout.
"""

from __future__ import annotations

from ..plan.model import Plan
from ..plan.views import link_columns
from .csvtext import csv_text
from .writer import OutputDir

HEADER = [
    "cable_id", "kind",
    "a_device", "a_role", "a_port", "a_cage", "a_lane", "a_transceiver", "a_row", "a_rack", "a_ru",
    "b_device", "b_role", "b_port", "b_cage", "b_lane", "b_transceiver", "b_row", "b_rack", "b_ru",
    "speed_gbps", "media", "connector", "part_number", "length_m", "jacket_color", "polarity",
]


def render(plan: Plan, out: OutputDir) -> None:
    c = link_columns(plan)
    media = plan.facts["media"]
    media_cols = {m: (rec["fiber"].upper(), "MPO-12/APC" if rec["fiber"] in ("mmf", "smf") else "",
                      rec["cable_part_number"], rec["jacket"], "Type-B" if rec["fiber"] in ("mmf", "smf") else "")
                  for m, rec in media.items()}
    rows = (
        (cid, kind, ad, ar, ap, ac, al, at, "", "", "", bd, br, bp, bc, bl, bt, "", "", "",
         sp, *media_cols[m][:3], "", media_cols[m][3], media_cols[m][4])
        for cid, kind, ad, ar, ap, ac, al, at, bd, br, bp, bc, bl, bt, sp, m in zip(
            c["cable_id"], c["kind"], c["a_device"], c["a_role"], c["a_port"], c["a_cage"], c["a_lane"].tolist(),
            c["a_transceiver"], c["b_device"], c["b_role"], c["b_port"], c["b_cage"], c["b_lane"].tolist(),
            c["b_transceiver"], c["speed_gbps"].tolist(), c["media"])
    )
    out.write_text("cabling.csv", csv_text(HEADER, rows))
