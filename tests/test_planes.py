"""Rail-only and multi-plane (dual-homed) networks: the Alibaba HPN pod from designs.md
reproduced from a spec, the wiring rules (every NIC port on its own ToR, planes and rails
that never meet), invariants, determinism, impossible parameters as clear errors, and the
checks (bisection closed form vs max-flow) on both."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from compiler.check import run_checks
from compiler.check.invariants import plan_invariants
from compiler.expand import ports
from compiler.catalog import load_catalog
from compiler.pipeline import build_plan

from .conftest import SPECS, cli_in_process, run_cli, shared_checks, shared_plan, tree_bytes


SMALL = """name: mp
server: hpn-8x2x200g
servers: {servers}
fabric:
  topology: multi-plane
  switch: tomahawk5
  speed_gbps: 200
  uplink_speed_gbps: 400
  scalable_unit: 16
{extra}"""

RAIL_ONLY = """name: ro
server: dgx-h100
servers: {servers}
fabric:
  topology: rail-only
  switch: qm9700
"""


def _plan(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return build_plan(path)[1]


def _role(plan, role):
    return np.array([d.role == role for d in plan.devices])


@pytest.fixture(scope="module")
def hpn():
    return shared_plan("alibaba-hpn-pod")


@pytest.fixture(scope="module")
def hpn_checks(hpn):
    return shared_checks(hpn)


def test_hpn_counts_match_designs_md(hpn):
    roles = Counter(d.role for d in hpn.devices)
    assert roles == {"server": 1920, "leaf": 240, "spine": 120}
    assert hpn.design["gpus"] == 15360
    kinds = np.array(hpn.link_kinds)[hpn.links.kind]
    host = kinds == "server-leaf"
    up = kinds == "leaf-spine"
    assert host.sum() == 30720 and set(hpn.links.speed_gbps[host].tolist()) == {200}
    assert up.sum() == 14400 and set(hpn.links.speed_gbps[up].tolist()) == {400}
    aggs = Counter(d.group for d in hpn.devices if d.role == "spine")
    assert aggs == {1: 60, 2: 60}
    # Each ToR: 128 host ports down (one per server of its segment), 60 up: one to every aggregation switch of its plane.
    tor_down = Counter(hpn.links.b_dev[host].tolist())
    tor_up = Counter(hpn.links.a_dev[up].tolist())
    assert set(tor_down.values()) == {128} and len(tor_down) == 240
    assert set(tor_up.values()) == {60} and len(tor_up) == 240
    pairs = set(zip(hpn.links.a_dev[up].tolist(), hpn.links.b_dev[up].tolist()))
    assert len(pairs) == 14400  # no parallel links: all 60 distinct aggregation switches


def test_hpn_checks_oversubscription_and_bisection(hpn, hpn_checks):
    report = hpn_checks.as_json()
    assert report["figures"]["oversubscription"]["leaf"]["min"] == "16:15"
    assert report["figures"]["oversubscription"]["leaf"]["max"] == "16:15"
    b = report["figures"]["bisection"]
    # 1/2 * 240 ToRs * min(25.6T down, 24T up) = 2,880,000 Gb/s, and max-flow agrees.
    assert b["analytic_gbps"] == 2_880_000
    assert b["worst_cut_gbps"] == 2_880_000
    codes = {f["code"] for f in report["findings"]}
    assert "FABRIC_PARTITIONED" not in codes and "BISECTION_METHODS_DISAGREE" not in codes


def test_hpn_every_host_port_on_its_own_tor_and_planes_never_meet(hpn):
    kinds = np.array(hpn.link_kinds)[hpn.links.kind]
    host = kinds == "server-leaf"
    srv, tor = hpn.links.a_dev[host], hpn.links.b_dev[host]
    assert len(set(zip(srv.tolist(), tor.tolist()))) == host.sum()  # 16 ports -> 16 different ToRs
    group = np.array([d.group or 0 for d in hpn.devices])
    nic_port = hpn.links.a_port[host]
    assert (group[tor] == nic_port % 2 + 1).all()  # port p of every NIC in plane p
    both = kinds == "leaf-spine"
    assert (group[hpn.links.a_dev[both]] == group[hpn.links.b_dev[both]]).all()  # no link joins two planes
    layout = hpn.layouts[hpn.devices[int(tor[0])].layout]
    assert Counter(p.speed_gbps for p in layout.ports) == {200: 128, 400: 64}  # 32 cages 4x200G + 32 cages 2x400G


def test_mixed_layout_arithmetic():
    sw = load_catalog().switches["tomahawk5"]
    layout = ports.mixed_switch_layout(sw, [(32, 200), (30, 400)])
    assert len({p.cage for p in layout.ports}) == 64
    assert [p.name for p in layout.ports[127:130]] == ["Ethernet32/4", "Ethernet33/1", "Ethernet33/2"]
    with pytest.raises(ValueError):
        ports.mixed_switch_layout(sw, [(40, 200), (30, 400)])


def test_small_multi_plane_invariants_and_flow(tmp_path):
    plan = _plan(tmp_path, SMALL.format(servers=56, extra=""))  # last segment partial (8 of 16)
    assert plan_invariants(plan) == []
    # Each plane a Clos sized like the Clos families: one leaf holds all 8 rails of a unit of
    # 16 servers (128 x 200G down, 64 x 400G up: every cage), 4 leaves and 2 spines per plane,
    # where one ToR per (plane, unit, rail) and an aggregation layer sized for the largest pod
    # built 64 ToRs and 16 aggregation switches.
    assert Counter(d.role for d in plan.devices) == {"server": 56, "leaf": 8, "spine": 4}
    assert plan.design["rails_per_leaf"] == 8 and plan.design["unit_fill"]["last_unit_servers"] == 8
    report = run_checks(plan).as_json()
    assert "FABRIC_PARTITIONED" not in {f["code"] for f in report["findings"]}
    assert report["figures"]["hops"]["apart_by_design_pairs"] > 0


def test_rail_only_counts_and_zero_cross_rail_bisection(tmp_path):
    plan = _plan(tmp_path, RAIL_ONLY.format(servers=64))
    assert plan_invariants(plan) == []
    assert Counter(d.role for d in plan.devices) == {"server": 64, "leaf": 8}
    assert plan.links.a_dev.size == 512
    rail = np.array([d.rail or 0 for d in plan.devices])
    assert (rail[plan.links.b_dev] == plan.links.a_port + 1).all()  # NIC i -> rail switch i
    assert Counter(plan.links.b_dev.tolist()) == {i: 64 for i in range(64, 72)}
    assert any("scale-up domain" in n for n in plan.notes)
    assert any("one OpenSM per rail" in n for n in plan.notes)  # InfiniBand: a subnet per rail
    report = run_checks(plan).as_json()
    b = report["figures"]["bisection"]
    assert b["analytic_gbps"] == 0 and b["worst_cut_gbps"] == 0 and b["worst_cut"] == "rails"
    assert plan.design["per_rail_bisection_gbps"] == 32 * 400
    halves = next(c for c in b["cuts"] if c["name"] == "halves")
    assert halves["gbps"] == 8 * 32 * 400  # within rails the network is non-blocking
    codes = {f["code"] for f in report["findings"]}
    assert "FABRIC_PARTITIONED" not in codes and "BISECTION_METHODS_DISAGREE" not in codes
    assert report["figures"]["collectives"]["fabric_factor"] == 1.0


def test_rail_only_two_tier_sub_fabric_per_rail(tmp_path):
    plan = _plan(tmp_path, RAIL_ONLY.format(servers=128))
    assert plan_invariants(plan) == []
    assert Counter(d.role for d in plan.devices) == {"server": 128, "leaf": 32, "spine": 16}
    assert plan.design["leaves_per_rail"] == 4 and plan.design["spines_per_rail"] == 2
    assert plan.count_by_kind() == {"server-leaf": 1024, "leaf-spine": 1024}
    rail = np.array([d.rail or 0 for d in plan.devices])
    assert (rail[plan.links.a_dev[128 * 8:]] == rail[plan.links.b_dev[128 * 8:]]).all()  # spines join one rail only
    report = run_checks(plan).as_json()
    b = report["figures"]["bisection"]
    assert b["analytic_gbps"] == 0 and b["worst_cut_gbps"] == 0
    assert next(c for c in b["cuts"] if c["name"] == "halves")["gbps"] == 8 * 64 * 400
    assert report["figures"]["oversubscription"]["leaf"]["max"] == "1:1"
    assert "FABRIC_PARTITIONED" not in {f["code"] for f in report["findings"]}


BAD = {
    "layout": (RAIL_ONLY.format(servers=8) + "layout:\n  hall: DH2\n  rows: 1\n  racks_per_row: 4\n  rack: {height_u: 48, power_kw: 45}\n",
               ["layout", "not supported on topology 'rail-only' yet"]),
    "rail too big for a sub-fabric": (RAIL_ONLY.format(servers=2049), ["servers", "need 65 leaves per rail", "at most 2,048 servers"]),
    "switch configs": (RAIL_ONLY.format(servers=8).replace("qm9700", "sn5600") + "  nos: sonic\n",
                       ["fabric.nos", "not generated for topology 'rail-only' yet"]),
    "clos key on rail-only": (RAIL_ONLY.format(servers=8) + "  tiers: 2\n", ["key 'tiers' applies to fat-tree / rail-optimized"]),
    "single-port NICs": (SMALL.format(servers=16, extra="").replace("hpn-8x2x200g", "dgx-h100").replace("  speed_gbps: 200\n", "")
                         .replace("tomahawk5", "sn5600"), ["server", "multi-plane needs NICs with 2 or more ports"]),
    "planes not ports per NIC": (SMALL.format(servers=16, extra="  planes: 3\n"), ["fabric.planes", "planes: 3", "has 2 ports"]),
    "ToR cages": (SMALL.format(servers=16, extra="").replace("scalable_unit: 16", "scalable_unit: 200"),
                  ["fabric.scalable_unit", "200 downlinks at 200G (50 cages)", "the switch has 64"]),
    "two tiers too small": (SMALL.format(servers=4096, extra="  tiers: 2\n"),
                            ["fabric.tiers", "do not fit two tiers of tomahawk5", "use tiers: 3"]),
    "uplink speed": (SMALL.format(servers=16, extra="").replace("uplink_speed_gbps: 400", "uplink_speed_gbps: 1600"),
                     ["fabric.uplink_speed_gbps", "no 1600G port mode"]),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_impossible_planes_are_clear_errors(tmp_path, case):
    text, expected = BAD[case]
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2, r.stdout
    for s in expected:
        assert s in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_planes_deterministic(tmp_path):
    specs = [str(SPECS / "rail-only-h100-64.yaml")]
    small = tmp_path / "mp.yaml"
    small.write_text(SMALL.format(servers=32, extra=""))
    specs.append(str(small))
    digests = []
    for seed in ("0", "4242"):
        out = tmp_path / seed
        r = run_cli("compile", *specs, "-o", str(out), env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        digests.append(tree_bytes(out))
    assert digests[0] == digests[1]
    assert any(k.endswith("cabling.csv") for k in digests[0])


def test_planned_guids_unique(tmp_path, hpn):
    """Planned IB GUIDs derive from (role, SU, index): the builders keep them distinct."""
    from compiler.plan.guids import device_guids
    for plan in (_plan(tmp_path, RAIL_ONLY.format(servers=128)), hpn):
        assert np.unique(device_guids(plan)).size == len(plan.devices)


def test_redundancy_dual_tor_is_dual_homed(hpn_checks, tmp_path):
    r = hpn_checks.as_json()["figures"]["redundancy"]
    assert r["single_homed_servers"] == 0  # both ports of every NIC on different ToRs
    assert r["leaf_pair_edge_disjoint_paths_min"] == 60  # one path per aggregation switch of the plane
    ro = run_checks(_plan(tmp_path, RAIL_ONLY.format(servers=128))).as_json()["figures"]["redundancy"]
    assert ro["single_homed_servers"] == 128
    assert ro["leaf_pair_edge_disjoint_paths_min"] == 32  # 2 spines x 16 links, inside one rail
