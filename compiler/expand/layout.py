"""The physical pass: place devices in racks, model each cable's length, and choose
each link's medium and orderable length from it. Runs only for specs with `layout`.

Every fabric of the plan is placed and cabled (extra fabrics' switches beside the
compute ones: placement.py). Under `growth:` the pass runs on the plan at the growth
target and today's plan takes its places, media and lengths from it (final_size.py).
"""

from __future__ import annotations

from ..plan.model import Plan
from ..spec.load import LoadedSpec
from . import cable_lengths, final_size, media, placement
from .resolve import ClosDesign


def apply(plan: Plan, design: ClosDesign, loaded: LoadedSpec, extra_designs: list[tuple[int, ClosDesign]]) -> None:
    if loaded.spec.growth is not None and design.final_servers > design.servers:
        final, grown, grown_extra = final_size.final_plan(loaded, design)
        _place_and_cable(final, grown, loaded, grown_extra)
        final_size.project(final, plan)
    else:
        _place_and_cable(plan, design, loaded, extra_designs)


def _requested_media(loaded: LoadedSpec, design: ClosDesign, extra_designs: list[tuple[int, ClosDesign]]) -> dict[str, str]:
    """Media the spec names per link kind, extra fabrics' under their prefixed kinds (`oob:server-leaf`)."""
    out = dict(design.media_requested)
    for i, extra in extra_designs:
        name = loaded.spec.fabrics[i].name
        out.update((f"{name}:{kind}", media_id) for kind, media_id in extra.media_requested.items())
    return out


def _place_and_cable(plan: Plan, design: ClosDesign, loaded: LoadedSpec, extra_designs: list[tuple[int, ClosDesign]]) -> None:
    layout = loaded.spec.layout
    assert layout is not None
    phys = placement.place(plan, design, loaded)
    plan.physical = phys
    length_m = cable_lengths.link_lengths(plan, layout.cabling)
    media_ids, media_idx, order_m = media.choose_by_length(plan, design.catalog, _requested_media(loaded, design, extra_designs),
                                                           length_m)
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
    if loaded.spec.growth is not None:
        phys.model["built_for_servers"] = plan.design_record.servers
