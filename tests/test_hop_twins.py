"""Hop counts on the twin quotient (plan/graph.py FabricGraph.hops_from) equal scipy's BFS
on the switch graph itself, on every shape of fabric the examples hold."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse.csgraph import shortest_path

from compiler.plan.graph import FabricGraph, fabric_graph
from tests.conftest import shared_plan


def _bfs(g: FabricGraph, sources: np.ndarray) -> np.ndarray:
    return shortest_path(g.adjacency(np.ones(g.a.size, dtype=np.int64)), unweighted=True, indices=sources)


@pytest.mark.parametrize("example", [
    "b200-superpod-64su",  # three tiers: cores in groups, leaves of an SU twins
    "meta-llama3-24k",  # zones and uneven tiers
    "dragonfly-plus-2k",  # groups joined by global links
    "hgx-b300-dual-plane",  # planes the design never joins: unreachable pairs stay inf
    "tpu-v5p-twisted-8x8x16",  # a twisted torus: no twins at all
    "dgx-h100-6node-ring",
])
def test_hops_from_equals_bfs_on_the_switch_graph(example):
    g = fabric_graph(shared_plan(example))
    sources = np.arange(g.n)
    assert np.array_equal(g.hops_from(sources), _bfs(g, sources))
    targets = sources[::3][::-1]
    assert np.array_equal(g.hops_from(sources, targets), _bfs(g, sources)[:, targets])


def _graph(edges: list[tuple[int, int]], n: int) -> FabricGraph:
    a = np.array([e[0] for e in edges], dtype=np.int64)
    b = np.array([e[1] for e in edges], dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    return FabricGraph(n=n, device_of=np.arange(n), switch_of=np.arange(n), a=a, b=b,
                       cap_gbps=np.full(a.size, 400, dtype=np.int64), link=np.arange(a.size),
                       at_device=empty, at_switch=empty, at_cap_gbps=empty, at_port=empty,
                       at_is_gpu_server=np.zeros(0, dtype=bool), at_link=empty)


def test_twins_only_merge_equal_neighbour_sets():
    # 0,1,2 share neighbours {3,4} (twins, with a parallel link 0-3); 5 has degree 2 as well
    # but neighbours {4,6}; 7 is isolated; 8 links to itself and to 6.
    g = _graph([(0, 3), (0, 3), (0, 4), (1, 3), (1, 4), (2, 3), (2, 4), (5, 4), (5, 6), (8, 8), (8, 6)], 9)
    cls, quotient = g._twins
    assert cls[0] == cls[1] == cls[2]
    assert len(set(cls.tolist())) == 7 and quotient.shape == (7, 7)
    sources = np.arange(g.n)
    assert np.array_equal(g.hops_from(sources), _bfs(g, sources))
    assert g.hops_from(np.array([0]))[0, [0, 1, 7]].tolist() == [0.0, 2.0, np.inf]


def test_hops_on_a_graph_deeper_than_the_frontier_levels():
    """A 100-switch ring is 50 links across: past FRONTIER_MAX_LEVELS the BFS goes to scipy,
    with the same answer; the self-loop and the unreachable switch stay as BFS has them."""
    from compiler.plan import graph

    ring = [(i, (i + 1) % 100) for i in range(100)]
    g = _graph(ring + [(100, 100)], 102)
    assert graph.FRONTIER_MAX_LEVELS < 50
    sources = np.array([0, 37, 100, 101])
    assert np.array_equal(g.hops_from(sources), _bfs(g, sources))
    assert g.hops_from(np.array([0]))[0, 50] == 50.0
