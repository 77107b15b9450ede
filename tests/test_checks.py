"""Checks: bisection two ways, oversubscription measured, redundancy and failures,
hops, collective estimates, and requirements that fail CI."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from compiler.check import run_checks
from compiler.traffic.collective_time import ring_allreduce_s, transfer_time_s
from compiler.pipeline import build_plan

from .conftest import SPECS, cli_in_process, shared_checks
from .synthetic import fat_tree_spec

RAIL = """name: {name}
servers: {servers}
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: qm9700
  oversubscription: "{ratio}"
  scalable_unit: 32
{extra}"""


def _spec(tmp_path, name="r", servers=32, ratio="1:1", extra=""):
    path = tmp_path / f"{name}.yaml"
    path.write_text(RAIL.format(name=name, servers=servers, ratio=ratio, extra=extra))
    return path


def _figures(path):
    return run_checks(build_plan(path)[1]).as_json()["figures"]


@pytest.mark.parametrize("k,hosts,tiers", [(4, 8, 2), (8, 32, 2), (16, 128, 2), (24, 288, 2), (4, 16, 3), (8, 128, 3), (12, 432, 3)])
def test_closed_form_equals_max_flow_on_fat_trees(tmp_path, k, hosts, tiers):
    b = _figures(fat_tree_spec(tmp_path, k, hosts, tiers=tiers))["bisection"]
    # Full-bisection fat tree: half the hosts' 400G injection.
    assert b["analytic_gbps"] == b["worst_cut_gbps"] == hosts // 2 * 400


@pytest.mark.parametrize("spec", ["b200-superpod-2su", "b200-superpod-8su", "b200-superpod-16su", "seed-8k-fat-tree"])
def test_closed_form_equals_max_flow_on_published_designs(spec):
    b = shared_checks(SPECS / f"{spec}.yaml").as_json()["figures"]["bisection"]
    _, plan = build_plan(SPECS / f"{spec}.yaml")
    assert b["analytic_gbps"] == b["worst_cut_gbps"] == plan.design["gpus"] // 2 * 400


def test_two_to_one_halves_bisection(tmp_path):
    one = _figures(_spec(tmp_path, "a", 128, "1:1"))
    two = _figures(_spec(tmp_path, "b", 128, "2:1"))
    assert two["bisection"]["worst_cut_gbps"] * 2 == one["bisection"]["worst_cut_gbps"] == 64 * 8 * 400
    assert two["bisection"]["analytic_gbps"] == two["bisection"]["worst_cut_gbps"]
    assert two["oversubscription"]["leaf"]["max"] == "2:1" and one["oversubscription"]["leaf"]["max"] == "1:1"
    # A ring in plan order crosses the spines only between SUs, one flow per rail leaf: the
    # routed ring runs at line rate on both (the bisection model had 2:1 doubling it).
    ring = {name: f["collectives"]["allreduce"][-1]["ring_s"] for name, f in (("1:1", one), ("2:1", two))}
    assert ring["2:1"] == ring["1:1"]
    assert two["collectives"]["fabric_factor"] == one["collectives"]["fabric_factor"] == 1.0


def test_losing_one_of_four_spines_costs_25_percent(tmp_path):
    f = _figures(_spec(tmp_path, servers=32))
    assert f["redundancy"]["single_failures"]["spine"]["bisection_lost_percent"] == 25.0
    # 32 uplinks per leaf over 4 spines: 8 paths go with the spine.
    assert f["redundancy"]["leaf_pair_edge_disjoint_paths_min"] == 32
    assert f["redundancy"]["single_failures"]["spine"]["leaf_pair_paths_min"] == 24
    leaf = f["redundancy"]["single_failures"]["leaf"]
    assert (leaf["gpu_ports_cut_off"], leaf["servers_cut_off"]) == (32, 0)  # one rail down on 32 servers
    assert f["redundancy"]["single_homed_servers"] == 32


def test_fat_tree_leaf_loss_cuts_servers_off(tmp_path):
    f = _figures(fat_tree_spec(tmp_path, 8, 32, tiers=2))
    assert f["redundancy"]["single_failures"]["leaf"]["servers_cut_off"] == 4


def test_hops_two_and_three_tiers():
    assert shared_checks(SPECS / "b200-superpod-4su.yaml").as_json()["figures"]["hops"]["max"] == 3
    hops = shared_checks(SPECS / "b200-superpod-16su.yaml").as_json()["figures"]["hops"]
    assert hops["across_groups_max"] == 5 and hops["max"] == 5


def test_monte_carlo_is_seeded_and_plausible(tmp_path):
    a = _figures(_spec(tmp_path, "m", 64))["redundancy"]["monte_carlo"]
    b = _figures(_spec(tmp_path, "m", 64))["redundancy"]["monte_carlo"]
    assert a == b
    assert a["bisection_gbps_p99"] <= a["bisection_gbps_p50"] <= 32 * 8 * 400


def test_textbook_collectives():
    # designs.md: 140 GB at 100 Gb/s takes at least 11.2 s; a 2-rank ring moves exactly that.
    assert transfer_time_s(140e9, 100) == pytest.approx(11.2)
    assert ring_allreduce_s(140e9, 2, 100, 0.0) == pytest.approx(11.2)
    assert ring_allreduce_s(140e9, 1024, 100, 0.0) >= 11.2
    # nccl-tests busbw relation: busbw = algbw * 2(n-1)/n, and a ring reaches busbw = link bandwidth.
    n, size = 8, 1e9
    t = ring_allreduce_s(size, n, 400, 0.0)
    assert size / t * 2 * (n - 1) / n * 8 / 1e9 == pytest.approx(400)


REQ = """requirements:
  min_bisection_gbps: 60000
  max_oversubscription: {leaf: "1:1"}
  survive: {spine: 1, min_bisection_fraction: 0.8}
  max_hops: 1
"""


def test_one_server_rail_only_estimates_collectives(tmp_path):
    """Regression (found by tests/test_metamorphic.py): a rail of one server has a 0 Gb/s
    bisection, and the all-reduce estimates divided by it: a traceback on a valid spec."""
    spec = tmp_path / "one.yaml"
    spec.write_text("name: one\nservers: 1\nserver: dgx-h100\nfabric: {topology: rail-only, switch: qm9700}\n")
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    figures = json.loads((tmp_path / "out" / "one" / "report" / "checks.json").read_text())["figures"]["collectives"]
    assert figures["fabric_factor"] == 1.0 and figures["network_gbps_per_gpu"] == 400.0
    # 1 MiB over 8 GPUs at 400 Gb/s: 2 * 7/8 * 8 * 2**20 / 400e9 + 14 * 5 us
    assert figures["allreduce"][0]["ring_s"] == round(2 * 7 / 8 * 8 * 2**20 / 400e9 + 14 * 5e-6, 6)


def test_requirement_violations_exit_1_with_codes(tmp_path):
    spec = _spec(tmp_path, "req", 32, "2:1", REQ)
    r = cli_in_process("check", "--format", "json", str(spec))
    assert r.returncode == 1
    report = json.loads(r.stdout)["reports"][0]
    codes = {f["code"] for f in report["findings"] if f["severity"] == "error"}
    assert codes == {"BISECTION_BELOW_REQUIREMENT", "OVERSUBSCRIPTION_ABOVE_LIMIT",
                     "FAILURE_BISECTION_BELOW_FRACTION", "HOPS_ABOVE_LIMIT"}
    schema = json.loads((resources.files("compiler.check") / "checks.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_requirements_met_exit_0(tmp_path):
    spec = _spec(tmp_path, "ok", 32, "1:1", """requirements:
  min_bisection_gbps: 51200
  max_oversubscription: {leaf: "1:1"}
  survive: {spine: 1, link: 2, min_bisection_fraction: 0.75}
  max_hops: 3
""")
    r = cli_in_process("check", str(spec))
    assert r.returncode == 0, r.stdout
    assert "requirement survive: ok" in r.stdout


def test_fat_tree_cannot_survive_a_leaf(tmp_path):
    spec = fat_tree_spec(tmp_path, 8, 32, tiers=2, extra="requirements:\n  survive: {leaf: 1}\n")
    r = cli_in_process("check", "--format", "json", str(spec))
    assert r.returncode == 1
    codes = {f["code"] for f in json.loads(r.stdout)["reports"][0]["findings"]}
    assert "FAILURE_DISCONNECTS_SERVERS" in codes


def test_check_invalid_spec_exits_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nservers: 1\nserver: dgx-h100\nfabric: {topology: fat-tree, switch: qm9700}\nrequirements: {max_hops: 0}\n")
    r = cli_in_process("check", str(bad))
    assert r.returncode == 2 and "requirements.max_hops" in r.stderr


def test_compile_writes_checks_and_summary_figures(tmp_path):
    r = cli_in_process("compile", str(SPECS / "b200-superpod-4su.yaml"), "-o", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads((tmp_path / "b200-superpod-4su" / "summary.json").read_text())
    assert summary["bisection_gbps"] == {"analytic": 204800, "worst_cut": 204800}
    assert summary["oversubscription"] == {"leaf": "1:1"}
    assert summary["failures"]["spine"]["bisection_lost_percent"] == pytest.approx(100 / 16, abs=0.01)
    report = json.loads((tmp_path / "b200-superpod-4su" / "report" / "checks.json").read_text())
    schema = json.loads((resources.files("compiler.check") / "checks.schema.json").read_text())
    jsonschema.validate(report, schema)


def test_large_graphs_measure_failures_on_the_tightest_cuts(tmp_path, monkeypatch):
    """Above LARGE_GRAPH_LINKS, single failures use the two tightest intact cuts; on a
    symmetric fabric that gives the same figures as every cut, and the report says so."""
    from compiler.check import context, run_checks

    path = _spec(tmp_path, "m", 64)
    exact = run_checks(build_plan(path)[1]).as_json()["figures"]["redundancy"]
    monkeypatch.setattr(context, "LARGE_GRAPH_LINKS", 10)
    sampled = run_checks(build_plan(path)[1]).as_json()["figures"]["redundancy"]
    assert "failure_cuts" not in exact
    assert "2 tightest intact cuts" in sampled["failure_cuts"]
    for key, failure in exact["single_failures"].items():
        assert sampled["single_failures"][key]["bisection_gbps"] == failure["bisection_gbps"], key
        assert sampled["single_failures"][key]["servers_cut_off"] == failure["servers_cut_off"], key
