"""Torus and mesh (k-ary n-cube): closed-form bisection and the plane cut across each
dimension (convention: one direction, Gb/s, the cut halves the GPUs)."""

from __future__ import annotations

import math

import numpy as np

from ...plan.graph import FabricGraph
from ...plan.model import Plan
from ...topology import TorusRecord
from ..cuts import Cut, by_server
from .injection import half_injection_gbps


def _crossings(k: int, wrapped: bool, nodes: int) -> int:
    """Node pairs a plane across a dimension of size k crosses: N/k, twice where it wraps."""
    return nodes // k * (2 if wrapped else 1)


def _torus(plan: Plan) -> tuple[TorusRecord, list[int], list[bool]]:
    """The torus family's own record, with the dims and wrap expand/torus.py records for every torus."""
    d = plan.view.design
    assert isinstance(d, TorusRecord), d.topology
    assert d.dims is not None and d.wrap is not None
    return d, d.dims, d.wrap


def bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    """k-ary n-cube (Dally & Towles): a plane cut across dimension d crosses N/k_d node
    pairs, twice when the dimension wraps: 2·k^(n-1) links for a torus, k^(n-1) for a mesh.
    The narrowest even dimension's cut, times links per neighbour and link speed, capped by
    half the GPU injection (switched form). Proven minimal where every dimension is even, or
    where each odd dimension's planes alone cross at least as many pairs as that cut; an odd
    dimension otherwise halves through its middle layer (its planes plus that layer's own
    bisection, the torus family's cuts), which is a cut that exists but not a proven
    minimum: no closed form then, and the max-flow over the cuts is an upper bound.
    Twisted tori have no closed form here."""
    d, dims, wrap = _torus(plan)
    if d.twist:
        return None, "no closed form for a twisted torus (max-flow only)"
    nodes = math.prod(dims)
    crossings = [_crossings(k, w, nodes) for k, w in zip(dims, wrap, strict=True) if k >= 2 and k % 2 == 0]
    if not crossings:
        return None, "no closed form: no dimension of even size (max-flow over balanced cuts, an upper bound)"
    odd = [_crossings(k, w, nodes) for k, w in zip(dims, wrap, strict=True) if k >= 3 and k % 2]
    if odd and min(odd) < min(crossings):
        return None, (f"no closed form: an odd dimension's planes cross {min(odd):,} node pairs, fewer than the best even "
                      f"dimension's {min(crossings):,}, and halving through its middle layer has no proven minimum "
                      f"(max-flow over balanced cuts, an upper bound)")
    links = min(crossings) * d.links_per_neighbor
    value: float = links * d.speed_gbps  # the injection bound below is a float
    formula = (f"min over even dimensions of (N/k_d x (2 if wrapped else 1)) = {min(crossings):,} node pairs x "
               f"{d.links_per_neighbor} link(s) x {d.speed_gbps} Gb/s")
    if not d.direct:
        value = min(value, half_injection_gbps(g))
        formula = "min(1/2 GPU injection, " + formula + ")"
    return int(value), formula


def cuts(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray) -> list[Cut]:
    """The cut across each dimension (nodes are in row-major order, and a node's index is
    its 1-based position in that order): nodes in coordinate order along it, halved. An odd
    dimension's middle layer is then split the same way along the layer's own best
    dimension (even ones first, the largest first), so the cut is its planes plus half a
    layer, not a ragged set of nodes."""
    _, dims, _ = _torus(plan)
    node_dev = g.device_of[g.at_switch[g.at_is_gpu_server][first_at]]
    linear = np.fromiter((plan.devices[int(x)].index - 1 for x in node_dev), dtype=np.int64, count=node_dev.size)
    coords = np.unravel_index(linear, tuple(dims))
    out = []
    for axis, k in enumerate(dims):
        if k >= 2:
            rest = sorted((i for i in range(len(dims)) if i != axis), key=lambda i: (dims[i] % 2, -dims[i], i))
            keys = [np.arange(servers.size)] + [coords[i] for i in reversed(rest)] + [coords[axis]]
            order = servers[np.lexsort(keys)]
            what = f"nodes with {'xyz'[axis]} < {k // 2} vs the rest" if k % 2 == 0 else \
                f"nodes by {'xyz'[axis]}, the middle layer {'xyz'[axis]} = {k // 2} split along {'xyz'[rest[0]] if rest else '-'}"
            out.append(by_server(g, order, f"torus-{'xyz'[axis]}", what))
    return out


def cuts_through(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray, u: int, v: int) -> list[Cut]:
    """After nodes u and v lose the link between them: for each odd dimension o other than
    the link's own, the cut through half a layer with u's layer as the split one, split
    across the lost link: k_o // 2 whole layers next to it, then u's layer from v's side
    along the link's dimension. (An even dimension's plane through the link is the generic
    sweep, cuts.cuts_through.)"""
    d_rec, dims, _ = _torus(plan)
    if d_rec.twist:
        return []
    node = g.at_switch[g.at_is_gpu_server][first_at]
    index = np.fromiter((plan.devices[int(x)].index - 1 for x in g.device_of), dtype=np.int64, count=g.n)
    coords = np.stack(np.unravel_index(index, tuple(dims)))  # axes x nodes
    cu, cv = coords[:, u], coords[:, v]
    moved = np.nonzero(cu != cv)[0]
    if moved.size != 1:
        return []
    d = int(moved[0])
    out = []
    for o, k in enumerate(dims):
        if o == d or k < 3 or k % 2 == 0:
            continue
        layer = (coords[o] - cu[o] + k // 2) % k  # u's layer is number k // 2: the split one
        along = (coords[d] - cv[d]) % dims[d]  # from v around the link's ring: v's half first
        rest = [coords[i] for i in range(len(dims)) if i not in (o, d)]
        keys = [np.arange(servers.size)] + [r[node] for r in reversed(rest)] + [along[node], layer[node]]
        order = servers[np.lexsort(keys)]
        out.append(by_server(g, order, f"through-torus-{'xyz'[o]}",
                             f"{k // 2} {'xyz'[o]}-layers beside the damaged link's, then its layer from the link's far side"))
    return out


def exhaustive(plan: Plan, g: FabricGraph) -> bool:
    return False  # its cuts are a search, not every balanced split


def max_hops(plan: Plan, edge_switches: int) -> int | None:
    """Direct torus/mesh: the diameter in chip-to-chip links, sum over dimensions of
    floor(k/2) where it wraps, k - 1 where it does not. Twisted tori and switched tori
    (routers without servers drop out of the GPU pairs) have none here."""
    d, dims, wrap = _torus(plan)
    if d.twist or not d.direct:
        return None
    return sum(k // 2 if w else k - 1 for k, w in zip(dims, wrap, strict=True))
