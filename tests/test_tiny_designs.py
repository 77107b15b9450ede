"""Tiny designs get the smallest sensible fabric: `tiers: auto` takes the fewest tiers that
fit, and one switch is the fewest (one DGX used to get 9 rail-optimized switches, or a leaf
and 2 spines that joined nothing, or a 32-router dragonfly with 496 local cables)."""

from __future__ import annotations

import pytest

from compiler.check import run_checks
from compiler.render.summary import summarize

from .conftest import plan_from_text


def _summary(text: str) -> dict:
    plan = plan_from_text(text)
    return summarize(plan, run_checks(plan))


def _spec(servers: int, fabric: str) -> str:
    return f"name: tiny\nservers: {servers}\nserver: dgx-h100\nfabric: {{{fabric}}}\n"


@pytest.mark.parametrize("topology", ["rail-optimized", "fat-tree"])
@pytest.mark.parametrize("servers", [1, 4, 8])
def test_a_fabric_one_switch_holds_is_that_switch(topology, servers):
    plan = plan_from_text(_spec(servers, f"topology: {topology}, switch: qm9700"))
    checks = run_checks(plan)
    s = summarize(plan, checks)
    assert s["tiers"] == 1 and s["switches"] == {"leaf": 1}
    assert s["cables"] == {"server-leaf": 8 * servers}
    b = checks.as_json()["figures"]["bisection"]
    assert b["worst_cut_gbps"] == b["analytic_gbps"] == 8 * servers * 400 // 2  # a switch is non-blocking
    assert not [f for f in checks.findings if f.severity in ("warning", "error")]
    notes = " ".join(plan.notes)
    assert f"one qm9700 holds all {8 * servers}" in notes and "grows to 8 servers on this switch" in notes
    assert " 1 servers" not in notes


def test_nine_dgx_do_not_fit_one_switch_and_a_given_tier_count_is_kept():
    nine = _summary((_spec(9, "topology: rail-optimized, switch: qm9700")))
    assert nine["tiers"] == 2  # 72 ports > 64
    two = _summary((_spec(1, "topology: rail-optimized, switch: qm9700, tiers: 2")))
    assert two["tiers"] == 2 and two["switches"] == {"leaf": 8, "spine": 1}
    su = _summary((_spec(2, "topology: rail-optimized, switch: qm9700, scalable_unit: 2")))
    assert su["tiers"] == 2  # a unit asks for leaves per rail


def test_one_group_dragonfly_has_the_routers_its_endpoints_fill():
    s = _summary((_spec(1, "topology: dragonfly, switch: qm9700")))
    assert s["switches"] == {"router": 1} and s["cables"] == {"server-router": 8}
    s = _summary((_spec(3, "topology: dragonfly, switch: qm9700")))
    assert s["switches"] == {"router": 2} and s["cables"] == {"server-router": 24, "local": 1}


def test_tiers_one_insists_on_one_switch_and_says_why_it_cannot_be(tmp_path):
    from .conftest import cli_in_process

    one = _summary(_spec(2, "topology: fat-tree, switch: qm9700, tiers: 1"))
    assert one["tiers"] == 1 and one["switches"] == {"leaf": 1}
    for fabric, fragment in (("topology: fat-tree, switch: qm9700, tiers: 1", "takes 64 ports at 400G; the fabric brings 72"),
                             ("topology: rail-optimized, switch: qm9700, tiers: 1, scalable_unit: 2", "scalable_unit asks for more")):
        (tmp_path / "s.yaml").write_text(_spec(9 if "fat-tree" in fabric else 2, fabric))
        r = cli_in_process("validate", str(tmp_path / "s.yaml"))
        assert r.returncode == 2 and "fabric.tiers" in r.stderr and fragment in r.stderr, r.stderr


def test_endpoints_of_one_role_on_two_fabrics_keep_their_own_port_counts():
    # compute `vast` with 2 ports and storage `vast` with 1 shared the layout id vast@400:
    # the plan invariants then found link 11 on port index 1 of a 1-port vast-01
    plan = plan_from_text(
        "name: mm\nservers: 1\nserver: dgx-b200\nfabric: {topology: fat-tree, switch: arista-7060x6-64pe, tiers: 2}\n"
        "extra_endpoints: [{role: vast, count: 1, ports: 2}]\n"
        "fabrics: [{name: storage, switch: sn5600, extra_endpoints: [{role: vast, count: 1, ports: 1}]}]\n")
    ports = {d.name: len(plan.layouts[d.layout]) for d in plan.devices if "vast" in d.name}
    assert ports == {"vast-01": 2, "storage-vast-01": 1}


def test_one_switch_infiniband_fabric_is_analysed_under_the_routing_traffic_runs():
    """A one-switch InfiniBand fabric has no ftree (OpenSM's fat-tree engine needs two levels):
    the check's all-reduce said 'under ftree routing, as clusterc traffic reports it' while
    `clusterc traffic` refused ftree there. Both now take ECMP, and give one figure."""
    from compiler.traffic import traffic_report

    plan = plan_from_text(_spec(4, "topology: rail-optimized, switch: qm9700"))
    coll = run_checks(plan).as_json()["figures"]["collectives"]
    report = traffic_report(plan, ["ring-allreduce"], None)
    assert {r["routing"] for r in report["results"]} == {"ecmp", "adaptive"}
    assert coll["routing"] == report["reference_routing"] == "ecmp"
