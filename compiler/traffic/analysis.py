"""One traffic result: a pattern under a routing on the (possibly degraded) fabric.

For every phase of the pattern: route its flows (one sub-flow per queue pair under
ECMP), share the links (max-min, calibrated to transports: fairness.py), and read off
- fraction: what the GPUs get on average, as a share of their NIC line rate;
- min_fraction: the slowest connection, which paces a bulk-synchronous collective;
- offered load: each link's load if every flow ran at its NIC's line rate, over its
  capacity (2.0 = twice what it can carry), the figure hot links are ranked by;
- collective_seconds per message size (spec `collectives:`), alpha-beta with the network
  bandwidth per GPU set by the slowest connection (compiler/check/collectives.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .collective_time import allreduce_times, transfer_time_s
from .fabric import TrafficFabric
from .fairness import Incidence, Term, flows_on_links, stack_incidences, transport_rates
from .patterns import Pattern, Phase
from ..plan.columns import ranges
from ..topology import ClosRecord, PlanesRecord, is_tree

HOT_LINKS = 5


@dataclass
class PhaseResult:
    """A phase's figures. The per-link ones (offered, flows_on, util: three products through
    the incidence and arrays over every link) are computed when first read: the collective
    estimate reads only the fractions."""

    fraction: float  # sum of connection rates over their line rates
    min_fraction: float
    conn_fraction: np.ndarray
    unroutable: int
    link_figures: Callable[[], tuple[np.ndarray, np.ndarray, np.ndarray]] = field(repr=False)
    secondary: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    @cached_property
    def _links(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.link_figures()

    def settle(self) -> None:
        """Compute the per-link figures now and let the phase's routes go: a traffic analysis
        of many phases keeps three arrays per phase, not every phase's routes (a batch of
        routes is bounded; all of them together are not)."""
        figures = self._links
        self.link_figures = lambda: figures

    @property
    def offered(self) -> np.ndarray:
        """Per directed link: its load if every flow ran at line rate, over its capacity."""
        return self._links[0]

    @property
    def flows_on(self) -> np.ndarray:
        """Per directed link: flows crossing it (weighted by their split)."""
        return self._links[1]

    @property
    def util(self) -> np.ndarray:
        """Per directed link: load at the fair rates / capacity."""
        return self._links[2]


@dataclass
class Routed:
    """A phase routed: the incidence over sub-flows, which sub-flows have a route, the
    connection and line rate of each sub-flow."""

    inc: Incidence
    active: np.ndarray
    conn: np.ndarray
    demand_gbps: np.ndarray  # line rate share of each sub-flow (NIC rate / sub-flows of its flow)
    flow_of: np.ndarray  # sub-flow -> flow of the phase
    secondary: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # what a routing decided, summed over phases in notes


def nic_gbps_per_gpu(fabric: TrafficFabric, servers: np.ndarray, gpus: int) -> float:
    """NIC Gb/s per GPU of the servers taking part."""
    if not gpus or not servers.size:
        return 0.0
    # each server's endpoints in order, as ranges (a Python arange per server cost 0.1 s at 65,536 servers)
    first = fabric.ep_first[servers].astype(np.int64)
    count = fabric.ep_first[servers + 1].astype(np.int64) - first
    eps = np.repeat(first, count) + ranges(count)
    return float(fabric.ep_gbps[eps].sum()) / gpus


def per_flow_incidence(fabric: TrafficFabric, n_flows: int, flow: np.ndarray, link: np.ndarray) -> Incidence:
    return Incidence(n_flows, fabric.n_links, [Term([flows_on_links(fabric.n_links, flow, link, n_flows=n_flows)])])


def solve_phase(fabric: TrafficFabric, phase: Phase, routed: Routed) -> PhaseResult:
    """The phase's figures, its rates filled over the links its routes cross only (the
    filling reads no other link): a phase of a few thousand flows on a fabric of millions of
    links costs no pass over every link."""
    inc, links = routed.inc.on_links_crossed()
    return phase_result(fabric, phase, routed, transport_rates(inc, fabric.cap_of(links), routed.active))


def solve_phases(fabric: TrafficFabric, phases: list[Phase], routed: list[Routed]) -> list[PhaseResult]:
    """solve_phase for each phase, their fillings run side by side in one stacked incidence
    (each phase its own copy of the links): the rates each phase gets alone, in the rounds
    of its slowest phase rather than the sum of all of theirs (16 phases of an all-to-all
    cost about what two did one by one)."""
    stacked = stack_incidences([r.inc for r in routed]) if len(routed) > 1 else None
    if stacked is None:
        return [solve_phase(fabric, p, r) for p, r in zip(phases, routed, strict=True)]
    inc, groups = stacked
    cap = np.tile(fabric.cap_gbps, len(routed))
    rates = transport_rates(inc, cap, np.concatenate([r.active for r in routed]), groups=groups)
    ends = np.cumsum([r.inc.n_flows for r in routed])
    return [phase_result(fabric, p, r, x)
            for p, r, x in zip(phases, routed, np.split(rates, ends[:-1]), strict=True)]


def phase_result(fabric: TrafficFabric, phase: Phase, routed: Routed, rates: np.ndarray) -> PhaseResult:
    """A phase's figures from the rates its sub-flows get."""
    n_conn = int(phase.conn.max()) + 1 if phase.conn.size else 0
    # a connection moves equal data over each of its sub-flows: it runs at count x slowest
    sub_conn = routed.conn
    slowest = np.full(n_conn, np.inf)
    np.minimum.at(slowest, sub_conn, np.where(routed.active, rates, 0.0))
    subs = np.bincount(sub_conn, minlength=n_conn)
    conn_rate = np.where(subs > 0, slowest * subs, 0.0)
    share = np.ones(phase.src.size) if phase.share is None else phase.share
    line = np.bincount(phase.conn, weights=fabric.ep_gbps[phase.src] * share, minlength=n_conn)
    conn_frac = np.divide(conn_rate, line, out=np.zeros(n_conn), where=line > 0)
    fraction = float(conn_rate.sum() / line.sum()) if line.sum() else 1.0  # no flow: nothing slowed

    def link_figures() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        inc, flow_of = routed.inc, routed.flow_of
        offered = inc.load(routed.demand_gbps * share[flow_of]) / fabric.cap_gbps
        flows_on = inc.load(np.ones(inc.n_flows) / np.maximum(1, np.bincount(flow_of)[flow_of]))
        return offered, flows_on, inc.load(rates) / fabric.cap_gbps

    unroutable = int(np.unique(routed.flow_of[~routed.active]).size)
    return PhaseResult(fraction, float(conn_frac.min()) if n_conn else 1.0, conn_frac, unroutable, link_figures,
                       routed.secondary, routed.counts)


def collective_seconds(fabric: TrafficFabric, pattern: Pattern, phases: list[PhaseResult],
                       nic_gbps_per_gpu: float) -> dict[str, float | None]:
    """Seconds per message size (bytes, as strings: JSON keys) for this pattern's collective."""
    plan = fabric.plan
    settings = plan.analysis.get("collectives", {})
    alpha = settings.get("latency_us", 5.0) * 1e-6
    sizes = settings.get("message_sizes", [])
    n = pattern.gpus
    up = plan.scale_up
    scaleup_gbps = up.gbytes_per_s_per_gpu * 8 / 2 if up is not None and up.gbytes_per_s_per_gpu else None
    g = up.gpus_per_domain if up is not None and not up.in_plan_links and up.domains else fabric.gpus_per_server
    out: dict[str, float | None] = {}
    for size in sizes:
        if not phases or any(p.min_fraction <= 0 for p in phases):
            out[str(size)] = None  # a connection gets nothing: the collective never completes
            continue
        net = [p.min_fraction * nic_gbps_per_gpu for p in phases]
        t: float | None  # None: the collective has no figure for this shape
        if pattern.kind == "ring-allreduce":  # the check's figures (check/collectives.py), one function
            t = allreduce_times(size, n, g, net[0], scaleup_gbps, alpha).ring_s
        elif pattern.kind == "hierarchical":
            t = allreduce_times(size, n, g, net[0], scaleup_gbps, alpha).hierarchical_s
        elif pattern.kind == "all-to-all":
            per_peer = size / n
            t = sum(ph.weight * transfer_time_s(per_peer, b) for ph, b in zip(pattern.phases, net, strict=True)) + (n - 1) * alpha
        else:  # a permutation or shift: every GPU sends `size` bytes to its partner
            t = transfer_time_s(size, net[0]) + alpha
        out[str(size)] = None if t is None or math.isinf(t) else round(t, 6)
    return out


def summarise(fabric: TrafficFabric, pattern: Pattern, routing: str, phases: list[PhaseResult],
              notes: list[str]) -> dict:
    nic_per_gpu = nic_gbps_per_gpu(fabric, pattern.servers, pattern.gpus)
    if phases:
        fraction = float(np.mean([p.fraction for p in phases]))
        min_fraction = float(min(p.min_fraction for p in phases))
        offered = np.max([p.offered for p in phases], axis=0)
        flows_on = np.max([p.flows_on for p in phases], axis=0)
        util = np.max([p.util for p in phases], axis=0)
    else:
        fraction = min_fraction = 1.0  # nothing crosses the network (one scale-up domain)
        offered = flows_on = util = np.zeros(fabric.n_links)
    hot = np.argsort(-offered, kind="stable")[:HOT_LINKS]
    hot = hot[offered[hot] > 0]
    hot_links = [{**d, "offered_load": round(float(offered[i]), 4), "flows": round(float(flows_on[i]), 3),
                  "utilisation": round(float(util[i]), 4)}
                 for i, d in zip(hot.tolist(), fabric.describe_links(hot), strict=True)]
    return {
        "pattern": pattern.name,
        "routing": routing,
        "fraction": round(fraction, 4),
        "min_fraction": round(min_fraction, 4),
        "gbps_per_gpu": round(fraction * nic_per_gpu, 2),
        "nic_gbps_per_gpu": round(nic_per_gpu, 2),
        "max_link_load": round(float(offered.max()) if offered.size else 0.0, 4),
        "hot_links": hot_links,
        "collective_seconds": collective_seconds(fabric, pattern, phases, nic_per_gpu),
        "gpus": pattern.gpus,
        "flows": int(sum(p.src.size for p in pattern.phases)),
        "phases": len(pattern.phases),
        "unroutable_flows": int(sum(p.unroutable for p in phases)),
        "notes": list(pattern.notes) + notes,
    }


def balls_into_bins(uplinks: int, flows_per_leaf: int, endpoints: int, line_rates: int = 1) -> dict:
    """Static ECMP, one flow per pair, a random permutation on a two-tier Clos: a flow stays
    on its leaf with probability q = (d - 1)/(N - 1) (d endpoints per leaf, N in all) and gets
    line rate; the n = round(d (1 - q)) flows that leave each hash to one of its u uplinks at
    random and arrive over one of the u cables into their leaf at random (balls into bins, twice).
    - single_hop_bound: n flows hit u(1 - (1 - 1/u)^n) distinct uplinks in expectation and
      carry no more than that: q + (1 - q) u/n (1 - (1 - 1/u)^n) (1 - 1/e = 63 % for u = n large);
    - equal_share: each link shared equally by its flows on both hops, a leaving flow gets
      1/max(K_up, K_down), K = 1 + Binomial(n - 1, 1/u), independent: q + (1 - q) E[...].
    Max-min fairness hands the share a flow cannot use to the others, so the measured
    mean falls between the two.
    `line_rates`: flows at line rate one uplink carries, c (2 for 800G uplinks over 400G
    NICs, fabric.uplink_speed_gbps): an uplink serves min(X, c) of the X flows it draws,
    u/n E[min(X, c)], X ~ Binomial(n, 1/u); a shared link gives each flow min(1, c/K)."""
    u, d, c = uplinks, flows_per_leaf, line_rates
    q = (d - 1) / (endpoints - 1) if endpoints > 1 else 0.0
    n = max(1, round(d * (1 - q)))
    p = 1 / u
    pmf = [math.comb(n - 1, k) * p ** k * (1 - p) ** (n - 1 - k) for k in range(n)]
    equal = sum(pa * pb * min(1.0, c / max(a, b)) for a, pa in enumerate(pmf, 1) for b, pb in enumerate(pmf, 1))
    if c == 1:  # E[min(X, 1)] = P(X >= 1), as written before (bytes of existing reports)
        single = u / n * (1 - (1 - p) ** n)
    else:
        single = u / n * sum(min(k, c) * math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(n + 1))
    return {"single_hop_bound": round(q + (1 - q) * min(1.0, single), 4), "equal_share": round(q + (1 - q) * equal, 4),
            "uplinks": u, "flows_per_leaf": d, **({"uplink_line_rates": c} if c != 1 else {})}


def balls_into_bins_for(fabric: TrafficFabric, pattern: Pattern, routing: str, qps: int) -> dict | None:
    """The expectation beside an ECMP permutation on an intact two-tier Clos whose leaves
    all have the same uplinks and endpoints."""
    view = fabric.plan.view
    d = view.design
    leaf_ports = d.leaf_ports if isinstance(d, (ClosRecord, PlanesRecord)) else None
    if routing != "ecmp" or qps != 1 or pattern.kind != "permutation" or d.tiers != 2 \
            or fabric.failure.text or leaf_ports is None or not is_tree(d.topology):
        return None
    per_leaf = np.bincount(fabric.ep_switch, minlength=fabric.graph.n)
    per_leaf = per_leaf[per_leaf > 0]
    if per_leaf.min() != per_leaf.max():
        return None
    placed = int(sum(fabric.ep_first[s + 1] - fabric.ep_first[s] for s in pattern.servers.tolist()))
    if placed != fabric.ep_link.size:  # a partial placement: leaves hold fewer of the flows
        return None
    up, down = view.uplink_gbps, d.speed_gbps
    if up % down:
        return None  # an uplink carries no whole number of line-rate flows: the model does not apply
    return balls_into_bins(leaf_ports.up, int(per_leaf[0]), placed, up // down)
