"""traffic/fairness.py's shortcuts give what the plain definitions give: which flows cross
marked links (read off the marked rows, off every entry's link, or by a product), a row
selection that shares the entries, and progressive filling's rates are max-min fair (each
flow crosses a full link on which no flow gets more), with every shortcut taken."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.traffic.fairness import (Incidence, Term, _crossing, _rows, entry_links, flows_on_links,
                                       max_min_rates, routed_part, stack_incidences, transport_rates)


def _single_path(rng: np.random.Generator, n_flows: int, n_links: int, hops: int) -> Incidence:
    flow = np.repeat(np.arange(n_flows), hops)
    link = rng.integers(0, n_links, flow.size)
    return Incidence(n_flows, n_links, [Term([flows_on_links(n_links, flow, link, n_flows=n_flows)])])


@pytest.mark.parametrize("density", [0.01, 0.5, 1.0])
def test_crossing_reads_agree(density: float):
    rng = np.random.default_rng(3)
    inc = _single_path(rng, 300, 200, 3)
    marked = rng.random(200) < density
    expected = inc.touches(marked) > 1e-12
    assert np.array_equal(_crossing(inc, marked), expected)
    assert np.array_equal(_crossing(inc, marked, entry_links(inc)), expected)


def test_rows_share_entries_only_where_they_hold_them_all():
    rng = np.random.default_rng(4)
    m = _single_path(rng, 50, 400, 2).terms[0].chain[0]  # most of the 400 rows are empty
    every = np.flatnonzero(np.diff(m.indptr))
    some = every[::2]
    for rows in (every, some):
        got, want = _rows(m, rows), m[rows]
        assert got.shape == want.shape
        for part in ("indptr", "indices", "data"):
            assert np.array_equal(getattr(got, part), getattr(want, part))
    assert np.shares_memory(_rows(m, every).data, m.data)
    assert not np.shares_memory(_rows(m, some).data, m.data)


def _assert_max_min_fair(inc: Incidence, cap: np.ndarray, rates: np.ndarray) -> None:
    m = inc.terms[0].chain[0].toarray() > 0  # links x flows
    load = inc.load(rates)
    assert np.all(load <= cap * (1 + 1e-9))
    full = load >= cap * (1 - 1e-9)
    for f in range(inc.n_flows):
        on = np.flatnonzero(m[:, f] & full)
        # a bottleneck: a full link of the flow on which no flow gets more than it
        assert any(rates[m[link]].max() <= rates[f] * (1 + 1e-9) for link in on), f


@pytest.mark.parametrize("seed", range(4))
def test_fillings_are_max_min_fair(seed: int):
    rng = np.random.default_rng(seed)
    inc = _single_path(rng, 120, 60, 3)
    cap = rng.choice([100.0, 200.0, 400.0], 60)
    rates = max_min_rates(inc, cap)
    _assert_max_min_fair(inc, cap, rates)
    # the routed part's shortcuts: every flow routed, each crossing a link with weight >= 1
    assert routed_part(inc, None).least_entry >= 1
    # stacked, each group gets exactly the rates it gets alone
    other = _single_path(rng, 80, 60, 2)
    stacked, groups = stack_incidences([inc, other])
    both = max_min_rates(stacked, np.tile(cap, 2), groups=groups)
    assert both[:120].tobytes() == rates.tobytes()
    assert both[120:].tobytes() == max_min_rates(other, cap).tobytes()
    # the calibrated (weighted) rates stay within every capacity
    tr = transport_rates(inc, cap)
    assert np.all(inc.load(tr) <= cap * (1 + 1e-9))
