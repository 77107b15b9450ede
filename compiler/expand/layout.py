"""The physical pass: place devices in racks, model each cable's length, and choose
each link's medium and orderable length from it. Runs only for specs with `layout`.

Every fabric of the plan is placed and cabled (extra fabrics' switches beside the
compute ones: placement.py). Under `growth:` the pass runs on the plan at the growth
target and today's plan takes its places, media and lengths from it (final_size.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan.model import Plan
from ..plan.physical import Physical
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
    requested = _requested_media(loaded, design, extra_designs)
    hall = placement.Hall(plan, design, loaded)
    where = layout.spine_where
    tried = AUTO_TRIES if where == "auto" else (where,)
    options: list[_Option] = []
    refused: dict[str, SpecInvalid] = {}
    for each in tried:
        try:
            plan.physical = hall.place(each)
        except SpecInvalid as error:
            refused[each] = error
            continue
        options.append(_Option(each, plan.physical, cable_lengths.link_lengths(plan, layout.cabling)))
    if not options:
        raise refused[tried[-1]]
    chosen = _shortest(plan, design, requested, options)
    phys = chosen.physical
    plan.physical = phys
    length_m = chosen.length_m
    media_ids, media_idx, order_m = media.choose_by_length(plan, design.catalog, requested, length_m)
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
        "confidence": "rack size, pitch and cable constants are configurable defaults (no vendor source states them: UNCONFIRMED)",
    }
    phys.model["spine_placement"] = _comparison(hall, where, chosen, options, refused)
    if loaded.spec.growth is not None:
        phys.model["built_for_servers"] = plan.design_record.servers


# auto's candidates, in the order a tie goes: the end of the racks first (it keeps every
# unit's racks together and the rows free for growth), then the middle, then the start.
AUTO_TRIES = ("end", "middle", "start")


@dataclass
class _Option:
    where: str
    physical: Physical
    length_m: np.ndarray

    @property
    def total_m(self) -> float:
        return round(float(self.length_m.sum()), 1)


def _unreachable(plan: Plan, design: ClosDesign, requested: dict[str, str], option: _Option) -> int:
    """Links no medium reaches at this option's lengths (they have no orderable length)."""
    plan.physical = option.physical
    order_m = media.choose_by_length(plan, design.catalog, requested, option.length_m)[2]
    return int(np.isnan(order_m).sum())


def _shortest(plan: Plan, design: ClosDesign, requested: dict[str, str], options: list[_Option]) -> _Option:
    """The option with the shortest total cable length among those every link's medium
    reaches. Reach is only examined when the shortest has a link beyond it (choosing media
    is the dear step), and then for every option: a longer hall that cables is better
    than a shorter one that cannot."""
    by_length = sorted(options, key=lambda o: (o.total_m, AUTO_TRIES.index(o.where) if o.where in AUTO_TRIES else 0))
    if len(options) == 1 or _unreachable(plan, design, requested, by_length[0]) == 0:
        return by_length[0]
    return min(by_length, key=lambda o: _unreachable(plan, design, requested, o))  # stable: shortest first on a tie


def _comparison(hall: placement.Hall, asked: str, chosen: _Option, options: list[_Option],
                refused: dict[str, SpecInvalid]) -> dict:
    """Where the spine racks stand and how long the cables are under each placement tried
    (plan.json; the report and summary.md read this one record)."""
    return {
        "asked": asked,
        "chosen": chosen.where,
        "spine_rows": hall.central_rows(chosen.physical),
        "length_statement": "link_length_m sums every link's modelled length with slack, before rounding up to "
                            "orderable lengths (a twin-port cable or splitter counts once per link it carries)",
        "options": [{"placement": o.where, "link_length_m": o.total_m,
                     "longest_link_m": round(float(o.length_m.max(initial=0.0)), 2)} for o in options],
        "not_possible": {where: error.diagnostics[0].message for where, error in sorted(refused.items())},
    }
