"""plan.json's tables joined from columns (plan/serialize.py _json_rows) read exactly as
encoding each row with json would: values of mixed types that compare equal (1, 1.0, True)
keep their own spelling, strings that need escaping are escaped."""

import json

from compiler.plan.columns import text_chunks
from compiler.plan.serialize import _json_rows


def _text(columns: list[list]) -> list[str]:
    rows = _json_rows(columns)
    return "".join(text_chunks(rows.pieces + ["\n"], rows.rows)).splitlines()


def test_mixed_types_keep_their_spelling():
    columns = [["a", "b\"q", "c\\d", "tab\there", "é"], [1, True, 1.0, None, 0], [None, None, 3, 3, False], ["x", None, "y", "z", "w"]]
    want = [json.dumps(list(row), ensure_ascii=False, separators=(",", ":")) for row in zip(*columns, strict=True)]
    assert _text(columns) == want
    assert want[1] == '["b\\"q",true,null,null]'


def test_plain_columns():
    columns = [["leaf-1", "leaf-2"], [3, 4], [None, 7]]
    assert _text(columns) == ['["leaf-1",3,null]', '["leaf-2",4,7]']
