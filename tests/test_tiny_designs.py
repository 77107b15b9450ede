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
