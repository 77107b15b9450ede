"""Extra endpoints where real designs put them (issue 12, item 8): free leaf downlinks (the
default), spare spine or core ports, or management leaves of their own; an error at the
entry's file:line with every option when nothing fits; checks that count them as what they
are (not GPUs); outputs that consume them (cabling, InfiniBand files, Slurm, hosts).

Extra endpoints are placed by expand/endpoints.py."""

from __future__ import annotations

import csv
import json
import shutil

import numpy as np
import pytest

from compiler.check import run_checks


def summarize(plan) -> dict:
    """summary.json of a plan (the summary reads the check stage's results)."""
    return summarize_with_checks(plan, run_checks(plan))


def report_for(plan) -> dict:
    """checks.json of a plan, as the check stage makes it."""
    return run_checks(plan).as_json()
from compiler.check.invariants import plan_invariants
from compiler.pipeline import write_outputs
from compiler.plan.diff import diff_plans
from compiler.plan.guids import device_guids
from compiler.render.summary import summarize as summarize_with_checks
from compiler.twin import infiniband as twin

from .conftest import cli_in_process, plan_from_text

# 96 DGX B200 in SUs of 32 on QM9700 (64 x 400G): 24 leaves of 32 down / 32 up, 768 uplinks
# -> 12 spines at least, 32 % 12 != 0 -> 16 spines, 2 links per pair: 48 of 64 ports used,
# 16 spare on every spine.
B200_3SU = """name: b200-3su
servers: 96
server: dgx-b200
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32}}
{endpoints}"""
UFM = "extra_endpoints:\n  - {{role: ufm, count: 2, ports: 2, attach: {attach}}}\n"

# 64 DGX B200, three tiers: one pod of 16 leaves under 32 spines (32 down / 32 up); 32 core
# groups of one core, 32 links each from the pod's spine: 32 of 64 core ports used.
B200_3TIER = """name: b200-3t
servers: 64
server: dgx-b200
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32, tiers: 3}}
{endpoints}"""


def _plan(template: str, attach: str | None):
    return plan_from_text(template.format(endpoints=UFM.format(attach=attach) if attach else ""))


def _links(plan, kind: str) -> list[tuple[str, str, str, str]]:
    """(a device, a port name, b device, b port name) of every link of `kind`, in plan order."""
    sel = np.nonzero(plan.links.kind == plan.link_kinds.index(kind))[0]
    out = []
    for i in sel:
        a, b = plan.devices[int(plan.links.a_dev[i])], plan.devices[int(plan.links.b_dev[i])]
        out.append((a.name, plan.layouts[a.layout].ports[int(plan.links.a_port[i])].name,
                    b.name, plan.layouts[b.layout].ports[int(plan.links.b_port[i])].name))
    return out


def _compute_figures(plan) -> dict:
    """What the checks say about the GPUs' fabric: must not change when endpoints join it."""
    f = report_for(plan)["figures"]
    red = f["redundancy"]
    return {"bisection": (f["bisection"]["worst_cut_gbps"], f["bisection"]["analytic_gbps"]),
            "oversubscription": f["oversubscription"],
            "paths": red["leaf_pair_edge_disjoint_paths_min"], "single_homed": red["single_homed_servers"],
            "failures": {k: {x: v[x] for x in ("bisection_gbps", "gpu_ports_cut_off", "servers_cut_off", "leaf_pair_paths_min")}
                         for k, v in red["single_failures"].items()},
            "hops": f["hops"]}


@pytest.fixture(scope="module")
def none_3su():
    return _plan(B200_3SU, None)


def test_spine_attach_takes_spare_spine_ports_from_the_top(none_3su):
    plan = _plan(B200_3SU, "spine")
    s = summarize(plan)
    assert s["cables"] == {"server-leaf": 768, "ufm-spine": 4, "leaf-spine": 768}
    assert s["switches"] == {"leaf": 24, "spine": 16}
    # port-major over the spines from each spine's last port (index 63 = 1/32/2 on a QM9700)
    assert _links(plan, "ufm-spine") == [("ufm-01", "p1", "spine-01", "1/32/2"), ("ufm-01", "p2", "spine-02", "1/32/2"),
                                         ("ufm-02", "p1", "spine-03", "1/32/2"), ("ufm-02", "p2", "spine-04", "1/32/2")]
    assert plan_invariants(plan) == []
    report = report_for(plan)
    assert report["ok"] and not [f for f in report["findings"] if f["severity"] != "info"]
    assert _compute_figures(plan) == _compute_figures(none_3su)


def test_management_leaves_hang_off_spare_spine_ports(none_3su):
    plan = _plan(B200_3SU, "management-leaf")
    s = summarize(plan)
    # two management leaves (two ports or more), each linked once to each of the 16 spines
    assert s["switches"] == {"leaf": 26, "spine": 16}
    assert s["cables"] == {"server-leaf": 768, "ufm-leaf": 4, "leaf-spine": 768 + 2 * 16}
    assert _links(plan, "ufm-leaf") == [("ufm-01", "p1", "mgmt-leaf-01", "1/1/1"), ("ufm-01", "p2", "mgmt-leaf-02", "1/1/1"),
                                        ("ufm-02", "p1", "mgmt-leaf-01", "1/1/2"), ("ufm-02", "p2", "mgmt-leaf-02", "1/1/2")]
    up = [l for l in _links(plan, "leaf-spine") if l[0].startswith("mgmt-")]
    # a management leaf is cut like a compute leaf: uplinks from its port 33 (1/17/1); spines
    # give it their top ports (mgmt-leaf-01 the last, 1/32/2; mgmt-leaf-02 the one below)
    assert up[:2] == [("mgmt-leaf-01", "1/17/1", "spine-01", "1/32/2"), ("mgmt-leaf-01", "1/17/2", "spine-02", "1/32/2")]
    assert up[16] == ("mgmt-leaf-02", "1/17/1", "spine-01", "1/32/1") and len(up) == 32
    assert plan_invariants(plan) == []
    guids = device_guids(plan)
    assert np.unique(guids).size == guids.size
    assert int(guids[plan.device_index("mgmt-leaf-01")]) == 0x023FFFFF00000100  # leaf kind, no SU: major 0xFFFFF
    assert any("2 management leaves (mgmt-leaf-01..mgmt-leaf-02)" in n for n in plan.notes)
    report = report_for(plan)
    assert report["ok"] and not [f for f in report["findings"] if f["severity"] != "info"]
    assert _compute_figures(plan) == _compute_figures(none_3su)  # management leaves carry no GPU


def test_core_attach_on_three_tiers():
    plan = _plan(B200_3TIER, "core")
    none = _plan(B200_3TIER, None)
    s = summarize(plan)
    assert s["switches"] == {"leaf": 16, "spine": 32, "core": 32}
    assert s["cables"] == {"server-leaf": 512, "ufm-core": 4, "leaf-spine": 512, "spine-core": 1024}
    assert _links(plan, "ufm-core") == [("ufm-01", "p1", "core-001", "1/32/2"), ("ufm-01", "p2", "core-002", "1/32/2"),
                                        ("ufm-02", "p1", "core-003", "1/32/2"), ("ufm-02", "p2", "core-004", "1/32/2")]
    assert plan_invariants(plan) == []
    assert _compute_figures(plan) == _compute_figures(none)


def test_core_attach_needs_a_core_tier(tmp_path):
    (tmp_path / "s.yaml").write_text(B200_3SU.format(endpoints=UFM.format(attach="core")))
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2
    # at the attach key of the entry, with what fits instead
    assert "s.yaml:6:45: error: extra_endpoints.0.attach: attach: core needs a core tier; this design has 2" in r.stderr, r.stderr
    assert "attach: spine (256 spare spine ports)" in r.stderr and "give up 1 server slot(s) (servers: 95)" in r.stderr


def test_full_fabric_offers_every_option_with_its_numbers(tmp_path):
    # 128 DGX B200 in 4 SUs of 32: leaves, and 16 spines x 64 ports, are all taken.
    (tmp_path / "s.yaml").write_text(B200_3SU.format(endpoints=UFM.format(attach="management-leaf"))
                                     .replace("servers: 96", "servers: 128"))
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2
    assert ("extra_endpoints.0.attach: 2 management leaves need 2 spare port(s) on every spine; every spine port is "
            "taken by leaves") in r.stderr, r.stderr
    assert ("give up 1 server slot(s) (servers: 127) with attach: leaf, as NVIDIA's SuperPOD does for UFM. Does not fit: "
            "attach: leaf (0 free leaf downlinks); attach: spine (0 spare spine ports); attach: core (no core tier at 2 tiers)"
            ) in r.stderr, r.stderr


def test_default_unit_keeps_room_for_leaf_endpoints_when_it_costs_no_switch():
    # 30 DGX H100, no SU given: an SU of 32 (8 leaves, 4 spines) leaves 2 slots x 8 rails; the
    # UFM takes the last slot (32) on rails 1-4, so servers still grow into slot 31.
    plan = plan_from_text("name: u\nservers: 30\nserver: dgx-h100\nfabric: {topology: rail-optimized, switch: qm9700}\n"
                          + UFM.format(attach="leaf"))
    assert plan.design["scalable_unit"] == 32
    assert _links(plan, "ufm-leaf") == [("ufm-01", "p1", "su1-leaf-r1", "1/16/2"), ("ufm-01", "p2", "su1-leaf-r2", "1/16/2"),
                                        ("ufm-02", "p1", "su1-leaf-r3", "1/16/2"), ("ufm-02", "p2", "su1-leaf-r4", "1/16/2")]
    assert any(n.startswith("grows to 31 servers without moving a cable; server 32 takes a slot the extra endpoints")
               for n in plan.notes)


def test_default_unit_does_not_buy_switches_for_endpoint_ports(tmp_path):
    # 64 DGX B200 fill 2 SUs of 32 (24 switches). Room for the UFM would take 3 SUs of 22
    # (24 leaves + 11 spines): the error offers it beside giving up a server slot.
    (tmp_path / "s.yaml").write_text("name: u\nservers: 64\nserver: dgx-b200\nfabric: {topology: rail-optimized, "
                                     "switch: qm9700}\n" + UFM.format(attach="leaf"))
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2
    assert ("scalable_unit: 22 leaves room (35 switches and 1,040 cables, against 24 and 1,024); or give up 1 server "
            "slot(s) (servers: 63)") in r.stderr, r.stderr


def test_spine_endpoints_stop_growth_where_new_leaves_need_their_ports():
    # 96 -> 128 servers keeps 16 spines at 2 links per leaf, but leaf 32's links need spine
    # ports 63 and 64, which the UFM holds on spines 1-4: the note says growth stops at 96.
    plan = _plan(B200_3SU, "spine")
    assert any(n.startswith("grows to 96 servers without moving a cable; at 128 servers the new leaves need the spine "
                            "ports the extra endpoints hold (the top 1 of every spine)") for n in plan.notes), plan.notes


def test_spine_endpoints_with_planned_growth_move_nothing():
    text = B200_3SU.format(endpoints=UFM.format(attach="spine")) + "growth: {max_servers: 96}\n"
    plans = [plan_from_text(text.replace("servers: 96\n", f"servers: {n}\n", 1)) for n in (32, 64, 96)]
    for old, new in zip(plans, plans[1:]):
        d = diff_plans(old, new)
        assert d["cables"]["removed"] == [] and d["cables"]["changed"] == [] and d["counts"]["cables_added"] > 0
    assert _links(plans[0], "ufm-spine") == _links(plans[-1], "ufm-spine")


def test_outputs_that_consume_endpoints_render(tmp_path):
    plan = _plan(B200_3SU, "management-leaf")
    out = write_outputs(plan, tmp_path)
    with open(out / "cabling.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    kinds = {r["kind"] for r in rows}
    assert {"ufm-leaf", "leaf-spine", "server-leaf"} <= kinds
    assert sum(r["kind"] == "ufm-leaf" for r in rows) == 4
    assert sum(r["kind"] == "leaf-spine" and r["a_device"].startswith("mgmt-leaf-") for r in rows) == 32
    ib = out / "infiniband"
    names = (ib / "node-name-map").read_text()
    assert "mgmt-leaf-01" in names and "ufm-01" in names
    # compute.guids: the 768 GPU NIC ports only; UFM ports are CAs, not compute nodes
    assert sum(1 for ln in (ib / "compute.guids").read_text().splitlines() if ln.startswith("0x")) == 768
    assert "mgmt" not in (out / "slurm" / "topology.conf").read_text()
    hosts = (out / "hosts.csv").read_text()
    assert "ufm-01" not in hosts and "mgmt-leaf" not in hosts and hosts.count("dgx-su") == 96


def test_ethernet_management_leaves_get_configs(tmp_path):
    """On an Ethernet fabric a management leaf is a routed leaf: its own ASN and BGP to every
    spine, in a config FRR's vtysh accepts."""
    text = ("name: roce-mgmt\nservers: 24\nserver: hgx-h100\nfabric: {topology: fat-tree, switch: sn5600, "
            "speed_gbps: 400, nos: frr}\nextra_endpoints:\n  - {role: ufm, count: 2, ports: 2, attach: management-leaf}\n"
            "  - {role: login, count: 2, attach: spine}\n")
    plan = plan_from_text(text)
    assert summarize(plan)["cables"] == {"server-leaf": 192, "ufm-leaf": 4, "login-spine": 2, "leaf-spine": 192 + 4}
    out = write_outputs(plan, tmp_path)
    conf = (out / "configs" / "mgmt-leaf-01" / "frr.conf").read_text()
    assert "router bgp" in conf and conf.count("neighbor") >= 2
    if shutil.which("vtysh"):
        from .test_switch_configs import _vtysh_check
        for name in ("mgmt-leaf-01", "mgmt-leaf-02", "spine-01"):
            r = _vtysh_check(out / "configs" / name / "frr.conf", tmp_path)
            assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
@pytest.mark.skipif(bool(twin.missing_tools()), reason="needs ibsim-utils, libumad2sim0, opensm, infiniband-diags")
@pytest.mark.parametrize("template, attach, switches", [(B200_3SU, "spine", 40), (B200_3SU, "management-leaf", 42),
                                                        (B200_3TIER, "core", 80)])
def test_opensm_ftree_routes_with_endpoints_off_the_leaves(tmp_path, template, attach, switches):
    """OpenSM's ftree takes UFM ports on spines, cores or management leaves: they are CAs
    outside compute.guids, and the compute nodes stay at the leaves' rank."""
    plan = _plan(template, attach)
    result = twin.run(write_outputs(plan, tmp_path) / "infiniband")
    assert result["ok"], {k: result[k] for k in ("engine_used", "errors", "counts")}
    assert result["engine_used"] == "ftree"
    assert "osm_ucast_mgr_process: ftree tables configured on all switches" in result["engine_lines"]
    servers = plan.design["servers"]
    assert result["counts"]["compute_nodes"] == servers * 8 and result["counts"]["cas"] == servers * 8 + 4
    assert result["counts"]["switches"] == switches


def test_sonic_management_leaf_configs_validate_against_yang(tmp_path, sonic_yang):
    text = ("name: roce-mgmt\nservers: 24\nserver: hgx-h100\nfabric: {topology: fat-tree, switch: sn5600, "
            "speed_gbps: 400, nos: sonic}\nextra_endpoints:\n  - {role: ufm, count: 2, ports: 2, attach: management-leaf}\n"
            "  - {role: login, count: 2, attach: spine}\n")
    out = write_outputs(plan_from_text(text), tmp_path)
    for name in ("mgmt-leaf-01", "mgmt-leaf-02", "spine-01", "leaf-001"):
        assert sonic_yang.validate(json.loads((out / "configs" / name / "config_db.json").read_text())) == [], name


def test_management_leaves_are_racked_with_the_spines():
    text = B200_3SU.format(endpoints=UFM.format(attach="management-leaf")) + (
        "layout: {hall: DH1, rows: 4, racks_per_row: 12, rack: {height_u: 48, power_kw: 60}}\n")
    plan = plan_from_text(text)
    phys = plan.physical
    rack_of = {d.name: phys.racks[int(phys.dev_rack[i])] for i, d in enumerate(plan.devices)}
    assert rack_of["mgmt-leaf-01"].kind == "network" and rack_of["mgmt-leaf-01"].name == rack_of["spine-16"].name
    assert (phys.dev_rack >= 0).all()
    assert not np.isnan(phys.length_m).any()  # every cable, the management leaves' too, has a length
