"""Torus/mesh and dragonfly families: sizes and bisection against the closed forms in
designs.md (checked against scipy max-flow on the generated plans), the wiring rules,
impossible parameters as clear errors, determinism, and `clusterc compare`."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest

from compiler.check import run_checks
from compiler.check.invariants import plan_invariants
from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan
from compiler.render.summary import summarize

from .conftest import SPECS, cli_in_process, run_cli, shared_checks, shared_plan, tree_bytes
from .synthetic import catalog_yaml

TPU_V4_LINK_GBPS = 375


def _spec(tmp_path, text: str, k: int | None = None):
    if k:
        (tmp_path / f"k{k}.yaml").write_text(catalog_yaml(k))
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def _direct_torus(tmp_path, dims, wrap=None, topology="torus"):
    chips = math.prod(dims)
    wrap_line = f"\n  wrap: {json.dumps(wrap)}" if wrap is not None else ""
    return build_plan(_spec(tmp_path, f"name: t\ngpus: {chips}\nserver: tpu-v4\nfabric:\n  topology: {topology}\n"
                                      f"  dims: {json.dumps(dims)}{wrap_line}\n"))[1]


@pytest.mark.parametrize("dims,wrap", [
    ([8], [True]), ([8], [False]), ([4, 8], [True, True]), ([8, 4], [True, True]), ([4, 4], [False, False]),
    ([4, 4, 4], [True, True, True]), ([4, 4, 2], [True, True, False]), ([8, 4, 2], [True, False, True]),
])
def test_torus_bisection_closed_form_matches_max_flow(tmp_path, dims, wrap):
    plan = _direct_torus(tmp_path, dims, wrap)
    b = run_checks(plan).as_json()["figures"]["bisection"]
    # Dally & Towles: a plane cut across an even dimension k crosses N/k node pairs, twice if it wraps;
    # the bisection is the narrowest such cut (2·k^(n-1) links for a k-ary n-cube, k^(n-1) for a mesh).
    n_nodes = math.prod(dims)
    links = min(n_nodes // k * (2 if w else 1) for k, w in zip(dims, wrap) if k % 2 == 0)
    assert b["analytic_gbps"] == links * TPU_V4_LINK_GBPS
    assert b["worst_cut_gbps"] == b["analytic_gbps"], b["cuts"]


@pytest.mark.parametrize("k,n", [(4, 1), (4, 2), (4, 3), (8, 2), (6, 2)])
def test_k_ary_n_cube_formula(tmp_path, k, n):
    if n == 1:  # a 1D TPU v4 ring holds 4 chips per host along x
        dims = [k * 2]
        k = dims[0]
    else:
        dims = [k] * n
    plan = _direct_torus(tmp_path, dims)
    s = summarize(plan, run_checks(plan))
    # N = k^n chips, degree 2n, bisection 2·k^(n-1) links.
    assert s["gpus"] == k ** n
    links_total = len(plan.links)
    assert links_total == n * k ** n  # every chip: one + link per dimension
    assert s["bisection_gbps"]["worst_cut"] == 2 * k ** (n - 1) * TPU_V4_LINK_GBPS == s["bisection_gbps"]["analytic"]


def test_direct_torus_plan_shape(tmp_path):
    plan = _direct_torus(tmp_path, [4, 4, 4])
    chips = [d for d in plan.devices if d.role == "chip"]
    hosts = [d for d in plan.devices if d.role == "server"]
    assert len(chips) == 64 and len(hosts) == 16
    assert plan_invariants(plan) == []
    # degree 2n = 6: every chip uses all six ICI ports exactly once
    ends = Counter(np.concatenate([plan.links.a_dev, plan.links.b_dev]).tolist())
    assert set(ends.values()) == {6}
    # 64 chips x 3 dimensions = 192 links. Inside a host (a 2x2x1 block) the x and y neighbours
    # are board traces: 2 along x + 2 along y per host = 64; the other 128 are cables.
    kinds = plan.count_by_kind()
    assert kinds == {"board": 64, "chip-chip": 128}
    by_name = {d.name: d for d in chips}
    assert "tpuv4-x00-y00-z00" in by_name and "tpuv4-x03-y03-z03" in by_name
    board = plan.links.kind == plan.link_kinds.index("board")
    for a, b in zip(plan.links.a_dev[board].tolist(), plan.links.b_dev[board].tolist()):
        assert plan.devices[a].group == plan.devices[b].group  # same host
    checks = run_checks(plan)
    s = summarize(plan, checks)
    assert s["cables"] == {"chip-chip": kinds["chip-chip"]}  # board traces are not cables
    assert s["switches"] == {} and s["transceivers"] == 0
    hops = checks.as_json()["figures"]["hops"]
    assert hops["max"] == 6 and hops["unit"] == "chip-to-chip links"  # diameter: n * k/2


def test_direct_torus_cabling_lists_only_cables(tmp_path):
    spec = _spec(tmp_path, "name: t\ngpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [4, 4, 4]\n")
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = (tmp_path / "out" / "t" / "cabling.csv").read_text().splitlines()[1:]
    plan = build_plan(spec)[1]
    assert len(rows) == plan.count_by_kind()["chip-chip"]
    assert all(",chip-chip," in row for row in rows)
    bom = (tmp_path / "out" / "t" / "bom.csv").read_text()
    assert "TPU v4 host" in bom and ",16," in bom


def test_twisted_torus_max_flow(tmp_path):
    plan = shared_plan("tpu-v5p-twisted-8x8x16")
    figures = shared_checks(plan).as_json()["figures"]
    b = figures["bisection"]
    assert b["analytic_gbps"] is None  # no closed form: max-flow only
    # The twist moves x wrap links along z; degree and link count stay those of the torus.
    assert len(plan.links) == 3 * 1024
    ends = Counter(np.concatenate([plan.links.a_dev, plan.links.b_dev]).tolist())
    assert set(ends.values()) == {6}
    # Untwisted, the z plane cut crosses only 2 * 8 * 8 links (102,400 Gb/s), the worst cut.
    # Moved 8 along z (half the long dimension), every one of the 128 x wrap-around links
    # lands in the other z half: the z cut crosses 128 + 128 links, as many as the x and y
    # cuts. The shipped spec used to twist the z wraps 4 along x, which left the z cut at
    # 102,400 Gb/s: the twist bought nothing.
    cuts = {c["name"]: c["gbps"] for c in b["cuts"]}
    assert cuts["torus-z"] == cuts["torus-x"] == cuts["torus-y"] == 2 * 128 * 800
    assert b["worst_cut_gbps"] == 204_800
    assert figures["hops"]["max"] == 12  # 4 + 4 + 8 = 16 untwisted


def test_switched_torus(tmp_path):
    plan = shared_plan("torus-switched-512")
    checks = shared_checks(plan)
    s = summarize(plan, checks)
    assert s["switches"] == {"router": 64}
    assert s["cables"] == {"server-router": 512, "router-router": 64 * 3 * 4}
    b = checks.as_json()["figures"]["bisection"]
    # 2 * 4^2 node pairs * 4 links * 400G = 51,200; half the injection is 102,400
    assert b["analytic_gbps"] == b["worst_cut_gbps"] == 2 * 16 * 4 * 400
    assert plan_invariants(plan) == []


DF_SPEC = """name: df
servers: {hosts}
server: host1
catalog: k{k}.yaml
fabric:
  topology: {topology}
  switch: k{k}
{extra}"""


def _dragonfly(tmp_path, k, hosts, topology="dragonfly", extra=""):
    return build_plan(_spec(tmp_path, DF_SPEC.format(k=k, hosts=hosts, topology=topology, extra=extra), k))[1]


@pytest.mark.parametrize("k", [8, 12, 16])
def test_dragonfly_balanced_maximum(tmp_path, k):
    # Kim et al.: radix = p + (a-1) + h; g max = a*h + 1; N = a*p*g; balanced a = 2p = 2h.
    p = h = (k + 1) // 4
    a = 2 * p
    g = a * h + 1
    plan = _dragonfly(tmp_path, k, a * p * g)
    d = plan.design
    assert (d["endpoints_per_switch"], d["switches_per_group"], d["global_ports_per_switch"], d["groups"]) == (p, a, h, g)
    assert p + a - 1 + h <= k
    s = summarize(plan, run_checks(plan))
    assert s["switches"] == {"router": a * g}
    assert s["cables"] == {"server-router": a * p * g, "local": g * a * (a - 1) // 2, "global": g * (g - 1) // 2}
    # every group reaches every other with exactly one global link; every router has h global links
    glob = plan.links.kind == plan.link_kinds.index("global")
    pods = np.array([dev.pod for dev in plan.devices])
    pairs = Counter(zip(pods[plan.links.a_dev[glob]].tolist(), pods[plan.links.b_dev[glob]].tolist()))
    assert len(pairs) == g * (g - 1) // 2 and set(pairs.values()) == {1}
    per_router = Counter(np.concatenate([plan.links.a_dev[glob], plan.links.b_dev[glob]]).tolist())
    assert set(per_router.values()) == {h}
    assert plan_invariants(plan) == []


@pytest.mark.parametrize("k,groups,topology,extra", [
    (8, 8, "dragonfly", ""), (8, 2, "dragonfly", ""), (8, 4, "dragonfly", "  global_links_per_group_pair: 2\n"),
    (8, 4, "dragonfly+", ""), (8, 6, "dragonfly+", "  switches_per_group: 8\n  endpoints_per_switch: 4\n  global_ports_per_switch: 2\n"),
    (12, 10, "dragonfly", ""),
])
def test_dragonfly_bisection_closed_form_matches_max_flow(tmp_path, k, groups, topology, extra):
    probe = _dragonfly(tmp_path, k, 1, topology, extra + "  groups: 2\n")  # the default group size (one group would shrink to its endpoints)
    per_group = probe.design["endpoint_ports_per_group"]
    plan = _dragonfly(tmp_path, k, per_group * groups, topology, extra)
    b = run_checks(plan).as_json()["figures"]["bisection"]
    assert plan.design["groups"] == groups
    assert b["analytic_gbps"] is not None
    assert b["worst_cut_gbps"] == b["analytic_gbps"], b["cuts"]


def test_dragonfly_plus_structure(tmp_path):
    plan = shared_plan("dragonfly-plus-2k")
    s = summarize(plan, shared_checks(plan))
    assert s["switches"] == {"leaf": 64, "spine": 64}
    assert s["cables"]["local"] == 4 * 16 * 16  # every leaf to every spine of its group
    assert set(plan.link_kinds) == {"server-leaf", "local", "global"}
    assert plan_invariants(plan) == []


BAD = {
    "radix too small": ("dragonfly", "k8", "  endpoints_per_switch: 3\n", 8,
                        ["fabric.switch", "p + (a - 1) + h = 3 + 5 + 3 = 11", "has 8"]),
    "too many groups": ("dragonfly", "k8", "  groups: 10\n", 8, ["fabric.groups", "at most a * h + 1 = 9 groups"]),
    "too many endpoints": ("dragonfly", "k8", "", 8 * 10, ["servers", "at most a * h + 1 = 9"]),
    "too many links per pair": ("dragonfly", "k8", "  groups: 4\n  global_links_per_group_pair: 3\n", 8,
                                ["fabric.global_links_per_group_pair", "9 global ports; a group has 8"]),
    "torus key on a dragonfly": ("dragonfly", "k8", "  dims: [4]\n", 8, ["fabric", "key 'dims' applies to torus / mesh"]),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_impossible_dragonfly_is_a_clear_error(tmp_path, case):
    topology, switch, extra, hosts, expected = BAD[case]
    path = _spec(tmp_path, DF_SPEC.format(k=8, hosts=hosts, topology=topology, extra=extra), 8)
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2, r.stdout
    for text in expected:
        assert text in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


TORUS_BAD = {
    "dimension of 1 marked torus": ("gpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [8, 8, 1]\n",
                                    ["fabric.dims", "dimension z has size 1 and is marked as torus"]),
    "wrap length": ("gpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [8, 8]\n  wrap: [true]\n",
                    ["fabric.wrap", "wrap has 1 entries but dims has 2"]),
    "chip count": ("gpus: 60\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [8, 8]\n",
                   ["gpus", "has 64 chips but the spec gives 60"]),
    "no direct ports": ("servers: 8\nserver: dgx-h100\nfabric:\n  topology: torus\n  dims: [8]\n",
                        ["server", "no chip-to-chip ports"]),
    "router radix": ("servers: 64\nserver: dgx-h100\nfabric:\n  topology: torus\n  switch: qm9700\n  dims: [4, 4, 4]\n"
                     "  links_per_neighbor: 10\n", ["fabric.switch", "8 NIC ports + 60 torus ports = 68"]),
    "host split": ("gpus: 12\nserver: tpu-v4\nfabric:\n  topology: mesh\n  dims: [3, 4]\n",
                   ["fabric.dims", "dimension x = 3 is not a whole number of hosts"]),
    "clos key on torus": ("gpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [4, 4, 4]\n  tiers: 2\n",
                          ["key 'tiers' applies to fat-tree / rail-optimized"]),
}


@pytest.mark.parametrize("case", list(TORUS_BAD), ids=list(TORUS_BAD))
def test_impossible_torus_is_a_clear_error(tmp_path, case):
    body, expected = TORUS_BAD[case]
    path = _spec(tmp_path, "name: t\n" + body)
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2, r.stdout
    for text in expected:
        assert text in r.stderr, r.stderr


NEW_SPECS = ["tpu-v4-pod", "tpu-v5p-twisted-8x8x16", "torus-switched-512", "dragonfly-2k", "dragonfly-plus-2k"]


@pytest.mark.slow
def test_new_topologies_are_deterministic(tmp_path):
    digests = []
    specs = [str(SPECS / f"{n}.yaml") for n in ("tpu-v5p-twisted-8x8x16", "torus-switched-512", "dragonfly-plus-2k")]
    for seed in ("0", "4242"):
        out = tmp_path / seed
        r = run_cli("compile", *specs, "-o", str(out), env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        digests.append(tree_bytes(out))
    assert digests[0] == digests[1]


def test_compare_table(tmp_path):
    specs = [str(SPECS / f"{n}.yaml") for n in ("b200-superpod-8su", "dragonfly-2k", "dragonfly-plus-2k")]
    r = cli_in_process("compare", *specs)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["b200-superpod-8su", "dragonfly-2k", "dragonfly-plus-2k"]
    rows = {line[:26].strip(): line[26:].split() for line in lines[1:]}
    assert rows["GPUs"] == ["2,048", "2,048", "2,048"]
    assert rows["switches: router"] == ["-", "128", "-"]
    assert rows["cables: global"] == ["-", "1,020", "510"]
    assert rows["bisection (Gb/s)"] == ["409,600", "272,000", "136,000"]
    j = cli_in_process("compare", "--format", "json", *specs)
    designs = json.loads(j.stdout)["designs"]
    assert [d["switches_total"] for d in designs] == [96, 128, 128]
    assert designs[1]["worst_single_failure"]["what"] in ("router", "link local", "link global")
    bad = cli_in_process("compare", specs[0], str(tmp_path / "missing.yaml"))
    assert bad.returncode == 2


def test_catalog_lists_direct_network_hosts():
    r = cli_in_process("catalog", "list")
    assert r.returncode == 0
    assert "tpu-v4" in r.stdout and "6 x 375G ici per chip" in r.stdout


def test_group_graph_overviews_draw_a_box_per_group_in_bounded_time():
    """Dragonfly overviews are dense group graphs (dot took minutes on them): the groups
    are drawn on an ellipse, a chord per pair of groups, with no layout engine."""
    from compiler.render.diagrams import overview

    _, plan = build_plan(SPECS / "dragonfly-2k.yaml")
    svg = overview(plan).svg()
    groups = max(d.pod or 0 for d in plan.devices)
    assert svg.count('class="node"') == min(groups, 32) and svg.count('class="edge"') == groups * (groups - 1) // 2
    _, clos = build_plan(SPECS / "h100-superpod-1su.yaml")
    assert "<title>su1</title>" in overview(clos).svg()


def test_compare_counts_every_fabric_and_the_scale_up_domain():
    """An NVL72 SU against a DGX H100 SU with storage and OOB networks: the domain and its
    switch trays, and what the extra fabrics add to the bill, appear per design."""
    j = cli_in_process("compare", "--format", "json", str(SPECS / "gb200-nvl72-su.yaml"),
                       str(SPECS / "h100-superpod-1su-multi-fabric.yaml"))
    assert j.returncode == 0, j.stderr
    nvl, multi = json.loads(j.stdout)["designs"]
    assert nvl["scale_up"]["gpus_per_domain"] == 72 and nvl["scale_up"]["switch_trays"] == 8 * 9
    assert multi["scale_up"]["gpus_per_domain"] == 8 and multi["scale_up"]["gbytes_per_s_per_gpu"] == 900
    # storage dual-homed: two SN5600, 31 ports each on 16 twin-port cages
    assert multi["extra_fabrics"] == {"storage": {"switches": 2, "cables": 62, "transceivers": 62 + 2 * 16},
                                      "oob": {"switches": 1, "cables": 31, "transceivers": 0}}
    assert nvl["extra_fabrics"] == {}
    text = cli_in_process("compare", str(SPECS / "gb200-nvl72-su.yaml"), str(SPECS / "h100-superpod-1su-multi-fabric.yaml")).stdout
    assert "72 GPUs, 1,800 GB/s/GPU" in text and "storage fabric: cables" in text


# (multi-plane grows like a Clos: each plane is one; tests/test_flagship_designs.py)
@pytest.mark.parametrize("spec", ["tpu-v4-pod", "dragonfly-2k", "rail-only-h100-64"])
def test_growth_on_non_clos_topologies_is_refused_not_ignored(tmp_path, spec):
    path = tmp_path / f"{spec}.yaml"
    path.write_text((SPECS / f"{spec}.yaml").read_text() + "growth: {max_servers: 100000}\n")
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2 and "growth planning is not supported on topology" in r.stderr, r.stderr
