"""The Clos routes' reachability (compiler/traffic/clos.py: down, reach) holds twin edge
switches in one column (EdgeBits): checked against the definitions walked switch by switch
in plain Python, intact and after failures that break twins apart (a lost uplink, a lost
leaf, lost spines and cores)."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.traffic.clos import ClosRoutes
from compiler.traffic.fabric import TrafficFabric, parse_failure

from .test_traffic import lab_3tier


def _brute_force(clos: ClosRoutes) -> tuple[np.ndarray, np.ndarray]:
    """down[x, e] and reach[x, e] from their definitions: x reaches edge e downward when it
    is e (alive) or a live down link leads to a switch that does; valley-free when it
    reaches e downward or a live up link leads to a switch that reaches it valley-free."""
    f = clos.f
    n, edges = f.graph.n, clos.edges.tolist()
    below: dict[int, list[int]] = {x: [] for x in range(n)}
    above: dict[int, list[int]] = {x: [] for x in range(n)}
    for k in np.flatnonzero(clos.alive).tolist():
        below[int(clos.hi[k])].append(int(clos.lo[k]))
        above[int(clos.lo[k])].append(int(clos.hi[k]))
    by_tier = sorted(range(n), key=lambda x: int(f.tier[x]))
    down = np.zeros((n, len(edges)), dtype=bool)
    for j, e in enumerate(edges):
        for x in by_tier:  # lower tiers first: a switch's down neighbours are settled
            down[x, j] = (x == e and bool(f.switch_alive[e])) or any(down[y, j] for y in below[x])
    reach = down.copy()
    for x in reversed(by_tier):  # upper tiers first
        for y in above[x]:
            reach[x] |= reach[y]
    return down, reach


@pytest.mark.parametrize("fail", [None, "link:3", "spine:1", "core:1", "pod1-spine-02,pod2-spine-03"])
def test_twin_columns_read_as_the_dense_reachability(fail):
    plan = lab_3tier(128)
    clos = ClosRoutes(TrafficFabric(plan, parse_failure(plan, fail)))
    down, reach = _brute_force(clos)
    if fail == "link:3":  # the leaf that lost an uplink leaves its twins' column
        assert clos.down.bits.cols == np.unique(clos._pods[clos.edges]).size + 1
    np.testing.assert_array_equal(clos.down.dense(), down)
    np.testing.assert_array_equal(clos.reach.dense(), reach)
    np.testing.assert_array_equal(clos.reach.all_columns(), reach.all(axis=1))
    x, e = np.meshgrid(np.arange(down.shape[0]), np.arange(down.shape[1]), indexing="ij")
    np.testing.assert_array_equal(clos.down[x.ravel(), e.ravel()], down.ravel())
    np.testing.assert_array_equal(clos.reach[x.ravel(), e.ravel()], reach.ravel())
    pods = clos._pods
    held = down[:, None, :] & (pods[clos.edges][None, None, :] == np.arange(int(pods.max()) + 1)[None, :, None])
    every, in_own = clos.down.counts(np.arange(pods.size), pods, pods[clos.edges])
    np.testing.assert_array_equal(every, down.sum(axis=1))
    np.testing.assert_array_equal(in_own, held.sum(axis=2)[np.arange(pods.size), pods])


def test_twin_leaves_share_a_column():
    """A pod's leaves with the same spines are one column: the matrices grow with the
    classes of leaves, not with the leaves (8,192 leaves are 128 columns at 524,288 GPUs)."""
    plan = lab_3tier(128)
    clos = ClosRoutes(TrafficFabric(plan))
    pods = clos._pods[clos.edges]
    assert clos.down.bits.cols == np.unique(pods).size < clos.edges.size


def test_bit_rows_refuse_a_cell_outside_the_matrix():
    """BitRows reads through a flat index: a column past the last would read the next row's
    word and a negative row the last row's, without an error; both are refused."""
    from compiler.traffic.clos import BitRows

    bits = BitRows(3, 70)
    bits.set(np.array([0, 1]), np.array([69, 5]), np.array([True, True]))
    assert bits[np.array([0, 1, 1]), np.array([69, 5, 69])].tolist() == [True, True, False]
    for rows, cols in (([0], [70]), ([0], [-1]), ([-1], [5]), ([3], [0])):
        with pytest.raises(IndexError):
            bits[np.array(rows), np.array(cols)]
