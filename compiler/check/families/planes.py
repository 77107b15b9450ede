"""Rail-only and multi-plane: closed-form bisection (convention: one direction, Gb/s, the
cut halves the GPUs). The rails cut of check/cuts.py is the one these designs are about."""

from __future__ import annotations

import numpy as np

from ...plan.graph import FabricGraph
from ...plan.model import Plan
from ...topology import PlanesRecord, topology
from ..cuts import Cut
from . import clos
from .injection import half_injection_gbps


def bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int, str]:
    if not topology(plan.view.design.topology).rails_meet:
        return rail_only_bisection_gbps(plan, g)
    # Multi-plane: two tiers, every ToR reaches every aggregation switch of its plane: the Clos form holds.
    return clos.bisection_gbps(plan, g)


def rail_only_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int, str]:
    """Rail-only: no switch joins two rails, so a cut that puts rails 1..R/2 of every server on
    one side is crossed by no network link: 0. Traffic between rails crosses the servers'
    scale-up domain (NVLink), which the plan does not model as links. With one rail the
    network is one switch: half the GPU injection."""
    design = plan.view.design
    assert isinstance(design, PlanesRecord), design.topology  # the planes family's own record
    if design.rails >= 2:
        domain = f": {plan.scale_up.phrase()}" if plan.scale_up else ""
        return 0, (f"0: no network link joins two rails (cross-rail traffic uses the scale-up domain{domain}); "
                   f"per rail 1/2 * servers * link speed = {design.per_rail_bisection_gbps:,} Gb/s")
    return int(half_injection_gbps(g)), "1/2 * GPU injection (one rail, one switch)"


def cuts(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray) -> list[Cut]:
    return []


def exhaustive(plan: Plan, g: FabricGraph) -> bool:
    return False  # its cuts are a search, not every balanced split


def max_hops(plan: Plan, edge_switches: int) -> int | None:
    """Multi-plane: each plane is a Clos, so its closed form holds within a plane (pairs the
    planes keep apart are counted apart). Rail-only: no closed form; the BFS figure stands alone."""
    if topology(plan.view.design.topology).rails_meet:
        return clos.max_hops(plan, edge_switches)
    return None
