"""Fat-tree and rail-optimized Clos: closed-form bisection from the tiers (convention: one
direction, Gb/s, the cut halves the GPUs). No cuts of its own: the generic halves, pods,
rails and random cuts (check/cuts.py) are the Clos ones."""

from __future__ import annotations

import numpy as np

from ...plan.graph import FabricGraph
from ...plan.model import Plan
from ...topology import ClosRecord, PlanesRecord
from ..cuts import Cut
from .injection import half_injection_gbps


def _tier(plan: Plan, g: FabricGraph) -> np.ndarray:
    return np.fromiter((plan.devices[int(d)].tier for d in g.device_of), dtype=np.int64, count=g.n)


def bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int, str]:
    """Fat tree / rail-optimized Clos: half of the tightest tier.

    bisection = ½ · min( GPU injection,
                         Σ_leaves min(leaf GPU downlinks, leaf uplinks),
                         Σ_pods  min(pod's leaf-level figure, pod spine uplinks) )   [3 tiers]
    Exact for symmetric fabrics whose upper tiers are at least as wide as the leaf tier.
    """
    tier = _tier(plan, g)
    gpu = g.at_is_gpu_server
    down = np.bincount(g.at_switch[gpu], weights=g.at_cap_gbps[gpu], minlength=g.n)
    if plan.view.design.tiers == 1 or g.n == 1:  # one switch (a one-switch fabric, an extra fabric's single leaf): a crossbar
        return int(down.sum() // 2), "1/2 * GPU injection (one switch)"
    up = np.zeros(g.n)
    lower = np.where(tier[g.a] < tier[g.b], g.a, g.b)
    np.add.at(up, lower, g.cap_gbps)
    leaf = tier == 1
    per_leaf = np.minimum(down, up) * leaf
    bounds = [float(down.sum()), float(per_leaf.sum())]
    formula = "1/2 * min(GPU injection, sum over leaves of min(GPU downlinks, uplinks)"
    design = plan.view.design
    assert isinstance(design, (ClosRecord, PlanesRecord)), design.topology  # the Clos and multi-plane families
    if design.tiers == 3 and design.pods >= 2:  # three tiers: a Clos record
        pod_of_switch = np.array([plan.devices[int(d)].pod or 0 for d in g.device_of])
        spine = tier == 2
        pods = np.unique(pod_of_switch[leaf])
        leaf_fig = np.bincount(pod_of_switch[leaf], weights=per_leaf[leaf], minlength=int(pods.max()) + 1)
        spine_up = np.bincount(pod_of_switch[spine], weights=up[spine], minlength=int(pods.max()) + 1)
        bounds.append(float(np.minimum(leaf_fig, spine_up)[pods].sum()))
        formula += ", sum over pods of min(pod leaf figure, pod spine uplinks)"
    # the injection term as the smaller side of a balanced cut (an odd port count splits unevenly)
    return int(min([2 * half_injection_gbps(g)] + bounds[1:]) // 2), formula + ")"


def cuts(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray) -> list[Cut]:
    return []


def exhaustive(plan: Plan, g: FabricGraph) -> bool:
    return False  # its cuts are a search, not every balanced split


def max_hops(plan: Plan, edge_switches: int) -> int | None:
    """Switches crossed between two GPUs, from the tiers: 1 on one leaf, leaf-spine-leaf 3,
    across pods leaf-spine-core-spine-leaf 5 (every leaf reaches every spine of its pod,
    every spine its core group)."""
    d = plan.view.design
    assert isinstance(d, (ClosRecord, PlanesRecord)), d.topology  # the Clos and multi-plane families
    if edge_switches < 2:
        return 1
    return 5 if d.tiers == 3 and d.pods >= 2 else 3
