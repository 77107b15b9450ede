"""Spine-leaf groups and core groups: a rail-optimized Clos as NVIDIA's SuperPOD reference
architectures build it (the RA's SLG and CG), when the spec asks for it
(`fabric.spine_leaf_group`). The default stays the cheapest Clos (resolve.py); this is
the published shape, with a note that prices the two against each other.

- a leaf per SU per rail (scalable_unit: one rack of trays gives a leaf per rack per rail);
- a spine-leaf group (a pod here) is one rail's leaves over `scalable_units` SUs and
  `spines` spines, every leaf joined to every spine by m = leaf uplinks / spines links;
- core group j holds the cores that join the spines at position j of every group; each
  spine spreads its uplinks evenly over the cores of its group.

GB200 SuperPOD (NVIDIA's DGX SuperPOD GB200 reference architecture): 18 trays per rack, 4 rails, 8 racks per SLG, 6 spines: a leaf
18 down / 18 up, 3 links per leaf-spine pair, spines 24 down / 24 up; at 2 SU 8 SLGs, 6
core groups of 3 cores of 64 ports: 64 leaves, 48 spines, 18 cores.

Wiring: clos.py with `ClosDesign.slg_units` (a leaf's pod is its SLG, not its place in
leaf order). Arithmetic only; no plan objects.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import NoReturn

from ..diagnostics import SpecInvalid
from ..spec.load import LoadedSpec
from . import sizing
from .resolve import ClosDesign


def regroup(loaded: LoadedSpec, design: ClosDesign) -> ClosDesign:
    """The design's leaves regrouped into spine-leaf groups with core groups above them."""
    spec, fabric = loaded.spec, loaded.spec.fabric
    spine_sw = design.spine_switch or design.switch
    core_sw = design.core_switch or spine_sw
    spine_radix, core_radix = spine_sw.radix(design.up_gbps), core_sw.radix(design.up_gbps)
    g = fabric.spine_leaf_group
    assert g is not None  # called for a fabric with a spine_leaf_group only
    where = ("fabric", "spine_leaf_group")

    def fail(path: tuple, message: str, hint: str = "") -> NoReturn:
        raise SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", path, message, hint)])

    if fabric.scalable_unit is None:
        fail(("fabric", "scalable_unit"), "spine_leaf_group needs scalable_unit: a group holds one rail's leaves of "
             "whole scalable units", "set scalable_unit (18 for an NVL72 rack of compute trays)")
    if spec.growth is not None or spec.extra_endpoints or fabric.tiers == 2:
        what = "growth" if spec.growth is not None else ("extra_endpoints" if spec.extra_endpoints else "tiers: 2")
        fail(where, f"spine_leaf_group with {what} is not supported yet (a group is a three-tier pod)",
             f"remove {what.split(':')[0]} or spine_leaf_group")
    leaf = design.sizing.leaf
    if leaf.up % g.spines:
        fail(where + ("spines",), f"{g.spines} spines per group do not divide a leaf's {leaf.up} uplinks evenly",
             "use a divisor of " + f"{leaf.up}: " + ", ".join(str(k) for k in range(1, leaf.up + 1) if leaf.up % k == 0))
    m = leaf.up // g.spines
    down = g.scalable_units * m
    ratio = fabric.oversubscription.spine
    spine = sizing.PortSplit(down, down * ratio.up // ratio.down) if (down * ratio.up) % ratio.down == 0 else None
    if spine is None or spine.used > spine_radix:
        fail(where + ("scalable_units",),
             f"a spine takes {g.scalable_units} units x {m} links = {down} downlinks and as many uplinks at "
             f"{fabric.oversubscription.spine}; {spine_sw.id} has {spine_radix} ports",
             "use fewer scalable_units per group or more spines")
    rails, sus = design.rails, design.sus
    leaves = sus * rails
    pods = math.ceil(sus / g.scalable_units) * rails
    cpg, m_c = _core_groups(g.cores_per_group, pods, spine, core_radix, fail)
    s = sizing.ClosSizing(3, leaves, leaf, spine, g.scalable_units, pods, g.spines, m, cpg, m_c)
    note = _against_cheapest(s, design.sizing, g.scalable_units)
    kept = tuple(n for n in design.notes if not n.startswith(("grows to", "spines rounded", "cores per group rounded")))
    return dataclasses.replace(design, sizing=s, notes=kept + (note,), unit_fill=None, final_leaves=leaves,
                               slg_units=g.scalable_units)


def _core_groups(cores_per_group: int | None, pods: int, spine: sizing.PortSplit, core_radix: int,
                 fail: Callable[..., NoReturn]) -> tuple[int, int]:
    """Cores per core group (given, else the fewest that take every group's spines evenly)
    and links per spine-core pair."""
    where = ("fabric", "spine_leaf_group")
    if cores_per_group:
        cpg = cores_per_group
        if spine.up % cpg or pods * (spine.up // cpg) > core_radix:
            fail(where + ("cores_per_group",),
                 f"{cpg} cores per group cannot take {pods} groups' spines x {spine.up} uplinks evenly "
                 f"({core_radix} ports per core)", "leave cores_per_group out for the fewest that can")
        return cpg, spine.up // cpg
    spread = sizing.even_spread(pods, spine.up, core_radix)
    if spread is None:
        fail(where, f"{pods} spine-leaf groups exceed what a core group can join ({core_radix} ports per core)",
             "use more scalable_units per group or a larger-radix switch")
    return spread


def _cables(z: sizing.ClosSizing) -> int:
    """Switch-to-switch cables."""
    return z.leaves * z.leaf.up + (z.spines * z.spine.up if z.tiers == 3 else 0)


def _against_cheapest(s: sizing.ClosSizing, cheapest: sizing.ClosSizing, units: int) -> str:
    """The note: the groups built, against the cheapest Clos for the same servers."""
    ours = s.leaves + s.spines + s.cores
    theirs = cheapest.leaves + cheapest.spines + cheapest.cores
    return (f"spine-leaf groups (NVIDIA's SLG / CG): {s.pods} groups, each one rail of {units} units "
            f"({units} leaves) and {s.spines_per_pod} spines, {s.leaf_spine_links} link(s) per leaf-spine pair; "
            f"{s.spines_per_pod} core groups of {s.cores_per_group} cores, {s.spine_core_links} link(s) per spine-core "
            f"pair: {s.leaves} leaves, {s.spines} spines, {s.cores} cores "
            f"({ours:,} switches, {_cables(s):,} switch-to-switch cables). The cheapest Clos for these servers "
            f"(without spine_leaf_group) takes {cheapest.leaves} leaves, {cheapest.spines} spines, {cheapest.cores} cores "
            f"({theirs:,} switches, {_cables(cheapest):,} switch-to-switch cables)")
