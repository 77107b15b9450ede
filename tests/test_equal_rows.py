"""plan/columns.py equal_rows (rows of a CSR structure with the same entries) and the
reachability OR in traffic/clos.py BitRows.or_rows that computes one OR per distinct set of
sources: both equal their plain definitions."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.plan.columns import equal_rows
from compiler.traffic.clos import BitRows


def test_equal_rows_groups_exactly_equal_rows():
    # rows: [1,2] [1,2] [1,3] [] [1,2] [2] ; row 4 marked alone; data tells rows 0 and 1 apart
    indptr = np.array([0, 2, 4, 6, 6, 8, 9])
    indices = np.array([1, 2, 1, 2, 1, 3, 1, 2, 2])
    assert equal_rows(indptr, indices).tolist() == [0, 0, 1, 2, 0, 3]
    alone = np.array([False, False, False, False, True, False])
    assert equal_rows(indptr, indices, alone=alone).tolist() == [0, 0, 1, 2, 3, 4]
    data = np.array([5, 5, 5, 6, 5, 5, 5, 5, 1])
    assert equal_rows(indptr, indices, data).tolist() == [0, 1, 2, 3, 0, 4]
    # empty rows last: the row before them still hashes all its entries, so it joins row 0
    assert equal_rows(np.array([0, 2, 4, 4, 4]), np.array([1, 2, 1, 2])).tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("cols, grouped", [(600, False), (200, False), (200, True)])
def test_or_rows_equals_one_or_per_link(cols: int, grouped: bool):
    """Rows of many words OR once per distinct source set; rows of a few (200 columns: 4
    words) OR every target directly, from pairs grouped by target when the caller says so."""
    rng = np.random.default_rng(5)
    rows = 300
    bits = BitRows(rows, cols)
    bits.set(rng.integers(0, rows, 4000), rng.integers(0, cols, 4000), np.ones(4000, dtype=bool))
    # targets 0-99 from sources 100-299, many targets sharing a source set, parallel links
    shared = [rng.choice(np.arange(100, 300), 8, replace=False) for _ in range(5)]
    target = np.concatenate([np.full(8, t) for t in range(100)] + [np.array([7, 7, 42])])
    source = np.concatenate([shared[t % 5] for t in range(100)] + [np.array([shared[2][0], 299, 150])])
    expected = bits.dense()
    for t, s in zip(target, source, strict=True):
        expected[t] |= expected[s]
    if grouped:
        order = np.argsort(target, kind="stable")
        target, source = target[order], source[order]
    bits.or_rows(target, source, chunk=16, grouped=grouped)
    assert np.array_equal(bits.dense(), expected)
