"""Routing-aware traffic analysis (`clusterc traffic`, compiler/traffic/): the known results
it must reproduce, its routing models checked against independent computations, and the
JSON contract."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from compiler.traffic import SCHEMA, TrafficError, traffic_report
from compiler.traffic.analysis import balls_into_bins
from compiler.traffic.clos import ClosRoutes
from compiler.traffic.fabric import TrafficFabric, parse_failure
from compiler.traffic.fairness import Incidence, max_min_rates
from compiler.traffic.patterns import build_pattern, fabric_order, placement

from .conftest import SPECS, cli_in_process, plan_from_text, shared_checks

# A two-tier 1:1 fat tree: 64 leaves of 32 GPU ports down and 32 up, one cable to each of 32 spines.
FAT_TREE_2048 = """name: ft-2048
gpus: 2048
server: hgx-h100
fabric: {topology: fat-tree, switch: qm9700, tiers: 2, oversubscription: "1:1"}
"""
# 2:1: leaves of 4 DGX H100 (32 GPU ports down, 16 up).
FAT_TREE_2TO1 = """name: ft-2to1
servers: 64
server: dgx-h100
fabric: {topology: fat-tree, switch: qm9700, oversubscription: "2:1", servers_per_leaf: 4}
"""
# Three tiers with several pods, small: an 8-port lab InfiniBand switch (tests/data/lab-ib.yaml),
# 16 leaves in 4 pods of 4, 16 spines, 8 cores with 2 cables to each spine of their plane.
LAB_3TIER = """name: lab-3tier
servers: {servers}
server: lab-1nic
catalog: {catalog}
fabric: {{topology: fat-tree, switch: lab-ib-8port, tiers: 3, oversubscription: "1:1"}}
"""
LAB_CATALOG = Path(__file__).parent / "data" / "lab-ib.yaml"


def lab_3tier(servers: int = 64):
    return plan_from_text(LAB_3TIER.format(servers=servers, catalog=LAB_CATALOG), file=str(LAB_CATALOG))


def result(report: dict, pattern: str, routing: str, failure: str | None = None) -> dict:
    return next(r for r in report["results"] if r["pattern"] == pattern and r["routing"] == routing and r["failure"] == failure)


@pytest.fixture(scope="module")
def fat_tree():
    return plan_from_text(FAT_TREE_2048)


# --- known results -------------------------------------------------------------------------

def test_adaptive_routing_carries_a_permutation_at_line_rate_on_a_full_fat_tree(fat_tree):
    for plan in (fat_tree, lab_3tier(128)):
        for seed in (1, 2):
            r = result(traffic_report(plan, ["permutation"], ["adaptive"], seed=seed), "permutation", "adaptive")
            assert r["fraction"] >= 0.99 and r["min_fraction"] >= 0.99, (plan.name, r)
            assert r["max_link_load"] <= 1.0 + 1e-9


def test_static_ecmp_loses_what_balls_into_bins_expects(fat_tree):
    """One flow per GPU pair, random permutations: 31/2047 of a leaf's 32 flows stay on it;
    the other 32 (rounded) hash onto 32 uplinks and arrive over 32 cables at random. Expected
    (closed form): uplink collisions alone cap the mean near 1 - (31/32)^32 = 63.8 %; equal
    sharing on both hops gives 49 %; max-min fairness lands in between, near the equal share."""
    expect = balls_into_bins(32, 32, 2048)
    q = 31 / 2047
    assert expect["single_hop_bound"] == round(q + (1 - q) * (1 - (31 / 32) ** 32), 4) == 0.6434
    # q + (1 - q) E[1/max(1+X, 1+Y)], X, Y ~ Binomial(31, 1/32) independent, summed here independently
    pmf = [math.comb(31, k) * (1 / 32) ** k * (31 / 32) ** (31 - k) for k in range(32)]
    equal = sum(pmf[a] * pmf[b] / (1 + max(a, b)) for a in range(32) for b in range(32))
    assert expect["equal_share"] == round(q + (1 - q) * equal, 4)
    measured = []
    for seed in range(1, 7):
        r = result(traffic_report(fat_tree, ["permutation"], ["ecmp"], seed=seed), "permutation", "ecmp")
        assert r["balls_into_bins"] == expect
        measured.append(r["fraction"])
    mean = float(np.mean(measured))
    assert expect["equal_share"] < mean < expect["single_hop_bound"]
    assert abs(mean - expect["equal_share"]) < 0.05, (mean, expect)
    # a Monte Carlo of the model itself (no routing code) agrees with the closed form
    rng = np.random.default_rng(7)
    up = rng.binomial(31, 1 / 32, size=200_000) + 1
    down = rng.binomial(31, 1 / 32, size=200_000) + 1
    assert abs(q + (1 - q) * np.mean(1 / np.maximum(up, down)) - expect["equal_share"]) < 0.003


def test_no_routing_exceeds_half_of_line_rate_across_leaves_at_2_to_1():
    plan = plan_from_text(FAT_TREE_2TO1)
    report = traffic_report(plan, ["shift:switch", "permutation"], ["ecmp", "adaptive", "ftree"])
    for r in report["results"]:
        if r["pattern"] == "shift:switch":  # every flow leaves its leaf: 32 flows on 16 uplinks
            assert r["fraction"] <= 0.5 + 1e-9, r
    assert result(report, "shift:switch", "adaptive")["fraction"] == 0.5
    assert result(report, "shift:switch", "ftree")["fraction"] == 0.5  # ftree is balanced: 2 CNs per uplink


@pytest.mark.parametrize("spec,shifts", [(FAT_TREE_2048, [1, 5, 32, 33, 100, 1000, 2047]),
                                         (None, [1, 3, 4, 5, 16, 17, 50, 64, 100, 127])])
def test_opensm_ftree_carries_shift_permutations_without_contention(spec, shifts):
    plan = plan_from_text(spec) if spec else lab_3tier(128)
    for k in shifts:
        r = result(traffic_report(plan, [f"shift:{k}"], ["ftree", "ecmp"]), f"shift:{k}", "ftree")
        assert r["fraction"] == 1.0 and r["min_fraction"] == 1.0 and r["max_link_load"] == 1.0, (k, r)


def test_losing_a_spine_costs_adaptive_routing_its_share_of_uplinks():
    """b200-superpod-4su: 16 spines, 2 cables per leaf-spine pair; losing spine-01 leaves every
    leaf 30 of 32 uplinks, so traffic that all leaves its leaf gets 30/32 at best, and the
    even split gets exactly that."""
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "b200-superpod-4su.yaml")
    report = traffic_report(plan, ["shift:switch"], ["adaptive", "ecmp"], fail="spine:1")
    intact, failed = result(report, "shift:switch", "adaptive"), result(report, "shift:switch", "adaptive", "spine:1")
    assert intact["fraction"] == 1.0 and failed["fraction"] == round(30 / 32, 4)
    assert failed["hot_links"][0]["offered_load"] == round(32 / 30, 4)
    assert result(report, "shift:switch", "ecmp", "spine:1")["fraction"] < failed["fraction"]


def test_more_queue_pairs_per_connection_spread_ecmp_collisions(fat_tree):
    """NCCL_IB_QPS_PER_CONNECTION: each QP hashes on its own, so a link's load averages over
    more, smaller sub-flows and the slowest connection speeds up (measured: 16 % of line rate
    with 1 QP, 20 % with 4, 38 % with 16; pure max-min said 17, 31 and 52 %, but a QP that
    crosses two full links is held back at both, as htsim shows for single flows), though a
    connection still waits for its slowest QP, so the mean rises more slowly."""
    by_qps = {q: result(traffic_report(fat_tree, ["permutation"], ["ecmp"], qps=q), "permutation", "ecmp")
              for q in (1, 4, 16)}
    assert by_qps[1]["min_fraction"] < by_qps[4]["min_fraction"] - 0.03 < by_qps[16]["min_fraction"] - 0.2
    assert by_qps[1]["max_link_load"] > by_qps[4]["max_link_load"] > by_qps[16]["max_link_load"]
    assert by_qps[16]["fraction"] > by_qps[1]["fraction"] + 0.08  # 53 % -> 63 %


def test_ring_over_rails_in_plan_order_stays_on_the_rail_leaves():
    """NCCL's ring talks NIC i to NIC i of the next server: on a rail-optimized SuperPOD
    consecutive servers share their rail leaf, so only SU boundaries cross the spines and no
    routing loses anything; a scattered rank order crosses spines everywhere and ECMP collides."""
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "b200-superpod-4su.yaml")
    ordered = traffic_report(plan, ["ring-allreduce"], ["ecmp", "adaptive"])
    assert {r["fraction"] for r in ordered["results"]} == {1.0}
    scattered = traffic_report(plan, ["ring-allreduce"], ["ecmp", "adaptive"], order="random")
    assert result(scattered, "ring-allreduce", "adaptive")["fraction"] == 1.0
    assert result(scattered, "ring-allreduce", "ecmp")["fraction"] < 0.8


# --- the models against independent computations --------------------------------------------

def _brute_force_spray(fabric: TrafficFabric, clos: ClosRoutes, src, dst) -> np.ndarray:
    """Per directed link, the load of one unit per flow split evenly at every hop over the
    valley-free next hops, walked flow by flow in plain Python."""
    g = fabric.graph
    load = np.zeros(fabric.n_links)
    nbr: dict[int, list[tuple[int, int, bool]]] = {}
    for k in range(g.a.size):
        if clos.alive[k]:
            nbr.setdefault(int(g.a[k]), []).append((int(g.b[k]), 2 * int(g.link[k]), True))
            nbr.setdefault(int(g.b[k]), []).append((int(g.a[k]), 2 * int(g.link[k]) + 1, False))
    for s, d in zip(src.tolist(), dst.tolist()):
        if not clos.routable(np.array([s]), np.array([d]))[0]:
            continue
        load[fabric.attach_out(np.array([s]))] += 1
        load[fabric.attach_in(np.array([d]))] += 1
        target = int(fabric.ep_switch[d])
        e = clos.edge_of[target]
        frontier = {int(fabric.ep_switch[s]): 1.0}
        while frontier:
            nxt: dict[int, float] = {}
            for x, mass in frontier.items():
                if x == target:
                    continue
                if clos.down[x, e]:
                    hops = [(y, l) for y, l, up in nbr[x] if not up and clos.down[y, e]]
                else:
                    hops = [(y, l) for y, l, up in nbr[x] if up and clos.reach[y, e]]
                for y, l in hops:
                    load[l] += mass / len(hops)
                    nxt[y] = nxt.get(y, 0.0) + mass / len(hops)
            frontier = nxt
    return load


@pytest.mark.parametrize("fail", [None, "spine:1", "core:1", "link:3", "pod1-spine-02,pod2-spine-03", "core-001,core-004"])
def test_factorised_even_split_equals_a_flow_by_flow_walk(fail):
    plan = lab_3tier(128)
    fabric = TrafficFabric(plan, parse_failure(plan, fail))
    clos = ClosRoutes(fabric)
    rng = np.random.default_rng(3)
    n = fabric.ep_link.size
    src, dst = rng.integers(0, n, 600), rng.integers(0, n, 600)
    terms, ok = clos.spray_terms(src, dst)
    fast = Incidence(src.size, fabric.n_links, terms).load(np.ones(src.size))
    assert np.allclose(fast, _brute_force_spray(fabric, clos, src, dst))
    assert ok.sum() > 500


def test_ecmp_paths_are_valley_free_shortest_and_seeded():
    plan = lab_3tier(128)
    fabric = TrafficFabric(plan, parse_failure(plan, "spine:1,link:2"))
    clos = ClosRoutes(fabric)
    rng = np.random.default_rng(5)
    n = fabric.ep_link.size
    src, dst = rng.integers(0, n, 2000), rng.integers(0, n, 2000)
    flow, link, ok = clos.ecmp_paths(src, dst, np.zeros(src.size, dtype=np.int64), seed=1)
    L = plan.links
    tier = np.array([d.tier for d in plan.devices])
    for f in np.flatnonzero(ok)[:400].tolist():
        hops = link[flow == f]
        dev = int(L.a_dev[fabric.ep_link[src[f]]])
        went_down = False
        # walk from the source server: each hop must leave the current device
        remaining = list(hops.tolist())
        while remaining:
            nxt = [h for h in remaining if (L.a_dev[h // 2] if h % 2 == 0 else L.b_dev[h // 2]) == dev]
            assert len(nxt) == 1, "a path is a chain of links"
            h = nxt[0]
            remaining.remove(h)
            assert fabric.link_alive[h // 2]
            up = h % 2 == 0
            assert not (went_down and up), "valley-free: never up after down"
            went_down |= not up and tier[dev] > 0
            dev = int(L.b_dev[h // 2] if up else L.a_dev[h // 2])
        assert dev == L.a_dev[fabric.ep_link[dst[f]]]
        a, b = fabric.ep_switch[src[f]], fabric.ep_switch[dst[f]]
        lca = 1 if a == b else (2 if plan.devices[int(fabric.graph.device_of[a])].pod == plan.devices[int(fabric.graph.device_of[b])].pod else 3)
        assert len(hops) == 2 * lca, "shortest: up to the lowest common tier and down"
    again = clos.ecmp_paths(src, dst, np.zeros(src.size, dtype=np.int64), seed=1)
    other = clos.ecmp_paths(src, dst, np.zeros(src.size, dtype=np.int64), seed=2)
    assert np.array_equal(again[1], link) and not np.array_equal(other[1], link)


def test_max_min_fairness_by_progressive_filling_on_a_textbook_case():
    """Links of capacity 1: flow 0 crosses links 0 and 1, flow 1 link 0, flow 2 link 1, flow 3
    links 1 and 2. Link 1 fills first with three flows at 1/3; flow 1 then takes the rest of
    link 0: (1/3, 2/3, 1/3, 1/3)."""
    from compiler.traffic.fairness import Term, flows_on_links

    flows = np.array([0, 0, 1, 2, 3, 3])
    links = np.array([0, 1, 0, 1, 1, 2])
    inc = Incidence(4, 3, [Term([flows_on_links(3, flows, links, n_flows=4)])])
    rates = max_min_rates(inc, np.array([1.0, 1.0, 1.0]))
    assert np.allclose(rates, [1 / 3, 2 / 3, 1 / 3, 1 / 3])
    # a split flow: flow 0 half on link 0, half on link 1; flow 1 on link 1 only
    inc = Incidence(2, 2, [Term([flows_on_links(2, np.array([0, 0, 1]), np.array([0, 1, 1]), np.array([0.5, 0.5, 1.0]), n_flows=2)])])
    assert np.allclose(max_min_rates(inc, np.array([1.0, 1.0])), [2 / 3, 2 / 3])


def test_all_to_all_is_nccls_peer_schedule_rail_aligned():
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    fabric = TrafficFabric(plan)
    pat = build_pattern(fabric, "all-to-all", placement(fabric, None, "plan", 1), seed=1, max_phases=10_000)
    assert pat.total_phases == 511 and len(pat.phases) == 511  # phases 1..7 send only some NICs (the rest is NVLink)
    for ph in pat.phases:
        # every network flow joins the same rail (NIC i to NIC i) on two different servers
        assert np.array_equal(fabric.ep_port[ph.src], fabric.ep_port[ph.dst])
        assert not np.any(fabric.ep_server[ph.src] == fabric.ep_server[ph.dst])
        assert np.unique(ph.src).size == ph.src.size and np.unique(ph.dst).size == ph.dst.size


# --- contract ----------------------------------------------------------------------------------

def test_json_output_follows_its_schema_and_is_deterministic():
    args = ("traffic", str(SPECS / "b200-superpod-4su.yaml"), "--pattern", "ring-allreduce,all-to-all,permutation,shift",
            "--fail", "spine:1", "--format", "json")
    first = cli_in_process(*args)
    assert first.returncode == 0, first.stderr
    report = json.loads(first.stdout)
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    assert len(report["results"]) == 4 * 3 * 2  # patterns x (ecmp, adaptive, ftree) x (intact, spine:1)
    assert cli_in_process(*args).stdout == first.stdout
    r = result(report, "all-to-all", "adaptive")
    assert set(r["collective_seconds"]) == {"1048576", "1073741824", "140000000000"}
    assert r["hot_links"][0]["cable"].startswith(("su", "dgx"))


@pytest.mark.parametrize("args,message", [
    (["--pattern", "ring"], "unknown pattern 'ring'"),
    (["--routing", "valiant"], "routing 'valiant' does not apply"),
    (["--fail", "spline:1"], "did you mean spine:1"),
    (["--servers", "first:1"], "N must be 2 to 128"),
    (["--servers", "dgx-su9-001,dgx-su1-002"], "no server 'dgx-su9-001'"),
    (["--qps", "0"], "queue pairs per connection are 1 to 64"),
    (["--pattern", "shift:99999"], "shift:99999"),
])
def test_bad_options_exit_2_with_the_reason(args, message):
    r = cli_in_process("traffic", str(SPECS / "b200-superpod-4su.yaml"), *args)
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_ftree_only_for_infiniband():
    plan = plan_from_text(FAT_TREE_2048.replace("qm9700", "sn5400"))
    with pytest.raises(TrafficError, match="InfiniBand"):
        traffic_report(plan, ["permutation"], ["ftree"])


# --- dragonfly ---------------------------------------------------------------------------------

# A balanced dragonfly of the 8-port lab switch at its largest: p = 2, a = 4, h = 2, g = a*h + 1 = 9
# groups, one global cable between every pair of groups.
LAB_DRAGONFLY = """name: lab-dragonfly
servers: 72
server: lab-1nic
catalog: {catalog}
fabric: {{topology: dragonfly, switch: lab-ib-8port, endpoints_per_switch: 2, switches_per_group: 4,
          global_ports_per_switch: 2, groups: 9}}
"""


def lab_dragonfly():
    return plan_from_text(LAB_DRAGONFLY.format(catalog=LAB_CATALOG), file=str(LAB_CATALOG))


def test_dragonfly_group_to_group_traffic_is_held_by_global_cables_and_valiant_restores_it():
    """Every endpoint of group i sends to group i+1 (shift by a group). Minimal routing puts a
    group's 8 endpoints on the one cable to the next group: 1/8 of line rate. Valiant spreads
    them over the 7 other groups' cables (two global hops each) and UGAL, seeing the minimal
    cable offered 8x, takes Valiant for all of them."""
    report = traffic_report(lab_dragonfly(), ["shift:group", "permutation"], ["minimal", "valiant", "ugal"])
    minimal = result(report, "shift:group", "minimal")
    assert minimal["fraction"] == minimal["min_fraction"] == 0.125
    assert minimal["hot_links"][0]["kind"] == "global" and minimal["max_link_load"] == 8.0
    valiant = result(report, "shift:group", "valiant")
    assert valiant["fraction"] >= 2 * minimal["fraction"]
    assert result(report, "shift:group", "ugal")["fraction"] == valiant["fraction"]
    assert any("ugal: 72 of 72 flows" in n for n in result(report, "shift:group", "ugal")["notes"])
    # on a random permutation minimal is the better choice and UGAL mostly keeps it
    perm = {r: result(report, "permutation", r)["fraction"] for r in ("minimal", "valiant", "ugal")}
    assert perm["valiant"] < perm["minimal"] and perm["ugal"] >= 0.95 * perm["minimal"]


def test_four_group_dragonfly_gains_nothing_from_valiant():
    """specs/dragonfly-2k.yaml has 4 groups and 170 cables between each pair. Group-to-group
    traffic gets 170/512 of line rate minimally; Valiant's two detour groups carry their own
    detoured traffic on the same cables, so it gets no more (the direct cables go idle)."""
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "dragonfly-2k.yaml")
    report = traffic_report(plan, ["shift:group"], ["minimal", "valiant"])
    assert result(report, "shift:group", "minimal")["fraction"] == round(170 / 512, 4)
    assert result(report, "shift:group", "valiant")["fraction"] == round(170 / 512, 4)


def test_dragonfly_split_equals_an_enumeration_of_its_paths():
    """All-to-all groups: inside a group the shortest path is the direct cable, so a flow's
    load is an average over explicit paths: minimal over the cables joining its groups,
    Valiant over intermediate groups and the cables in and out of them."""
    from compiler.traffic.dragonfly import DragonflyRoutes

    plan = lab_dragonfly()
    fabric = TrafficFabric(plan, parse_failure(plan, "g3-router-02"))
    routes = DragonflyRoutes(fabric)
    g = fabric.graph
    kind = np.array(plan.link_kinds, dtype=object)[plan.links.kind[g.link]]
    alive = fabric.switch_links_alive()
    local, cables = {}, {}
    for k in np.flatnonzero(alive).tolist():
        a, b, l = int(g.a[k]), int(g.b[k]), int(g.link[k])
        if kind[k] == "local":
            local[(a, b)], local[(b, a)] = 2 * l, 2 * l + 1
        else:
            ga, gb = routes.group[a], routes.group[b]
            cables.setdefault((ga, gb), []).append((a, b, 2 * l))
            cables.setdefault((gb, ga), []).append((b, a, 2 * l + 1))

    def hop(load, u, v, w):
        if u != v:
            load[local[(u, v)]] += w

    def via(load, u, v, gs, gd, w):  # from router u (group gs) over a cable to group gd, then to router v
        for x, y, l in cables[(gs, gd)]:
            share = w / len(cables[(gs, gd)])
            hop(load, u, x, share)
            load[l] += share
            hop(load, y, v, share)

    rng = np.random.default_rng(2)
    n = fabric.ep_link.size
    src, dst = rng.integers(0, n, 300), rng.integers(0, n, 300)
    for routing in ("minimal", "valiant"):
        terms, ok, _ = routes.terms(routing, src, dst)
        fast = Incidence(src.size, fabric.n_links, terms).load(np.ones(src.size))
        slow = np.zeros(fabric.n_links)
        for i in np.flatnonzero(ok).tolist():
            s, d = int(src[i]), int(dst[i])
            slow[fabric.attach_out(np.array([s]))] += 1
            slow[fabric.attach_in(np.array([d]))] += 1
            u, v = int(fabric.ep_switch[s]), int(fabric.ep_switch[d])
            gs, gd = int(routes.group[u]), int(routes.group[v])
            if gs == gd:
                hop(slow, u, v, 1.0)
            elif routing == "minimal":
                via(slow, u, v, gs, gd, 1.0)
            else:
                mids = [gi for gi in range(9) if gi not in (gs, gd) and cables.get((gs, gi)) and cables.get((gi, gd))]
                for gi in mids:
                    w = 1 / len(mids)
                    for x, y, l in cables[(gs, gi)]:  # into the intermediate group, then on to gd
                        share = w / len(cables[(gs, gi)])
                        hop(slow, u, x, share)
                        slow[l] += share
                        via(slow, y, v, gi, gd, share)
        assert np.allclose(fast, slow), routing
        dead_end = ~fabric.ep_alive[src] | ~fabric.ep_alive[dst]
        gs, gd = routes.group[fabric.ep_switch[src]], routes.group[fabric.ep_switch[dst]]
        no_cable = np.array([a != b and (a, b) not in cables for a, b in zip(gs.tolist(), gd.tolist())])
        # minimal has no path where the failed router held the only cable between two groups
        assert np.array_equal(~ok, dead_end | no_cable) if routing == "minimal" else np.array_equal(~ok, dead_end)


def test_ecmp_shortcuts_choose_what_the_full_candidate_scan_chooses(monkeypatch):
    """The ECMP walk skips the candidate scan where every up cable is equal cost (intact
    switches) or the destination leaf hangs off the switch; with the shortcuts off, every
    hop is scanned, and the hashed paths must not change (with failures, both kinds of hop mix)."""
    plan = lab_3tier(128)
    fabric = TrafficFabric(plan, parse_failure(plan, "pod2-spine-01,leaf-003:5"))
    clos = ClosRoutes(fabric)
    rng = np.random.default_rng(11)
    n = fabric.ep_link.size
    src, dst = rng.integers(0, n, 3000), rng.integers(0, n, 3000)
    qp = rng.integers(0, 4, 3000)
    fast = clos.ecmp_paths(src, dst, qp, seed=9)
    assert clos._whole_up.any() and not clos._whole_up.all()
    monkeypatch.setattr(ClosRoutes, "_whole_up", np.zeros(fabric.graph.n, dtype=bool))
    monkeypatch.setattr(ClosRoutes, "_parallel", (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)))
    slow = ClosRoutes(fabric).ecmp_paths(src, dst, qp, seed=9)
    key = lambda r: sorted(zip(r[0].tolist(), r[1].tolist()))  # noqa: E731
    assert key(fast) == key(slow)


# --- hooks: the check report, compare, requirements --------------------------------------------

REQUIRING = """name: req
servers: 128
server: dgx-b200
fabric: {topology: rail-optimized, switch: qm9700, oversubscription: "1:1", scalable_unit: 32}
requirements:
  traffic:
    - {pattern: all-to-all, routing: ecmp, min_fraction: 0.6}
    - {pattern: all-to-all, routing: ecmp, min_fraction: 0.5, measure: slowest}
    - {pattern: shift:switch, routing: adaptive, min_fraction: 0.95, fail: "spine:1"}
    - {pattern: permutation, routing: minimal, min_fraction: 0.5}
"""


def test_requirements_floor_traffic_with_a_stable_code(tmp_path):
    spec = tmp_path / "req.yaml"
    spec.write_text(REQUIRING)
    r = cli_in_process("check", str(spec), "--format", "json")
    assert r.returncode == 1
    report = json.loads(r.stdout)["reports"][0]
    by_name = {x["name"]: x for x in report["figures"]["requirements"]["results"]}
    assert by_name["traffic.all-to-all.ecmp"] == {"name": "traffic.all-to-all.ecmp", "ok": True, "required": 0.6,
                                                  "measured": 0.6886, "measure": "mean"}
    assert not by_name["traffic.all-to-all.ecmp.slowest"]["ok"]
    assert by_name["traffic.shift:switch.adaptive after spine:1"]["measured"] == round(30 / 32, 4)
    codes = [f["code"] for f in report["findings"] if f["severity"] == "error"]
    assert codes.count("TRAFFIC_BELOW_REQUIREMENT") == 2 and codes.count("TRAFFIC_REQUIREMENT_NOT_APPLICABLE") == 1
    message = next(f["message"] for f in report["findings"] if f["code"] == "TRAFFIC_REQUIREMENT_NOT_APPLICABLE")
    assert "routing 'minimal' does not apply" in message


def test_a_malformed_traffic_requirement_is_a_spec_error(tmp_path):
    spec = tmp_path / "bad.yaml"
    spec.write_text(REQUIRING.replace("pattern: permutation", "pattern: permutaton").replace("min_fraction: 0.6", "min_fraction: 60"))
    r = cli_in_process("validate", str(spec))
    assert r.returncode == 2
    assert "bad.yaml:10:" in r.stderr and "requirements.traffic.3.pattern" in r.stderr
    assert "bad.yaml:7:" in r.stderr and "requirements.traffic.0.min_fraction" in r.stderr


def test_check_report_and_compare_carry_the_all_to_all_headline():
    from compiler.check import run_checks
    from compiler.compare import comparison_text, design_figures
    from compiler.pipeline import build_plan

    def report_for(plan) -> dict:
        return run_checks(plan).as_json()

    _, plan = build_plan(SPECS / "b200-superpod-4su.yaml")
    report = report_for(plan)
    headline = {r["routing"]: r for r in report["figures"]["traffic"]["results"]}
    assert set(headline) == {"ecmp", "adaptive", "ftree"}
    direct = traffic_report(plan, ["all-to-all"], ["ecmp"])["results"][0]
    assert headline["ecmp"]["fraction"] == direct["fraction"] and headline["ecmp"]["min_fraction"] == direct["min_fraction"]
    assert any(f["code"] == "TRAFFIC_ESTIMATE" and "ecmp 68.9% of line rate" in f["message"] for f in report["findings"])
    text = comparison_text([design_figures(plan, run_checks(plan))])
    assert "all-to-all ecmp (mean/slowest)" in text and "69%/15%" in text
    _, torus = build_plan(SPECS / "tpu-v4-pod.yaml")
    # the torus is routed (minimal), but its all-to-all costs 30 s at 4,096 chips: left to clusterc traffic
    assert "not estimated above 1,024 GPUs" in report_for(torus)["figures"]["traffic"]["skipped"]
    _, small = build_plan(SPECS / "torus-switched-512.yaml")
    assert [r["routing"] for r in report_for(small)["figures"]["traffic"]["results"]] == ["minimal", "dimension-order"]



def test_above_4096_gpus_on_a_clos_the_headline_is_left_out_and_the_check_says_what_it_would_cost():
    """The all-to-all headline costs about 0.6 s of CPU at 8,192 GPUs and 2.3 s at 12,288 (both
    routings, 16 phases): past 4,096 GPUs on a Clos it is left to `clusterc traffic`, and the
    check says so in its text (an info finding) as well as in checks.json."""
    report = shared_checks(SPECS / "seed-8k-fat-tree.yaml").as_json()  # 8,192 GPUs
    traffic = report["figures"]["traffic"]
    assert traffic["results"] == []
    assert traffic["skipped"].startswith("not estimated above 4,096 GPUs on this Clos fabric in every compile")
    assert "0.6 s of CPU at 8,192 GPUs" in traffic["skipped"] and "run clusterc traffic" in traffic["skipped"]
    note = [f for f in report["findings"] if f["code"] == "TRAFFIC_ESTIMATE_SKIPPED"]
    assert len(note) == 1 and note[0]["severity"] == "info"
    assert note[0]["message"].startswith("all-to-all over 8,192 GPUs: not estimated above 4,096 GPUs")
    assert not any(f["code"] == "TRAFFIC_ESTIMATE" for f in report["findings"])

def test_losing_a_leaf_cuts_its_gpus_off_and_the_collective_never_completes():
    """A rail leaf of b200-superpod-4su carries rail 1 of 32 servers: its ring flows have no
    path, the rest of the ring runs at line rate, and a ring all-reduce waits forever."""
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "b200-superpod-4su.yaml")
    report = traffic_report(plan, ["ring-allreduce"], ["adaptive"], fail="leaf:1")
    failed = result(report, "ring-allreduce", "adaptive", "leaf:1")
    # rail 1 of SU 1: 31 ring edges between its servers, the edge into the SU and the one out
    assert failed["unroutable_flows"] == 31 + 1 + 1
    assert failed["min_fraction"] == 0.0 and set(failed["collective_seconds"].values()) == {None}
    assert failed["fraction"] == round(1 - 33 / 1024, 4)


def test_a_routing_the_failure_breaks_is_reported_unavailable_with_the_reason():
    """A leaf that loses all 32 uplinks leaves a fabric OpenSM's ftree refuses (it falls back
    to updn): the run still reports ecmp and adaptive after the failure, and says why not ftree."""
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    report = traffic_report(plan, ["permutation"], ["ftree", "adaptive"], fail="link:32")
    jsonschema.validate(report, json.loads(SCHEMA.read_text()))
    assert [u["routing"] for u in report["unavailable"]] == ["ftree"]
    assert "su1-leaf-r1 has compute nodes but no live uplink" in report["unavailable"][0]["reason"]
    after = result(report, "permutation", "adaptive", "link:32")
    assert after["unroutable_flows"] > 0 and after["min_fraction"] == 0.0


@pytest.mark.parametrize("fabric_name,routing,qps", [("2:1", "ecmp", 1), ("2:1", "ecmp", 2), ("2:1", "adaptive", 1),
                                                      ("2:1", "ftree", 1), ("3 tiers", "ecmp", 1), ("3 tiers", "adaptive", 1)])
def test_phases_filled_side_by_side_get_exactly_the_rates_each_gets_alone(fabric_name, routing, qps, monkeypatch):
    """The phases of an all-to-all are routed and filled in one stacked problem (each phase its
    own links and its own steps), in batches: every phase's figures equal, to the last bit,
    those of routing and filling it alone, whatever the batch size."""
    import compiler.traffic as traffic
    from compiler.plan.fabrics import fabric_plan
    from compiler.traffic.analysis import solve_phase
    from compiler.traffic.routing import Router

    plan = plan_from_text(FAT_TREE_2TO1) if fabric_name == "2:1" else lab_3tier(64)
    fabric = TrafficFabric(fabric_plan(plan))
    router = Router(fabric, qps=qps)
    pattern = build_pattern(fabric, "all-to-all", placement(fabric, None, "plan", 1), 1, 16)
    alone = [solve_phase(fabric, p, router.route(routing, p)) for p in pattern.phases]
    flows = pattern.phases[0].src.size * qps
    for batch in (10 ** 9, 3 * flows):  # all 16 phases at once; batches of 3 phases
        monkeypatch.setattr(traffic, "BATCH_FLOWS", batch)
        together = traffic._solve(fabric, router, routing, pattern.phases)
        assert len(together) == len(alone) == 16
        for a, t in zip(alone, together, strict=True):
            assert (a.fraction, a.min_fraction, a.unroutable) == (t.fraction, t.min_fraction, t.unroutable)
            for field in ("conn_fraction", "offered", "flows_on", "util"):
                assert np.array_equal(getattr(a, field), getattr(t, field)), field
    if fabric_name == "2:1":  # the phases contend for the uplinks: the filling has rounds to run
        assert min(a.min_fraction for a in alone) < 1.0


def test_a_solved_batch_lets_its_routes_go(monkeypatch):
    """A phase's per-link figures are computed when first read (the collective estimate reads
    none), but an analysis of many phases reads them all: each batch's are computed as it
    ends, so the routes of every phase (50 million flows at --phases 4,096 on 12,288 GPUs)
    are never held at once, only a batch of them, as BATCH_FLOWS promises."""
    import gc
    import weakref

    import compiler.traffic as traffic
    from compiler.plan.fabrics import fabric_plan
    from compiler.traffic.routing import Router

    fabric = TrafficFabric(fabric_plan(plan_from_text(FAT_TREE_2TO1)))
    router = Router(fabric)
    pattern = build_pattern(fabric, "all-to-all", placement(fabric, None, "plan", 1), 1, 16)
    monkeypatch.setattr(traffic, "BATCH_FLOWS", 3 * pattern.phases[0].src.size)
    routes: list[weakref.ref] = []
    route_phases = router.route_phases

    def spy(routing, batch):
        routed = route_phases(routing, batch)
        routes.extend(weakref.ref(r) for r in routed)
        return routed

    monkeypatch.setattr(router, "route_phases", spy)
    results = traffic._solve(fabric, router, "ecmp", pattern.phases)
    gc.collect()
    assert len(routes) == len(results) == 16
    assert [r() for r in routes] == [None] * 16
    assert all(p.util.size == fabric.cap_gbps.size for p in results)


def test_ecmp_down_from_a_core_takes_the_same_hops_by_pod_table_as_by_scanning_every_candidate():
    """A core's hop toward a leaf of another pod is read from a table of its links into that
    pod (where every link is live and every spine below reaches exactly its pod's leaves)
    instead of scanning all its down links: the paths are the same, intact and after a failure."""
    from compiler.plan.fabrics import fabric_plan

    plan = fabric_plan(lab_3tier(64))
    for fail in (None, "core:1", "spine:1", "link:2"):
        fabric = TrafficFabric(plan, parse_failure(plan, fail))
        src = fabric_order(fabric, np.arange(fabric.ep_link.size))
        dst = np.roll(src, 17)  # 64 endpoints in 4 pods of 16: most flows leave their pod
        qp = np.zeros(src.size, dtype=np.int64)
        fast = ClosRoutes(fabric)
        assert fast.top == 3 and fast._down_groups[0].size > 0  # the table has whole groups to use
        scan = ClosRoutes(fabric)
        scan._down_group_of = lambda x, e, going_down: None  # every hop through the candidate scan
        table_of, used = fast._down_group_of, []

        def spy(x, e, going_down, table_of=table_of, used=used):
            group = table_of(x, e, going_down)
            used.append(0 if group is None else int(np.count_nonzero(group >= 0)))
            return group
        fast._down_group_of = spy
        fl_a, ln_a, ok_a = fast.ecmp_paths(src, dst, qp, 1)
        assert sum(used) > 0, fail  # hops were read from the table
        fl_b, ln_b, ok_b = scan.ecmp_paths(src, dst, qp, 1)
        assert np.array_equal(ok_a, ok_b)
        a, b = np.lexsort((ln_a, fl_a)), np.lexsort((ln_b, fl_b))
        assert np.array_equal(fl_a[a], fl_b[b]) and np.array_equal(ln_a[a], ln_b[b]), fail
