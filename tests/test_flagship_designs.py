"""This year's flagship NVIDIA designs reproduced from specs that state only what the
reference architectures state: the dual-plane Spectrum-X Enterprise RAs (HGX B300, GB300
NVL72; counts over both planes) and the hardware they are built from (ConnectX-8 as 2 x
400GbE, one port per plane)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from compiler.catalog import load_catalog
from compiler.pipeline import build_plan


def _plan(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return build_plan(path)[1]


def test_connectx8_hosts_bring_two_plane_ports_per_cage():
    cat = load_catalog()
    for sid, nics, gpus, domain in (("hgx-b300", 8, 8, 8), ("gb300-nvl72", 4, 4, 72)):
        s = cat.servers[sid]
        g = s.nic_groups["compute"]
        assert (s.gpus, g.nics, g.speed_gbps, g.cage.gbps) == (gpus, nics, 400, 800)
        assert s.scale_up.domain_gpus == domain
        # Two logical 400G ports per 800G cage, lane 1 then lane 2: one per plane.
        assert len(g.ports) == 2 * nics
        assert Counter(p.cage for p in g.ports) == {f"osfp{i}": 2 for i in range(1, nics + 1)}
        assert [p.lane for p in g.ports] == [1, 2] * nics
    for sid, nics in (("hgx-b300-xdr", 8), ("gb300-nvl72-xdr", 4)):
        g = cat.servers[sid].nic_groups["compute"]
        assert (g.nics, len(g.ports), g.speed_gbps, g.cage.serdes_gbps) == (nics, nics, 800, 200)


def test_dual_plane_nic_cage_takes_a_twin_port_module_and_two_straight_fibers(tmp_path):
    """NVIDIA documents a twin-port 2 x 400G module reaching two switches over two straight
    fibers (no splitter): the BOM orders one flat-top twin-port per NIC cage, one finned
    twin-port per switch cage in use, and one MFP7E10 per 400G link."""
    plan = _plan(tmp_path, "name: t\nserver: hgx-b300\nservers: 32\n"
                           "fabric: {topology: multi-plane, switch: sn5600, speed_gbps: 400}\n")
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    host = kinds == "server-leaf"
    assert host.sum() == 32 * 16
    media = {plan.media[m] for m in plan.links.media[host].tolist()}
    assert media == {"mmf"}  # straight fiber, not mmf-split


HGX = "name: t\nserver: hgx-b300\nservers: {n}\nfabric: {{topology: multi-plane, switch: sn5600, speed_gbps: 400}}\n"
GB300 = ("name: t\nserver: gb300-nvl72\nservers: {n}\n"
         "fabric: {{topology: multi-plane, switch: sn5600, speed_gbps: 400, scalable_unit: 36}}\n")


def _counts(plan):
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    roles = Counter(d.role for d in plan.devices)
    return roles["leaf"], roles["spine"], int((kinds == "server-leaf").sum()), int((kinds == "leaf-spine").sum())


# designs.md, HGX B300 Enterprise RA Table 6 (both planes): nodes -> leaves, spines, uplinks
# from a leaf to each spine (400G); node-leaf and leaf-spine links 512 / 1,024 / 2,048 of 400G.
@pytest.mark.parametrize("nodes,leaves,spines,per_pair,links", [
    (32, 8, 4, 32, 512), (64, 16, 8, 16, 1024), (128, 32, 16, 8, 2048)])
def test_hgx_b300_enterprise_ra_rows(tmp_path, nodes, leaves, spines, per_pair, links):
    plan = _plan(tmp_path, HGX.format(n=nodes))
    assert _counts(plan) == (leaves, spines, 2 * nodes * 8, links)
    assert links == nodes * 8 * 2  # 400G endpoints = node-leaf links = leaf-spine links at 1:1
    d = plan.design
    assert d["planes"] == 2 and d["tiers"] == 2 and d["leaf_spine_links_per_pair"] == per_pair
    assert d["leaf_ports"] == {"down": 64, "up": 64}  # a leaf is 64 down / 64 up at 400G
    # Every spine uses all 128 ports; half the leaves and spines in each plane.
    spine_use = Counter(plan.links.b_dev[np.array(plan.link_kinds)[plan.links.kind] == "leaf-spine"].tolist())
    assert set(spine_use.values()) == {128}
    assert Counter(x.group for x in plan.devices if x.role in ("leaf", "spine")) == {1: (leaves + spines) // 2,
                                                                                    2: (leaves + spines) // 2}


def test_hgx_b300_32_nodes_leaf_serves_a_rail_pair(tmp_path):
    """The RA at 32 nodes: 4 leaves per plane, each serving 2 rails (1+5, 2+6, 3+7, 4+8)."""
    plan = _plan(tmp_path, HGX.format(n=32))
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    host = kinds == "server-leaf"
    nic = plan.links.a_port[host] // 2  # ports NIC-major: nicN-p1, nicN-p2
    leaf = plan.links.b_dev[host]
    rails_of_leaf = {}
    for lf, n in zip(leaf.tolist(), nic.tolist()):
        rails_of_leaf.setdefault(lf, set()).add(n + 1)
    assert sorted(map(sorted, rails_of_leaf.values())) == [[1, 5]] * 2 + [[2, 6]] * 2 + [[3, 7]] * 2 + [[4, 8]] * 2
    assert plan.design["rails_per_leaf"] == 2
    assert any("1+5, 2+6, 3+7, 4+8" in n for n in plan.notes)


# designs.md, GB300 NVL72 Enterprise RA (units of two racks, 36 trays): racks -> leaves, spines
# over both planes; 36 down per leaf.
@pytest.mark.parametrize("racks,leaves,spines", [(2, 8, 4), (8, 32, 12)])
def test_gb300_nvl72_enterprise_ra_rows(tmp_path, racks, leaves, spines):
    plan = _plan(tmp_path, GB300.format(n=18 * racks))
    endpoints = 2 * 4 * 18 * racks
    assert _counts(plan) == (leaves, spines, endpoints, endpoints)
    assert plan.design["leaf_ports"] == {"down": 36, "up": 36}
    assert leaves + spines == {2: 12, 8: 44}[racks]  # the appendix's SN5600 count per size


def test_gb300_nvl72_four_racks_is_cheaper_than_the_ra(tmp_path):
    """The RA builds 4 racks (72 trays) with 16 leaves + 8 spines: 4 spines per plane, 9 links
    from each leaf to each spine, spines 72 ports down. The default is cheaper: 3 spines per
    plane carry the 8 x 36 = 288 uplinks of a plane at 12 per leaf-spine pair (96 of 128 ports),
    16 leaves + 6 spines, 22 switches against the RA's 24, the same 1,152 leaf-spine links."""
    plan = _plan(tmp_path, GB300.format(n=72))
    assert _counts(plan) == (16, 6, 576, 576)
    assert plan.design["leaf_spine_links_per_pair"] == 12
    ra_spines_per_plane = 4
    assert 8 * 36 == ra_spines_per_plane * 72 == 3 * 96  # both designs take every leaf uplink


def test_dual_plane_checks_pass_per_plane(tmp_path):
    from compiler.check import run_checks
    plan = _plan(tmp_path, HGX.format(n=64))
    report = run_checks(plan).as_json()
    codes = {f["code"] for f in report["findings"] if f["severity"] in ("error", "warning")}
    assert "FABRIC_PARTITIONED" not in codes and "BISECTION_METHODS_DISAGREE" not in codes, codes
    # Each plane non-blocking: half the 400G GPU injection over both planes crosses the halves.
    assert report["figures"]["bisection"]["analytic_gbps"] == 64 * 16 * 400 // 2
    assert report["figures"]["oversubscription"]["leaf"]["max"] == "1:1"


def test_dual_plane_growth_builds_spines_for_the_target_without_recabling(tmp_path):
    """32 HGX B300 today, 128 to come: the spines of the 128-node row (8 per plane, 8 links
    from each leaf to each spine) from day one, so the leaves added later move no cable."""
    plan = _plan(tmp_path, HGX.format(n=32) + "growth: {max_servers: 128}\n")
    leaves, spines, _, up = _counts(plan)
    assert (spines, plan.design["leaf_spine_links_per_pair"]) == (16, 8)
    # The unit is chosen for 128 nodes (SUs of 64, a leaf per rail): today's 32 half-fill the
    # first SU, whose 8 leaves per plane are bought whole with every uplink.
    assert leaves == 16 and up == 16 * 64 and plan.design["rails_per_leaf"] == 1
    assert plan.design["built_for_servers"] == 128
    assert any("upper tiers built for 128 servers" in n for n in plan.notes)


def test_dual_plane_three_tiers_per_plane(tmp_path):
    """Past one plane's two-tier limit (128 leaves of 64 x 400G down: 1,024 HGX B300) each
    plane grows a core tier of its own; the planes still never meet."""
    plan = _plan(tmp_path, HGX.format(n=2048))
    roles = Counter(d.role for d in plan.devices)
    assert plan.design["tiers"] == 3 and roles["core"] > 0
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    group = np.array([d.group or 0 for d in plan.devices])
    sw = kinds != "server-leaf"
    assert (group[plan.links.a_dev[sw]] == group[plan.links.b_dev[sw]]).all()
    from compiler.check.invariants import plan_invariants
    assert plan_invariants(plan) == []


def test_dual_plane_layout_places_and_cables(tmp_path):
    plan = _plan(tmp_path, GB300.format(n=36) + "layout:\n  hall: DH1\n  rows: 1\n  racks_per_row: 6\n"
                                                "  rack: {height_u: 48, power_kw: 150}\n")
    assert plan.physical is not None and np.isfinite(plan.physical.length_m).all()


# --- configs on a dual-plane fabric --------------------------------------------------------
NOS_HGX = "name: dp-{nos}\nserver: hgx-b300\nservers: 32\nfabric: {{topology: multi-plane, switch: sn5600, speed_gbps: 400, nos: {nos}}}\n"


@pytest.fixture(scope="module")
def dual_plane_out(tmp_path_factory):
    from compiler.pipeline import write_outputs
    out = tmp_path_factory.mktemp("dp")
    folders = {}
    for nos in ("sonic", "cumulus", "frr"):
        spec = out / f"{nos}.yaml"
        spec.write_text(NOS_HGX.format(nos=nos))
        folders[nos] = write_outputs(build_plan(spec)[1], out / nos, ["configs", "host-configs"])
    return folders


def test_dual_plane_sonic_configs_validate_against_yang(dual_plane_out, sonic_yang):
    import json
    files = sorted(dual_plane_out["sonic"].glob("configs/*/config_db.json"))
    assert len(files) == 12  # 8 leaves + 4 spines over both planes
    for f in files:
        assert sonic_yang.validate(json.loads(f.read_text())) == [], f
    # A plane-1 leaf peers only with its plane's spines.
    leaf = json.loads((dual_plane_out["sonic"] / "configs/p1-seg01-tor-r1/config_db.json").read_text())
    assert {n["name"] for n in leaf["BGP_NEIGHBOR"].values()} == {"p1-agg-01", "p1-agg-02"}
    assert len(leaf["BGP_NEIGHBOR"]) == 64  # 32 links to each of the plane's 2 spines


def test_dual_plane_nvue_and_frr_configs(dual_plane_out, tmp_path):
    import shutil
    import subprocess

    import yaml

    from .test_switch_configs import _nvue_shape, _OnOffLoader
    files = sorted(dual_plane_out["cumulus"].glob("configs/*/startup.yaml"))
    assert len(files) == 12
    for f in files:
        assert _nvue_shape(yaml.load(f.read_text(), Loader=_OnOffLoader)) == [], f
    if shutil.which("vtysh"):
        (tmp_path / "vtysh.conf").touch()
        for f in sorted(dual_plane_out["frr"].glob("configs/*/frr.conf")):
            r = subprocess.run(["vtysh", "--config_dir", str(tmp_path), "-C", "-f", str(f)], capture_output=True, text=True, check=False)
            assert r.returncode == 0, f"{f}: {r.stdout}{r.stderr}"


def test_dual_plane_hosts_address_all_16_plane_ports(dual_plane_out, tmp_path):
    """Each of a server's 16 plane ports (8 NICs x 2 planes) gets its own /31, routing table
    and rule, and netplan generate accepts the file; nccl.conf names the 16 interfaces."""
    import os
    import shutil
    import subprocess

    import yaml
    folder = dual_plane_out["sonic"]
    files = sorted((folder / "host-configs" / "netplan").glob("*.yaml"))
    assert len(files) == 32
    doc = yaml.safe_load(files[0].read_text())
    eths = doc["network"]["ethernets"]
    assert sorted(eths) == sorted(f"osfp{n}-p{p}" for n in range(1, 9) for p in (1, 2))
    assert len({e["addresses"][0] for e in eths.values()}) == 16
    assert len({e["routing-policy"][0]["table"] for e in eths.values()}) == 16
    if shutil.which("netplan"):
        for f in files[:3]:
            root = tmp_path / f.stem
            (root / "etc" / "netplan").mkdir(parents=True)
            dst = root / "etc" / "netplan" / "60-fabric.yaml"
            dst.write_bytes(f.read_bytes())
            os.chmod(dst, 0o600)
            r = subprocess.run(["netplan", "generate", "--root-dir", str(root)], capture_output=True, text=True, check=False)
            assert r.returncode == 0, f"{f}: {r.stderr}"
            assert len(list((root / "run" / "systemd" / "network").glob("*.network"))) == 16
    nccl = (folder / "host-configs" / "hgx-b300" / "nccl.conf").read_text()
    line = next(x for x in nccl.splitlines() if x.startswith("NCCL_SOCKET_IFNAME=="))
    assert len(line.split("==")[1].split(",")) == 16


# --- GB200 NVL72 SuperPOD as NVIDIA builds it: spine-leaf groups and core groups ---------------
GB200_SLG = ("name: t\nserver: gb200-nvl72\nservers: {n}\nfabric:\n  topology: rail-optimized\n  switch: qm9700\n"
             "  scalable_unit: 18\n{extra}")
SLG = "  spine_leaf_group: {scalable_units: 8, spines: 6}\n"


# designs.md, DGX SuperPOD with DGX GB200 (SU = 8 racks of 18 trays): SU -> leaves, spines, cores.
@pytest.mark.parametrize("sus,leaves,spines,cores", [(2, 64, 48, 18), (4, 128, 96, 36), (8, 256, 192, 72),
                                                     (16, 512, 384, 144)])
def test_gb200_superpod_spine_leaf_groups_reproduce_the_ra(tmp_path, sus, leaves, spines, cores):
    plan = _plan(tmp_path, GB200_SLG.format(n=sus * 144, extra=SLG))
    roles = Counter(d.role for d in plan.devices)
    assert (roles["leaf"], roles["spine"], roles["core"]) == (leaves, spines, cores)
    assert cores == sus * 576 // 64  # cores = GPUs / 64, every port used
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    gpus = sus * 576
    assert Counter(kinds.tolist()) == {"server-leaf": gpus, "leaf-spine": gpus, "spine-core": gpus}  # every layer = GPUs


def test_gb200_spine_leaf_group_is_one_rail_of_eight_racks(tmp_path):
    plan = _plan(tmp_path, GB200_SLG.format(n=288, extra=SLG))
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    ls = kinds == "leaf-spine"
    dev = plan.devices
    pairs = Counter(zip(plan.links.a_dev[ls].tolist(), plan.links.b_dev[ls].tolist()))
    assert set(pairs.values()) == {3}  # 3 links per leaf-spine pair
    spines_of = {}
    for (a, b) in pairs:
        spines_of.setdefault(b, set()).add(a)
    for leaves in spines_of.values():
        assert len(leaves) == 8 and len({dev[i].rail for i in leaves}) == 1  # one rail
        assert len({dev[i].su for i in leaves}) == 8  # of 8 racks (SUs of 18 trays)
    assert plan.design["leaf_ports"] == {"down": 18, "up": 18}
    assert plan.design["spine_ports"] == {"down": 24, "up": 24}
    sc = kinds == "spine-core"
    core_pairs = Counter(zip(plan.links.a_dev[sc].tolist(), plan.links.b_dev[sc].tolist()))
    assert set(core_pairs.values()) == {8} and set(Counter(plan.links.b_dev[sc].tolist()).values()) == {64}


def test_gb200_default_stays_the_cheapest_and_the_note_compares(tmp_path):
    """Without spine_leaf_group the default is the cheapest fabric: at 2 SU 64 leaves and 18
    spines in two tiers (82 switches) against the RA's 130 (64 + 48 + 18); the SLG design's
    note prices both."""
    default = _plan(tmp_path, GB200_SLG.format(n=288, extra=""))
    roles = Counter(d.role for d in default.devices)
    assert (roles["leaf"], roles["spine"], roles["core"]) == (64, 18, 0)
    slg = _plan(tmp_path, GB200_SLG.format(n=288, extra=SLG))
    note = next(n for n in slg.notes if n.startswith("spine-leaf groups"))
    assert "(130 switches" in note and "(82 switches" in note


def test_spine_leaf_group_spines_must_divide_the_uplinks(tmp_path):
    from compiler.diagnostics import SpecInvalid
    with pytest.raises(SpecInvalid) as exc:
        _plan(tmp_path, GB200_SLG.format(n=288, extra="  spine_leaf_group: {scalable_units: 8, spines: 5}\n"))
    d = exc.value.diagnostics[0]
    assert d.path == "fabric.spine_leaf_group.spines" and "do not divide a leaf's 18 uplinks" in d.message
