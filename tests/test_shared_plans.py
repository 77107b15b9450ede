"""The session's shared compiled plans (tests/conftest.py: shared_plan, shared_checks,
shared_outputs, plan_copy) are safe to share: read-only where a write would go unseen,
copies that are the test's own, one compile per spec."""

from __future__ import annotations

import pytest

from compiler.pipeline import build_plan
from compiler.plan.serialize import plan_json_text

from .conftest import SPECS, plan_copy, shared_checks, shared_outputs, shared_plan


def test_a_spec_is_compiled_once_and_equals_a_fresh_compile():
    plan = shared_plan("roce-2spine-4leaf-sonic")
    assert shared_plan(SPECS / "roce-2spine-4leaf-sonic.yaml") is plan
    assert plan_json_text(plan) == plan_json_text(build_plan(SPECS / "roce-2spine-4leaf-sonic.yaml")[1])
    assert shared_checks(plan) is shared_checks("roce-2spine-4leaf-sonic")
    assert shared_outputs("roce-2spine-4leaf-sonic", ["summary"]) == shared_outputs("roce-2spine-4leaf-sonic", ["summary"])


def test_a_shared_plan_refuses_writes_and_a_copy_takes_them():
    plan = shared_plan("roce-2spine-4leaf-sonic")
    with pytest.raises(ValueError, match="read-only"):
        plan.links.speed_gbps[0] = 1
    with pytest.raises(ValueError, match="read-only"):
        plan.routing.loopback[0] = 0
    own = plan_copy(plan)
    assert plan_json_text(own) == plan_json_text(plan)
    own.links.speed_gbps[0] = 1
    own.devices[0].name = "renamed"
    assert plan.links.speed_gbps[0] != 1 and plan.devices[0].name != "renamed"
