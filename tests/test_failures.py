"""Failure analysis that examines what it claims: survive requirements name only roles and
link kinds the fabric has, and say what they examined; lost links count the servers they
cut off, placed where they hurt most; the worst cut is searched again on the damaged fabric."""

from __future__ import annotations

import json

import numpy as np
import pytest

from compiler.check.bisection import check_bisection
from compiler.check.context import CheckContext
from compiler.check.redundancy import check_redundancy
from compiler.check.survive import survive_scenarios
from compiler.expand.requirements import fabric_link_kinds, fabric_roles
from compiler.pipeline import build_plan
from compiler.spec.model import Survive
from compiler.topology import TOPOLOGIES, switch_roles

from .conftest import SPECS, cli_in_process
from .synthetic import catalog_yaml, fat_tree_spec

DRAGONFLY = "name: df\nservers: {n}\nserver: host1\ncatalog: k8.yaml\nfabric:\n  topology: dragonfly\n  switch: k8\n  groups: 3\n"


def _write(tmp_path, text: str, name="spec.yaml"):
    (tmp_path / "k8.yaml").write_text(catalog_yaml(8))
    path = tmp_path / name
    path.write_text(text)
    return path


def _survive_result(path) -> tuple[dict, set[str], int]:
    r = cli_in_process("check", "--format", "json", str(path))
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)["reports"][0]
    result = next(x for x in report["figures"]["requirements"]["results"] if x["name"] == "survive")
    return result, {f["code"] for f in report["findings"] if f["severity"] == "error"}, r.returncode


def test_survive_keys_are_every_switch_role_a_topology_builds():
    assert set(switch_roles()) <= set(Survive.model_fields)
    assert {"router", "leaf", "spine", "core"} == set(switch_roles())


def test_a_role_the_dragonfly_lacks_is_an_error_at_its_line_listing_its_roles(tmp_path):
    # specs/dragonfly-2k.yaml with survive: {spine: 1} printed "requirement survive: ok"
    # while a lost router cuts servers off: nothing named spine was examined.
    text = (SPECS / "dragonfly-2k.yaml").read_text() + "requirements:\n  survive: {spine: 1}\n"
    path = tmp_path / "df.yaml"
    path.write_text(text)
    r = cli_in_process("check", str(path))
    line = text.splitlines().index("  survive: {spine: 1}") + 1
    assert r.returncode == 2, r.stdout
    assert f"df.yaml:{line}:" in r.stderr and "requirements.survive.spine" in r.stderr
    assert "no spine switches" in r.stderr and "its switch roles: router" in r.stderr
    assert "Traceback" not in r.stderr


def test_two_tier_fat_tree_has_no_core_to_survive(tmp_path):
    path = fat_tree_spec(tmp_path, 8, 32, tiers=2, extra="requirements:\n  survive: {core: 1}\n")
    r = cli_in_process("check", str(path))
    assert r.returncode == 2 and "requirements.survive.core" in r.stderr
    assert "its switch roles: leaf, spine" in r.stderr


def test_unknown_link_kind_lists_the_fabric_kinds(tmp_path):
    path = _write(tmp_path, DRAGONFLY.format(n=24) + "requirements:\n  survive: {link: 1, link_kind: globl}\n")
    r = cli_in_process("check", str(path))
    assert r.returncode == 2 and "requirements.survive.link_kind" in r.stderr
    assert "global, local" in r.stderr and "did you mean global?" in r.stderr


def test_a_dragonfly_can_be_held_to_survive_a_router(tmp_path):
    # Each router of this dragonfly carries p = 2 hosts on one port each: losing one cuts them off.
    path = _write(tmp_path, DRAGONFLY.format(n=24) + "requirements:\n  survive: {router: 1}\n")
    result, codes, rc = _survive_result(path)
    assert rc == 1 and "FAILURE_DISCONNECTS_SERVERS" in codes
    assert result["servers_cut_off"] == 2 and result["gpu_ports_cut_off"] == 2
    assert result["examined"]["elements"] == ["g1-router-01"]
    assert result["examined"]["scenarios"]


def test_a_dragonfly_can_be_held_to_survive_a_global_link(tmp_path):
    # 3 groups of 4 routers (p = h = 2): 4 global links per group pair, 12 cross the group
    # cut (4,800 Gb/s). One lost global link: 11 = 4,400 Gb/s, no server cut off.
    path = _write(tmp_path, DRAGONFLY.format(n=24) + "requirements:\n  survive: {link: 1, link_kind: global, "
                                                     "min_bisection_fraction: 0.95}\n")
    result, codes, rc = _survive_result(path)
    assert result["failures"] == "1 global link(s)" and result["servers_cut_off"] == 0
    assert result["bisection_gbps"] == 11 * 400 and result["bisection_fraction"] == round(11 / 12, 4)
    assert rc == 1 and codes == {"FAILURE_BISECTION_BELOW_FRACTION"}
    assert result["examined"]["elements"] == ["g1-router-01:6"]  # the cable id


@pytest.mark.parametrize("name", list(TOPOLOGIES))
def test_every_family_can_be_held_to_survive_each_of_its_roles_and_link_kinds(tmp_path, name):
    from .test_families import ROOT, SPEC_OF
    if name == "mesh":
        path = tmp_path / "mesh.yaml"
        path.write_text("name: m\ngpus: 32\nserver: tpu-v4\nfabric:\n  topology: mesh\n  dims: [4, 8]\n")
    else:
        path = ROOT / "specs" / SPEC_OF[name]
    plan = build_plan(path)[1]
    roles = fabric_roles(plan)
    assert set(roles) <= set(TOPOLOGIES[name].switch_roles)
    assert roles or not TOPOLOGIES[name].switch_roles or name in ("torus", "mesh")
    ctx = CheckContext(plan)
    for role in roles:
        scenarios = survive_scenarios(ctx, {role: 1})
        assert scenarios
        for sc in scenarios:
            lost = np.nonzero(~sc.keep_switch)[0]
            assert lost.size == 1 and plan.devices[int(ctx.graph.device_of[lost[0]])].role == role
            assert sc.elements == (plan.devices[int(ctx.graph.device_of[lost[0]])].name,)
    kinds = fabric_link_kinds(plan)
    assert kinds or ctx.graph.a.size == 0  # rail-only: one switch per rail, no links between switches
    for kind in kinds:
        scenarios = survive_scenarios(ctx, {"link": 1, "link_kind": kind})
        assert scenarios and all((~sc.keep_link).sum() == 1 for sc in scenarios)
        lost = [int(np.nonzero(~sc.keep_link)[0][0]) for sc in scenarios]
        assert {plan.link_kinds[int(plan.links.kind[ctx.graph.link[i]])] for i in lost} == {kind}


def test_losing_every_uplink_of_a_leaf_cuts_its_servers_off(tmp_path):
    # 256 DGX H100 on a fat tree of QM9700s, 4 servers per leaf: 32 downlinks, 32 uplinks.
    # survive: {link: 32} printed ok with servers_cut_off 0: the 32 lost links were counted
    # for bisection only, never for the servers behind them.
    path = tmp_path / "ft.yaml"
    path.write_text("name: ft\nservers: 256\nserver: dgx-h100\nfabric:\n  topology: fat-tree\n  switch: qm9700\n"
                    "  servers_per_leaf: 4\nrequirements:\n  survive: {link: 32, min_bisection_fraction: 0.9}\n")
    result, codes, rc = _survive_result(path)
    assert rc == 1 and "FAILURE_DISCONNECTS_SERVERS" in codes
    assert result["servers_cut_off"] == 4 and result["gpu_ports_cut_off"] == 32
    assert result["examined"]["worst"].startswith("all 32 links of leaf-")


def test_losing_every_link_of_a_switched_torus_router_cuts_its_server_off(tmp_path):
    # 3x3x3 routers, 2 links per neighbour: 12 links per router, one 8-GPU server each.
    path = tmp_path / "t.yaml"
    path.write_text("name: t\ngpus: 216\nserver: dgx-h100\nfabric:\n  topology: torus\n  switch: qm9700\n"
                    "  dims: [3, 3, 3]\n  links_per_neighbor: 2\nrequirements:\n  survive: {link: 12}\n")
    result, _, rc = _survive_result(path)
    assert rc == 1 and result["servers_cut_off"] == 1 and result["gpu_ports_cut_off"] == 8


def _single_link_failure(path) -> dict:
    plan = build_plan(path)[1]
    ctx = CheckContext(plan)
    b = check_bisection(ctx)[0]
    r = check_redundancy(ctx, b)[0]
    return {k: v for k, v in r.single_failures.items() if k.startswith("link:")}


def test_ring_link_loss_re_searches_the_cut_through_the_damaged_bundle(tmp_path):
    # 16 DGX in a ring, 4 x 400G per ring edge: bisection cuts two edges = 8 links. Losing one
    # link of a bundle, the arc cut through that bundle keeps 7: -12.5 %, not -0.0 %.
    path = tmp_path / "ring.yaml"
    path.write_text("name: ring\nservers: 16\nserver: dgx-h100\nfabric:\n  topology: ring\n")
    lost = _single_link_failure(path)["link:server-server"]
    assert lost.bisection_lost_percent == 12.5 and lost.bisection_gbps == 7 * 400
    assert lost.worst_cut.startswith("through")


def test_torus_link_loss_re_searches_the_plane_through_the_damaged_link(tmp_path):
    # 8x8x8 TPU v4 torus: a plane cut crosses 2 x 64 links; losing one of them: 127/128.
    path = tmp_path / "t.yaml"
    path.write_text("name: t\ngpus: 512\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [8, 8, 8]\n")
    lost = _single_link_failure(path)
    assert lost["link:chip-chip"].bisection_gbps == 127 * 375
    assert lost["link:chip-chip"].bisection_lost_percent == round(100 / 128, 2)


def test_worst_failure_for_explore_sees_the_damaged_cut(tmp_path):
    from compiler.check.redundancy import check_worst_failure
    path = tmp_path / "ring.yaml"
    path.write_text("name: ring\nservers: 16\nserver: dgx-h100\nfabric:\n  topology: ring\n")
    plan = build_plan(path)[1]
    ctx = CheckContext(plan)
    w = check_worst_failure(ctx, check_bisection(ctx)[0])[0]
    assert w.impact.bisection_lost_percent == 12.5


def test_an_oversubscription_limit_on_a_role_the_fabric_lacks_is_an_error(tmp_path):
    # max_oversubscription: {leaf: "1:1"} on a dragonfly of routers measured nothing and passed.
    path = _write(tmp_path, DRAGONFLY.format(n=24) + 'requirements:\n  max_oversubscription: {leaf: "1:1"}\n')
    r = cli_in_process("check", str(path))
    assert r.returncode == 2 and "requirements.max_oversubscription.leaf" in r.stderr
    assert "its switch roles: router" in r.stderr


def test_every_requirement_result_says_what_it_examined(tmp_path):
    path = fat_tree_spec(tmp_path, 8, 32, tiers=2, extra=(
        'requirements:\n  min_bisection_gbps: 1000\n  max_oversubscription: {leaf: "1:1", spine: "1:1"}\n'
        "  survive: {spine: 1, link: 1}\n  max_hops: 3\n"))
    r = cli_in_process("check", "--format", "json", str(path))
    results = json.loads(r.stdout)["reports"][0]["figures"]["requirements"]["results"]
    assert {x["name"] for x in results} == {"min_bisection_gbps", "max_oversubscription.leaf",
                                             "max_oversubscription.spine", "survive", "max_hops"}
    assert all(x.get("examined") for x in results), results
    spine = next(x for x in results if x["name"] == "max_oversubscription.spine")
    assert spine["measured"] is None and "no spine switch has uplinks" in spine["examined"]


def test_survive_naming_nothing_is_an_error(tmp_path):
    # survive: {min_bisection_fraction: 0.9} removed nothing and reported ok.
    path = fat_tree_spec(tmp_path, 8, 32, tiers=2, extra="requirements:\n  survive: {min_bisection_fraction: 0.9}\n")
    r = cli_in_process("check", str(path))
    assert r.returncode == 2 and "requirements.survive" in r.stderr and "names no switch and no link" in r.stderr


def test_direct_torus_counts_edge_disjoint_paths_between_chips(tmp_path):
    # A direct 3D torus has 6 links per chip, so 6 edge-disjoint paths between chips; the
    # check looked for leaves, found none and reported 0 ("fewer than two leafs").
    path = tmp_path / "t.yaml"
    path.write_text("name: t\ngpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [4, 4, 4]\n")
    plan = build_plan(path)[1]
    ctx = CheckContext(plan)
    r = check_redundancy(ctx, check_bisection(ctx)[0])[0]
    assert r.leaf_pair_edge_disjoint_paths_min == 6 and "chip" in r.leaf_pair_method
    assert r.single_failures["link:chip-chip"].leaf_pair_paths_min == 5


def test_monte_carlo_link_losses_see_the_cut_through_the_damage(tmp_path):
    # 16-server ring, 4 links per edge: any lost link sits on a balanced arc cut (8 links),
    # so the median sample loses one of them: 7 x 400. The intact tightest cuts alone gave 3,200.
    path = tmp_path / "ring.yaml"
    path.write_text("name: ring\nservers: 16\nserver: dgx-h100\nfabric:\n  topology: ring\n")
    plan = build_plan(path)[1]
    ctx = CheckContext(plan)
    mc = check_redundancy(ctx, check_bisection(ctx)[0])[0].monte_carlo
    assert mc.bisection_gbps_p50 == 7 * 400 and "through the first lost link" in mc.cuts
