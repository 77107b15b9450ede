"""Fat-tree sizes against the closed forms in designs.md, on a range of radices."""

from __future__ import annotations

import pytest

from compiler.diagnostics import SpecInvalid
from compiler.expand.sizing import PortSplit, max_three_tier_leaves, three_tier, two_tier
from compiler.pipeline import build_plan
from compiler.check import run_checks
from compiler.render.summary import summarize

from .synthetic import fat_tree_spec


@pytest.mark.parametrize("k", [4, 8, 16, 24, 32, 48, 64])
def test_two_tier_maximum(tmp_path, k):
    # 2-tier non-blocking Clos of radix k: k²/2 hosts, k leaves, k/2 spines, k²/2 cables per layer.
    _, plan = build_plan(fat_tree_spec(tmp_path, k, k * k // 2, tiers=2))
    s = summarize(plan, run_checks(plan))
    assert s["switches"] == {"leaf": k, "spine": k // 2}
    assert s["cables"] == {"server-leaf": k * k // 2, "leaf-spine": k * k // 2}


@pytest.mark.parametrize("k", [4, 8, 16, 24])
def test_three_tier_maximum(tmp_path, k):
    # Al-Fares k-ary fat tree: k³/4 hosts; edge = aggregation = k²/2; core = k²/4.
    _, plan = build_plan(fat_tree_spec(tmp_path, k, k ** 3 // 4, tiers=3))
    s = summarize(plan, run_checks(plan))
    assert s["switches"] == {"leaf": k * k // 2, "spine": k * k // 2, "core": k * k // 4}
    assert s["cables"] == {"server-leaf": k ** 3 // 4, "leaf-spine": k ** 3 // 4, "spine-core": k ** 3 // 4}
    assert plan.design["pods"] == k


@pytest.mark.parametrize("k", [32, 64, 128, 144])
def test_three_tier_closed_form_by_arithmetic(k):
    # Same closed forms at radices too large to build in a unit test.
    half = PortSplit(k // 2, k // 2)
    leaves = max_three_tier_leaves(half, half, k, 1)
    assert leaves * (k // 2) == k ** 3 // 4  # hosts
    s = three_tier(leaves, half, half, k, 1)
    assert (s.leaves, s.spines, s.cores) == (k * k // 2, k * k // 2, k * k // 4)
    two = two_tier(k, half, k)
    assert (two.spines, two.leaf_spine_links) == (k // 2, 1)


@pytest.mark.parametrize("k", [8, 16, 64])
def test_two_tier_over_capacity_is_an_error(tmp_path, k):
    with pytest.raises(SpecInvalid) as exc:
        build_plan(fat_tree_spec(tmp_path, k, k * k // 2 + 1, tiers=2))
    text = str(exc.value)
    assert "tiers" in text and f"at most {k} leaves" in text


def test_auto_picks_three_tiers_past_two_tier_maximum(tmp_path):
    _, plan = build_plan(fat_tree_spec(tmp_path, 8, 8 * 8 // 2 + 1))
    assert plan.design["tiers"] == 3


def test_two_to_one_oversubscription(tmp_path):
    # k=12 at 2:1: 8 down, 4 up per leaf.
    _, plan = build_plan(fat_tree_spec(tmp_path, 12, 64, ratio="2:1"))
    assert plan.design["leaf_ports"] == {"down": 8, "up": 4}
    assert summarize(plan, run_checks(plan))["oversubscription"]["leaf"] == "2:1"


def test_uneven_leaf_count_rounds_spines_up(tmp_path):
    # 3 leaves x 4 uplinks on 8-port spines: minimum ceil(12/8)=2 spines, and 4 % 2 == 0 -> 2.
    # 5 leaves: minimum ceil(20/8)=3 does not divide 4 -> 4 spines, with a note.
    _, plan = build_plan(fat_tree_spec(tmp_path, 8, 20))
    assert summarize(plan, run_checks(plan))["switches"]["spine"] == 4
    assert any("rounded up from 3 to 4" in n for n in plan.notes)
