"""Meta's Llama 3 RoCE cluster (designs.md "Meta, Llama 3 training cluster"): the published
zone figures measured on the compiled plan of specs/meta-llama3-24k.yaml, and bad input for
the keys it needs (fabric.servers_per_leaf, spine_switch, core_switch)."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from compiler.check import run_checks
from compiler.check.flows import FlowNetwork
from compiler.plan.graph import fabric_graph
from compiler.render.summary import summarize

from .conftest import SPECS, cli_in_process, plan_from_text, shared_checks, shared_plan


SPEC = SPECS / "meta-llama3-24k.yaml"
GBPS = 400
RAILS = 8  # hgx-h100: 8 x 400G backend NICs, as Meta's Grand Teton


@pytest.fixture(scope="module")
def plan():
    return shared_plan(SPEC)


@pytest.fixture(scope="module")
def checks(plan):
    return shared_checks(plan)


def _pairs(plan, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(lower device, upper device) of every link of one kind."""
    L = plan.links
    sel = L.kind == plan.link_kinds.index(kind)
    return L.a_dev[sel], L.b_dev[sel]


def _devices(plan, role: str) -> np.ndarray:
    return np.array([i for i, d in enumerate(plan.devices) if d.role == role])


def test_published_counts(plan, checks):
    s = summarize(plan, checks)
    assert (s["gpus"], s["servers"], s["tiers"]) == (24_576, 3_072, 3)
    # 1,536 ToRs [D]; 16 spines per zone follow from 16 ToR uplinks; 16 cores (ATSW) are the
    # compiler's fewest for equal ECMP paths, not a published figure.
    assert s["switches"] == {"leaf": 1_536, "spine": 8 * 16, "core": 16}
    assert s["switch_models"] == {"leaf": "minipack2", "spine": "arista-7808r3", "core": "arista-7808r3"}
    assert s["cables"] == {"server-leaf": 24_576, "leaf-spine": 1_536 * 16, "spine-core": 128 * 27}
    d = plan.design
    assert (d["pods"], d["leaves_per_pod"], d["spines_per_pod"]) == (8, 192, 16)
    assert d["leaf_ports"] == {"down": 16, "up": 16} and d["switch_radix"] == 64
    assert d["spine_ports"] == {"down": 192, "up": 27} and d["spine_radix"] == 288


def test_two_servers_per_tor_not_rail_optimized(plan):
    servers, leaves = _pairs(plan, "server-leaf")
    # every NIC of a server lands on the same ToR, and every ToR holds exactly two servers
    per_server = {int(s): set() for s in np.unique(servers)}
    for s, leaf in zip(servers.tolist(), leaves.tolist()):
        per_server[s].add(leaf)
    assert all(len(v) == 1 for v in per_server.values())
    pair = np.unique(np.stack([servers, leaves]), axis=1)
    assert np.array_equal(np.bincount(np.unique(pair[1], return_inverse=True)[1]), np.full(1_536, 2))
    assert np.array_equal(np.bincount(np.unique(leaves, return_inverse=True)[1]), np.full(1_536, 2 * RAILS))


def test_zones_of_192_tors_and_3072_gpus(plan):
    pod = {i: d.pod for i, d in enumerate(plan.devices) if d.role in ("leaf", "spine")}
    servers, leaves = _pairs(plan, "server-leaf")
    first = np.unique(servers, return_index=True)[1]
    server_pod = np.array([pod[int(leaf)] for leaf in leaves[first]])
    per_pod_servers = np.bincount(server_pod, minlength=9)[1:]
    assert per_pod_servers.tolist() == [384] * 8  # 384 servers = 3,072 GPUs per zone
    leaf_pods = np.array([pod[int(i)] for i in _devices(plan, "leaf")])
    assert np.bincount(leaf_pods, minlength=9)[1:].tolist() == [192] * 8
    # every spine reaches every ToR of its zone, once, and nothing outside it
    lo, hi = _pairs(plan, "leaf-spine")
    for spine in _devices(plan, "spine")[:: 17]:
        below = lo[hi == spine]
        assert below.size == 192 and np.unique(below).size == 192
        assert {pod[int(x)] for x in below} == {pod[int(spine)]}


def test_oversubscription_measured(checks):
    over = checks.as_json()["figures"]["oversubscription"]
    assert over["leaf"]["min"] == over["leaf"]["max"] == "1:1"
    # 1:7 published; 192 / 7 = 27.43 uplinks is not whole. The nearest whole split is
    # 192 down : 27 up = 64:9 = 7.111:1 (28 up would give 6.857:1).
    assert over["spine"]["min"] == over["spine"]["max"] == "64:9"
    assert over["spine"]["max_ratio"] == pytest.approx(7.1111, abs=1e-4)
    assert Fraction(192, 27) == Fraction(64, 9)
    assert abs(192 / 27 - 7) < abs(192 / 28 - 7)
    assert "core" not in over  # the top tier has no uplinks
    assert checks.as_json()["ok"]


def test_full_bisection_inside_one_zone_max_flow(plan):
    """Max-flow between the two halves of zone 1's GPUs, over zone 1's ToRs and spines only."""
    g = fabric_graph(plan)
    dev = g.device_of
    pod_of = np.array([plan.devices[int(i)].pod or 0 for i in dev])
    role = np.array([plan.devices[int(i)].role for i in dev])
    keep = (pod_of == 1) & (role != "core")
    zone = g.at_is_gpu_server & keep[g.at_switch]
    servers = np.unique(g.at_device[zone])
    assert servers.size == 384
    a = zone & np.isin(g.at_device, servers[:192])
    b = zone & ~a
    assert FlowNetwork(g).flow(a, b, keep_switch=keep) == 3_072 * GBPS // 2 == 614_400


def test_full_bisection_of_one_zone_by_the_bisection_check():
    text = SPEC.read_text().replace("name: meta-llama3-24k", "name: meta-zone").replace("gpus: 24576", "gpus: 3072")
    zone = plan_from_text(text, str(SPECS / "meta-zone.yaml"))
    bis = run_checks(zone).as_json()["figures"]["bisection"]
    assert zone.design["pods"] == 1 and zone.design["leaves_per_pod"] == 192
    assert bis["worst_cut_gbps"] == bis["analytic_gbps"] == 3_072 * GBPS // 2
    assert bis["per_gpu_gbps"] == GBPS  # full bisection: every GPU's 400G crosses the cut


def test_between_zones_the_spine_uplinks_bound(checks):
    bis = checks.as_json()["figures"]["bisection"]
    between = 8 * 16 * 27 * GBPS // 2  # half of all spine uplinks
    assert bis["analytic_gbps"] == bis["worst_cut_gbps"] == between == 691_200
    assert between / (24_576 * GBPS / 2) == pytest.approx(27 / 192)


def test_why_the_spine_ratio_is_64_to_9():
    """A pod holds as many ToRs as a spine has downlinks at oversubscription.spine. On a
    288-port chassis 7:1 gives 252 down / 36 up (pods of 252 ToRs, not 192); 64:9 gives
    exactly 192 / 27. No whole split of 192 downlinks is exactly 7:1."""
    from compiler.expand import sizing
    from compiler.spec.model import Ratio

    tor = sizing.PortSplit(16, 16)
    seven = sizing.split_for_ratio(288, Ratio(down=7, up=1))
    assert (seven.down, seven.up) == (252, 36)
    assert sizing.three_tier(1_536, tor, seven, 288, 1).leaves_per_pod == 252
    s = sizing.three_tier(1_536, tor, sizing.split_for_ratio(288, Ratio(down=64, up=9)), 288, 1)
    assert (s.leaves_per_pod, s.pods, s.spines_per_pod, s.spine.down, s.spine.up) == (192, 8, 16, 192, 27)
    assert (s.cores_per_group, s.spine_core_links, s.cores) == (1, 27, 16)
    assert all(Fraction(192, up) != 7 for up in range(1, 193))


# --- the new keys, in general and as bad input ------------------------------------------

BASE = """name: t
servers: 64
server: hgx-h100
fabric:
  topology: fat-tree
  switch: sn5400
  speed_gbps: 400
"""


def test_spine_switch_same_as_leaf_changes_nothing():
    seed = (SPECS / "seed-8k-fat-tree.yaml").read_text()
    a = plan_from_text(seed)
    b = plan_from_text(seed.replace("  switch: sn5600\n", "  switch: sn5600\n  spine_switch: sn5600\n"))
    assert a.design == b.design and [d.name for d in a.devices] == [d.name for d in b.devices]
    assert all(np.array_equal(getattr(a.links, c), getattr(b.links, c)) for c in ("a_dev", "a_port", "b_dev", "b_port"))


def test_two_tier_spine_of_another_model():
    # 64-port leaves (32 down, 32 up: 4 servers each), 128-port spines: one spine reaches 128 leaves
    p = plan_from_text(BASE.replace("servers: 64", "servers: 512") + "  spine_switch: sn5600\n  tiers: 2\n")
    d = p.design
    assert d["tiers"] == 2 and d["spine_switch"] == "sn5600" and d["spine_radix"] == 128
    checks = run_checks(p)
    assert summarize(p, checks)["switches"] == {"leaf": 128, "spine": 32}
    assert {x.model for x in p.devices if x.role == "spine"} == {"sn5600"}
    assert checks.as_json()["figures"]["oversubscription"]["leaf"]["max"] == "1:1"


def test_servers_per_leaf_leaves_ports_spare():
    p = plan_from_text(BASE + "  servers_per_leaf: 2\n")
    assert p.design["leaf_ports"] == {"down": 16, "up": 16}
    assert summarize(p, run_checks(p))["switches"]["leaf"] == 32
    assert any("32 stay spare" in n for n in p.notes)


BAD = {
    "servers_per_leaf on rail-optimized": (BASE.replace("fat-tree", "rail-optimized") + "  servers_per_leaf: 2\n",
                                           ["fabric", "'servers_per_leaf' applies to fat-tree"]),
    "servers_per_leaf over the radix": (BASE + "  servers_per_leaf: 5\n",
                                        ["fabric.servers_per_leaf", "40 downlinks + 40 uplinks = 80 ports", "has 64",
                                         "at most 4 servers"]),
    "servers_per_leaf not whole uplinks": (BASE + "  servers_per_leaf: 1\n  oversubscription: \"3:1\"\n",
                                           ["fabric.servers_per_leaf", "would need 2.66667 uplinks"]),
    "servers_per_leaf does not divide the SU": (BASE + "  servers_per_leaf: 2\n  scalable_unit: 5\n",
                                                ["fabric.scalable_unit", "not a whole number of leaves (2 servers per leaf)"]),
    "servers_per_leaf zero": (BASE + "  servers_per_leaf: 0\n", ["fabric.servers_per_leaf", "at least 1"]),
    "unknown spine switch": (BASE + "  spine_switch: arista-7808\n",
                             ["fabric.spine_switch", "unknown switch 'arista-7808'"]),
    "spine switch of another protocol": (BASE + "  spine_switch: qm9700\n",
                                         ["fabric.spine_switch", "qm9700 is an infiniband switch", "sn5400 is ethernet"]),
    "spine switch without the speed": (BASE + "  spine_switch: q3400\n", ["fabric.spine_switch", "q3400 has no 400G port mode"]),
    "spine switch without the nos": (BASE.replace("sn5400", "sn5600") + "  nos: cumulus\n  spine_switch: arista-7060x6-64pe\n",
                                     ["fabric.spine_switch", "does not run cumulus"]),
    "core switch with two tiers": (BASE + "  core_switch: sn5600\n", ["fabric.core_switch", "no core tier"]),
    "spine switch on a torus": ("name: t\nservers: 16\nserver: tpu-v4\nfabric: {topology: torus, dims: [4, 4, 4], "
                                "spine_switch: sn5600}\n", ["'spine_switch' applies to fat-tree / rail-optimized"]),
    "per-tier switch with a layout": (BASE + "  spine_switch: sn5600\nlayout: {rows: 1, racks_per_row: 8}\n",
                                      ["layout", "not supported yet"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input(tmp_path, case):
    text, expected = BAD[case]
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    for fragment in expected:
        assert fragment in r.stderr, f"{fragment!r} not in:\n{r.stderr}"


@pytest.mark.slow
def test_compile_and_check_cli(tmp_path):
    r = cli_in_process("compile", str(SPEC), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "128 x arista-7808r3" in r.stdout and "1,536 x minipack2" in r.stdout
    assert "oversubscription spine  64:9" in r.stdout
    r = cli_in_process("check", str(SPEC))
    assert r.returncode == 0, r.stdout + r.stderr


MIXED = """name: mixed-{nos}
servers: 64
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: sn5600
  speed_gbps: 400
  spine_switch: sn5400
  scalable_unit: 32
  nos: {nos}
"""


def test_mixed_leaf_and_spine_models_give_configs_the_nos_accepts(tmp_path, sonic_yang):
    """SN5600 leaves (128 x 400G, two ports per cage) under SN5400 spines (64 x 400G, one per
    cage): each switch's config names its own model's ports; SONiC YANG and FRR's vtysh take them."""
    import shutil
    from .test_switch_configs import _vtysh_check

    out = {}
    for nos in ("sonic", "frr"):
        spec = tmp_path / f"{nos}.yaml"
        spec.write_text(MIXED.format(nos=nos))
        r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
        assert r.returncode == 0, r.stderr
        out[nos] = tmp_path / "out" / f"mixed-{nos}" / "configs"
    leaf = json.loads((out["sonic"] / "su1-leaf-r1" / "config_db.json").read_text())
    spine = json.loads((out["sonic"] / "spine-01" / "config_db.json").read_text())
    for cfg in (leaf, spine):
        assert sonic_yang.validate(cfg) == []
    # SONiC names a port by its first SerDes lane: 8 lanes per cage, 2 ports per SN5600 cage at 400G,
    # one per SN5400 cage; each spine takes 16 leaves x 4 links
    assert "Ethernet4" in leaf["PORT"] and len(leaf["PORT"]) == 32 + 32  # ports in use: 32 servers, 32 uplinks
    assert "Ethernet4" not in spine["PORT"] and "Ethernet8" in spine["PORT"] and len(spine["PORT"]) == 64
    if shutil.which("vtysh"):
        for f in sorted(out["frr"].glob("*/frr.conf")):
            r = _vtysh_check(f, tmp_path)
            assert r.returncode == 0, f"{f}: {r.stdout}{r.stderr}"
