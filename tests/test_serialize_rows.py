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


def test_link_ids_spelled_from_pieces_are_each_links_cable_id():
    """plan.json's link rows spell each cable id from its device's and port number's pieces,
    each encoded once: they must read back as the link's own id, also where a device's name
    needs escaping (a quote, a backslash, a newline, non-ASCII)."""
    import dataclasses

    from compiler.plan.serialize import _link_rows
    from compiler.plan.views import cable_ids

    from .conftest import SPECS, shared_plan

    plan = shared_plan(SPECS / "roce-2spine-4leaf-frr.yaml")
    devices = list(plan.devices)
    switch = next(i for i, d in enumerate(devices) if d.tier == 1)
    devices[switch] = dataclasses.replace(devices[switch], name='leaf "odd" \\ one\nline')
    devices[0] = dataclasses.replace(devices[0], name="server é \t 0")
    plan = dataclasses.replace(plan, devices=devices, _memo={})
    rows = _link_rows(plan)
    text = "".join(text_chunks(rows.pieces + ["\n"], rows.rows))
    ids = [json.loads(line)[0] for line in text.splitlines()]
    assert ids == cable_ids(plan)
    assert any(i.startswith('leaf "odd"') for i in ids) and any(i.startswith("server é") for i in ids)
