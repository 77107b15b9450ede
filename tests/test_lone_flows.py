"""The ring estimate solves one flow of each kind of lone flow (traffic/estimate.py
lone_flows_once), over the links its routes cross only (Incidence.on_links_crossed): every
rate that remains, and the slowest connection's share, are the whole phase's bit for bit,
under every routing, with failures, with flows of several kinds, and through the
calibrated second filling."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.pipeline import build_plan
from compiler.plan.fabrics import fabric_plan
from compiler.traffic.analysis import solve_phase
from compiler.traffic.estimate import lone_flows_once, ring_bandwidth
from compiler.traffic.fabric import Failure, TrafficFabric
from compiler.traffic.fairness import Incidence, Term, flows_on_links, max_min_rates, transport_rates
from compiler.traffic.patterns import Phase, build_pattern, placement
from compiler.traffic.routing import Router

from .conftest import SPECS


def _ring(fabric: TrafficFabric) -> Phase:
    return build_pattern(fabric, "ring-allreduce", placement(fabric, None, "plan", 1), 1).phases[0]


def _kept(whole: Phase, part: Phase) -> np.ndarray:
    """Per flow of `part`: its index in `whole` (flows keep their order)."""
    at = {(s, d): i for i, (s, d) in enumerate(zip(whole.src.tolist(), whole.dst.tolist(), strict=True))}
    return np.array([at[(s, d)] for s, d in zip(part.src.tolist(), part.dst.tolist(), strict=True)], dtype=np.int64)


def _assert_same(fabric: TrafficFabric, router: Router, routing: str, phase: Phase) -> Phase:
    part = lone_flows_once(fabric, phase, lambda s, d: router.model.routable(routing, s, d))
    whole_routed, part_routed = router.route(routing, phase), router.route(routing, part)
    whole_rates = transport_rates(whole_routed.inc, fabric.cap_gbps, whole_routed.active)
    part_rates = transport_rates(part_routed.inc, fabric.cap_gbps, part_routed.active)
    assert np.array_equal(whole_rates[_kept(phase, part)], part_rates), routing
    # the estimate's filling runs over the links the routes cross only, their capacities read one by one
    crossed, links = part_routed.inc.on_links_crossed()
    assert np.array_equal(fabric.cap_of(links), fabric.cap_gbps[links])
    assert np.array_equal(transport_rates(crossed, fabric.cap_of(links), part_routed.active), part_rates), routing
    assert solve_phase(fabric, part, part_routed).min_fraction == \
        solve_phase(fabric, phase, whole_routed).min_fraction, routing
    return part


@pytest.mark.parametrize("spec", ["seed-8k-fat-tree.yaml", "b200-superpod-4su.yaml", "meta-llama3-24k.yaml",
                                  "gb200-superpod-2su-slg.yaml", "hgx-b300-dual-plane.yaml", "lab-3tier-frr.yaml"])
def test_one_lone_flow_of_each_kind_gives_the_whole_phases_rates(spec):
    plan = fabric_plan(build_plan(SPECS / spec)[1])
    fabric = TrafficFabric(plan)
    router = Router(fabric)
    phase = _ring(fabric)
    for routing in router.available():
        _assert_same(fabric, router, routing, phase)


def test_the_ring_estimate_solves_a_thirtieth_of_the_flows_and_gives_the_same_share():
    """b200-superpod-64su: 16,384 ring flows, 512 leave their leaf; one lone flow stands for
    the other 15,872."""
    plan = fabric_plan(build_plan(SPECS / "b200-superpod-64su.yaml")[1])
    fabric = TrafficFabric(plan)
    router = Router(fabric)
    phase = _ring(fabric)
    part = _assert_same(fabric, router, "ftree", phase)
    assert (phase.src.size, part.src.size) == (16_384, 513)
    leaves = fabric.ep_switch[part.src] != fabric.ep_switch[part.dst]
    assert int(leaves.sum()) == 512
    assert ring_bandwidth(plan).min_fraction == \
        solve_phase(fabric, phase, router.route("ftree", phase)).min_fraction


def test_lone_flows_of_several_kinds_and_dead_nics_keep_one_each():
    """Shares of three values and two dead NIC links, each between two lone flows (server k
    to k+1 and k+1 to k+2 on one leaf): one lone flow of each (routable, share) kind stays,
    and the dead ones hold the slowest connection at 0 in both."""
    plan = fabric_plan(build_plan(SPECS / "seed-8k-fat-tree.yaml")[1])
    intact = TrafficFabric(plan)
    phase = _ring(intact)
    rng = np.random.default_rng(5)
    phase = Phase(phase.src, phase.dst, phase.conn, share=rng.choice([0.25, 0.5, 1.0], phase.src.size))
    lone = intact.ep_switch[phase.src] == intact.ep_switch[phase.dst]
    nics = intact.ports_per_server
    # a lone flow whose source is the destination of a lone flow (the same NIC one server back)
    inner = np.flatnonzero(lone[nics:] & lone[:-nics]) + nics
    assert np.array_equal(phase.dst[inner - nics], phase.src[inner])
    picked = inner[[3, 40]]
    fabric = TrafficFabric(plan, Failure("two NICs", np.zeros(0, dtype=np.int64), intact.ep_link[phase.src[picked]]),
                           graph=intact.graph)
    router = Router(fabric)
    for routing in router.available():
        assert np.array_equal(np.flatnonzero(~router.model.routable(routing, phase.src, phase.dst)),
                              np.sort(np.r_[picked - nics, picked]))
        part = _assert_same(fabric, router, routing, phase)
        in_part = fabric.ep_switch[part.src] == fabric.ep_switch[part.dst]
        ok = router.model.routable(routing, part.src[in_part], part.dst[in_part])
        kinds = sorted(zip(ok.tolist(), part.share[in_part].tolist(), strict=True))
        dead = sorted({(False, float(phase.share[i])) for i in np.r_[picked - nics, picked]})
        assert kinds == dead + [(True, 0.25), (True, 0.5), (True, 1.0)]
        assert solve_phase(fabric, part, router.route(routing, part)).min_fraction == 0.0


def test_flows_that_share_a_nic_link_or_a_connection_are_not_lone():
    """Three more flows: one into the NIC a lone flow ends at, one out of the NIC another
    starts from, and a second flow (between other NICs) of a third lone flow's connection.
    Those three lone flows
    share a link or a connection, so they stay whole (dropped, the flows beside them would
    get their links, or their connection its slowest flow, to themselves)."""
    plan = fabric_plan(build_plan(SPECS / "seed-8k-fat-tree.yaml")[1])
    fabric = TrafficFabric(plan)
    router = Router(fabric)
    ring = _ring(fabric)
    lone = np.flatnonzero(fabric.ep_switch[ring.src] == fabric.ep_switch[ring.dst])
    a, b, c = lone[[5, 300, 900]]
    far = ring.src[lone[-1]]  # on another leaf than the three
    assert len({int(fabric.ep_switch[far])} | {int(fabric.ep_switch[ring.src[i]]) for i in (a, b, c)}) == 4
    n_conn = int(ring.conn.max()) + 1
    phase = Phase(np.r_[ring.src, far, ring.src[b], far], np.r_[ring.dst, ring.dst[a], far, ring.dst[lone[-2]]],
                  np.r_[ring.conn, n_conn, n_conn + 1, ring.conn[c]])
    for routing in router.available():
        part = _assert_same(fabric, router, routing, phase)
        kept = set(_kept(phase, part).tolist())
        assert {int(a), int(b), int(c)} <= kept, routing


@pytest.mark.parametrize("seed", range(4))
def test_copies_of_lone_flows_change_no_other_rate_in_either_filling(seed: int):
    """The argument itself, on random single-path problems where flows cross several full
    shared links (so the calibrated second filling runs): adding many copies of flows that
    cross two links of their own, of three capacities, changes no other flow's rate, and
    every copy gets its kind's rate."""
    rng = np.random.default_rng(seed)
    n_flows, n_links, hops = 120, 60, 3
    caps = [100.0, 200.0, 400.0]
    flow = np.repeat(np.arange(n_flows), hops)
    link = rng.integers(0, n_links, flow.size)
    cap = rng.choice(caps, n_links)

    def solve(copies: int) -> np.ndarray:
        kinds = np.repeat(np.arange(len(caps)), copies)
        own = n_links + np.arange(2 * kinds.size)  # two links of its own per lone flow
        lone_flow = n_flows + np.repeat(np.arange(kinds.size), 2)
        f = np.concatenate([flow, lone_flow])
        ln = np.concatenate([link, own])
        n = n_flows + kinds.size
        inc = Incidence(n, n_links + own.size, [Term([flows_on_links(n_links + own.size, f, ln, n_flows=n)])])
        every_cap = np.concatenate([cap, np.repeat(np.array(caps)[kinds], 2)])
        return transport_rates(inc, every_cap)

    base = Incidence(n_flows, n_links, [Term([flows_on_links(n_links, flow, link, n_flows=n_flows)])])
    assert not np.array_equal(transport_rates(base, cap), max_min_rates(base, cap))  # the second filling ran
    one, many = solve(1), solve(500)
    assert np.array_equal(one[:n_flows], many[:n_flows])
    assert np.array_equal(np.repeat(one[n_flows:], 500), many[n_flows:])
