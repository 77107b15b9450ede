"""Limits a requirements file (or any spec) states about what may be bought, run and
powered: allowed NOS, allowed switch models, rack power. One meaning everywhere: `clusterc
check` judges them as requirements (exit 1), and explore rejects candidates with the same
findings as the reason.

The spec's allowed models and NOSes are check/allowed.py's."""

import json
from importlib import resources

import jsonschema
import pytest

from compiler.explore import explore
from compiler.pipeline import build_plan
from compiler.plan.power import rack_draw

from .conftest import cli_in_process, run_cli

ROCE = """name: {name}
servers: 32
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: {switch}
  speed_gbps: 400
  oversubscription: "1:1"
  scalable_unit: 16{fabric}
{extra}"""

HALL = """layout:
  rows: 2
  racks_per_row: 10
  rack: {{height_u: 48, power_kw: 60}}
  servers_per_rack: {per_rack}
  leaf_placement: network-rack
  spine_placement: end
"""


def _write(tmp_path, text, name="req.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _roce(tmp_path, switch="sn5600", fabric="", extra="", name="roce"):
    return _write(tmp_path, ROCE.format(name=name, switch=switch, fabric=fabric, extra=extra), f"{name}.yaml")


def test_nos_and_switch_model_limits_reject_candidates_with_the_reason(tmp_path):
    req = _roce(tmp_path, "[sn5600, qm9700, arista-7060x6-64pe]",
                extra="requirements:\n  nos: [sonic, cumulus]\n  switch_models: [sn5600, qm9700]\n")
    x = explore(req, "switches")
    by_switch = {e.candidate.choices["fabric.switch"]: e for e in x.evaluated}
    assert [e.candidate.choices["fabric.switch"] for e in x.feasible] == ["sn5600"]
    # 32 DGX H100, 2 SUs of 16, 8 rails: 16 leaves; 256 uplinks of 400G on two 128-port spines
    assert by_switch["sn5600"].switches == {"leaf": 16, "spine": 2}
    assert by_switch["qm9700"].rejected == (
        "NOS_NOT_ALLOWED: qm9700 (16 leaf, 4 spine) runs none of the allowed NOS (sonic, cumulus): it is an InfiniBand "
        "switch, configured by its subnet manager")
    arista = by_switch["arista-7060x6-64pe"].rejected
    assert arista.startswith("SWITCH_MODEL_NOT_ALLOWED: arista-7060x6-64pe (16 leaf, 2 spine) is not an allowed switch "
                             "model; allowed: sn5600, qm9700 (+1 more)")  # the other: it runs EOS only
    page = run_cli("explore", str(req))
    assert page.returncode == 0 and "rejected (2):" in page.stdout and "NOS_NOT_ALLOWED" in page.stdout


def test_nos_as_a_choice_dimension(tmp_path):
    """fabric.nos: [..] varies the NOS like any key: one not allowed is rejected by the
    requirement, one the switch cannot run is invalid for that candidate."""
    req = _roce(tmp_path, "sn5600", fabric="\n  nos: [frr, sonic, eos]", extra="requirements: {nos: [sonic, cumulus]}\n")
    x = explore(req, "switches")
    reasons = {e.candidate.choices["fabric.nos"]: e.rejected for e in x.evaluated}
    assert reasons["sonic"] is None
    assert reasons["frr"] == "NOS_NOT_ALLOWED: configs are written for frr, which is not an allowed NOS (sonic, cumulus)"
    assert reasons["eos"] == "invalid: sn5600 does not run eos (catalog: cumulus, sonic, frr)"


def test_the_same_limits_in_plain_check_exit_1_and_validate(tmp_path):
    spec = _roce(tmp_path, "sn5600", fabric="\n  nos: sonic",
                 extra="requirements:\n  nos: [cumulus]\n  switch_models: [sn5600]\n")
    r = cli_in_process("check", "--format", "json", str(spec))
    assert r.returncode == 1
    report = json.loads(r.stdout)["reports"][0]
    jsonschema.validate(report, json.loads((resources.files("compiler.check") / "checks.schema.json").read_text()))
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [f["code"] for f in errors] == ["NOS_NOT_ALLOWED"]
    results = {r["name"]: r for r in report["figures"]["requirements"]["results"]}
    assert results["switch_models"] == {"name": "switch_models", "ok": True, "required": ["sn5600"], "measured": ["sn5600"]}
    assert results["nos"] == {"name": "nos", "ok": False, "required": ["cumulus"], "measured": {"compute": "sonic"}}

    ok = _roce(tmp_path, "sn5600", fabric="\n  nos: sonic", extra="requirements: {nos: [cumulus, sonic]}\n", name="ok")
    assert cli_in_process("check", str(ok)).returncode == 0


def test_bad_limits_are_invalid_input_with_line_and_hint(tmp_path):
    spec = _roce(tmp_path, "sn5600", extra="requirements:\n  nos: [sonc]\n  switch_models: [sn5600, sn5600]\n")
    r = run_cli("validate", str(spec))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "roce.yaml:11:9: error: requirements.nos.0: unknown NOS 'sonc'" in r.stdout + r.stderr
    assert "did you mean sonic?" in r.stdout + r.stderr
    assert "requirements.switch_models: 'sn5600' is listed twice" in r.stdout + r.stderr

    unknown = _roce(tmp_path, "sn5600", extra="requirements: {switch_models: [sn5600, qm9701]}\n", name="unknown")
    r = run_cli("explore", str(unknown))
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "unknown.yaml:10:" in out and "unknown switch 'qm9701'" in out and "qm9700" in out

    no_hall = _roce(tmp_path, "sn5600", extra="requirements: {rack_power_kw: 40}\n", name="nohall")
    r = run_cli("compile", str(no_hall), "-o", str(tmp_path / "out"))
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "nohall.yaml:10:" in out
    assert "racks exist only with a physical layout" in out and "add layout:" in out


def test_rack_power_limit_rejects_the_rack_over_it_and_reports_unknown_power(tmp_path):
    """4 DGX per rack: DGX B200 4 x 14.3 = 57.2 kW, over 45 kW in every one of the 8 compute
    racks; DGX H100 4 x 10.2 = 40.8 kW fits. The three SN5400 network racks (each SU's
    leaves, the spines) have no published switch power, primary or secondary: unknown, said
    so, not passed as 0 W."""
    req = _write(tmp_path, ROCE.format(name="rackp", switch="sn5400", fabric="", extra=HALL.format(per_rack=4)
                                       + "requirements: {rack_power_kw: 45}\n")
                 .replace("server: dgx-h100", "server: [dgx-h100, dgx-b200]").replace("  speed_gbps: 400\n", ""))
    x = explore(req, "switches")
    h100, b200 = x.evaluated
    assert b200.rejected == "RACK_POWER_ABOVE_LIMIT: rack DH1.A02 draws 57.2 kW; the limit is 45 kW (8 racks over)"
    assert h100.rejected is None
    assert h100.unconfirmed and h100.unconfirmed[0].startswith(
        "3 rack(s) hold parts without a published power (sn5400): whether they stay within 45 kW is unknown")
    assert any(c.startswith("rack power not confirmed for 1 feasible design(s) (rackp-001)") for c in x.caveats())

    spec = _write(tmp_path, ROCE.format(name="h100", switch="sn5400", fabric="", extra=HALL.format(per_rack=4)
                                        + "requirements: {rack_power_kw: 45}\n").replace("  speed_gbps: 400\n", ""),
                  "h100.yaml")
    r = cli_in_process("check", "--format", "json", str(spec))
    assert r.returncode == 0  # unknown is a warning, not a failure
    report = json.loads(r.stdout)["reports"][0]
    result = next(r for r in report["figures"]["requirements"]["results"] if r["name"] == "rack_power_kw")
    assert (result["measured"], result["worst_rack"], result["racks_over"], result["racks_unknown"]) == (40.8, "DH1.A02", 0, 3)
    assert "RACK_POWER_UNKNOWN_AGAINST_LIMIT" in {f["code"] for f in report["findings"] if f["severity"] == "warning"}


def test_rack_draw_counts_switch_side_optics(tmp_path):
    """Tomahawk 5 publishes 913 W without optics. A leaf (16 DGX ports and 16 uplinks at
    400G) holds 8 + 8 twin-port MMA4Z00-NS modules of 15 W where its uplinks are optical,
    only the 8 server-side ones where they are copper (LACC to the spine rack next door)."""
    spec = _write(tmp_path, ROCE.format(name="th5", switch="tomahawk5", fabric="", extra=HALL.format(per_rack=4)
                                        + "requirements: {rack_power_kw: 40}\n"), "th5.yaml")
    _, plan = build_plan(spec)
    draw = rack_draw(plan)
    first = {int(r): plan.devices[i].name for i, r in reversed(list(enumerate(plan.physical.dev_rack.tolist())))}
    kw = {first[i]: (float(w), float(o)) for i, (w, o) in enumerate(zip(draw.known_w, draw.optics_w)) if i in first}
    assert kw["su2-leaf-r1"] == (8 * 913 + 8 * 16 * 15, 8 * 16 * 15)  # su2's leaves: fibre to the spines
    assert kw["su1-leaf-r1"] == (8 * 913 + 8 * 8 * 15, 8 * 8 * 15)  # su1's leaves: copper to the spine rack opposite
    assert kw["spine-01"] == (2 * 913 + 2 * 32 * 15, 2 * 32 * 15)  # 64 cages each, half of them su2's fibre
    assert kw["dgx-su1-001"] == (4 * 10_200, 0)  # a compute rack: the servers' maximum power
    assert not draw.unknown.any()
    r = cli_in_process("check", "--format", "json", str(spec))
    assert r.returncode == 1
    over = [f for f in json.loads(r.stdout)["reports"][0]["findings"] if f["code"] == "RACK_POWER_ABOVE_LIMIT"]
    assert [f["message"] for f in over] == ["rack DH1.A02 draws 40.8 kW; the limit is 40 kW (8 racks over)"]
