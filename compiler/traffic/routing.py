"""Routing models, registered by topology family: each family brings its own routes.

| family | routings | model |
|---|---|---|
| clos, planes | ecmp | static per-flow hash over the valley-free equal-cost next hops, one sub-flow per QP (clos.py) |
| clos, planes | adaptive | an even split at every hop (clos.py) |
| clos, planes | ftree | OpenSM's fat-tree LFTs on InfiniBand trees (ftree.py) |
| dragonfly | minimal, valiant, ugal | dragonfly.py |
| torus, direct | minimal | shortest paths split evenly, wraparound included, servers or chips relaying where they are the nodes (minimal.py) |
| torus | dimension-order | x, then y, then z, each the short way round, even over parallel cables (minimal.py) |

A family's entry is a class built once per fabric with `available()` (the routings that
apply, in the order `clusterc traffic` shows them), `reference()` (the routing the check's
collective estimates assume: what the fabric runs by default) and `route(routing, phase)`.
Adding a family: its class and one line in ROUTES (tests/test_families.py requires one
for every family).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .analysis import Routed, per_flow_incidence
from .clos import ClosRoutes, NotClos
from .dragonfly import DragonflyRoutes
from .fabric import TrafficFabric
from .fairness import Incidence, Term
from .ftree import FtreeRoutes
from .minimal import DimensionOrderRoutes, MinimalRoutes
from .patterns import Phase
from ..diagnostics import nearest
from ..topology import TorusRecord, is_tree, topology

CLOS_ROUTINGS = ("ecmp", "adaptive", "ftree")
DRAGONFLY_ROUTINGS = ("minimal", "valiant", "ugal")
MINIMAL_ROUTINGS = ("minimal",)
TORUS_ROUTINGS = ("minimal", "dimension-order")
ROUTINGS = tuple(dict.fromkeys(CLOS_ROUTINGS + DRAGONFLY_ROUTINGS + TORUS_ROUTINGS))


class RoutingError(ValueError):
    """A routing that does not apply to this fabric; the message says which do."""


class ClosRouting:
    """Up/down routes of a tree of switches (fat-tree, rail-optimized, rail-only, multi-plane)."""

    kind = "Clos"
    # the check's all-to-all headline (ECMP and adaptive, 16 phases) in every compile: CPU
    # measured on a shared 2-core machine (load 5 to 6), 0.4 s at 4,096 GPUs, 0.6 s at 8,192
    # and 2.3 s at 12,288 (three tiers); above this `clusterc traffic` gives it
    headline_max_gpus = 4_096
    headline_cost = "about 0.6 s of CPU at 8,192 GPUs and 2.3 s at 12,288"

    def __init__(self, fabric: TrafficFabric, qps: int, seed: int):
        self.fabric, self.qps, self.seed = fabric, qps, seed
        topo = fabric.plan.view.design.topology
        if fabric.graph.n == 0:
            raise RoutingError(f"'{topo}' has no switches to route over")
        try:
            self.clos = ClosRoutes(fabric)
        except NotClos as exc:
            raise RoutingError(f"'{topo}': {exc}") from exc

    def available(self) -> tuple[str, ...]:
        plan = self.fabric.plan
        view = plan.view
        # OpenSM's fat-tree engine needs a tree of two levels at least (one switch: no ftree;
        # every routing is the same there)
        tree = is_tree(view.design.topology) and view.design.tiers > 1
        ib = view.is_infiniband
        return CLOS_ROUTINGS if ib and tree else CLOS_ROUTINGS[:2]

    def reference(self) -> str:
        """InfiniBand trees run OpenSM's fat-tree engine; an Ethernet fabric whose switches run
        per-packet adaptive routing (the plan's routing fact: the NOS's files turn it on) is
        routed `adaptive`, every other one hashes per flow (`ecmp`)."""
        if "ftree" in self.available():
            return "ftree"
        routing = self.fabric.plan.routing
        return "adaptive" if routing is not None and routing.adaptive_routing else "ecmp"

    @cached_property
    def ftree(self):
        try:
            return FtreeRoutes(self.clos)
        except NotClos as exc:
            raise RoutingError(f"ftree: {exc}") from exc

    def routable(self, routing: str, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Per flow: route() gives it a route under `routing` (the flows it marks active)."""
        if routing == "ftree":
            try:
                return self.ftree.routable(src, dst)
            except NotClos as exc:
                raise RoutingError(f"ftree: {exc}") from exc
        return self.clos.routable(src, dst)

    def route(self, routing: str, phase: Phase) -> Routed:
        f = self.fabric
        n = phase.src.size
        flow = np.arange(n)
        if routing == "ecmp":
            q = self.qps
            sub_flow = np.repeat(flow, q)
            qp = np.tile(np.arange(q), n)
            src, dst = phase.src[sub_flow], phase.dst[sub_flow]
            fl, ln, ok = self.clos.ecmp_paths(src, dst, qp, self.seed)
            return Routed(per_flow_incidence(f, src.size, fl, ln), ok, phase.conn[sub_flow],
                          f.ep_gbps[src] / q, sub_flow)
        if routing == "adaptive":
            terms, ok = self.clos.spray_terms(phase.src, phase.dst)
            return Routed(Incidence(n, f.n_links, terms), ok, phase.conn, f.ep_gbps[phase.src], flow)
        try:
            fl, ln, ok, secondary = self.ftree.paths(phase.src, phase.dst)
        except NotClos as exc:
            raise RoutingError(f"ftree: {exc}") from exc
        return Routed(per_flow_incidence(f, n, fl, ln), ok, phase.conn, f.ep_gbps[phase.src], flow, secondary)

    def route_phases(self, routing: str, phases: list[Phase]) -> list[Routed]:
        """route() for each phase; ECMP hashes every phase's sub-flows in one walk (a path
        depends on its flow's key alone, so each is the path route() gives)."""
        if routing == "adaptive" and len(phases) > 1:
            return self._spray_phases(phases)
        if routing != "ecmp" or len(phases) < 2:
            return [self.route(routing, p) for p in phases]
        f, q = self.fabric, self.qps
        sizes = np.array([p.src.size for p in phases])
        flow = np.concatenate([np.arange(n) for n in sizes.tolist()])
        sub_flow = np.repeat(flow, q)
        first = np.repeat(np.repeat(np.cumsum(sizes) - sizes, sizes), q)  # each sub-flow's phase's first flow
        src = np.concatenate([p.src for p in phases])[first + sub_flow]
        dst = np.concatenate([p.dst for p in phases])[first + sub_flow]
        qp = np.tile(np.arange(q), int(sizes.sum()))
        fl, ln, ok = self.clos.ecmp_paths(src, dst, qp, self.seed)
        ends = np.cumsum(sizes * q)
        order = np.argsort(fl, kind="stable")
        fl, ln = fl[order], ln[order]
        cut = np.searchsorted(fl, ends[:-1])
        out = []
        for p, lo, fa, la in zip(phases, (ends - sizes * q).tolist(), np.split(fl, cut), np.split(ln, cut), strict=True):
            s = slice(lo, lo + p.src.size * q)
            out.append(Routed(per_flow_incidence(f, p.src.size * q, fa - lo, la), ok[s], p.conn[sub_flow[s]],
                              f.ep_gbps[src[s]] / q, sub_flow[s]))
        return out

    def _spray_phases(self, phases: list[Phase]) -> list[Routed]:
        """The even split of every phase from one spray over all their flows: a (source
        leaf, destination leaf) pair's split is the same in every phase, so the pairs and the
        hops above them are computed once and each phase's terms share them (a phase's flows
        map to its pairs; the other pairs carry nothing and add exact zeros)."""
        f = self.fabric
        sizes = [p.src.size for p in phases]
        cut = np.cumsum(sizes)[:-1]
        terms, ok = self.clos.spray_terms(np.concatenate([p.src for p in phases]), np.concatenate([p.dst for p in phases]))
        attach = terms[0].chain[0].tocsc()  # the per-flow term (links x flows): each phase's columns
        ends = np.r_[0, np.cumsum(sizes)]
        out = []
        for i, (p, ok_p) in enumerate(zip(phases, np.split(ok, cut), strict=True)):
            lo, hi = int(ends[i]), int(ends[i + 1])
            own = [Term([attach[:, lo:hi].tocsr()])]
            own += [Term(t.chain, None if t.classes is None else t.classes[lo:hi]) for t in terms[1:]]
            n = p.src.size
            out.append(Routed(Incidence(n, f.n_links, own), ok_p, p.conn, f.ep_gbps[p.src], np.arange(n)))
        return out


class DragonflyRouting:
    kind = "dragonfly"
    headline_max_gpus = 16_384
    headline_cost = "seconds per routing"

    def __init__(self, fabric: TrafficFabric, qps: int, seed: int):
        self.fabric = fabric

    def available(self) -> tuple[str, ...]:
        return DRAGONFLY_ROUTINGS

    def reference(self) -> str:
        return "minimal"

    @cached_property
    def dragonfly(self):
        return DragonflyRoutes(self.fabric)

    def route(self, routing: str, phase: Phase) -> Routed:
        f = self.fabric
        terms, ok, counts = self.dragonfly.terms(routing, phase.src, phase.dst)
        return Routed(Incidence(phase.src.size, f.n_links, terms), ok, phase.conn, f.ep_gbps[phase.src],
                      np.arange(phase.src.size), counts=counts)


class MinimalRouting:
    """Tori, meshes, rings and full meshes: shortest paths on the real wiring."""

    kind = "torus or direct"
    # an all-to-all's shortest paths fan out over whole boxes of a torus: 2 s CPU at 512
    # chips, 30 s at 4,096
    headline_max_gpus = 1_024
    headline_cost = "2 s of CPU at 512 chips, 30 s at 4,096"

    def __init__(self, fabric: TrafficFabric, qps: int, seed: int):
        self.fabric = fabric
        self.minimal = MinimalRoutes(fabric)

    def available(self) -> tuple[str, ...]:
        return MINIMAL_ROUTINGS

    def reference(self) -> str:
        return "minimal"

    def route(self, routing: str, phase: Phase) -> Routed:
        f = self.fabric
        terms, ok = self.minimal.terms(phase.src, phase.dst)
        return Routed(Incidence(phase.src.size, f.n_links, terms), ok, phase.conn, f.ep_gbps[phase.src],
                      np.arange(phase.src.size))


class TorusRouting(MinimalRouting):
    """Tori and meshes: minimal, and the dimension-order routes of torus routers and TPU ICI
    (not with a twist: its wraparound moves along a second axis)."""

    def available(self) -> tuple[str, ...]:
        design = self.fabric.plan.view.design
        assert isinstance(design, TorusRecord), design.topology  # registered for the torus family only
        return TORUS_ROUTINGS if design.twist is None else MINIMAL_ROUTINGS

    @cached_property
    def dimension_order(self) -> DimensionOrderRoutes:
        return DimensionOrderRoutes(self.minimal)

    def route(self, routing: str, phase: Phase) -> Routed:
        if routing != "dimension-order":
            return super().route(routing, phase)
        f = self.fabric
        terms, ok = self.dimension_order.terms(phase.src, phase.dst)
        return Routed(Incidence(phase.src.size, f.n_links, terms), ok, phase.conn, f.ep_gbps[phase.src],
                      np.arange(phase.src.size))


# family name -> its routes. The one registry line a new family adds here.
ROUTES: dict[str, type] = {
    "clos": ClosRouting,
    "planes": ClosRouting,
    "dragonfly": DragonflyRouting,
    "torus": TorusRouting,
    "direct": MinimalRouting,
}


class Router:
    """Routes phases on one fabric by its family's model; builds each model's structure once."""

    def __init__(self, fabric: TrafficFabric, qps: int = 1, seed: int = 1):
        self.fabric = fabric
        self.qps = qps
        self.seed = seed
        self.model = ROUTES[topology(fabric.plan.view.design.topology).family](fabric, qps, seed)

    def available(self) -> tuple[str, ...]:
        return self.model.available()

    def default(self) -> tuple[str, ...]:
        return self.available()

    def reference(self) -> str:
        return self.model.reference()

    @property
    def headline_max_gpus(self) -> int:
        return self.model.headline_max_gpus

    @property
    def headline_cost(self) -> str:
        """What the headline costs above headline_max_gpus, for the note that says it was left out."""
        return self.model.headline_cost

    def check(self, routing: str) -> None:
        if routing not in self.available():
            why = ("ftree is OpenSM's engine: InfiniBand fat-tree and rail-optimized fabrics only"
                   if routing == "ftree" else f"this {self.model.kind} fabric takes {', '.join(self.available())}")
            raise RoutingError(f"routing '{routing}' does not apply: {why}"
                               + ("" if routing in ROUTINGS else f"; {nearest(routing, self.available())}"))

    def route(self, routing: str, phase: Phase) -> Routed:
        self.check(routing)
        return self.model.route(routing, phase)

    def route_phases(self, routing: str, phases: list[Phase]) -> list[Routed]:
        """route() for each phase, in one pass where the model has one."""
        self.check(routing)
        batch = getattr(self.model, "route_phases", None)
        return batch(routing, phases) if batch is not None else [self.model.route(routing, p) for p in phases]
