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
Otherwise the ring is routed. Cost: the closed form O(switches x crossing flows); routing
as traffic (ftree 0.2 s at 16,384 GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.graph import FabricGraph
from ..plan.model import Plan
from ..plan.sparse import csr_matrix
from .analysis import nic_gbps_per_gpu, solve_phase
from .clos import ClosRoutes
from .fabric import TrafficFabric
from .patterns import build_pattern, placement
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
    result = solve_phase(fabric, phase, router.route(routing, phase))
    return RingBandwidth(PATTERN, PLACEMENT, routing, "routed", result.min_fraction, nic)


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
