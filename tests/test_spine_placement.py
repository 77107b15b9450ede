"""Where the spine racks stand (expand/layout.py, expand/placement.py): start, middle or
end of the racks the fabric fills, named rows, or auto (the shortest total cable length),
and the one record that plan.json, summary.json and report.html show."""

from __future__ import annotations

import copy
import json
from collections import Counter

import jsonschema

import numpy as np
import pytest

from compiler.plan.physical import spine_placement_sentence

from .conftest import cli_in_process, plan_from_text

HALL = """name: t
servers: {servers}
server: dgx-b200
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32}}
{growth}layout:
  rows: {rows}
  racks_per_row: {per_row}
  rack: {{height_u: 48, power_kw: 60}}
  leaf_placement: {policy}
{spine}"""


def hall(servers=128, rows=6, per_row=10, policy="end-of-row", spine="", growth=""):
    return plan_from_text(HALL.format(servers=servers, rows=rows, per_row=per_row, policy=policy, spine=spine, growth=growth))


def spine_racks(plan) -> set[str]:
    phys = plan.physical
    return {phys.racks[int(phys.dev_rack[i])].name for i, d in enumerate(plan.devices) if d.role in ("spine", "core")}


def total_m(plan) -> float:
    return round(float(plan.physical.length_m.sum()), 1)


@pytest.mark.parametrize("policy", ["end-of-row", "middle-of-row", "top-of-rack", "network-rack"])
@pytest.mark.parametrize("servers", [64, 128, 256])
def test_auto_is_never_longer_than_any_placement_and_is_that_placement(policy, servers):
    auto = hall(servers=servers, policy=policy, rows=8)
    record = auto.physical.model["spine_placement"]
    assert record["asked"] == "auto" and [o["placement"] for o in record["options"]] == ["end", "middle", "start"]
    explicit = {where: hall(servers=servers, policy=policy, rows=8, spine=f"  spine_placement: {where}\n")
                for where in ("start", "middle", "end")}
    for option in record["options"]:  # each figure auto reports is what that placement builds
        assert option["link_length_m"] == total_m(explicit[option["placement"]])
    assert total_m(auto) == min(total_m(p) for p in explicit.values())
    same = explicit[record["chosen"]]
    assert [r.name for r in auto.physical.racks] == [r.name for r in same.physical.racks]
    assert (auto.physical.dev_rack == same.physical.dev_rack).all() and (auto.physical.order_m == same.physical.order_m).all()


def test_the_four_su_hall_puts_its_spines_in_the_middle_row():
    # 4 SUs of 32 DGX B200 at 4 per rack, end-of-row: one row per SU (8 compute racks and a
    # rack of 8 leaves); the spine rack fits at the end of a row: D10 at the end, B10 in the middle.
    plan = hall(servers=128, rows=6, per_row=10)
    record = plan.physical.model["spine_placement"]
    assert record["chosen"] == "middle" and record["spine_rows"] == ["B"] and spine_racks(plan) == {"DH1.B10"}
    rows_of_compute = Counter(r.row for r in plan.physical.racks if r.kind == "compute")
    assert rows_of_compute == {"A": 8, "B": 8, "C": 8, "D": 8}
    lengths = {o["placement"]: o["link_length_m"] for o in record["options"]}
    assert lengths["middle"] < lengths["end"] < lengths["start"]
    # every leaf-spine link is at most 2 rows long in the middle; from row A to an end row E it is 4
    phys = plan.physical
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    ra, rb = phys.dev_rack[plan.links.a_dev], phys.dev_rack[plan.links.b_dev]
    row = np.array([r.row_index for r in phys.racks])
    assert np.abs(row[ra] - row[rb])[kinds == "leaf-spine"].max() == 2


def test_named_rows_hold_every_spine_and_nothing_else():
    plan = hall(servers=128, rows=6, spine="  spine_rows: [D]\n")  # spine_rows alone means spine_placement: rows
    record = plan.physical.model["spine_placement"]
    assert (record["asked"], record["chosen"], record["spine_rows"]) == ("rows", "rows", ["D"])
    assert {name.split(".")[1][0] for name in spine_racks(plan)} == {"D"}
    assert {r.kind for r in plan.physical.racks if r.row == "D"} == {"network"}
    assert Counter(r.row for r in plan.physical.racks if r.kind == "compute") == {"A": 8, "B": 8, "C": 8, "E": 8}
    names = [(r.row_index, r.position) for r in plan.physical.racks]
    assert names == sorted(names)  # racks listed in walking order


def test_growth_places_spines_for_the_growth_target():
    # the same hall written two ways: 128 servers today growing to 256, and 256 servers
    grown = hall(servers=128, rows=10, growth="growth: {max_servers: 256}\n")
    final = hall(servers=256, rows=10)
    a, b = grown.physical.model["spine_placement"], final.physical.model["spine_placement"]
    assert (a["chosen"], a["spine_rows"], a["options"]) == (b["chosen"], b["spine_rows"], b["options"])
    assert spine_racks(grown) == spine_racks(final)


@pytest.mark.parametrize("layout_keys, code, words", [
    ("  spine_rows: [H]\n", "LAYOUT_SPINE_ROW_OUTSIDE", ["row H", "6 rows", "A to F"]),
    ("  spine_placement: rows\n", "", ["needs spine_rows"]),
    ("  spine_placement: end\n  spine_rows: [B]\n", "", ["only read with spine_placement: rows"]),
    ("  spine_rows: [B, B]\n", "", ["names a row twice"]),
    ("  spine_rows: [b]\n", "", ["spine_rows"]),
    ("  spine_placement: centre\n", "", ["spine_placement"]),
])
def test_bad_spine_placement_is_a_located_error(tmp_path, layout_keys, code, words):
    spec = tmp_path / "s.yaml"
    spec.write_text(HALL.format(servers=128, rows=6, per_row=10, policy="end-of-row", spine=layout_keys, growth=""))
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"), "--format", "json")
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout
    diagnostics = json.loads(r.stdout)["diagnostics"]
    assert diagnostics and all(d["line"] > 0 for d in diagnostics)
    text = " ".join(d["message"] + " " + d["path"] for d in diagnostics)
    if code:
        assert diagnostics[0]["code"] == code
    for w in words:
        assert w in text, text
    assert not (tmp_path / "out" / "t").exists()


def test_named_rows_too_few_for_the_spine_racks(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(HALL.format(servers=512, rows=20, per_row=2, policy="end-of-row", spine="  spine_rows: [T]\n", growth=""))
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "fill 5 racks; 1 row of 2 holds 2" in r.stderr and "name 3 rows" in r.stderr, r.stderr


def test_plan_summary_and_report_show_one_figure(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(HALL.format(servers=128, rows=6, per_row=10, policy="end-of-row", spine="", growth=""))
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out" / "t"
    plan_json = json.loads((out / "plan.json").read_text())
    schema = json.loads((out / "plan.schema.json").read_text())
    jsonschema.validate(plan_json, schema)  # the record follows its published schema
    wrong = copy.deepcopy(plan_json)
    wrong["physical"]["model"]["spine_placement"]["chosen"] = "auto"  # auto is asked, never chosen
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(wrong, schema)
    record = plan_json["physical"]["model"]["spine_placement"]
    summary = json.loads((out / "summary.json").read_text())["spine_placement"]
    assert summary == {"chosen": record["chosen"], "spine_rows": record["spine_rows"],
                       "link_length_m": {o["placement"]: o["link_length_m"] for o in record["options"]}}
    sentence = spine_placement_sentence(record)
    assert sentence in (out / "report.html").read_text()
    for o in record["options"]:
        assert f"{o['link_length_m']:,.0f} m" in sentence
    assert "row B" in sentence and "the shortest" in sentence


def test_a_one_switch_hall_has_nothing_to_place_and_says_nothing():
    # 4 DGX B200 and no unit asked: one switch holds every port; it stands in a network rack beside
    # its servers' racks, and no rack of spines stands apart
    plan = plan_from_text(HALL.format(servers=4, rows=2, per_row=10, policy="end-of-row", spine="", growth="")
                          .replace(", scalable_unit: 32", ""))
    assert [d.role for d in plan.devices if d.tier > 0] == ["leaf"]
    record = plan.physical.model["spine_placement"]
    assert record["spine_rows"] == [] and record["chosen"] == "end"
    assert len({o["link_length_m"] for o in record["options"]}) == 1
    assert spine_placement_sentence(record) == ""
