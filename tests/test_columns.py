"""compiler/plan/columns.py: the column helpers the writers join big tables with give what
the plain per-row Python gives, and views.cable_ids spells every id as naming.cable_id."""

from __future__ import annotations

import numpy as np

from compiler.plan.columns import Coded, concat, distinct, groups, present, row_groups, text_chunks
from compiler.plan.naming import cable_id
from compiler.plan.views import cable_ids

from .conftest import shared_plan


def test_distinct_is_numpy_unique():
    rng = np.random.default_rng(3)
    for values in (rng.integers(0, 50, 1000), rng.integers(-5, 5, 7), np.zeros(0, dtype=np.int64), np.array([4]),
                   rng.random(300).round(1)):
        assert distinct(values).tolist() == np.unique(values).tolist()


def test_present_is_numpy_unique_of_indices():
    rng = np.random.default_rng(2)
    for values, n in ((rng.integers(0, 50, 300), 50), (rng.integers(0, 50, 300).astype(np.int32), 50),
                      (np.array([3, -1, 7, 3]), 8), (np.array([9, 2, 2]), 5), (np.zeros(0, dtype=np.int64), 4)):
        got = present(values, n)
        assert np.array_equal(got, np.unique(values)) and got.dtype == values.dtype


def test_groups_is_numpy_unique_with_index_and_inverse():
    rng = np.random.default_rng(2)
    runs = np.concatenate([np.arange(50), np.arange(30), rng.integers(0, 9, 40)])  # sorted runs, repeats
    for values in (rng.integers(0, 1000, 5000), runs, np.zeros(0, dtype=np.int64), np.array([7])):
        uniq, first, inverse = groups(values)
        expected = np.unique(values, return_index=True, return_inverse=True)
        for got, want in zip((uniq, first, inverse), expected, strict=True):
            assert np.array_equal(got, want.ravel())


def test_row_groups_is_numpy_unique_over_rows():
    rng = np.random.default_rng(4)
    for rows in (200, 1, 0):
        columns = [rng.integers(0, 3, rows), rng.integers(-2, 2, rows), rng.integers(0, 2**63, rows, dtype=np.uint64) % 3]
        first, inverse = row_groups(*columns)
        _, want_first, want_inverse = np.unique(np.stack([c.astype(np.int64) for c in columns], axis=1), axis=0,
                                                 return_index=True, return_inverse=True)
        assert np.array_equal(first, want_first) and np.array_equal(inverse, want_inverse.ravel())


def test_text_chunks_join_each_row_in_order():
    a = np.array(["x", "y", "z", ""], dtype=object)
    b = ["1", "2", "3", "4"]
    rows = [f"{x},{y}|\n" for x, y in zip(a.tolist(), b, strict=True)]
    for chunk_rows in (1, 3, 4, 100):
        assert "".join(text_chunks([a, ",", b, "|", "\n"], 4, chunk_rows)) == "".join(rows)
    assert list(text_chunks([a, "\n"], 0)) == []


def test_concat_joins_per_row():
    a = np.array(["x", "y"], dtype=object)
    assert concat(["<", a, ">", ["1", "2"]]).tolist() == ["<x>1", "<y>2"]


def test_cable_ids_are_naming_cable_id():
    plan = shared_plan("b200-superpod-4su")
    names = [d.name for d in plan.devices]
    expected = [cable_id(names[a], p + 1) for a, p in zip(plan.links.a_dev.tolist(), plan.links.a_port.tolist(), strict=True)]
    assert cable_ids(plan) == expected
    assert len(expected) > 1000


def test_json_string_pieces_are_what_json_writes():
    import json

    from compiler.plan.serialize import json_strings

    for values in (["a:1", "b-2", "ü"], ['say "hi"', "back\\slash", "tab\there", "plain"], ["a", "b"]):
        column = np.array(values, dtype=object)
        for ensure_ascii in (False, True):
            text = "".join(text_chunks(json_strings(column, ensure_ascii) + ["\n"], len(values)))
            assert text.splitlines() == [json.dumps(v, ensure_ascii=ensure_ascii) for v in values]


def test_dotted_is_ipaddress_text():
    from ipaddress import IPv4Address

    from compiler.plan.routing import dotted

    values = np.array([0, 1, 255, 256, 167772161, 3232235777, 4294967295], dtype=np.uint32)
    assert dotted(values) == [str(IPv4Address(int(v))) for v in values.tolist()]
    assert dotted(np.zeros(0, dtype=np.uint32)) == []


def test_coded_columns_read_as_their_values():
    """A Coded column (a table and a code per row) joins as table[codes], the separators
    beside it taken into its table or not, in chunks that cut rows anywhere."""
    rng = np.random.default_rng(1)
    rows = 1000
    kinds = Coded(np.array(["server-leaf", "leaf-spine"], dtype=object), rng.integers(0, 2, rows))
    speeds = Coded(np.array(["400", "800"], dtype=object), rng.integers(0, 2, rows))
    names = np.array([f"n{i}" for i in range(rows)], dtype=object)
    big = Coded(np.array([f"p{i}" for i in range(rows)], dtype=object), rng.permutation(rows))  # no smaller than the rows
    pieces = [names, ",", kinds, ",", ",", speeds, ";", big, "\n"]
    want = "".join(f"{n},{k},,{s};{b}\n" for n, k, s, b in zip(names.tolist(), kinds.values().tolist(), speeds.values().tolist(),
                                                              big.values().tolist(), strict=True))
    for chunk_rows in (7, 256, 4096):
        assert "".join(text_chunks(pieces, rows, chunk_rows)) == want
    assert concat([kinds, "/", speeds]).tolist() == [f"{k}/{s}" for k, s in zip(kinds.values().tolist(), speeds.values().tolist(), strict=True)]


def test_ranges_are_each_runs_positions():
    from compiler.plan.columns import ranges

    assert ranges(np.array([2, 0, 3, 1])).tolist() == [0, 1, 0, 1, 2, 0]
    assert ranges(np.array([], dtype=np.int64)).tolist() == []
