"""The physical side of a plan: racks, where each device sits, and each cable's length.

Columnar like the link table: one numpy entry per device (rack, lowest U, height,
power) and per link (modelled length, orderable length), so a 100k-GPU hall costs a
few MB. Present only when the spec has a `layout`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

U_M = 0.04445  # one rack unit, metres (EIA-310)


@dataclass(frozen=True, slots=True)
class Rack:
    name: str  # TIA-606 style <hall>.<row><position>, e.g. DH1.A03
    row: str  # A, B, ...
    row_index: int  # 0-based
    position: int  # 1-based position in its row
    kind: str  # compute | network
    height_u: int
    usable_u: int  # below the reserved top
    power_budget_w: float


@dataclass
class Physical:
    racks: list[Rack]
    dev_rack: np.ndarray  # int32 per device: index into racks
    dev_u: np.ndarray  # int16 per device: lowest U it occupies (1 = bottom)
    dev_height_u: np.ndarray  # int16 per device
    dev_power_w: np.ndarray  # float64 per device; NaN where the catalog has no figure
    rack_width_m: float
    row_pitch_m: float
    depth_mm: int
    length_m: np.ndarray | None = None  # float64 per link: modelled routed length incl. slack
    order_m: np.ndarray | None = None  # float64 per link: orderable length; NaN when no medium reaches
    model: dict = field(default_factory=dict)  # the length model's constants and its statement
    # In one fabric's view (plan/fabrics.py): the whole plan's physical side. Racks are
    # shared by every fabric, so what a rack holds and draws is counted from it.
    whole: Physical | None = None

    def rack_used_u(self) -> np.ndarray:
        src = self.whole or self
        return np.bincount(src.dev_rack, weights=src.dev_height_u.astype(np.float64), minlength=len(self.racks)).astype(np.int64)


# each placement in full (after the rows) and short (beside the others' lengths)
_WHERE = {"start": ("at the start of the racks the fabric fills", "at the start"),
          "middle": ("in the middle of the racks the fabric fills", "in the middle"),
          "end": ("at the end of the racks the fabric fills", "at the end"),
          "rows": ("in the rows the layout names", "in the rows the layout names")}


def spine_placement_sentence(record: dict) -> str:
    """What plan.json's `physical.model.spine_placement` says, in words a person reads
    (report.html; summary.json carries the numbers)."""
    rows = record["spine_rows"]
    if not rows:  # one switch, or leaves only: no rack stands apart, so there is nothing to place
        return ""
    where = f"row{'s' if len(rows) > 1 else ''} {', '.join(rows)}"
    options = {o["placement"]: o for o in record["options"]}
    chosen = options[record["chosen"]]
    text = (f"Spines, cores and central switches stand in {where}, {_WHERE[record['chosen']][0]}: "
            f"{chosen['link_length_m']:,.0f} m of links, the longest {chosen['longest_link_m']:g} m")
    others = [f"{o['link_length_m']:,.0f} m {_WHERE[p][1]}" for p, o in options.items() if p != record["chosen"]]
    if others:
        text += f" ({'the shortest' if record['asked'] == 'auto' else 'as the layout asks'}; {'; '.join(others)})"
    if record["not_possible"]:
        text += "; not possible: " + "; ".join(f"{_WHERE[p][1]}: {m}" for p, m in record["not_possible"].items())
    return text + "."
