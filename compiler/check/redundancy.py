"""Redundancy and failure impact.

- Edge-disjoint paths between leaves, min over all pairs. For any fixed leaf t0,
  min over pairs λ(u, v) = min over v of λ(t0, v) (a min u-v cut separates t0 from u
  or v), so L-1 unit-capacity max-flows give the exact answer; above 256 leaves we run
  them for t0's pod plus one leaf per other pod and say so.
- Single-homing: servers whose NIC for a rail reaches one switch only.
- One switch of each role, and one link of each kind, lost: bisection lost (percent,
  worst balanced cut), GPU NIC ports and servers cut off, leaf-pair path reduction.
- Monte Carlo: k random switch-to-switch links lost, seeded; worst-cut bisection p50/p99
  over the tightest intact cuts and those through the first lost link.

Switchless rings and meshes of servers: the servers are the nodes and stand in for
leaves (server-pair edge-disjoint paths); a lost server-server link is rerouted through
other servers, i.e. the model assumes servers relay (GPU to GPU over NVLink, out on
another port), which NCCL's ring steps do and a NIC alone does not. A lost server is not
reported (it loses its own GPUs; no fabric element fails), nor single-homing (no switch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..plan.columns import distinct, groups
from ..plan.graph import FabricGraph
from ..plan.naming import cable_id
from ..topology import topology
from .bisection import BisectionFigures
from .context import LARGE_GRAPH_LINKS, CheckContext
from .cuts import (
    REFINE_MAX_LINKS,
    Cut,
    CutFlow,
    cuts_through,
    refined_cut,
    sweep_partition,
    switch_partition,
)
from .families import family_of
from .figures import Figures, omitted_if_none
from .findings import Finding

EXACT_LEAF_LIMIT = 256
MAX_SAMPLED_TARGETS = 32
# Up to this many links a failure's worst cut is also refined from every structured cut
# (a few ms each); above, from the sweep through the damage only.
REFINE_FROM_EVERY_CUT_LINKS = 2_000
MAX_SAMPLED_TARGETS_LARGE = 12  # graphs above LARGE_GRAPH_LINKS: each unit max-flow costs ~0.1 s


@dataclass(frozen=True)
class FailureImpact:
    """What losing one element costs, on the worst balanced cut."""

    bisection_gbps: int
    worst_cut: str
    bisection_lost_percent: float
    gpu_ports_cut_off: int
    servers_cut_off: int
    switch: str | None = omitted_if_none()  # the element lost: a switch,
    link: str | None = omitted_if_none()  # or a cable (its id)
    leaf_pair_paths_min: int | None = None  # None where the lost switch is itself a path end (a leaf)


@dataclass(frozen=True)
class MonteCarlo:
    """k random switch-to-switch links lost, seeded: the worst-cut bisection's spread."""

    failed_links: int
    samples: int
    seed: int
    cuts: list[str]
    bisection_gbps_p50: float
    bisection_gbps_p99: float  # the bad tail: 99% of samples are at or above this
    bisection_gbps_min: float
    bisection_lost_percent_p99: float


@dataclass(frozen=True)
class RedundancyFigures(Figures):
    leaf_pair_edge_disjoint_paths_min: int
    leaf_pair_method: str
    single_homed_servers: int
    single_failures: dict[str, FailureImpact]  # by switch role, and by "link:<kind>"
    failure_cuts: str | None = omitted_if_none()  # which cuts, where failures are measured on a few
    monte_carlo: MonteCarlo | None = None  # None where the graph has too few links to lose k

    def as_json(self) -> dict:
        out = super().as_json()
        if self.monte_carlo is None:
            out["monte_carlo"] = {}
        return out


def _switchless(ctx: CheckContext) -> bool:
    """A ring or mesh of servers (expand/direct.py): the servers are the graph's nodes and
    stand in for leaves; a path between two servers may relay through other servers."""
    return topology(ctx.plan.view.design.topology).servers_as_nodes


def _leaves(ctx: CheckContext) -> np.ndarray:
    """The path ends: leaves, or every node of a direct network (chips; servers of a ring or mesh)."""
    if ctx.plan.view.design.direct:
        return np.arange(ctx.graph.n)
    return np.nonzero((ctx.switch_tier == 1) & ~ctx.management)[0]  # management leaves carry no GPU


def leaf_pair_paths(ctx: CheckContext, keep_link=None, source: int | None = None,
                    quick: bool = False) -> tuple[int, str]:
    """Min edge-disjoint paths between leaves. `quick`: from `source` to a few leaves only
    (first and last of its pod, first of each of two other pods), for failure scenarios."""
    leaves = _leaves(ctx)
    noun = ctx.plan.view.design.node_role if ctx.plan.view.design.direct else "leaf"
    if leaves.size < 2:
        return 0, f"fewer than two {noun}s"
    g = ctx.graph
    t0 = source if source is not None else int(leaves[np.argmin(_path_degree(g, keep_link)[leaves])])  # the weakest leaf
    pods = ctx.switch_pod[leaves]
    my_pod = pods[leaves == t0][0] if (leaves == t0).any() else 0
    if quick:
        same = leaves[(pods == my_pod) & (leaves != t0)]
        other = [int(leaves[np.argmax(pods == p)]) for p in np.unique(pods) if p != my_pod][:2]
        targets = sorted({int(same[0]), int(same[-1])} if same.size else set()) + other
        method = f"{len(targets)} max-flows from {ctx.plan.devices[int(g.device_of[t0])].name}"
    elif leaves.size <= EXACT_LEAF_LIMIT:
        targets, method = [int(v) for v in leaves if v != t0], f"exact: {leaves.size - 1} max-flows from the weakest {noun}"
    else:
        same = [int(v) for v, p in zip(leaves, pods, strict=True) if p == my_pod and v != t0]
        others = [int(leaves[np.argmax(pods == p)]) for p in np.unique(pods) if p != my_pod]
        targets = same + others
        cap = MAX_SAMPLED_TARGETS if g.a.size <= LARGE_GRAPH_LINKS else MAX_SAMPLED_TARGETS_LARGE
        if len(targets) > cap:  # dragonflies have thousands of groups: evenly spaced ones
            targets = [targets[i] for i in np.linspace(0, len(targets) - 1, cap).round().astype(int)]
        method = (f"sampled: {len(targets)} max-flows from the weakest {noun} to its pod and one {noun} per other pod"
                  + (f" (at most {cap}, evenly spaced)" if len(same + others) > cap else ""))
    apart = ctx.plan.view.design.never_meet
    if apart:
        # Rails (rail-only) or planes (multi-plane) the design never joins: pairs inside one only.
        def label(v):
            return getattr(ctx.plan.devices[int(g.device_of[v])], apart) or 0
        targets = [v for v in targets if label(v) == label(t0)]
        what = "rail" if apart == "rail" else "plane"
        method = (f"{len(targets)} max-flows from {ctx.plan.devices[int(g.device_of[t0])].name} to the other leaves "
                  f"of its {what} (the design never joins two {what}s)")
    # Twins (same neighbours over as many links: a pod's leaves) swap onto each other leaving
    # t0 in place, so their counts from t0 are equal: one max-flow each. The intact graph's
    # twins stay twins where neither is at a lost link (a lost switch's links are all lost).
    twin = ctx.unit_twins.copy()
    if keep_link is not None:
        ends = np.concatenate([g.a[~keep_link], g.b[~keep_link]])
        twin[ends] = -1 - ends  # alone
    one_per_class = list({int(twin[v]): v for v in reversed(targets)}.values())
    return (min(ctx.network.pair_paths(t0, v, keep_link) for v in one_per_class) if targets else 0), method


def _path_degree(g: FabricGraph, keep_link: np.ndarray | None) -> np.ndarray:
    """Per switch, what makes the weakest path end: its distinct neighbours on the intact
    graph, its kept links on a damaged one."""
    if keep_link is None:
        return g.degree
    return np.bincount(np.concatenate([g.a[keep_link], g.b[keep_link]]), minlength=g.n)


def _node_word(ctx: CheckContext) -> str:
    """What holds the GPUs: a server, or on a direct network its nodes (chips, or servers)."""
    d = ctx.plan.view.design
    return d.node_role if d.direct else "server"


def cut_off(g: FabricGraph, keep_link=None, keep_switch=None) -> tuple[int, int]:
    """GPU ports and servers cut off by a failure: a GPU port is cut off when its switch is
    lost or no longer reaches the main part of the fabric it was in (of the pieces an intact
    connected part falls into, the one holding the most GPU ports); a server when all its
    GPU ports are. So lost links count too: all uplinks of a leaf isolate its servers.
    Parts the design never joins (rail-only rails, planes) are judged each on its own."""
    gpu = g.at_is_gpu_server
    reach = reached_ports(g, keep_link, keep_switch)
    servers_all = distinct(g.at_device[gpu])
    servers_alive = distinct(g.at_device[reach])
    return int((gpu & ~reach).sum()), int(servers_all.size - servers_alive.size)


def reached_ports(g: FabricGraph, keep_link=None, keep_switch=None) -> np.ndarray:
    """Per attachment: a GPU port still in the main part of its fabric (as cut_off counts)."""
    gpu = g.at_is_gpu_server
    alive_sw = np.ones(g.n, dtype=bool) if keep_switch is None else keep_switch
    keep = alive_sw[g.a] & alive_sw[g.b]
    if keep_link is not None:
        keep = keep & keep_link
    intact = g.components
    damaged = g.pieces(keep)
    live = gpu & alive_sw[g.at_switch]
    # GPU ports per damaged piece; per intact part the piece holding the most (ties: lowest id)
    weight = np.bincount(damaged[g.at_switch[live]], minlength=damaged.max(initial=0) + 1)
    part_of_piece = np.zeros(weight.size, dtype=np.int64)
    part_of_piece[damaged] = intact
    order = np.lexsort((np.arange(weight.size), -weight, part_of_piece))
    first = np.ones(order.size, dtype=bool)
    first[1:] = part_of_piece[order][1:] != part_of_piece[order][:-1]
    main = np.zeros(weight.size, dtype=bool)
    main[order[first]] = True
    return live & main[damaged[g.at_switch]]


def damaged_cuts(ctx: CheckContext, cuts: list[Cut], near: tuple[int, ...], keep_link=None, keep_switch=None) -> list[Cut]:
    """`cuts` and the balanced cuts through the damaged element (cuts.cuts_through: a link
    u-v, or a switch and its first neighbour), and on graphs small enough a cut refined
    switch by switch on the damaged fabric from the sweep through it and from the tightest
    of `cuts` (cuts.refined_cut)."""
    g = ctx.graph
    if not near:
        return cuts
    u = near[0]
    if len(near) > 1:
        v = near[1]
    else:
        nbr = np.concatenate([g.b[g.a == u], g.a[g.b == u]])
        if nbr.size == 0:
            return cuts
        v = int(nbr.min())
    out = cuts + cuts_through(ctx.plan, g, int(u), int(v))
    family = family_of(ctx.plan)
    if hasattr(family, "cuts_through"):  # a family's own cuts through a damaged link (torus: half layers)
        servers, first_at, _ = groups(g.at_device[g.at_is_gpu_server])
        out += family.cuts_through(ctx.plan, g, servers, first_at, int(u), int(v))
    keep = np.ones(g.a.size, dtype=bool) if keep_link is None else keep_link.copy()
    if keep_switch is not None:
        keep &= keep_switch[g.a] & keep_switch[g.b]
    if g.a.size > REFINE_MAX_LINKS or ctx.plan.view.design.planes:
        return out  # refining moves ports one at a time; a multi-plane GPU's ports move together
    starts = [("refined-sweep", sweep_partition(g, int(u), int(v)))]
    if g.a.size <= REFINE_FROM_EVERY_CUT_LINKS:
        starts += [(f"refined-{c.name}", switch_partition(g, c)) for c in out if not c.name.startswith("refined")]
    for name, start in starts:
        cut = refined_cut(g, start, keep, name, f"{name[len('refined-'):]}, improved switch by switch on the damaged fabric")
        if cut is not None:
            out.append(cut)
    return out


def failure_impact(ctx: CheckContext, base_gbps: int, cuts: list[Cut], keep_link=None, keep_switch=None,
                   near: tuple[int, ...] = ()) -> FailureImpact:
    """What losing the elements outside keep_link / keep_switch costs: the worst of `cuts`
    and the cuts through the damage (damaged_cuts), and what it cuts off. The loss is
    measured against the intact fabric on the same cuts: where a cut through the damage is
    already tighter intact than `base_gbps`, against that (the loss is the failure's alone)."""
    return _measured(ctx, base_gbps, cuts, keep_link, keep_switch, near)[0]


def _measured(ctx: CheckContext, base_gbps: int, cuts: list[Cut], keep_link, keep_switch,
              near: tuple[int, ...]) -> tuple[FailureImpact, int]:
    """failure_impact and the intact bisection it was measured against."""
    g = ctx.graph
    through = damaged_cuts(ctx, cuts, near, keep_link, keep_switch)[len(cuts):]
    value, cut = ctx.worst_cut_gbps(keep_link, keep_switch, cuts=cuts + through)
    intact = min([base_gbps] + [ctx.cut_gbps(c) for c in through])
    ports, servers = cut_off(g, keep_link, keep_switch)
    return FailureImpact(
        bisection_gbps=value,
        worst_cut=cut,
        bisection_lost_percent=round(100.0 * (intact - value) / intact, 2) if intact else 0.0,
        gpu_ports_cut_off=ports,
        servers_cut_off=servers,
    ), intact


def _one_switch(ctx: CheckContext, role: str) -> int | None:
    """The switch of `role` whose loss we report: the one carrying the most links (ties: first)."""
    idx = np.nonzero(ctx.switch_role == role)[0]
    if idx.size == 0:
        return None
    g = ctx.graph
    load = np.bincount(np.concatenate([g.a, g.b, g.at_switch]), minlength=g.n)
    return int(idx[np.argmax(load[idx])])


def check_redundancy(ctx: CheckContext, bisection: BisectionFigures) -> tuple[RedundancyFigures, list[Finding]]:
    plan, g = ctx.plan, ctx.graph
    base = bisection.worst_cut_gbps
    failure_cuts = ctx.failure_cuts(bisection.cuts)
    findings: list[Finding] = []
    paths, method = leaf_pair_paths(ctx)

    # Single-homing per rail: each (server, NIC) attaches to one switch. A multi-plane NIC's
    # ports (one per plane, adjacent in port order) count together: dual-ToR is dual-homed.
    gpu = g.at_is_gpu_server & (not plan.view.design.direct)  # direct networks: no switch to be homed on
    per_nic = int(plan.view.design.planes or 1)
    dev = g.at_device[gpu].astype(np.int64)
    nic = g.at_port[gpu].astype(np.int64) // per_nic
    width = int(nic.max(initial=0)) + 1
    # distinct (NIC, switch) pairs as one integer each (sorted by NIC), then switches per NIC:
    # one means single-homed (a sort of int64 keys, where np.unique over rows sorts records)
    pairs = distinct((dev * width + nic) * max(g.n, 1) + g.at_switch[gpu].astype(np.int64))
    homes = pairs // max(g.n, 1)
    starts = np.flatnonzero(np.r_[True, homes[1:] != homes[:-1]]) if homes.size else homes
    n_homes = np.diff(np.r_[starts, homes.size])
    single = set((homes[starts][n_homes == 1] // width).tolist())
    n_servers = int(distinct(dev).size)
    if single:
        findings.append(Finding("SINGLE_HOMED_PER_RAIL", "info",
                                f"{len(single)} of {n_servers} servers reach each rail through one switch only: "
                                f"losing that leaf takes the rail down on every server behind it", "server"))

    failures: dict[str, FailureImpact] = {}
    for sc in failure_scenarios(ctx):
        imp = _scenario_impact(ctx, base, failure_cuts, sc)
        if sc.switch is not None:
            assert sc.keep_switch is not None  # a switch scenario removes its switch
            # A lost leaf is itself a path end (leaf_pair_paths_min stays None); otherwise count
            # from a leaf that lost a path through this switch.
            if sc.what != "leaf" and not ctx.plan.view.design.direct:  # a lost chip is a path end too
                keep = sc.keep_switch
                imp = replace(imp, leaf_pair_paths_min=leaf_pair_paths(ctx, keep[g.a] & keep[g.b], _leaf_near(ctx, sc.near),
                                                                       quick=True)[0])
            node = _node_word(ctx)
            ports, nodes = imp.gpu_ports_cut_off, imp.servers_cut_off
            findings.append(Finding("SINGLE_SWITCH_FAILURE", "info",
                                    f"losing {sc.what} {imp.switch}: bisection -{imp.bisection_lost_percent}% "
                                    f"({imp.bisection_gbps:,} Gb/s), {ports:,} GPU NIC port{'s' if ports != 1 else ''} and "
                                    f"{nodes:,} {node}{'s' if nodes != 1 else ''} cut off", sc.switch))
        else:
            imp = replace(imp, leaf_pair_paths_min=leaf_pair_paths(ctx, sc.keep_link, _leaf_near(ctx, sc.near), quick=True)[0])
        failures[sc.what] = imp
    sampled = None
    if len(failure_cuts) < len(ctx.cuts):
        sampled = (f"single failures measured on the {len(failure_cuts)} tightest intact cuts "
                   f"({', '.join(c.name for c in failure_cuts)}) of {len(ctx.cuts)}: the graph has "
                   f"{g.a.size:,} switch links")
    figures = RedundancyFigures(leaf_pair_edge_disjoint_paths_min=paths, leaf_pair_method=method,
                                single_homed_servers=len(single), single_failures=failures, failure_cuts=sampled,
                                monte_carlo=_monte_carlo(ctx, base, bisection.cuts))
    return figures, findings


@dataclass(frozen=True)
class FailureScenario:
    """One element lost: a switch of a role (the busiest: _one_switch) or the first link of
    a kind. `bound_gbps` is the most bisection the loss can take: a lost link at most its
    capacity; a lost switch at most the flow through it, which is at most half the capacity
    of everything attached to it (what enters leaves again). Lets a search for the worst
    loss skip scenarios that cannot beat one already measured, exactly."""

    what: str  # the switch role, or "link:<kind>"
    keep_link: np.ndarray | None
    keep_switch: np.ndarray | None
    switch: str | None  # the element's name: a switch,
    link: str | None  # or a cable id
    near: tuple[int, ...]  # graph nodes at the lost element (a leaf near it counts paths)
    bound_gbps: int


def failure_scenarios(ctx: CheckContext) -> list[FailureScenario]:
    """One switch of each role (leaf, spine, core; router; chip), then the first link of each
    kind, in that order: the single failures the redundancy check reports."""
    plan, g = ctx.plan, ctx.graph
    out = []
    roles = [] if _switchless(ctx) else list(dict.fromkeys(ctx.switch_role.tolist()))
    if roles:
        attached = np.bincount(np.concatenate([g.a, g.b, g.at_switch]),
                               weights=np.concatenate([g.cap_gbps, g.cap_gbps, g.at_cap_gbps]), minlength=g.n)
    for role in roles:  # switchless: the nodes are the servers: losing one is losing GPUs, not a fabric element
        s = _one_switch(ctx, role)
        if s is None:
            continue
        keep = np.ones(g.n, dtype=bool)
        keep[s] = False
        out.append(FailureScenario(role, None, keep, plan.devices[int(g.device_of[s])].name, None, (s,),
                                   int(attached[s]) // 2))
    if g.a.size:
        kinds = sorted(plan.link_kinds[int(k)] for k in np.unique(plan.links.kind[g.link]))
        for kind in kinds:
            k_idx = plan.link_kinds.index(kind)
            first = int(np.nonzero(plan.links.kind[g.link] == k_idx)[0][0])
            keep = np.ones(g.a.size, dtype=bool)
            keep[first] = False
            out.append(FailureScenario(f"link:{kind}", keep, None, None, _cable(plan, int(g.link[first])),
                                       (int(g.a[first]), int(g.b[first])), int(g.cap_gbps[first])))
    return out


def _scenario_impact(ctx: CheckContext, base_gbps: int, cuts: list[Cut], sc: FailureScenario) -> FailureImpact:
    return replace(failure_impact(ctx, base_gbps, cuts, keep_link=sc.keep_link, keep_switch=sc.keep_switch, near=sc.near),
                   switch=sc.switch, link=sc.link)


@dataclass(frozen=True)
class WorstFailureFigures(Figures):
    """The single failure of `failure_scenarios` that costs the most bisection (ties: the
    first in their order), or None without any; `measured` of `scenarios` were max-flowed,
    the rest skipped because their bound could not beat the worst so far."""

    what: str | None
    impact: FailureImpact | None
    scenarios: int
    measured: int


def check_worst_failure(ctx: CheckContext, bisection: BisectionFigures) -> tuple[WorstFailureFigures, list[Finding]]:
    """The worst of the redundancy check's single failures, without its path counts and
    Monte Carlo: the same figure (same elements, same cuts), at a fraction of the cost, for
    ranking many designs (clusterc explore)."""
    base = bisection.worst_cut_gbps
    cuts = ctx.failure_cuts(bisection.cuts)
    scenarios = failure_scenarios(ctx)
    worst, worst_what, lost, measured = None, None, -1, 0
    for sc in scenarios:
        if sc.bound_gbps <= lost:
            continue  # cannot lose more than the worst so far (and a tie keeps the earlier)
        imp, intact = _measured(ctx, base, cuts, sc.keep_link, sc.keep_switch, sc.near)
        imp = replace(imp, switch=sc.switch, link=sc.link)
        measured += 1
        if intact - imp.bisection_gbps > lost:  # the failure's own loss, at most bound_gbps
            worst, worst_what, lost = imp, sc.what, intact - imp.bisection_gbps
    return WorstFailureFigures(worst_what, worst, len(scenarios), measured), []


def _leaf_near(ctx: CheckContext, switches: Sequence[int]) -> int | None:
    """A leaf among `switches`, else one below them (walking down one or two tiers)."""
    g = ctx.graph
    if ctx.plan.view.design.direct:
        return switches[0]
    frontier = list(switches)
    for _ in range(3):
        leaves = [s for s in frontier if ctx.switch_tier[s] == 1 and not ctx.management[s]]
        if leaves:
            return leaves[0]
        nxt: list[int] = []
        for s in frontier:
            nbr = np.concatenate([g.a[g.b == s], g.b[g.a == s]])
            nxt.extend(int(x) for x in nbr[(ctx.switch_tier[nbr] < ctx.switch_tier[s]) & ~ctx.management[nbr]][:1])
        frontier = nxt
    return None


def _cable(plan, link_index: int) -> str:
    return cable_id(plan.devices[int(plan.links.a_dev[link_index])].name, int(plan.links.a_port[link_index]) + 1)


def _monte_carlo(ctx: CheckContext, base: int, intact: list[CutFlow], k: int = 2,
                 samples: int | None = None) -> MonteCarlo | None:
    g = ctx.graph
    if g.a.size <= k:
        return None
    samples = samples or (32 if g.a.size < 50_000 else 12 if g.a.size <= LARGE_GRAPH_LINKS else 8)
    rng = np.random.default_rng(ctx.seed)
    # The two tightest cuts of the intact fabric, and (up to LARGE_GRAPH_LINKS) the cuts
    # through the first lost link: a lost link can open a cut the intact fabric's do not cross.
    by_value = sorted(intact, key=lambda c: c.gbps)[:2]
    tight = [c for c in ctx.cuts if c.name in {x.name for x in by_value}]
    values = []
    for _ in range(samples):
        keep = np.ones(g.a.size, dtype=bool)
        lost = rng.choice(g.a.size, size=k, replace=False)
        keep[lost] = False
        through = cuts_through(ctx.plan, g, int(g.a[lost[0]]), int(g.b[lost[0]])) if g.a.size <= LARGE_GRAPH_LINKS else []
        values.append(ctx.worst_cut_gbps(keep_link=keep, cuts=tight + through)[0])
    arr = np.array(values, dtype=np.float64)
    return MonteCarlo(
        failed_links=k, samples=samples, seed=ctx.seed,
        cuts=[c.name for c in tight] + (["through the first lost link"] if g.a.size <= LARGE_GRAPH_LINKS else []),
        bisection_gbps_p50=float(np.percentile(arr, 50)),
        bisection_gbps_p99=float(np.percentile(arr, 1)),
        bisection_gbps_min=float(arr.min()),
        bisection_lost_percent_p99=round(100.0 * (base - float(np.percentile(arr, 1))) / base, 2) if base else 0.0,
    )
