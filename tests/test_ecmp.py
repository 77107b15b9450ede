"""compiler/check/ecmp.py: the ECMP width an eBGP Clos promises between two leaves (what
the digital twin holds the kernel's next hops to), counted by hand on the examples."""

from __future__ import annotations

from compiler.check.ecmp import expected_ecmp

from .conftest import shared_plan


def _role(plan, role: str) -> list[int]:
    return [i for i, d in enumerate(plan.devices) if d.role == role]


def test_two_tier_width_is_every_live_uplink_capped_by_maximum_paths():
    """specs/roce-2spine-4leaf-frr.yaml: 2 spines x 32 links per leaf-spine pair = 64 next
    hops from a leaf to any other leaf; maximum-paths 4 caps it at 4; a spine lost halves
    it; one uplink lost leaves 63; the destination's 32 links to a spine lost take that
    spine's 32 uplinks of the source out of the count."""
    plan = shared_plan("roce-2spine-4leaf-frr")
    leaves, spines = _role(plan, "leaf"), _role(plan, "spine")
    pair = (leaves[0], leaves[1])
    assert expected_ecmp(plan, 64, pairs=[pair]) == {pair: 64}
    assert expected_ecmp(plan, 4, pairs=[pair]) == {pair: 4}
    assert expected_ecmp(plan, 64, failed_devices=frozenset({spines[0]}), pairs=[pair]) == {pair: 32}
    a_dev, b_dev = plan.links.a_dev.tolist(), plan.links.b_dev.tolist()
    uplinks = [k for k, (a, b) in enumerate(zip(a_dev, b_dev, strict=True)) if a == leaves[0] and b in spines]
    assert len(uplinks) == 64
    assert expected_ecmp(plan, 64, failed_links=frozenset(uplinks[:1]), pairs=[pair]) == {pair: 63}
    down = frozenset(k for k, (a, b) in enumerate(zip(a_dev, b_dev, strict=True)) if a == leaves[1] and b == spines[0])
    assert len(down) == 32
    assert expected_ecmp(plan, 64, failed_links=down, pairs=[pair]) == {pair: 32}


def test_three_tier_width_within_and_across_pods():
    """specs/lab-3tier-frr.yaml: 8 leaves in 2 pods of 4, each leaf one link to each of its
    pod's 4 spines: 4 next hops to a leaf of its own pod and, over the cores, to a leaf of
    the other pod."""
    plan = shared_plan("lab-3tier-frr")
    leaves = _role(plan, "leaf")
    assert plan.count_by_role() == {"server": 32, "leaf": 8, "spine": 8, "core": 4}
    assert [plan.devices[i].pod for i in leaves] == [1, 1, 1, 1, 2, 2, 2, 2]
    same, other = (leaves[0], leaves[1]), (leaves[0], leaves[-1])
    assert expected_ecmp(plan, 64, pairs=[same, other]) == {same: 4, other: 4}
