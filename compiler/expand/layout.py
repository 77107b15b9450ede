"""The physical pass: place devices in racks, model each cable's length, and choose
each link's medium and orderable length from it. Runs only for specs with `layout`."""

from __future__ import annotations

from ..plan.model import Plan
from ..spec.load import LoadedSpec
from . import cable_lengths, media, placement
from .resolve import ClosDesign


def apply(plan: Plan, design: ClosDesign, loaded: LoadedSpec) -> None:
    layout = loaded.spec.layout
    assert layout is not None
    phys = placement.place(plan, design, loaded)
    plan.physical = phys
    length_m = cable_lengths.link_lengths(plan, layout.cabling)
    media_ids, media_idx, order_m = media.choose_by_length(plan, design.catalog, design.media_requested, length_m)
    plan.media = media_ids
    plan.links.media = media_idx
    phys.length_m = length_m
    phys.order_m = order_m
    phys.model = {
        "statement": cable_lengths.statement(layout.cabling, phys.rack_width_m, phys.row_pitch_m),
        "hall": layout.hall,
        "rows": layout.rows,
        "racks_per_row": layout.racks_per_row,
        "row_pitch_m": layout.row_pitch_m,
        "rack": layout.rack.model_dump(),
        "leaf_placement": layout.leaf_placement,
        "endpoint_rack_units": layout.endpoint_rack_units,
        "cabling": layout.cabling.model_dump(),
        "confidence": "rack size, pitch and cable constants are configurable defaults (hardware.md 4: UNCONFIRMED)",
    }
