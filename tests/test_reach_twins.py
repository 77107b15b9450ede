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


def test_edge_counts_read_by_byte_tables_are_the_dense_counts():
    """EdgeBits.counts over rows of three words (150 classes of edges in 7 pods), with edges'
    own bits, as `down` holds them: each row's edges, and those of a given pod, as the
    unpacked matrix says."""
    from compiler.traffic.clos import BitRows, EdgeBits

    rng = np.random.default_rng(7)
    n_rows, n_cols = 40, 150
    edge_class = np.repeat(np.arange(n_cols), rng.integers(1, 6, n_cols))
    edges = rng.choice(n_rows, size=min(n_rows, edge_class.size), replace=False)
    edge_class, edges = edge_class[:edges.size], edges
    class_pod = rng.integers(0, 7, n_cols)
    pods = class_pod[edge_class]
    bits = BitRows(n_rows, n_cols)
    r, c = np.nonzero(rng.random((n_rows, n_cols)) < 0.3)
    bits.set(r, c, np.ones(r.size, dtype=bool))
    bits.words[edges] = 0  # as in `down`: an edge's row holds only its own bit, kept apart
    eb = EdgeBits(bits, edge_class, edges, rng.random(edges.size) < 0.5)
    dense = eb.dense()  # rows x edges
    rows = rng.integers(0, n_rows, 25)
    row_pod = rng.integers(0, 8, n_rows)  # pod 7 holds no edge
    row_pod[edges] = pods  # each row is read in its own pod (as _down_groups does): an edge's is its edges'
    in_pod = row_pod[rows]
    every, in_own = eb.counts(rows, in_pod, pods)
    assert every.tolist() == dense[rows].sum(axis=1).tolist()
    assert in_own.tolist() == (dense[rows] & (pods[None, :] == in_pod[:, None])).sum(axis=1).tolist()


def test_link_orders_are_lexsorts_whichever_way_they_are_found():
    """_order: keys in order already, one key per link (written at its key), or repeated
    keys (a stable argsort) all give np.lexsort's order."""
    from compiler.traffic.clos import _order

    rng = np.random.default_rng(1)
    for trial in range(300):
        n, m, span = int(rng.integers(1, 400)), int(rng.integers(1, 30)), int(rng.integers(1, 12))
        major, minor = rng.integers(0, m, n), rng.integers(0, span, n) + int(rng.integers(0, 5))
        if trial % 3 == 0:  # one key per link
            keys = rng.choice(m * span, size=min(n, m * span), replace=False)
            major, minor = keys // span, keys % span + 3
        if trial % 5 == 0:  # in order already
            o = np.lexsort((minor, major))
            major, minor = major[o], minor[o]
        assert np.array_equal(_order(major, minor), np.lexsort((minor, major))), trial


@pytest.mark.parametrize("fail", [None, "core:1", "pod1-spine-02"])
def test_hops_down_from_the_top_take_the_same_link_scanned_or_grouped(fail, monkeypatch):
    """A few hops down from the top tier are scanned (_down_groups not built for them), many
    go through the whole groups: the same links either way, flow by flow."""
    import compiler.traffic.clos as clos_module

    plan = lab_3tier(128)
    rng = np.random.default_rng(3)
    paths = {}
    for way, per_grouped in (("scanned", 0), ("grouped", 10**9)):
        monkeypatch.setattr(clos_module, "_SCAN_PER_GROUPED", per_grouped)
        clos = ClosRoutes(TrafficFabric(plan, parse_failure(plan, fail)))
        n = clos.f.ep_link.size
        src = rng.permutation(n) if way == "scanned" else paths["src"]
        dst = np.roll(src, n // 2)  # half of them to another pod: down from the cores
        paths.setdefault("src", src)
        paths[way] = clos.ecmp_paths(src, dst, np.zeros(n, dtype=np.int64), seed=1)
        assert ("_down_groups" in clos.__dict__) == (way == "grouped")
    for a, b in zip(paths["scanned"], paths["grouped"], strict=True):
        assert np.array_equal(a, b)


def test_edge_bits_refuse_an_edge_index_outside_the_edges():
    """EdgeBits maps an edge to its class column first: edge -1 (edge_of of a switch that is
    no edge) would read the last edge's column; it is refused."""
    clos = ClosRoutes(TrafficFabric(lab_3tier(128)))
    n_edges = clos.edges.size
    assert clos.down[np.array([0]), np.array([n_edges - 1])].shape == (1,)
    for e in (-1, n_edges):
        with pytest.raises(IndexError):
            clos.down[np.array([0]), np.array([e])]
