"""The integer-coded tables the checks and renderers read at scale give what a per-link
derivation gives: the switch adjacency (one sorted structure per graph, link weights
summed into it) and the link-end transceiver table (medium x cage type)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from compiler.plan.graph import fabric_graph
from compiler.plan.views import end_module_ports, end_transceivers, port_table, transceiver_part
from tests.conftest import shared_plan


def _coo_adjacency(g, weights, keep):
    """The adjacency as the switch graph defined it before: kept links only, both
    directions, duplicates summed."""
    a, b, w = g.a[keep], g.b[keep], weights[keep]
    m = csr_matrix((np.concatenate([w, w]).astype(np.int64), (np.concatenate([a, b]), np.concatenate([b, a]))),
                   shape=(g.n, g.n))
    m.sum_duplicates()
    return m


def _same(m, ref):
    m, ref = m.copy(), ref.copy()
    m.sort_indices()
    ref.sort_indices()
    assert m.shape == ref.shape
    assert np.array_equal(m.indptr, ref.indptr)
    assert np.array_equal(m.indices, ref.indices)
    assert np.array_equal(m.data, ref.data)


@pytest.mark.parametrize("example", ["b200-superpod-4su", "roce-2spine-4leaf-frr", "hgx-b300-dual-plane"])
def test_adjacency_equals_the_summed_link_list(example):
    g = fabric_graph(shared_plan(example))
    pair = np.minimum(g.a, g.b) * g.n + np.maximum(g.a, g.b)
    _, counts = np.unique(pair, return_counts=True)
    rng = np.random.default_rng(7)
    every = np.ones(g.a.size, dtype=bool)
    _same(g.adjacency(), _coo_adjacency(g, g.cap_gbps, every))
    ones = np.ones(g.a.size, dtype=np.int64)
    _same(g.adjacency(ones), _coo_adjacency(g, ones, every))
    # every link of the first pair lost: that entry must go, not stay as an explicit zero
    lose_pair = pair != pair[0]
    for keep in (rng.random(g.a.size) < 0.7, lose_pair, ~every):
        _same(g.adjacency(ones, keep), _coo_adjacency(g, ones, keep))
        _same(g.adjacency(None, keep), _coo_adjacency(g, g.cap_gbps, keep))
    assert g.adjacency(ones, lose_pair).nnz < g.adjacency(ones).nnz
    if example == "roce-2spine-4leaf-frr":
        assert counts.max() > 1  # parallel cables between two switches are summed into one entry
    labels = connected_components(_coo_adjacency(g, ones, every), directed=False)[1]
    assert np.array_equal(g.components, labels)


@pytest.mark.parametrize("example", ["b200-superpod-4su", "hgx-b300-dual-plane", "gb200-nvl72-su", "roce-2spine-4leaf-sonic"])
def test_link_end_transceivers_equal_a_lookup_per_link(example):
    plan = shared_plan(example)
    links = plan.links
    keys = plan.memo("port_table", port_table)["cage_key"]
    offsets = plan.port_offsets()
    ports_of = {t: rec.ports for t, rec in plan.view.facts.transceivers.items()}
    modules = end_module_ports(plan)
    for end, ids, module in zip(("a", "b"), end_transceivers(plan), modules, strict=True):
        gid = offsets[getattr(links, f"{end}_dev")] + getattr(links, f"{end}_port")
        want = [transceiver_part(plan.view.facts, plan.media[int(m)], k) or ""
                for m, k in zip(links.media.tolist(), keys[gid].tolist(), strict=True)]
        assert ids.tolist() == want
        assert module.tolist() == [ports_of.get(t, 0) for t in want]
    assert any(m.max(initial=0) > 0 for m in modules)  # optics with modules at the ends: not vacuous


def test_a_repeated_flow_is_answered_once_with_the_same_value():
    from compiler.check.context import CheckContext
    from compiler.check.flows import FlowNetwork

    plan = shared_plan("b200-superpod-4su")
    ctx = CheckContext(plan)
    net = FlowNetwork(ctx.graph)
    solved = []
    fresh = net._flow
    net._flow = lambda *args: solved.append(1) or fresh(*args)  # type: ignore[method-assign]
    keep = np.ones(ctx.graph.a.size, dtype=bool)
    keep[0] = False
    for cut in ctx.cuts[:3]:
        for keep_link in (None, keep):
            first = net.flow(cut.side_a, cut.side_b, keep_link)
            again = net.flow(cut.side_a.copy(), cut.side_b.copy(), None if keep_link is None else keep_link.copy())
            assert first == again == fresh(cut.side_a, cut.side_b, keep_link, None)
    assert len(solved) == 6  # three cuts, intact and damaged; the repeats came from the kept answers
    # a different question is not answered from another's: the sides swapped, one more link lost
    cut = ctx.cuts[0]
    other = keep.copy()
    other[1] = False
    net.flow(cut.side_b, cut.side_a, keep)
    net.flow(cut.side_a, cut.side_b, other)
    assert len(solved) == 8


@pytest.mark.parametrize("example", ["h100-roce-2su-hall", "hgx-b300-dual-plane"])
def test_port_columns_are_each_layouts_ports_spread_over_the_devices(example):
    plan = shared_plan(example)
    table = port_table(plan)
    assert list(table) == ["name", "cage", "lane", "cage_key"]
    ports = [p for d in plan.devices for p in plan.layouts[d.layout].ports]
    assert table["name"].tolist() == [p.name for p in ports]
    assert table["cage"].tolist() == [p.cage for p in ports]
    assert table["lane"].tolist() == [p.lane for p in ports]
    assert table["cage_key"].tolist() == [p.cage_key for p in ports]


def test_a_dropped_plan_is_freed_without_the_cyclic_collector():
    """The memos a plan keeps hold no reference back to it (port_table's columns are built
    lazily from what they need): a plan that explore or compare drops is freed at once,
    also while the collector is paused."""
    import gc
    import weakref
    from pathlib import Path

    from compiler.check import run_checks
    from compiler.pipeline import build_plan

    _, plan = build_plan(Path(__file__).parent.parent / "specs" / "h100-roce-2su-hall.yaml")
    was = gc.isenabled()
    gc.disable()
    try:
        run_checks(plan)
        plan.memo("port_table", port_table)["lane"]
        assert plan.memoized("port_table") is not None
        ref = weakref.ref(plan)
        del plan
        assert ref() is None
    finally:
        if was:
            gc.enable()
