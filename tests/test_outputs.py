"""The files compile writes: schema-valid plan.json, cabling and BOM that agree with the plan,
and all-or-nothing writing."""

from __future__ import annotations

import csv
import json

import jsonschema
import pytest

from compiler.pipeline import build_plan, write_outputs
from compiler.render import writer as writer_module

from .conftest import SPECS, outputs_of, run_cli, shared_outputs, shared_plan, tree_bytes




@pytest.fixture(scope="module")
def compiled():
    return shared_plan("h100-superpod-1su"), shared_outputs("h100-superpod-1su")


def test_plan_json_matches_its_schema(compiled):
    plan, folder = compiled
    data = json.loads((folder / "plan.json").read_text())
    schema = json.loads((folder / "plan.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema)
    assert len(data["links"]["rows"]) == len(plan.links)
    assert len(data["devices"]["rows"]) == len(plan.devices)
    # Every port of every device is in the plan through its layout: 64 per QM9700 at 400G.
    assert len(data["port_layouts"]["qm9700@400"]["rows"]) == 64


def test_plan_json_schema_rejects_a_broken_plan(compiled):
    _, folder = compiled
    data = json.loads((folder / "plan.json").read_text())
    schema = json.loads((folder / "plan.schema.json").read_text())
    data["links"]["rows"][0][6] = "400"  # speed as text
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_cabling_csv_rows_are_the_links(compiled):
    plan, folder = compiled
    rows = list(csv.DictReader((folder / "cabling.csv").open()))
    assert len(rows) == len(plan.links) == 252 + 256
    assert len({r["cable_id"] for r in rows}) == len(rows)
    ends = [(r["a_device"], r["a_port"]) for r in rows] + [(r["b_device"], r["b_port"]) for r in rows]
    assert len(set(ends)) == len(ends), "a port appears on two cables"
    first = rows[0]
    # DGX H100 Table 6: GPU0 is OSFP4 port 2 (mlx5_0), rail 1 -> leaf r1, first downlink.
    assert (first["a_device"], first["a_port"], first["b_device"], first["b_port"]) == ("dgx-su1-001", "osfp4-p2", "su1-leaf-r1", "1/1/1")
    assert first["a_transceiver"] == "MMA4Z00-NS-FLT" and first["b_transceiver"] == "MMA4Z00-NS"
    assert first["media"] == "MMF" and first["part_number"] == "MFP7E10-N0xx"


def test_bom_quantities(compiled):
    _, folder = compiled
    bom = {(r["category"], r["part_number"]): r for r in csv.DictReader((folder / "bom.csv").open())}
    assert int(bom[("switch", "MQM9700-NS2F")]["quantity"]) == 12
    assert int(bom[("server", "DGX H100")]["quantity"]) == 31
    # one twin-port module per switch cage: 12 switches x 32 cages; DGX: 4 cages x 31.
    assert int(bom[("transceiver", "MMA4Z00-NS")]["quantity"]) == 12 * 32
    assert int(bom[("transceiver", "MMA4Z00-NS-FLT")]["quantity"]) == 31 * 4
    # UFM: 4 single-port 400G flat-top HCAs.
    assert int(bom[("transceiver", "MMA4Z00-NS400")]["quantity"]) == 4
    assert int(bom[("cable", "MFP7E10-N0xx")]["quantity"]) == 252 + 256
    assert bom[("server", "DGX H100")]["total_power_w"] == str(31 * 10200)


def test_failed_compile_leaves_previous_output(tmp_path, monkeypatch):
    plan = shared_plan("h100-superpod-1su")
    folder = outputs_of(plan, tmp_path)
    before = tree_bytes(folder)

    def boom(*_args, **_kw):
        raise RuntimeError("disk full")

    from compiler import render

    monkeypatch.setitem(render.RENDERERS, "summary", render.Renderer(boom, render.ALL))
    with pytest.raises(RuntimeError):
        outputs_of(plan, tmp_path)
    assert tree_bytes(folder) == before
    assert [p.name for p in tmp_path.iterdir()] == ["h100-superpod-1su"], "no temporary folder left behind"


def test_rename_exchange_swaps_in_place(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "x").write_text("new")
    (b / "x").write_text("old")
    assert writer_module._exchange(a, b)
    assert (b / "x").read_text() == "new" and (a / "x").read_text() == "old"


def test_only_selected_outputs(tmp_path):
    r = run_cli("compile", str(SPECS / "b200-superpod-2su.yaml"), "-o", str(tmp_path), "--only", "summary,bom")
    assert r.returncode == 0, r.stderr
    assert sorted(tree_bytes(tmp_path / "b200-superpod-2su")) == ["bom.csv", "bom_totals.csv", "manifest.json", "summary.json"]
    assert "Traceback" not in r.stderr


def test_compile_rejects_bad_spec_in_fresh_process(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: ok\nservers: 8\nserver: dgx-b200\nfabric: {topology: fat-tree, switch: nope}\n")
    r = run_cli("compile", str(bad), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "unknown switch 'nope'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out" / "ok").exists()


def test_cabling_names_a_transceiver_missing_from_the_catalog_as_the_bom_does(tmp_path):
    """Regression (found by tests/test_metamorphic.py): the catalog has no multimode optic
    for the SN5400's QSFP-DD cage; the BOM ordered 1,000 'NOT IN CATALOG' modules while
    cabling.csv left the switch ends blank, as if no module went there."""
    spec = tmp_path / "df.yaml"
    spec.write_text("name: df\nservers: 1\nserver: dgx-h100\nfabric: {topology: dragonfly, switch: sn5400, switches_per_group: 32}\n")
    plan = build_plan(spec)[1]
    target = write_outputs(plan, tmp_path / "out", ["cabling", "bom"])
    rows = list(csv.DictReader((target / "cabling.csv").open()))
    missing = "NOT IN CATALOG: mmf QSFP-DD finned 400G 50G-SerDes"
    local = [r for r in rows if r["kind"] == "local"]
    assert len(local) == 32 * 31 // 2 and all(r["a_transceiver"] == r["b_transceiver"] == missing for r in local)
    ends = {(r[f"{s}_device"], r[f"{s}_cage"]) for r in rows for s in "ab" if r[f"{s}_transceiver"] == missing}
    bom = {r["part_number"]: int(r["quantity"]) for r in csv.DictReader((target / "bom.csv").open())}
    assert bom[missing] == len(ends) == 2 * 496 + 8
