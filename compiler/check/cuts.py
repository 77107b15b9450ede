"""Balanced cuts of a plan's GPUs: which half of the GPUs each server port belongs to.

A cut halves the GPUs (servers are whole units, except the rail cut, which splits
every server's NICs by rail). The worst of these is what we call the bisection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..plan.columns import distinct, groups
from ..plan.graph import FabricGraph
from ..plan.model import Plan


@dataclass(frozen=True)
class Cut:
    name: str
    description: str
    side_a: np.ndarray  # mask over attachments
    side_b: np.ndarray


# A family's own cuts: (plan, graph, GPU devices in plan order, their first attachment) -> cuts.
FamilyCuts = Callable[[Plan, FabricGraph, np.ndarray, np.ndarray], list[Cut]]


@dataclass(frozen=True)
class CutFlow:
    """A balanced cut and the max-flow across it (the bisection check's figures)."""

    name: str
    description: str
    gbps: int


def by_server(g: FabricGraph, order: np.ndarray, name: str, description: str) -> Cut:
    """First half of the servers in `order` on side A. With an odd count the middle
    server is split by its NIC ports, so both sides hold exactly half the GPU ports."""
    gpu = g.at_is_gpu_server
    half = order.size // 2
    a = gpu & np.isin(g.at_device, order[:half])
    if order.size % 2:
        mid = gpu & (g.at_device == order[half])
        ports = np.nonzero(mid)[0]
        a[ports[: ports.size // 2]] = True
    return Cut(name, description, a, gpu & ~a)


def balanced_cuts(plan: Plan, g: FabricGraph, family_cuts: FamilyCuts, random_cuts: int = 4, seed: int = 1) -> list[Cut]:
    """The generic cuts, with the topology family's own (check/families/) after the
    interleaved one."""
    # The GPU-carrying devices in plan order: servers, or the chips of a direct network.
    servers, first_at, _ = groups(g.at_device[g.at_is_gpu_server])
    n = servers.size
    node = f"{plan.view.design.node_role}s" if plan.view.design.direct else "servers"  # a direct torus: its chips
    cuts = [by_server(g, servers, "halves", f"first half vs second half of the {node} in plan order (SU order), {n:,} {node}")]
    pods = sorted({d.pod for d in plan.devices if d.tier == 1 and d.pod is not None})
    if len(pods) >= 2:
        # Pod (dragonfly group) halves: servers whose leaves sit in the first half of the pods.
        leaf_pod = {i: d.pod for i, d in enumerate(plan.devices) if d.tier == 1}
        first = set(pods[: len(pods) // 2])
        # per switch once, then per attachment by indexing (a Python test per attachment cost
        # 0.1 s at 524,288 GPUs)
        switch_first = np.fromiter((leaf_pod.get(int(x), 0) in first for x in g.device_of), dtype=bool, count=g.n)
        in_first = switch_first[g.at_switch]
        a_servers = distinct(g.at_device[in_first & g.at_is_gpu_server])
        if 0 < a_servers.size < n:
            # Pod halves rarely hold exactly half the GPUs: order servers pod-first, then halve.
            rest = servers[~np.isin(servers, a_servers)]
            cuts.append(by_server(g, np.concatenate([a_servers, rest]), "pods",
                                  f"servers of pods {min(first)}-{max(first)} first, then the rest, halved"))
    cuts.append(by_server(g, np.concatenate([servers[::2], servers[1::2]]), "interleaved", f"odd vs even {node}"))
    cuts += family_cuts(plan, g, servers, first_at)  # a torus's plane cuts, a few servers' lightest split
    rails = int(g.at_port[g.at_is_gpu_server].max()) + 1 if g.at_is_gpu_server.any() else 0
    if rails >= 2:
        a = g.at_is_gpu_server & (g.at_port < rails // 2)
        cuts.append(Cut("rails", f"NIC ports (rails) 1-{rails // 2} vs {rails // 2 + 1}-{rails} of every server",
                        a, g.at_is_gpu_server & ~a))
    rng = np.random.default_rng(seed)
    for i in range(random_cuts):
        cuts.append(by_server(g, rng.permutation(servers), f"random-{i + 1}", f"seeded random half of the servers (seed {seed}, draw {i + 1})"))
    return cuts


def cuts_through(plan: Plan, g: FabricGraph, u: int, v: int) -> list[Cut]:
    """Balanced cuts that separate graph nodes u and v, for re-searching the worst cut after
    the element between them is lost (a link u-v, or a switch u and its neighbour v): the
    intact fabric's cuts need not cross the damage, and a cut that does is the one that lost
    capacity.

    - sweep: servers ordered by how much nearer (in hops) their node is to v than to u, then by
      their distance from v, halved. On a ring this is the arc starting at v (both cut edges
      n/2 apart, one of them the damaged bundle); on a torus the half-space of the damaged
      link's dimension starting at v's coordinate, i.e. the plane cut through the damaged
      bundle; on a tree the subtree side of the lost uplink.
    - pods: with pods (dragonfly groups, Clos pods), v's pod first and u's pod last, halved,
      so a lost global link between two groups crosses the group cut."""
    gpu = g.at_is_gpu_server
    servers, first_at, _ = groups(g.at_device[gpu])
    if servers.size < 2 or u == v:
        return []
    node = g.at_switch[gpu][first_at]
    dist = g.hops_from(np.array([u, v]))
    dist = np.where(np.isinf(dist), g.n + 1, dist)
    du, dv = dist[0][node], dist[1][node]
    order = servers[np.lexsort((np.arange(servers.size), dv, dv - du))]
    out = [by_server(g, order, "through-sweep",
                     f"servers nearer the damaged element's {_name(plan, g, v)} side than its {_name(plan, g, u)} side first, halved")]
    pod = np.array([plan.devices[int(d)].pod or 0 for d in g.device_of])
    pu, pv = int(pod[u]), int(pod[v])
    if pu != pv and pu and pv:
        rank = np.where(pod[node] == pv, 0, np.where(pod[node] == pu, 2, 1))
        order = servers[np.lexsort((np.arange(servers.size), pod[node], rank))]
        out.append(by_server(g, order, "through-pods", f"servers of pod {pv} first, pod {pu} last, halved"))
    return out


def _name(plan: Plan, g: FabricGraph, node: int) -> str:
    return plan.devices[int(g.device_of[node])].name


REFINE_MAX_LINKS = 20_000  # a refinement pass is O(links) per move, up to one move per switch


def refined_cut(g: FabricGraph, start: np.ndarray, keep_link: np.ndarray | None = None,
                name: str = "refined", description: str = "") -> Cut | None:
    """A balanced cut improved from a switch partition `start` (True: side A) by moving one
    switch at a time while that lowers (switch links across + attachments that must cross
    to balance the sides). With equal attachment capacities that is exactly the cheapest
    balanced cut agreeing with the partition, so each move lowers a cut that exists; the
    result is a local minimum, found where the structured cuts miss the one a failure or an
    uneven design opens. None on graphs above REFINE_MAX_LINKS links, or with unequal
    GPU attachment capacities (the objective would not be a cut's value)."""
    gpu = g.at_is_gpu_server
    caps = np.unique(g.at_cap_gbps[gpu])
    if g.a.size > REFINE_MAX_LINKS or caps.size != 1 or g.n < 2:
        return None
    c = int(caps[0])
    w = g.cap_gbps if keep_link is None else np.where(keep_link, g.cap_gbps, 0)
    per_node = np.bincount(g.at_switch[gpu], minlength=g.n)
    total = int(gpu.sum())
    half = total // 2
    side = start.astype(bool).copy()
    for _ in range(2 * g.n):
        # flipping x changes the cut by (links of x to its own side - links to the other side)
        same = side[g.a] == side[g.b]
        to_same = np.bincount(g.a, weights=w * same, minlength=g.n) + np.bincount(g.b, weights=w * same, minlength=g.n)
        to_other = np.bincount(g.a, weights=w * ~same, minlength=g.n) + np.bincount(g.b, weights=w * ~same, minlength=g.n)
        on_a = int(per_node[side].sum())
        moved = np.where(side, on_a - per_node, on_a + per_node)
        gain = (to_other - to_same) + c * (abs(on_a - half) - np.abs(moved - half))
        x = int(np.argmax(gain))
        if gain[x] <= 0:
            break
        side[x] = ~side[x]
    at_a = gpu & side[g.at_switch]
    extra = int(at_a.sum()) - half
    if extra > 0:
        at_a[np.nonzero(at_a)[0][-extra:]] = False
    elif extra < 0:
        at_a[np.nonzero(gpu & ~at_a)[0][:(-extra)]] = True
    return Cut(name, description or "a balanced cut improved switch by switch from a structured one", at_a, gpu & ~at_a)


def sweep_partition(g: FabricGraph, u: int, v: int) -> np.ndarray:
    """Switches nearer v than u (hops), then by distance from v, until they hold half the GPU
    attachments: side A of the partition a refinement starts from."""
    dist = g.hops_from(np.array([u, v]))
    dist = np.where(np.isinf(dist), g.n + 1, dist)
    order = np.lexsort((np.arange(g.n), dist[1], dist[1] - dist[0]))
    per_node = np.bincount(g.at_switch[g.at_is_gpu_server], minlength=g.n)
    filled = np.cumsum(per_node[order])
    side = np.zeros(g.n, dtype=bool)
    side[order[: int(np.searchsorted(filled, filled[-1] // 2)) + 1]] = True
    return side


def switch_partition(g: FabricGraph, cut: Cut) -> np.ndarray:
    """The switch partition a balanced cut suggests: a switch with GPUs on the side most of
    its GPU ports are on; one without (a spine) on the side most of its links lead to."""
    gpu = g.at_is_gpu_server
    on_a = np.bincount(g.at_switch[cut.side_a & gpu], minlength=g.n)
    on_b = np.bincount(g.at_switch[cut.side_b & gpu], minlength=g.n)
    side = on_a > on_b
    bare = (on_a + on_b) == 0
    if bare.any():
        to_a = np.bincount(g.a, weights=side[g.b], minlength=g.n) + np.bincount(g.b, weights=side[g.a], minlength=g.n)
        deg = np.bincount(np.concatenate([g.a, g.b]), minlength=g.n)
        side[bare] = to_a[bare] * 2 > deg[bare]
    return side
