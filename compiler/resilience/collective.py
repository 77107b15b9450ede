"""The collective metric: the throughput fraction (of the NIC line rate, as `clusterc
traffic` reports it) of one pattern under one routing on a failure state's fabric, solved by
the traffic layer (routing, max-min fair sharing) on the fabric with that state's switches
and links removed. The pattern is built once on the intact fabric; GPUs a state cuts off
still take part, their flows lost, as `clusterc traffic --fail` does."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.graph import FabricGraph
from ..plan.model import Plan
from ..traffic.analysis import solve_phase
from ..traffic.fabric import Failure, TrafficFabric
from ..traffic.patterns import Pattern, PatternError, build_pattern, placement
from ..traffic.routing import Router, RoutingError
from .errors import ResilienceError


@dataclass
class Collective:
    view: Plan
    graph: FabricGraph
    pattern: Pattern
    routing: str
    seed: int
    intact_fraction: float


def collective_setup(view: Plan, graph: FabricGraph, pattern: str, routing: str | None, seed: int) -> Collective:
    intact = TrafficFabric(view, graph=graph)
    try:
        router = Router(intact, qps=1, seed=seed)
        routing = routing or router.default()[0]
        router.check(routing)
        built = build_pattern(intact, pattern, placement(intact, None, "plan", seed), seed)
    except (PatternError, RoutingError) as exc:
        raise ResilienceError(f"--pattern/--routing: {exc}") from None
    c = Collective(view, graph, built, routing, seed, 1.0)
    c.intact_fraction = collective_fraction(c, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    return c


def collective_fraction(c: Collective, dead_devices: np.ndarray, dead_links: np.ndarray) -> float:
    """The pattern's mean throughput fraction over its phases; 0 where the routing cannot
    route the damaged fabric at all (OpenSM's ftree on a broken tree)."""
    fabric = TrafficFabric(c.view, Failure("", dead_devices.astype(np.int64), dead_links.astype(np.int64)), graph=c.graph)
    try:
        router = Router(fabric, qps=1, seed=c.seed)
        phases = [solve_phase(fabric, phase, router.route(c.routing, phase)) for phase in c.pattern.phases]
    except RoutingError:
        return 0.0
    return float(np.mean([p.fraction for p in phases])) if phases else 1.0
