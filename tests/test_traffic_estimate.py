"""One answer per question: the all-reduce estimate (compiler/traffic/estimate.py) is the
routed ring, and the check, summary.json, `clusterc compare`, `clusterc explore` and
`clusterc traffic` all show that one number; routes on every topology family.

Routes on networks without tiers (tori, rings, meshes) are traffic/minimal.py's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from compiler.check import CHECKS, run_checks
from compiler.check.collectives import CollectivesFigures
from compiler.compare import design_figures
from compiler.diagnostics import SpecInvalid
from compiler.explore.choices import Candidate
from compiler.explore.evaluate import evaluate
from compiler.pipeline import build_plan
from compiler.plan.fabrics import fabric_plan
from compiler.render.summary import summarize
from compiler.traffic import traffic_report
from compiler.traffic.estimate import ring_bandwidth
from compiler.traffic.fabric import TrafficFabric
from compiler.traffic.patterns import _phase, build_pattern, placement
from compiler.traffic.analysis import solve_phase
from compiler.traffic.routing import Router
from compiler.traffic.text import seconds_text

from .conftest import SPECS, cli_in_process, scratch_dir
from .metamorphic_specs import any_specs, spec_yaml, write_spec


B200_2TO1 = """name: b200-2to1
servers: 128
server: dgx-b200
fabric:
  topology: rail-optimized
  switch: qm9700
  oversubscription: "2:1"
  scalable_unit: 32
collectives:
  message_sizes: ["1GiB"]
"""


def _write(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_check_and_traffic_give_one_ring_time_at_two_to_one(tmp_path):
    """128 DGX B200 at 2:1: ring neighbours share their rail leaf, so the ring runs at NIC line
    rate whatever the spine ratio. The check said 96 ms (NIC x bisection ratio), traffic 53.1 ms."""
    path = _write(tmp_path, B200_2TO1)
    plan = build_plan(path)[1]
    figures = run_checks(plan).of(CollectivesFigures)
    assert figures.routing == "ftree" and figures.fabric_factor == 1.0 and figures.network_gbps_per_gpu == 400.0
    row = figures.allreduce[0]
    traffic = traffic_report(plan, ["ring-allreduce", "hierarchical"], ["ftree"])["results"]
    by_pattern = {r["pattern"]: r["collective_seconds"][str(2**30)] for r in traffic}
    assert row.ring_s == by_pattern["ring-allreduce"] and row.hierarchical_s == by_pattern["hierarchical"]
    # 2 * 1023/1024 * 8 GiB-bits / 400 Gb/s + 2 * 1023 * 5 us
    assert row.ring_s == round(2 * 1023 / 1024 * 8 * 2**30 / 400e9 + 2 * 1023 * 5e-6, 6)
    assert seconds_text(row.ring_s) == "53.1 ms"
    r = cli_in_process("check", str(path), "-v")
    assert "all-reduce of 1GiB over 1,024 GPUs: ring 53.1 ms" in r.stdout, r.stdout
    assert "ftree routing" in r.stdout


def test_a_ring_on_torus_neighbour_links_does_not_slow_with_size(tmp_path):
    """A 140 GB ring on 8^3 and 16^3 TPU v4 tori: neighbour links only, so the same time (the
    bisection model said 11.9 s and 23.9 s); traffic routes the torus and agrees."""
    times = {}
    for k in (8, 16):
        path = _write(tmp_path, f"name: t{k}\ngpus: {k**3}\nserver: tpu-v4\nfabric:\n  topology: torus\n"
                                f"  dims: [{k}, {k}, {k}]\ncollectives:\n  message_sizes: [\"140GB\"]\n", f"t{k}.yaml")
        plan = build_plan(path)[1]
        figures = run_checks(plan, checks={"collectives": CHECKS["collectives"]}).of(CollectivesFigures)
        assert figures.routing == "minimal"
        times[k] = figures.allreduce[0].ring_s
        traffic = traffic_report(plan, ["ring-allreduce"], ["minimal"])["results"][0]
        assert traffic["collective_seconds"][str(140 * 10**9)] == times[k]
    assert times[8] == pytest.approx(times[16], rel=0.02)
    assert times[16] < 8.0  # about one 300G link's worth per GPU, not the bisection's share


@pytest.mark.parametrize("spec", ["b200-superpod-4su.yaml", "h100-superpod-1su.yaml", "rail-only-h100-64.yaml",
                                  "alibaba-hpn-pod.yaml", "b200-superpod-16su.yaml"])
def test_closed_form_equals_every_routing(spec):
    """Where no link can be offered more than it carries on any valley-free route, every
    routing gives the ring the same slowest connection: the closed form's."""
    plan = fabric_plan(build_plan(SPECS / spec)[1])
    estimate = ring_bandwidth(plan)
    fabric = TrafficFabric(plan)
    router = Router(fabric)
    pattern = build_pattern(fabric, "ring-allreduce", placement(fabric, None, "plan", 1), 1)
    for routing in router.available():
        routed = solve_phase(fabric, pattern.phases[0], router.route(routing, pattern.phases[0]))
        if estimate.method == "no link shared at saturation":
            assert routed.min_fraction == estimate.min_fraction, routing
    assert estimate.method in ("no link shared at saturation", "routed")


@pytest.mark.parametrize("spec,routing", [("roce-2spine-4leaf-cumulus.yaml", "adaptive"),
                                          ("roce-2spine-4leaf-sonic.yaml", "ecmp"), ("b200-superpod-4su.yaml", "ftree"),
                                          ("dragonfly-2k.yaml", "minimal"), ("tpu-v4-pod.yaml", "minimal")])
def test_the_routing_estimates_assume_is_what_the_fabric_runs(spec, routing):
    """OpenSM's ftree on InfiniBand trees; on Ethernet, adaptive where the NOS's files turn
    per-packet adaptive routing on (Cumulus), per-flow ECMP otherwise; minimal on dragonflies
    and tori."""
    assert ring_bandwidth(fabric_plan(build_plan(SPECS / spec)[1])).routing == routing


def test_closed_form_is_not_taken_where_flows_may_share_a_link():
    """A fat tree with several servers per leaf sends 8 ring flows up from each leaf boundary:
    ECMP may hash two onto one uplink, so the ring is routed (and is slower than line rate)."""
    plan = fabric_plan(build_plan(SPECS / "seed-8k-fat-tree.yaml")[1])
    estimate = ring_bandwidth(plan)
    assert estimate.method == "routed" and estimate.routing == "ecmp" and estimate.min_fraction < 1.0
    report = traffic_report(plan, ["ring-allreduce"], ["ecmp"])["results"][0]
    assert report["min_fraction"] == round(estimate.min_fraction, 4)


@pytest.mark.parametrize("spec,routings", [("torus-switched-512.yaml", {"minimal", "dimension-order"}),
                                           ("dgx-h100-6node-ring.yaml", {"minimal"}),
                                           ("dgx-h100-4node-mesh.yaml", {"minimal"})])
def test_traffic_routes_direct_and_torus_families(spec, routings):
    report = traffic_report(build_plan(SPECS / spec)[1], ["ring-allreduce", "permutation"])
    assert {r["routing"] for r in report["results"]} == routings
    for r in report["results"]:
        assert r["unroutable_flows"] == 0 and 0 < r["min_fraction"] <= r["fraction"] <= 1


def test_ring_topology_ring_uses_the_direct_cables():
    """Six DGX H100 in a ring, four 400G cables to each neighbour: server k's ring flow to k+1
    crosses those four cables only: 1,600 of 3,200 Gb/s, 200 Gb/s per GPU."""
    plan = build_plan(SPECS / "dgx-h100-6node-ring.yaml")[1]
    r = traffic_report(plan, ["ring-allreduce"])["results"][0]
    assert r["min_fraction"] == 0.5 and r["gbps_per_gpu"] == 200.0
    assert ring_bandwidth(fabric_plan(plan)).network_gbps_per_gpu == 200.0


def test_mesh_and_wraparound(tmp_path):
    """A 1-D torus of 8 routers routes 0 -> 7 over the wraparound (one hop); the mesh of the
    same routers takes 7 hops. A permutation's flows cross as many router links as that."""
    hops = {}
    for topo in ("torus", "mesh"):
        path = _write(tmp_path, f"name: {topo}\nservers: 8\nserver: dgx-h100\nfabric:\n  topology: {topo}\n"
                                f"  switch: qm9700\n  dims: [8]\n", f"{topo}.yaml")
        plan = build_plan(path)[1]
        fabric = TrafficFabric(plan)
        router = Router(fabric)
        first, last = fabric.ep_first[0], fabric.ep_first[7]
        phase = _phase(np.array([first]), np.array([last]))
        routed = router.route("minimal", phase)
        load = routed.inc.load(np.ones(1))
        kinds = np.array(plan.link_kinds)[plan.links.kind[np.flatnonzero(load > 0) // 2]]
        hops[topo] = int(np.count_nonzero(kinds == "router-router"))
    assert hops == {"torus": 1, "mesh": 7}


def test_dimension_order_goes_x_then_y_the_short_way(tmp_path):
    """On a 4 x 4 torus of routers, router (0,0) -> (1,3): x first ((0,0) -> (1,0)), then y the
    short way, over the wraparound ((1,0) -> (1,3)); minimal splits over both orders."""
    path = _write(tmp_path, "name: t\nservers: 16\nserver: dgx-h100\nfabric:\n  topology: torus\n"
                            "  switch: qm9700\n  dims: [4, 4]\n")
    plan = build_plan(path)[1]
    fabric = TrafficFabric(plan)
    router = Router(fabric)
    assert router.available() == ("minimal", "dimension-order")
    names = [d.name for d in plan.devices]
    src, dst = fabric.ep_first[0], fabric.ep_first[7]  # server 1 on router (0,0), server 8 on (1,3)
    used = {}
    for routing in ("dimension-order", "minimal"):
        load = router.route(routing, _phase(np.array([src]), np.array([dst]))).inc.load(np.ones(1))
        hops = []
        for i in np.flatnonzero(load > 0):
            a, b = int(plan.links.a_dev[i // 2]), int(plan.links.b_dev[i // 2])
            frm, to = (a, b) if i % 2 == 0 else (b, a)
            if plan.devices[frm].role == "router" and plan.devices[to].role == "router":
                hops.append((names[frm], names[to], round(float(load[i]), 3)))
        used[routing] = sorted(hops)
    assert used["dimension-order"] == [("router-x00-y00", "router-x01-y00", 1.0), ("router-x01-y00", "router-x01-y03", 1.0)]
    assert used["minimal"] == sorted([("router-x00-y00", "router-x01-y00", 0.5), ("router-x01-y00", "router-x01-y03", 0.5),
                                      ("router-x00-y00", "router-x00-y03", 0.5), ("router-x00-y03", "router-x01-y03", 0.5)])


# --------------------------------------------------------------------------------------
# Every command shows the same figure, over generated specs of every family


def _all_commands_agree(spec: dict) -> None:
    path = write_spec(scratch_dir("estimate"), spec_yaml(spec))
    try:
        plan = build_plan(path)[1]
    except SpecInvalid:
        assume(False)
        return
    checks = run_checks(plan)
    figures = checks.of(CollectivesFigures)
    largest = max(figures.allreduce, key=lambda r: r.message_bytes)
    summary = summarize(plan, checks)["allreduce"]
    compared = design_figures(plan, checks)["allreduce"]
    assert summary == compared
    assert summary["seconds"] == largest.best_s and summary["message_bytes"] == largest.message_bytes
    explored = evaluate(Candidate(1, "c", json.loads(json.dumps(spec)), {}), path)
    assert explored.collective_time_s == largest.best_s, explored.rejected
    if figures.routing is None:
        return
    report = traffic_report(plan, ["ring-allreduce", "hierarchical"], [figures.routing])
    for r in report["results"]:
        for row in figures.allreduce:
            want = row.ring_s if r["pattern"] == "ring-allreduce" else row.hierarchical_s
            assert r["collective_seconds"][str(row.message_bytes)] == want, (r["pattern"], row)
    ring = next(r for r in report["results"] if r["pattern"] == "ring-allreduce")
    assert ring["min_fraction"] == round(figures.fabric_factor, 4)


@settings(max_examples=24, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(any_specs())
def test_check_summary_compare_explore_and_traffic_agree(spec):
    _all_commands_agree(spec)


@pytest.mark.parametrize("spec", [
    {"name": "df", "servers": 64, "server": "dgx-h100", "fabric": {"topology": "dragonfly", "switch": "qm9700"}},
    {"name": "tor", "gpus": 64, "server": "tpu-v4", "fabric": {"topology": "torus", "dims": [4, 4, 4]}},
    {"name": "mesh", "servers": 6, "server": "dgx-h100", "fabric": {"topology": "mesh", "switch": "qm9700", "dims": [3, 2]}},
    {"name": "ring", "servers": 5, "server": "dgx-b200", "fabric": {"topology": "ring"}},
    {"name": "fm", "servers": 4, "server": "dgx-h100", "fabric": {"topology": "full-mesh"}},
    {"name": "ft", "servers": 64, "server": "dgx-h100",
     "fabric": {"topology": "fat-tree", "switch": "sn5600", "servers_per_leaf": 4, "oversubscription": "2:1"},
     "fabrics": [{"name": "storage", "switch": "sn5600"}]},
])
def test_every_family_agrees(spec):
    _all_commands_agree(spec)



# A fat tree whose ring in plan order crosses the spines (4 servers a leaf, 2:1): ECMP may
# hash two ring flows onto one uplink, an even split at every hop never does.
AR_TREE = {"name": "ar", "servers": 64, "server": "dgx-h100",
           "fabric": {"topology": "fat-tree", "switch": "sn5600", "servers_per_leaf": 4, "oversubscription": "2:1"}}


@pytest.mark.parametrize("nos, routing", [("cumulus", "adaptive"), ("sonic", "ecmp"), (None, "ecmp")])
def test_adaptive_routing_is_a_plan_fact_every_command_reads(nos, routing):
    """The NOS's files turn per-packet adaptive routing on (Cumulus: NVUE `router
    adaptive-routing`) and the plan says so (RoutingPlan.adaptive_routing, plan.json
    addressing.adaptive_routing): check, summary, compare, explore and traffic then price the
    ring on `adaptive`, one figure; where collisions exist it is not ECMP's."""
    spec = json.loads(json.dumps(AR_TREE))
    if nos:
        spec["fabric"]["nos"] = nos
    _all_commands_agree(spec)
    plan = build_plan(write_spec(scratch_dir("estimate"), spec_yaml(spec)))[1]
    assert plan.routing.adaptive_routing is (routing == "adaptive")
    figures = run_checks(plan).of(CollectivesFigures)
    report = traffic_report(plan, ["ring-allreduce"])
    assert figures.routing == report["reference_routing"] == routing
    by_routing = {r["routing"]: r["min_fraction"] for r in report["results"]}
    assert by_routing["adaptive"] == 1.0 and by_routing["ecmp"] < 0.5  # ECMP collides on the uplinks
    assert round(figures.fabric_factor, 4) == by_routing[routing]
    data = json.loads(_plan_json(plan))
    assert data["addressing"]["adaptive_routing"] is (routing == "adaptive")
    import jsonschema

    from compiler.render.plan_json import schema_text

    jsonschema.validate(data, json.loads(schema_text()))


def _plan_json(plan) -> str:
    from compiler.plan.serialize import plan_from_json, plan_json_text

    text = plan_json_text(plan)
    again = plan_from_json(json.loads(text))
    assert again.routing.adaptive_routing == plan.routing.adaptive_routing  # read back
    return text


def test_times_read_in_human_units_with_three_significant_digits():
    assert [seconds_text(t) for t in (1.31e-4, 2.6e-5, 0.0531, 5.6, 0.0009996, None)] == \
        ["131 µs", "26.0 µs", "53.1 ms", "5.60 s", "1.00 ms", "-"]
