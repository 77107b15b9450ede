"""How full the last unit of a Clos fabric is, and what a mostly empty one costs.

A partial last SU keeps its full set of leaves and their uplinks (so the fabric stays
alike and can fill up later), which is cheap when the SU is nearly full and a waste when
it holds a few servers: 256 DGX H200 in SUs of 84 put 4 servers on 8 leaves with 336
uplinks. Under half full is a warning that names the cost against the cheapest unit and
against whole units (numbers from the design record, expand/unit_choice.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..topology.records import UnitCost, UnitFill
from .context import CheckContext
from .figures import Figures, omitted_if_none
from .findings import Finding


@dataclass(frozen=True)
class UnitFillFigures(Figures):
    """The unit (scalable_unit or servers_per_leaf) and how full the last one is; empty
    (`{}` in checks.json) for designs without units."""

    unit: str | None = omitted_if_none()
    size: int | None = omitted_if_none()
    given: bool | None = omitted_if_none()  # set by the spec, not chosen by default
    servers: int | None = omitted_if_none()  # the servers the units were sized for (growth target included)
    units: int | None = omitted_if_none()
    last_unit_servers: int | None = omitted_if_none()


def _vs(label: str, alt: UnitCost, cost: UnitCost) -> str:
    """`label` take N switches and M cables (k fewer/more than as built)."""
    deltas = [f"{abs(built - other):,} {k} {'fewer' if built > other else 'more'}"
              for k, built, other in (("switches", cost.switches, alt.switches), ("cables", cost.cables, alt.cables))
              if built != other]
    return f"{label} take {alt.switches:,} switches and {alt.cables:,} cables ({', '.join(deltas) or 'the same'})"


def _day_one_fill(fill: UnitFill, day_one: int) -> Finding | None:
    """Under `growth:`, the last unit built on day one: its leaves and uplinks are bought
    whole, for the unit's full size, whatever the target; mostly empty is worth a word
    even when the target fills it (a last SU 37 % full serves 12 servers on 8 leaves)."""
    size = fill.size
    units = -(-day_one // size)
    last = day_one - (units - 1) * size
    if 2 * last >= size:
        return None
    su = fill.unit == "scalable_unit"
    noun = "SU" if su else "leaf"
    serve = f"{last} server{'s' if last != 1 else ''}"
    built = (f"its {fill.last_unit_leaves} leaves and {fill.last_unit_uplinks:,} leaf-spine cables serve {serve}"
             if su else f"a leaf and its {fill.last_unit_uplinks:,} uplinks serve {serve}")
    whole = (units - 1) * size
    message = (f"on day one, {'the only' if units == 1 else 'the last'} {noun} holds {last} of {size} servers "
               f"({100 * last // size} %): {built} until the cluster grows toward its target of {fill.servers:,} "
               "servers" + (f"; {whole:,} or {units * size:,} servers on day one fill whole {noun}s" if whole else ""))
    code = "LAST_SU_UNDER_HALF_FULL" if su else "LAST_LEAF_UNDER_HALF_FULL"
    return Finding(code, "warning", message, f"su{units}" if su else "leaf")


def check_unit_fill(ctx: CheckContext) -> tuple[UnitFillFigures, list[Finding]]:
    fill = ctx.plan.view.design.unit_fill
    if not fill:
        return UnitFillFigures(), []
    size, last = fill.size, fill.last_unit_servers
    figures = UnitFillFigures(fill.unit, fill.size, fill.given, fill.servers, fill.units, fill.last_unit_servers)
    day_one = ctx.plan.view.design.servers
    early = _day_one_fill(fill, day_one) if fill.servers != day_one else None
    if 2 * last >= size:
        return figures, [early] if early else []
    su = fill.unit == "scalable_unit"
    noun = "SU" if su else "leaf"
    grown = fill.servers != ctx.plan.view.design.servers
    only = fill.units == 1
    cost = fill.cost
    parts = [
        f"{'the only' if only else 'the last'} {noun} holds {last} of {size} servers"
        + (f" at the growth target of {fill.servers:,} servers" if grown else "")
        + (f": its {fill.last_unit_leaves} leaves and {fill.last_unit_uplinks:,} leaf-spine cables serve "
           f"{last} server{'s' if last != 1 else ''}" if su else
           f": a leaf and its {fill.last_unit_uplinks:,} uplinks serve {last} server{'s' if last != 1 else ''}"),
        f"as built, {fill.servers:,} servers take {cost.switches:,} switches and {cost.cables:,} cables",
    ]
    hint = ""
    key = "scalable_unit" if su else "servers_per_leaf"
    best = fill.cheapest
    if best:
        # A unit whose leaf measures below the ratio asked needs that ratio set as well
        # (expand/unit_choice.py: the default leaf may take more uplinks where that is cheaper).
        ratio = best.oversubscription
        parts.append(_vs(f"{key}: {best.size}" + (f" with oversubscription {ratio}" if ratio else "") + " would",
                         best, cost))
        hint = f"set fabric.{key}: {best.size}" + (f" and fabric.oversubscription: '{ratio}'" if ratio else "")
    elif not fill.given:
        parts.append(f"no other {noun} size is cheaper for {fill.servers:,} servers")
    whole = fill.whole_units
    if whole:
        plural = ("SUs" if su else "leaves") if fill.units > 2 else noun
        parts.append(_vs(f"{whole.servers:,} servers ({fill.units - 1} whole {plural})", whole, cost))
    message = "; ".join(parts) + (f" (hint: {hint})" if hint else "")
    code = "LAST_SU_UNDER_HALF_FULL" if su else "LAST_LEAF_UNDER_HALF_FULL"
    where = f"su{fill.units}" if su else "leaf"
    return figures, [Finding(code, "warning", message, where)] + ([early] if early else [])
