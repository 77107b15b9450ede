"""Routing models by name, and which apply to which fabric.

| routing  | fabrics | model |
|---|---|---|
| ecmp     | Clos | static per-flow hash over the valley-free equal-cost next hops, one sub-flow per QP (clos.py) |
| adaptive | Clos | the ideal of adaptive routing / packet spraying: an even split at every hop (clos.py) |
| ftree    | InfiniBand Clos | the LFTs OpenSM's ftree engine computes, destination-routed (ftree.py) |
| minimal, valiant, ugal | dragonfly, dragonfly+ | dragonfly.py |
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .analysis import Routed, per_flow_incidence
from .clos import ClosRoutes, NotClos
from .fabric import TrafficFabric
from .fairness import Incidence
from .patterns import Phase
from ..diagnostics import nearest
from .ftree import FtreeRoutes
from .dragonfly import DragonflyRoutes
from ..topology import DRAGONFLY_ROUTES, TOPOLOGIES, is_tree, topology

CLOS_ROUTINGS = ("ecmp", "adaptive", "ftree")
DRAGONFLY_ROUTINGS = ("minimal", "valiant", "ugal")
ROUTINGS = CLOS_ROUTINGS + DRAGONFLY_ROUTINGS


class RoutingError(ValueError):
    """A routing that does not apply to this fabric; the message says which do."""


class Router:
    """Routes phases on one fabric; builds each model's structure once."""

    def __init__(self, fabric: TrafficFabric, qps: int = 1, seed: int = 1):
        self.fabric = fabric
        self.qps = qps
        self.seed = seed
        topo = fabric.plan.design.get("topology")
        self.family = (DRAGONFLY_ROUTES if topo in TOPOLOGIES and topology(topo).traffic_routes == DRAGONFLY_ROUTES
                       else "clos")
        if self.family == "clos":
            if fabric.plan.design.get("direct") or fabric.graph.n == 0:
                raise RoutingError(f"traffic analysis covers switched Clos and dragonfly fabrics; '{topo}' is a direct network")
            try:
                self.clos = ClosRoutes(fabric)
            except NotClos as exc:
                raise RoutingError(f"'{topo}': {exc}")

    def available(self) -> tuple[str, ...]:
        if self.family == DRAGONFLY_ROUTES:
            return DRAGONFLY_ROUTINGS
        ib = self.fabric.plan.facts.get("models", {}).get(self.fabric.plan.design.get("switch"), {}).get("protocol") == "infiniband"
        ftree_ok = ib and is_tree(self.fabric.plan.design.get("topology"))
        return CLOS_ROUTINGS if ftree_ok else CLOS_ROUTINGS[:2]

    def default(self) -> tuple[str, ...]:
        return self.available()

    def check(self, routing: str) -> None:
        if routing not in self.available():
            why = ("ftree is OpenSM's engine: InfiniBand fat-tree and rail-optimized fabrics only"
                   if routing == "ftree" else f"this {self.family} fabric takes {', '.join(self.available())}")
            raise RoutingError(f"routing '{routing}' does not apply: {why}"
                               + ("" if routing in ROUTINGS else f"; {nearest(routing, self.available())}"))

    @cached_property
    def ftree(self):
        try:
            return FtreeRoutes(self.clos)
        except NotClos as exc:
            raise RoutingError(f"ftree: {exc}")

    @cached_property
    def dragonfly(self):
        return DragonflyRoutes(self.fabric)

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
        if routing == "ftree":
            try:
                fl, ln, ok, secondary = self.ftree.paths(phase.src, phase.dst)
            except NotClos as exc:
                raise RoutingError(f"ftree: {exc}")
            return Routed(per_flow_incidence(f, n, fl, ln), ok, phase.conn, f.ep_gbps[phase.src], flow, secondary)
        terms, ok, counts = self.dragonfly.terms(routing, phase.src, phase.dst)
        return Routed(Incidence(n, f.n_links, terms), ok, phase.conn, f.ep_gbps[phase.src], flow, counts=counts)
