"""Bisection against every balanced cut: on small instances of every topology family the
reported worst cut and any closed form equal the minimum over all balanced cuts
(tests/exhaustive_cuts.py, plain enumeration), and a figure not proven says it is an upper
bound. Then the two published-size counterexamples: a 33-group dragonfly and a 4x4x9 torus."""

from __future__ import annotations

import dataclasses

import pytest

from compiler.check.bisection import check_bisection
from compiler.check.context import CheckContext
from compiler.check.redundancy import check_redundancy, failure_scenarios
from compiler.pipeline import build_plan

from .exhaustive_cuts import exhaustive_bisection_gbps
from .synthetic import catalog_yaml

SYN = "name: a\nservers: {n}\nserver: host1\ncatalog: k{k}.yaml\nfabric:\n  topology: {topo}\n  switch: k{k}\n{extra}"
REAL = "name: a\n{size}\nserver: {server}\nfabric:\n  topology: {topo}\n{extra}"

SMALL = {
    "fat-tree 2 tiers": SYN.format(n=16, k=8, topo="fat-tree", extra="  tiers: 2\n"),
    "fat-tree 3:1": SYN.format(n=24, k=8, topo="fat-tree", extra='  tiers: 2\n  oversubscription: "3:1"\n'),
    "fat-tree 3 tiers": SYN.format(n=16, k=4, topo="fat-tree", extra="  tiers: 3\n"),
    "fat-tree odd hosts": SYN.format(n=13, k=8, topo="fat-tree", extra="  tiers: 2\n"),
    "rail-optimized": REAL.format(size="servers: 4", server="dgx-h100", topo="rail-optimized",
                                  extra="  switch: qm9700\n  scalable_unit: 4\n"),
    "rail-optimized 2:1": REAL.format(size="servers: 6", server="dgx-h100", topo="rail-optimized",
                                      extra='  switch: qm9700\n  scalable_unit: 6\n  oversubscription: "2:1"\n'),
    "rail-only": REAL.format(size="servers: 4", server="dgx-h100", topo="rail-only", extra="  switch: qm9700\n"),
    "multi-plane": REAL.format(size="servers: 2", server="hpn-8x2x200g", topo="multi-plane",
                               extra="  switch: tomahawk5\n  speed_gbps: 200\n  uplink_speed_gbps: 400\n  planes: 2\n"
                                     "  scalable_unit: 2\n"),
    "switched torus 2x7": SYN.format(n=14, k=8, topo="torus", extra="  dims: [2, 7]\n"),
    "switched torus 3x5": SYN.format(n=15, k=8, topo="torus", extra="  dims: [3, 5]\n"),
    "switched torus 3x3x2": SYN.format(n=18, k=8, topo="torus", extra="  dims: [3, 3, 2]\n"),
    "switched mesh 4x5": SYN.format(n=20, k=8, topo="mesh", extra="  dims: [4, 5]\n"),
    "torus 4x4": REAL.format(size="gpus: 16", server="tpu-v4", topo="torus", extra="  dims: [4, 4]\n"),
    "torus 2x2x5": REAL.format(size="gpus: 20", server="tpu-v4", topo="torus", extra="  dims: [2, 2, 5]\n"),
    "dragonfly 3 groups": SYN.format(n=24, k=8, topo="dragonfly", extra="  groups: 3\n"),
    "dragonfly 4 groups": SYN.format(n=32, k=8, topo="dragonfly", extra="  groups: 4\n"),
    "dragonfly 5 groups": SYN.format(n=40, k=8, topo="dragonfly", extra="  groups: 5\n"),
    "dragonfly+ 3 groups": SYN.format(n=12, k=8, topo="dragonfly+", extra="  groups: 3\n  switches_per_group: 4\n"
                                      "  endpoints_per_switch: 2\n  global_ports_per_switch: 2\n"),
    "dragonfly+ 4 groups": SYN.format(n=16, k=8, topo="dragonfly+", extra="  groups: 4\n  switches_per_group: 4\n"
                                      "  endpoints_per_switch: 2\n  global_ports_per_switch: 2\n"),
    "dragonfly+ 5 groups": SYN.format(n=20, k=8, topo="dragonfly+", extra="  groups: 5\n  switches_per_group: 4\n"
                                      "  endpoints_per_switch: 2\n  global_ports_per_switch: 2\n"),
    "ring 16": REAL.format(size="servers: 16", server="dgx-h100", topo="ring", extra=""),
    "ring 7": REAL.format(size="servers: 7", server="dgx-h100", topo="ring", extra=""),
    "full mesh 6": REAL.format(size="servers: 6", server="dgx-h100", topo="full-mesh", extra=""),
}


def _bisection(tmp_path, text: str):
    (tmp_path / "k8.yaml").write_text(catalog_yaml(8))
    (tmp_path / "k4.yaml").write_text(catalog_yaml(4))
    (tmp_path / "k16.yaml").write_text(catalog_yaml(16))
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    plan = build_plan(path)[1]
    ctx = CheckContext(plan)
    return plan, ctx, check_bisection(ctx)[0]


def test_every_family_has_a_small_instance():
    from compiler.topology import TOPOLOGIES
    named = {text.split("topology: ")[1].split("\n")[0] for text in SMALL.values()}
    assert named == set(TOPOLOGIES)


@pytest.mark.parametrize("name", list(SMALL))
def test_bisection_equals_the_minimum_over_every_balanced_cut(tmp_path, name):
    plan, ctx, b = _bisection(tmp_path, SMALL[name])
    truth = exhaustive_bisection_gbps(ctx.graph, int(getattr(plan.design_record, "planes", None) or 1))
    assert b.worst_cut_gbps == truth, [(c.name, c.gbps) for c in b.cuts]
    # a closed form is given only where proven: then it is the minimum
    assert b.analytic_gbps is None or b.analytic_gbps == truth, b.analytic_formula
    assert b.worst_cut_is == ("exact" if b.analytic_gbps is not None or "lightest" in {c.name for c in b.cuts}
                              else "upper bound")


def test_dragonfly_with_an_odd_group_count_splits_a_group_along_its_global_links(tmp_path):
    # p=4, a=8, h=4: the balanced maximum a*h+1 = 33 groups, one 400G host per port. A balanced
    # cut takes 16 groups and half of a 17th: 16*16 global + 4*4 local links = 272 x 400 Gb/s,
    # where the groups-in-order cut also crosses the split group's global links (288).
    _, _, b = _bisection(tmp_path, SYN.format(n=1056, k=16, topo="dragonfly", extra=(
        "  groups: 33\n  switches_per_group: 8\n  endpoints_per_switch: 4\n  global_ports_per_switch: 4\n")))
    assert b.worst_cut_gbps == 272 * 400 == 108_800
    assert b.analytic_gbps is None and b.worst_cut_is == "upper bound"


def test_torus_with_an_odd_dimension_halves_through_its_middle_layer(tmp_path):
    # 4x4x9 TPU v4 torus, 375 Gb/s links: 4.5 z-layers cut the two 4x4 planes (32 links) and
    # half of the middle layer (8 links) = 40 x 375 = 15,000 Gb/s; the even dimensions' plane
    # cut (the former closed form) crosses 72 links = 27,000.
    _, _, b = _bisection(tmp_path, REAL.format(size="gpus: 144", server="tpu-v4", topo="torus",
                                               extra="  dims: [4, 4, 9]\n"))
    assert b.worst_cut_gbps == 40 * 375 == 15_000
    assert b.analytic_gbps is None and b.worst_cut_is == "upper bound"
    assert {c.name: c.gbps for c in b.cuts}["torus-z"] == 15_000


@pytest.mark.parametrize("name", list(SMALL))
def test_a_lost_link_reports_the_minimum_over_every_balanced_cut_of_the_damaged_fabric(tmp_path, name):
    """The redundancy check's single link failures, against every balanced cut of the fabric
    without that link: the worst cut is searched again on the damaged fabric (the intact
    fabric's cuts need not cross the damage)."""
    plan, ctx, b = _bisection(tmp_path, SMALL[name])
    single = check_redundancy(ctx, b)[0].single_failures
    g = ctx.graph
    planes = int(getattr(plan.design_record, "planes", None) or 1)
    lost_links = [sc for sc in failure_scenarios(ctx) if sc.keep_link is not None]
    if not lost_links:
        assert g.a.size == 0  # rail-only: one switch per rail, nothing between switches to lose
        return
    for sc in lost_links:
        k = sc.keep_link
        damaged = dataclasses.replace(g, a=g.a[k], b=g.b[k], cap_gbps=g.cap_gbps[k], link=g.link[k])
        assert single[sc.what].bisection_gbps == exhaustive_bisection_gbps(damaged, planes), (sc.what, single[sc.what])


def test_check_prints_an_unproven_bisection_as_an_upper_bound(tmp_path):
    from .conftest import cli_in_process
    path = tmp_path / "t.yaml"
    path.write_text(REAL.format(size="gpus: 144", server="tpu-v4", topo="torus", extra="  dims: [4, 4, 9]\n"))
    r = cli_in_process("check", str(path))
    assert "bisection 15,000 Gb/s (worst cut: torus-z, an upper bound;" in r.stdout, r.stdout
    ring = tmp_path / "ring.yaml"
    ring.write_text(REAL.format(size="servers: 16", server="dgx-h100", topo="ring", extra=""))
    assert "bisection 3,200 Gb/s (worst cut: halves;" in cli_in_process("check", str(ring)).stdout
