"""The network bandwidth behind every collective estimate: the check report, summary,
explore and compare read it from here, and it equals what `clusterc traffic` reports for
the same pattern, placement and routing.

What it assumes (stated in every output that shows it): NCCL's ring over the scale-up
domains, one channel per NIC (patterns.py `ring-allreduce`), every server taking part in
plan order, routed by the fabric's reference routing (routing.py: OpenSM's ftree on
InfiniBand trees, on Ethernet Clos fabrics `adaptive` where the plan says the switches run
per-packet adaptive routing and per-flow ECMP otherwise, minimal routes on dragonflies,
tori, meshes, rings and full meshes), links shared as the traffic analysis shares them.
The bandwidth per GPU is the slowest connection's share of NIC line rate times the NIC
Gb/s per GPU, exactly what `traffic` prices its collective times on.

One closed form, used where it provably gives the routed answer: on a Clos, if no switch
link could be offered more than its capacity by the flows that may cross it on any
valley-free route (each at its line rate), no link is shared at saturation under any
routing, so every connection runs at the slower of its two NICs. The ring in plan order
on a rail-optimized or fat-tree fabric usually is such a case (consecutive servers share
their leaves); tests/test_traffic_estimate.py checks the equality against every routing.
Otherwise the ring is routed, with one flow of each kind of lone flow (both ends on one
switch, its NIC links its own: lone_flows_once), which gives the same slowest connection
bit for bit. Cost: the closed form O(switches x crossing flows); routing as traffic, over
the flows that leave their switch (512 of 16,384 on 64 B200 SUs, 8,192 of 524,288 on the
3-tier benchmark fabric) and the route tables of the fabric's switches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..plan.graph import FabricGraph
from ..plan.model import Plan
from ..plan.sparse import csr_matrix
from .analysis import nic_gbps_per_gpu, solve_phase
from .clos import ClosRoutes
from .fabric import TrafficFabric
from .patterns import Phase, build_pattern, placement
from .routing import ClosRouting, Router, RoutingError

PATTERN = "ring-allreduce"
PLACEMENT = "every server, plan order"


@dataclass(frozen=True)
class RingBandwidth:
    pattern: str
    placement: str
    routing: str | None  # None: no routing applies (the reason says why)
    method: str  # "routed" | "no link shared at saturation" | "one domain"
    min_fraction: float  # the slowest connection over its NIC line rate
    nic_gbps_per_gpu: float
    reason: str | None = None

    @property
    def network_gbps_per_gpu(self) -> float:
        return self.min_fraction * self.nic_gbps_per_gpu

    def assumption(self) -> str:
        how = f"{self.routing} routing" if self.routing else "no routing"
        return f"{self.pattern} ({PLACEMENT}), {how}, {self.method}"


def ring_bandwidth(plan: Plan, graph: FabricGraph | None = None) -> RingBandwidth:
    """The ring's bandwidth per GPU on the plan's compute fabric (`plan` is that fabric's view)."""
    fabric = TrafficFabric(plan, graph=graph)
    servers = placement(fabric, None, "plan", 1)
    pattern = build_pattern(fabric, PATTERN, servers, 1)
    nic = nic_gbps_per_gpu(fabric, servers, pattern.gpus)
    phase = pattern.phases[0]
    if phase.src.size == 0:  # one scale-up domain: nothing crosses the network
        return RingBandwidth(PATTERN, PLACEMENT, None, "one domain", 1.0, nic)
    try:
        router = Router(fabric)
    except RoutingError as exc:
        return RingBandwidth(PATTERN, PLACEMENT, None, "not routed", 0.0, nic, reason=str(exc))
    routing = router.reference()
    # (on three tiers every spine of a pod may carry each rail's flow out of the pod, so the
    # bound fails there and routing is cheaper than trying it)
    if isinstance(router.model, ClosRouting) and router.model.clos.top <= 2 and \
            no_link_saturates(router.model.clos, phase.src, phase.dst):
        share = np.minimum(fabric.ep_gbps[phase.src], fabric.ep_gbps[phase.dst]) / fabric.ep_gbps[phase.src]
        ok = router.model.clos.routable(phase.src, phase.dst)
        return RingBandwidth(PATTERN, PLACEMENT, routing, "no link shared at saturation",
                             float(np.where(ok, share, 0.0).min()), nic)
    if isinstance(router.model, ClosRouting):
        model = router.model
        phase = lone_flows_once(fabric, phase, lambda s, d: model.routable(routing, s, d))
    result = solve_phase(fabric, phase, router.route(routing, phase))
    return RingBandwidth(PATTERN, PLACEMENT, routing, "routed", result.min_fraction, nic)


def lone_flows_once(fabric: TrafficFabric, phase: Phase,
                    routable: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Phase:
    """The phase with one flow of each kind of lone flow: every slowest-connection share
    (PhaseResult.min_fraction) as the whole phase gives it, bit for bit; its mean is not kept.

    A lone flow has both ends on one switch, is its own connection, and shares neither NIC
    link: no other flow of the phase leaves its source or enters its destination. On a Clos
    its route is its two NIC links (every routing: the ECMP walk, the spray and ftree take
    no switch hop between ports of one switch), which no other flow crosses. Lone flows of
    one kind (routable or not, the capacities of their two links, line rate and share) go
    through a progressive filling alike: their links give the same ratio in every round and
    fill in the same one, so each flow gets the same rate, and the other flows see the same
    rounds whether one or a thousand of them are there (a round's step is the least ratio,
    whatever the number of links that give it; shrinking the problem drops only zeros).
    The calibrated second filling (fairness.transport_rates) weights a lone flow 1 (it
    crosses no shared link), so the same holds there. A ring in plan order is mostly lone
    flows, consecutive servers sharing their leaves: at 524,288 GPUs 8,192 of its 524,288
    flows leave their leaf. `routable`: the routing's (route() marks the same flows active)."""
    src, dst, conn = phase.src, phase.dst, phase.conn
    if src.size < 2:
        return phase
    n_ep = fabric.ep_link.size
    lone = fabric.ep_switch[src] == fabric.ep_switch[dst]
    if fabric.ep_link.min(initial=0) < 0:  # a node that is its own endpoint has no NIC link
        lone &= (fabric.ep_link[src] >= 0) & (fabric.ep_link[dst] >= 0)
    for ends, n in ((src, n_ep), (dst, n_ep), (conn, int(conn.max()) + 1)):
        count = np.bincount(ends, minlength=n)
        if count.max(initial=0) > 1:  # (a ring: every NIC sends once and receives once, no gather)
            lone &= count[ends] == 1
    which = np.flatnonzero(lone)
    if which.size < 2:
        return phase
    s, d = src[which], dst[which]
    columns = [routable(s, d), fabric.cap_of(fabric.attach_out(s)), fabric.cap_of(fabric.attach_in(d)),
               fabric.ep_gbps[s]]
    if phase.share is not None:
        columns.append(phase.share[which])
    kind: np.ndarray | None = None  # None: every lone flow of one kind
    for column in columns:
        if bool(np.all(column == column[0])):  # the usual case: one value, no sort
            continue
        values = np.unique(column, return_inverse=True)[1].reshape(-1)
        kind = values if kind is None else \
            np.unique(kind * (int(values.max()) + 1) + values, return_inverse=True)[1].reshape(-1)
    keep = ~lone
    keep[which[0] if kind is None else which[np.unique(kind, return_index=True)[1]]] = True
    kept = np.flatnonzero(keep)
    used = np.zeros(int(conn.max()) + 1, dtype=bool)
    used[conn[kept]] = True
    renumber = np.cumsum(used) - 1  # connections numbered on in their order, none left empty
    return Phase(src[kept], dst[kept], renumber[conn[kept]], phase.weight,
                 None if phase.share is None else phase.share[kept])


def no_link_saturates(clos: ClosRoutes, src: np.ndarray, dst: np.ndarray) -> bool:
    """Every switch link's potential load (the line rates of the flows that may cross it on
    some valley-free route) is within its capacity. A flow goes up out of switch x only if x
    is above its source edge and not above its destination edge, and down into x only if x is
    above its destination edge and not above its source edge: supersets of what ECMP,
    adaptive and ftree do on an intact Clos. Each flow alone on its attachment links (one
    flow out of and into every endpoint) is then bounded by its NICs only."""
    f = clos.f
    if np.bincount(src, minlength=f.ep_link.size).max(initial=0) > 1 or \
            np.bincount(dst, minlength=f.ep_link.size).max(initial=0) > 1:
        return False
    if not (f.ep_alive.all() and f.switch_alive.all() and clos.alive.all()):
        return False
    a, b = f.ep_switch[src], f.ep_switch[dst]
    cross = a != b
    if not cross.any():
        return True
    ea, eb = clos.edge_of[a[cross]], clos.edge_of[b[cross]]
    rate = np.minimum(f.ep_gbps[src[cross]], f.ep_gbps[dst[cross]])
    n_edges = clos.edges.size
    down = clos.down.dense().astype(np.float64)  # switch x edge: the switch is above (or is) the edge
    # flows with both ends under a switch never leave it: sum over (ea, eb) of down[x, ea] down[x, eb] rate
    pair_rate = csr_matrix((rate, (ea, eb)), shape=(n_edges, n_edges))
    inside = np.asarray((pair_rate.T @ down.T).T * down).sum(axis=1)
    out_load = down @ np.bincount(ea, weights=rate, minlength=n_edges) - inside  # may go up out of x
    in_load = down @ np.bincount(eb, weights=rate, minlength=n_edges) - inside  # may come down into x
    cap = f.graph.cap_gbps.astype(np.float64)
    # up link lo -> hi carries at most what may leave lo; down link hi -> lo what may enter lo
    return bool(np.all(out_load[clos.lo] <= cap + 1e-6) and np.all(in_load[clos.lo] <= cap + 1e-6))
