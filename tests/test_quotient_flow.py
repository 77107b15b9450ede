"""Max-flows on the twin quotient (check/flows.py FlowNetwork._quotient_flow) equal Dinic
on the whole network, intact and with links and switches lost, on fabrics with twins
(Clos pods, core groups, two-tier fat trees) and without (dragonflies)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.check import flows
from compiler.check.context import CheckContext
from tests.conftest import shared_plan


@pytest.mark.parametrize("example", [
    "b200-superpod-64su", "meta-llama3-24k", "seed-8k-fat-tree", "dragonfly-plus-2k",
    "hgx-b300-dual-plane", "h100-superpod-1su-multi-fabric", "alibaba-hpn-pod",
])
def test_quotient_flow_equals_whole_network(example, monkeypatch):
    ctx = CheckContext(shared_plan(example))
    g, net = ctx.graph, ctx.network
    assert int(net.twins[0].max()) + 1 < g.n  # there are twins to merge
    rng = np.random.default_rng(3)
    for cut in ctx.cuts:
        one_link = np.ones(g.a.size, dtype=bool)
        one_link[rng.choice(g.a.size, 2, replace=False)] = False
        one_switch = np.ones(g.n, dtype=bool)
        one_switch[rng.integers(g.n)] = False
        for keep_link, keep_switch in [(None, None), (one_link, None), (None, one_switch),
                                       (rng.random(g.a.size) > 0.3, rng.random(g.n) > 0.1)]:
            whole = net._flow(cut.side_a, cut.side_b, keep_link, keep_switch)  # below QUOTIENT_MIN_LINKS
            merged = net._quotient_flow(cut.side_a, cut.side_b, keep_link, keep_switch)
            assert merged == whole, (cut.name, keep_link is None, keep_switch is None)


def test_large_graphs_take_the_quotient(monkeypatch):
    ctx = CheckContext(shared_plan("seed-8k-fat-tree"))
    calls = []
    real = flows.FlowNetwork._quotient_flow
    monkeypatch.setattr(flows, "QUOTIENT_MIN_LINKS", 0)
    monkeypatch.setattr(flows.FlowNetwork, "_quotient_flow",
                        lambda self, *a: calls.append(1) or real(self, *a))
    cut = ctx.cuts[0]
    assert ctx.network.flow(cut.side_a, cut.side_b) > 0 and calls == [1]


@pytest.mark.parametrize("example", ["b200-superpod-64su", "meta-llama3-24k", "dragonfly-plus-2k"])
def test_leaf_pair_paths_one_flow_per_twin_class_same_count(example):
    from compiler.check.redundancy import failure_scenarios, leaf_pair_paths

    plan = shared_plan(example)
    merged, whole = CheckContext(plan), CheckContext(plan)
    whole.__dict__["unit_twins"] = np.arange(whole.graph.n)  # every switch its own class: every target flowed
    g = merged.graph
    assert leaf_pair_paths(merged) == leaf_pair_paths(whole)
    for sc in failure_scenarios(merged):
        keep = sc.keep_link if sc.keep_switch is None else sc.keep_switch[g.a] & sc.keep_switch[g.b]
        for quick in (False, True):
            assert leaf_pair_paths(merged, keep, sc.near[0], quick=quick) == \
                leaf_pair_paths(whole, keep, sc.near[0], quick=quick), (sc.what, quick)


def test_leaf_pair_paths_count_a_target_that_lost_a_link():
    from compiler.check.redundancy import _leaves, leaf_pair_paths

    plan = shared_plan("b200-superpod-64su")
    merged, whole = CheckContext(plan), CheckContext(plan)
    whole.__dict__["unit_twins"] = np.arange(whole.graph.n)
    g = merged.graph
    leaves = _leaves(merged)
    pod = merged.switch_pod[leaves]
    same = leaves[pod == pod[0]]
    target = int(same[-1])  # the last leaf of the source's pod: a twin of the others until it loses an uplink
    keep = np.ones(g.a.size, dtype=bool)
    keep[np.nonzero((g.a == target) | (g.b == target))[0][0]] = False
    intact = leaf_pair_paths(whole, None, int(same[0]), quick=True)[0]
    damaged = leaf_pair_paths(merged, keep, int(same[0]), quick=True)[0]
    assert damaged == leaf_pair_paths(whole, keep, int(same[0]), quick=True)[0] == intact - 1


@pytest.mark.parametrize("example", ["b200-superpod-64su", "meta-llama3-24k", "seed-8k-fat-tree", "dragonfly-plus-2k",
                                     "hgx-b300-dual-plane"])
def test_pair_paths_on_the_quotient_equal_dinic_on_the_unit_graph(example, monkeypatch):
    """FlowNetwork.pair_paths on the twin quotient (forced below its size threshold) counts the
    same edge-disjoint paths as Dinic on the whole unit-capacity graph: intact, with a few
    links lost, with every link of a switch lost, and with a third of the links lost."""
    monkeypatch.setattr(flows, "QUOTIENT_MIN_LINKS", 0)
    ctx = CheckContext(shared_plan(example))
    g, net = ctx.graph, ctx.network
    assert int(net.unit_twins[0].max()) + 1 < g.n  # there are twins to merge
    rng = np.random.default_rng(5)
    ends = np.unique(g.at_switch)
    counted = []
    for _ in range(6):
        s, t = (int(x) for x in rng.choice(ends, 2, replace=False))
        few = np.ones(g.a.size, dtype=bool)
        few[rng.choice(g.a.size, 3, replace=False)] = False
        lost = int(rng.integers(g.n))
        switch_gone = (g.a != lost) & (g.b != lost)
        near_s = np.ones(g.a.size, dtype=bool)
        near_s[np.nonzero((g.a == s) | (g.b == s))[0][:1]] = False  # a link of the source itself
        for keep in (None, few, switch_gone, near_s, rng.random(g.a.size) > 0.3):
            whole = flows.pair_paths(flows.unit_graph(g, keep), s, t)
            assert net.pair_paths(s, t, keep) == whole, (s, t, keep is None)
            counted.append(whole)
    assert max(counted) > 0  # (pairs in two planes of a dual-plane fabric have none)


@pytest.mark.parametrize("example", ["b200-superpod-64su", "meta-llama3-24k", "seed-8k-fat-tree", "dragonfly-plus-2k",
                                     "hgx-b300-dual-plane", "h100-superpod-1su-multi-fabric"])
def test_pieces_on_the_quotient_equal_scipy_on_the_whole_graph(example):
    """FabricGraph.pieces (connected pieces over the kept links, found on the twin quotient)
    gives scipy's labels on the whole graph, numbering included: intact, a few links lost,
    a switch lost (all its links), every link of a leaf lost, and most links lost (isolated
    switches, including whole twin classes cut off)."""
    from scipy.sparse.csgraph import connected_components

    g = CheckContext(shared_plan(example)).graph
    rng = np.random.default_rng(7)
    leaf = int(g.at_switch[0])
    for _ in range(4):
        few = np.ones(g.a.size, dtype=bool)
        few[rng.choice(g.a.size, 3, replace=False)] = False
        alive = rng.random(g.n) > 0.05
        for keep in (None, few, alive[g.a] & alive[g.b], (g.a != leaf) & (g.b != leaf),
                     rng.random(g.a.size) > 0.3, rng.random(g.a.size) > 0.97):
            whole = connected_components(g.adjacency(np.ones(g.a.size, dtype=np.int64), keep), directed=False)[1]
            assert np.array_equal(g.pieces(keep), whole), keep is None


@pytest.mark.parametrize("example", ["b200-superpod-64su", "meta-llama3-24k", "dragonfly-plus-2k", "alibaba-hpn-pod"])
def test_twins_scaled_from_link_counts_equal_twins_over_capacities(example):
    """FlowNetwork.twins, taken from unit_twins where every link has one capacity, equals the
    twin classes and class pairs computed over the capacities themselves."""
    net = CheckContext(shared_plan(example)).network
    assert np.unique(net.g.cap_gbps).size == 1
    for got, want in zip(net.twins, flows._twin_pairs(net.g.adjacency()), strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("example", ["b200-superpod-64su", "meta-llama3-24k", "dragonfly-plus-2k", "alibaba-hpn-pod",
                                     "seed-8k-fat-tree", "tpu-v5p-twisted-8x8x16"])
def test_unit_twins_equal_twins_over_link_counts(example):
    """FlowNetwork.unit_twins, taken from the switch graph's own twins where every linked pair
    has as many links, equals the twin classes and class pairs computed over the link counts."""
    g = CheckContext(shared_plan(example)).graph
    net = flows.FlowNetwork(g)
    for got, want in zip(net.unit_twins, flows._twin_pairs(g.adjacency(np.ones(g.a.size, dtype=np.int64))), strict=True):
        assert np.array_equal(got, want)
