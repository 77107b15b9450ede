"""Routing-aware traffic analysis: what the fabric delivers to collectives.

For a compiled plan, each pattern (patterns.py) is routed by each routing model its
topology family registers (routing.py: static ECMP, adaptive, OpenSM ftree on Clos
fabrics; minimal, Valiant, UGAL on dragonflies; minimal on tori, meshes, rings and full
meshes),
links are shared max-min fairly, calibrated to transports (fairness.py), and the result says what each GPU gets
and how long the spec's collectives take (analysis.py). `--fail` repeats it on the
degraded fabric. `traffic_report` returns the JSON contract of `clusterc traffic`
(traffic.schema.json beside this file).
"""

from __future__ import annotations

from pathlib import Path

from ..plan.fabrics import fabric_plan
from ..plan.model import Plan
from .analysis import balls_into_bins_for, solve_phases, summarise
from .fabric import TrafficFabric, parse_failure
from .patterns import PatternError, build_pattern, placement
from .routing import Router, RoutingError

SCHEMA = Path(__file__).with_name("traffic.schema.json")
DEFAULT_PATTERNS = ("ring-allreduce", "all-to-all", "permutation")

__all__ = ["traffic_report", "TrafficError", "SCHEMA", "DEFAULT_PATTERNS"]


class TrafficError(ValueError):
    """Invalid traffic options for this plan (exit 2); the message says what and how to fix it."""


def traffic_report(plan: Plan, patterns: list[str] | None = None, routings: list[str] | None = None,
                   fail: str | None = None, servers: str | None = None, order: str = "plan", qps: int = 1,
                   seed: int = 1, max_phases: int | None = None) -> dict:
    view = fabric_plan(plan)
    if max_phases is not None and not 1 <= max_phases <= 4096:
        raise TrafficError(f"--phases {max_phases}: analyse 1 to 4,096 all-to-all phases")
    if not 1 <= qps <= 64:
        raise TrafficError(f"--qps {qps}: queue pairs per connection are 1 to 64 (NCCL_IB_QPS_PER_CONNECTION)")
    try:
        failure = parse_failure(view, fail)
    except ValueError as exc:
        raise TrafficError(str(exc)) from exc
    intact = TrafficFabric(view)
    scenarios = [("", intact)]
    if fail:
        scenarios.append((fail, TrafficFabric(view, failure, graph=intact.graph)))
    try:
        router = Router(intact, qps=qps, seed=seed)
        routings = list(routings or router.default())
        for r in routings:
            router.check(r)
        chosen = placement(intact, servers, order, seed)
        built = [build_pattern(intact, p, chosen, seed, max_phases) for p in (patterns or DEFAULT_PATTERNS)]
    except (PatternError, RoutingError) as exc:
        raise TrafficError(str(exc)) from exc
    results, unavailable = [], []
    for label, fabric in scenarios:
        r_fab = router if fabric is intact else Router(fabric, qps=qps, seed=seed)
        for pat in built:
            for routing in routings:
                try:
                    phases = _solve(fabric, r_fab, routing, pat.phases)
                except RoutingError as exc:
                    if not label:
                        raise TrafficError(str(exc)) from exc
                    # the failure leaves a fabric this routing cannot route (OpenSM's ftree falls back to updn)
                    entry = {"pattern": pat.name, "routing": routing, "failure": label, "reason": str(exc)}
                    unavailable.append(entry)
                    continue
                notes = []
                secondary = sum(p.secondary for p in phases)
                if secondary:
                    notes.append(f"{secondary:,} flows reach their CN through ftree's secondary routes "
                                 "(exact on two tiers, approximate on three)")
                if any("ugal_valiant" in p.counts for p in phases):
                    took = sum(p.counts["ugal_valiant"] for p in phases)
                    between = sum(p.counts["between_groups"] for p in phases)
                    notes.append(f"ugal: {took:,} of {between:,} flows between groups take Valiant (their minimal "
                                 "global cables offered more than twice the load of the Valiant ones)")
                res = summarise(fabric, pat, routing, phases, notes)
                res = {"pattern": res.pop("pattern"), "routing": res.pop("routing"), "failure": label or None, **res}
                expect = balls_into_bins_for(fabric, pat, routing, qps)
                if expect:
                    res["balls_into_bins"] = expect
                results.append(res)
    return {
        "name": plan.name,
        "topology": view.view.design.topology,
        "gpus": view.view.design.gpus,
        "placement": {"servers": int(chosen.size), "order": order, "selection": servers or "all"},
        "qps_per_connection": qps,
        "seed": seed,
        "model": MODEL,
        "reference_routing": router.reference(),
        "results": results,
        "unavailable": unavailable,
    }


# sub-flows routed and filled at once (phases side by side): bounds the memory of many
# phases (--phases 4,096 at 12,288 GPUs is 50 million flows) at ~100 MB of routes
BATCH_FLOWS = 1_000_000


def _solve(fabric: TrafficFabric, router: Router, routing: str, phases: list) -> list:
    """Each phase routed and solved, as many side by side as BATCH_FLOWS allows."""
    out: list = []
    start = 0
    while start < len(phases):
        end, flows = start, 0
        while end < len(phases) and (end == start or flows + phases[end].src.size * router.qps <= BATCH_FLOWS):
            flows += phases[end].src.size * router.qps
            end += 1
        batch = phases[start:end]
        solved = solve_phases(fabric, batch, router.route_phases(routing, batch))
        for result in solved:  # summarise reads every phase's link figures: keep those, not the routes
            result.settle()
        out += solved
        start = end
    return out


MODEL = ("flows between GPU NIC ports share links max-min fairly (progressive filling), and a single-path flow "
         "crossing k >= 2 full shared links keeps 0.9^(k-1) of its share, the rest going to the others (calibrated "
         "on csg-htsim NDP runs); fraction = mean "
         "connection throughput over NIC line rate, min_fraction = the slowest connection, which paces the "
         "collective; offered load = link load with every flow at line rate / capacity; ecmp: per-flow hash "
         "(splitmix64, per switch) over valley-free equal-cost next hops, one sub-flow per QP, a connection "
         "runs at QPs x its slowest QP; adaptive: even split at every hop; ftree: OpenSM's fat-tree LFTs "
         "(destination-routed); minimal (dragonfly, torus, mesh, ring, full mesh): shortest paths split evenly at "
         "every hop; collective time: alpha-beta at the slowest connection's bandwidth")
