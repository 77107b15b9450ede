"""Planned growth never moves a pulled cable; diff says what changes physically."""

from __future__ import annotations

import json

import pytest

from compiler.pipeline import build_plan
from compiler.plan.diff import diff_plans

from .conftest import SPECS, cli_in_process
from .synthetic import fat_tree_spec

RAIL = """name: grow
servers: {servers}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32, tiers: {tiers}}}
{growth}"""


def _rail(tmp_path, servers, growth="", tiers="auto"):
    p = tmp_path / f"rail-{servers}.yaml"
    p.write_text(RAIL.format(servers=servers, growth=growth, tiers=tiers))
    return build_plan(p)[1]


def _assert_only_additions(plans):
    for old, new in zip(plans, plans[1:]):
        d = diff_plans(old, new)
        assert d["cables"]["removed"] == [] and d["cables"]["changed"] == [], (
            f"{old.design['servers']} -> {new.design['servers']} servers moved cables: "
            f"{(d['cables']['removed'] + d['cables']['changed'])[:3]}")
        assert d["devices"]["removed"] == [] and d["devices"]["changed"] == []
        assert d["counts"]["cables_added"] > 0


def test_two_tier_rail_growth_one_su_at_a_time(tmp_path):
    sizes = [32 * n for n in range(1, 9)] + [31, 200]
    plans = [_rail(tmp_path, s, "growth: {max_scalable_units: 8}") for s in sorted(sizes)]
    assert {p.design["tiers"] for p in plans} == {2}
    assert {sum(d.role == "spine" for d in p.devices) for p in plans} == {32}  # built for 8 SU from day one
    _assert_only_additions(plans)


def test_three_tier_rail_growth(tmp_path):
    # 20 SUs need three tiers on QM9700; build SU by SU in steps of 4, plus a partial SU.
    sizes = [32, 100, 128, 256, 384, 512, 640]
    plans = [_rail(tmp_path, s, "growth: {max_servers: 640}") for s in sizes]
    assert {p.design["tiers"] for p in plans} == {3}
    _assert_only_additions(plans)


def test_fat_tree_growth(tmp_path):
    plans = []
    for hosts in (8, 16, 40, 64, 100, 128):
        spec = fat_tree_spec(tmp_path, 16, hosts, extra="growth: {max_servers: 128}\n")
        plans.append(build_plan(spec)[1])
    _assert_only_additions(plans)


def test_without_growth_the_summary_says_what_recables(tmp_path):
    plan = _rail(tmp_path, 64)
    note = next(n for n in plan.notes if n.startswith("grows to"))
    assert "grows to 64 servers without moving a cable" in note and "at 96 servers" in note
    d = diff_plans(plan, _rail(tmp_path, 96))
    assert d["counts"]["cables_changed"] > 0  # 8 -> 16 spines: leaf-spine cables move


def test_growth_note_agrees_with_diff_when_only_leaves_are_added(tmp_path):
    """Two tiers, servers_per_leaf 2 (16 down / 16 up on QM9700): 5 and 6 leaves both fit 2
    spines with 8 links per leaf-spine pair, so a 6th leaf only adds cables. The note said
    "at 12 servers every existing leaf-spine cable is re-plugged (2 -> 2 spines, 8 -> 8 ...)"."""
    def plan(servers):
        p = tmp_path / f"spl-{servers}.yaml"
        p.write_text(f"name: spl\nservers: {servers}\nserver: dgx-h100\n"
                     "fabric: {topology: fat-tree, switch: qm9700, servers_per_leaf: 2}\n")
        return build_plan(p)[1]
    small = plan(10)
    note = next(n for n in small.notes if n.startswith("grows to"))
    assert "grows to 16 servers without moving a cable; at 18 servers" in note, note  # 9 leaves x 16 > 2 x 64
    _assert_only_additions([small, plan(12), plan(16)])
    assert diff_plans(plan(16), plan(18))["counts"]["cables_changed"] > 0


def test_growth_below_today_is_an_error(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_text(RAIL.format(servers=64, growth="growth: {max_servers: 32}", tiers="auto"))
    r = cli_in_process("validate", str(p))
    assert r.returncode == 2 and "growth target 32 servers is below today's 64" in r.stderr


def test_endpoints_with_growth_avoid_future_server_slots(tmp_path):
    p = tmp_path / "u.yaml"
    p.write_text(RAIL.format(servers=31, tiers="auto", growth="growth: {max_servers: 64}\n"
                             "extra_endpoints: [{role: ufm, count: 1, ports: 2}]"))
    r = cli_in_process("validate", str(p))
    assert r.returncode == 2 and "lower growth.max_servers" in r.stderr


def test_diff_cli_formats_and_gates(tmp_path):
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text(RAIL.format(servers=64, growth="", tiers="auto"))
    new.write_text(RAIL.format(servers=96, growth="", tiers="auto"))
    r = cli_in_process("diff", str(old), str(new), "--format", "json")
    assert r.returncode == 0
    d = json.loads(r.stdout)
    assert set(d) >= {"cables", "devices", "bom", "summary"}
    assert set(d["cables"]) == {"added", "removed", "changed", "physical"}
    assert d["summary"]["switches.spine"] == {"old": 8, "new": 16}
    bom = {(b["category"], b["part_number"]): b["delta"] for b in d["bom"]}
    assert bom[("switch", "MQM9700-NS2F")] == 8 + 8  # one more SU of 8 rail leaves, spines 8 -> 16
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "removed,changed")
    assert r.returncode == 1
    r = cli_in_process("diff", str(old), str(new), "--format", "markdown")
    assert "must be removed or re-plugged" in r.stdout and "| cables |" in r.stdout
    r = cli_in_process("diff", str(old), str(old), "--fail-on", "added,removed,changed")
    assert r.returncode == 0 and "+0 -0 ~0" in r.stdout
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "moved")
    assert r.returncode == 2


def test_diff_reads_output_folders_and_plan_json(tmp_path):
    assert cli_in_process("compile", str(SPECS / "b200-superpod-2su.yaml"), "-o", str(tmp_path / "a")).returncode == 0
    folder = tmp_path / "a" / "b200-superpod-2su"
    r = cli_in_process("diff", str(folder), str(folder / "plan.json"), "--format", "json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counts"] == {"devices_added": 0, "devices_removed": 0, "devices_moved": 0, "cables_added": 0,
                                              "cables_removed": 0, "cables_changed": 0, "cables_physical": 0}
    r = cli_in_process("diff", str(folder), str(SPECS / "b200-superpod-4su.yaml"))
    assert r.returncode == 0 and "+512" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = cli_in_process("diff", str(bad), str(folder))
    assert r.returncode == 2 and "not a clusterc plan.json" in r.stderr
