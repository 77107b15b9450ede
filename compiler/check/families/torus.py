"""Torus and mesh (k-ary n-cube): closed-form bisection and the plane cut across each
dimension (convention: one direction, Gb/s, the cut halves the GPUs)."""

from __future__ import annotations

import math

import numpy as np

from ...plan.graph import FabricGraph
from ...plan.model import Plan
from ..cuts import Cut, by_server
from .injection import gpu_injection_gbps


def bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    """k-ary n-cube (Dally & Towles): a plane cut across dimension d crosses N/k_d node
    pairs, twice when the dimension wraps: 2·k^(n-1) links for a torus, k^(n-1) for a mesh.
    The narrowest even dimension's cut, times links per neighbour and link speed, capped by
    half the GPU injection (switched form). Twisted tori and all-odd shapes have no closed form here."""
    d = plan.design_record
    if d.twist:
        return None, "no closed form for a twisted torus (max-flow only)"
    dims, wrap = d.dims, d.wrap
    nodes = math.prod(dims)
    crossings = [nodes // k * (2 if w else 1) for k, w in zip(dims, wrap) if k >= 2 and k % 2 == 0]
    if not crossings:
        return None, "no closed form: no dimension of even size"
    links = min(crossings) * d.links_per_neighbor
    value = links * d.speed_gbps
    formula = (f"min over even dimensions of (N/k_d x (2 if wrapped else 1)) = {min(crossings):,} node pairs x "
               f"{d.links_per_neighbor} link(s) x {d.speed_gbps} Gb/s")
    if not d.direct:
        value = min(value, gpu_injection_gbps(g) / 2)
        formula = "min(1/2 GPU injection, " + formula + ")"
    return int(value), formula


def cuts(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray) -> list[Cut]:
    """The plane cut across each dimension (nodes are in row-major order, and a node's
    index is its 1-based position in that order)."""
    dims = plan.design_record.dims
    node_dev = g.device_of[g.at_switch[g.at_is_gpu_server][first_at]]
    linear = np.fromiter((plan.devices[int(x)].index - 1 for x in node_dev), dtype=np.int64, count=node_dev.size)
    coords = np.unravel_index(linear, tuple(dims))
    out = []
    for axis, k in enumerate(dims):
        if k >= 2:
            order = servers[np.argsort(coords[axis] >= k // 2, kind="stable")]
            out.append(by_server(g, order, f"torus-{'xyz'[axis]}", f"nodes with {'xyz'[axis]} < {k // 2} vs the rest"))
    return out


def max_hops(plan: Plan, edge_switches: int) -> int | None:
    """Direct torus/mesh: the diameter in chip-to-chip links, sum over dimensions of
    floor(k/2) where it wraps, k - 1 where it does not. Twisted tori and switched tori
    (routers without servers drop out of the GPU pairs) have none here."""
    d = plan.design_record
    if d.twist or not d.direct:
        return None
    return sum(k // 2 if w else k - 1 for k, w in zip(d.dims, d.wrap))
