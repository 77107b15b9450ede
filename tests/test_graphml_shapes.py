"""compiler/render/graphml.py: rows whose attributes differ (an absent attribute in some
rows, values to escape) are spelled exactly as the template's own macro spells each row."""

from __future__ import annotations

from typing import Any

from compiler.plan.columns import text_chunks
from compiler.render.graphml import _elements
from compiler.render.templates import environment


def test_each_row_is_the_macro_rendered_with_its_present_attributes():
    macros: Any = environment().get_template("graphml/elements.j2").module
    columns = {"kind": ["a&b", "leaf", "leaf", "x<y"], "length_m": [1.5, None, 2.0, None], "tier": [None, None, None, None],
               "speed_gbps": [400, 400, 800, 400], "note": ['say "hi"', None, "ok", "ok"]}
    ids, src, dst = ["c:1", "c:2", "c:3", "c'4"], ["s1", "s2", "s3", "s4"], ["t1", "t2", "t3", "t4"]
    names = list(columns)
    text = "".join(text_chunks(*_elements(macros.edge, [ids, src, dst], names, columns), chunk_rows=3))
    expected = "".join(str(macros.edge(ids[r], src[r], dst[r], [(n, columns[n][r]) for n in names if columns[n][r] is not None]))
                       for r in range(4))
    assert text == expected
    assert "a&amp;b" in text and "x&lt;y" in text and "e_tier" not in text and text.count("e_length_m") == 2
