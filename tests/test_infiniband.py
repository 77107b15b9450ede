"""InfiniBand outputs (out/<name>/infiniband/): structure, GUIDs, and the real consumers:
OpenSM's own config template, ibutils' topology-file parser (ibdmchk), and the ibsim +
OpenSM twin, which must route the example fat trees with ftree and reject broken ones."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from compiler.pipeline import build_plan, write_outputs
from compiler.plan.guids import device_guids
from compiler.plan.model import LinkTable
from compiler.twin import infiniband as twin

from .conftest import SPECS, cli_in_process, plan_from_text

HAVE_TWIN = not twin.missing_tools()
needs_twin = pytest.mark.skipif(not HAVE_TWIN, reason="needs ibsim-utils, libumad2sim0, opensm, infiniband-diags "
                                "(listed in .ci/debian-packages; ./dev.sh test installs them as root)")
HAVE_IBDMCHK = shutil.which("ibdmchk") is not None


def compile_ib(tmp_path: Path, spec: Path | str) -> Path:
    _, plan = build_plan(spec)
    return write_outputs(plan, tmp_path) / "infiniband"


def spec_file(tmp_path: Path, text: str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


B200_RAIL = """name: {name}
servers: {servers}
server: dgx-b200
fabric:
  topology: rail-optimized
  switch: qm9700
  tiers: {tiers}
  oversubscription: "1:1"
  scalable_unit: 32
"""


# --- files -----------------------------------------------------------------------------

def test_files_written_for_infiniband(tmp_path):
    ib = compile_ib(tmp_path, SPECS / "h100-superpod-1su.yaml")
    names = sorted(str(p.relative_to(ib)) for p in ib.rglob("*") if p.is_file())
    assert names == ["README.md", "compute.guids", "ibnl/MQM9700.ibnl", "ibnl/dgx-h100.ibnl", "ibnl/ufm.ibnl",
                     "node-name-map", "opensm.conf", "root.guids", "topology.ibnetdiscover", "topology.topo"]
    conf = (ib / "opensm.conf").read_text()
    assert "routing_engine ftree,updn\n" in conf
    assert "root_guid_file /etc/opensm/root.guids\n" in conf and "cn_guid_file /etc/opensm/compute.guids\n" in conf


def test_guid_files_parse_as_opensm_reads_them(tmp_path):
    """OpenSM reads each GUID with strtoull(..., 0): 0x prefix always, one malformed line fails the file."""
    ib = compile_ib(tmp_path, SPECS / "h100-superpod-1su.yaml")
    for name, count in (("root.guids", 4), ("compute.guids", 31 * 8)):
        lines = [ln for ln in (ib / name).read_text().splitlines() if ln and not ln.startswith("#")]
        assert len(lines) == count
        assert all(re.fullmatch(r"0x[0-9a-f]{16}", ln) for ln in lines)
        assert len(set(lines)) == count
    names = dict(re.findall(r'^(0x[0-9a-f]{16}) "([^"]+)"$', (ib / "node-name-map").read_text(), re.M))
    assert len(names) == 12 + 31 * 8 + 2 * 2 and len(set(names.values())) == len(names)
    assert names[[ln for ln in (ib / "root.guids").read_text().splitlines() if ln.startswith("0x")][0]] == "spine-01"


def test_expected_topology_describes_every_cable_from_both_ends(tmp_path):
    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    ib = write_outputs(plan, tmp_path) / "infiniband"
    parsed = twin.parse_ibnetdiscover((ib / "topology.ibnetdiscover").read_text())
    links = parsed["links"]
    assert len(links) == 2 * len(plan.links)
    assert all(links[peer] == end for end, peer in links.items())
    kinds = [k for k, _ in parsed["nodes"].values()]
    assert kinds.count("Switch") == 16 + 8 and kinds.count("Ca") == 64 * 8
    # the QM9700 rule: port 1/<cage>/<lane> is IB port 2*(cage-1)+lane; uplinks start at 1/17/1 = 33
    text = (ib / "topology.ibnetdiscover").read_text()
    leaf = text.split('# "su1-leaf-r1"')[1].split("\n\n")[0]
    assert re.search(r'^\[33\]\s+"S-', leaf, re.M) and not re.search(r"^\[65\]", leaf, re.M)


def test_ethernet_design_gets_no_infiniband_folder(tmp_path):
    spec = spec_file(tmp_path, """name: eth-small
servers: 4
server: dgx-h100
fabric: {topology: rail-optimized, switch: sn5600, speed_gbps: 400, scalable_unit: 4}
""")
    folder = write_outputs(build_plan(spec)[1], tmp_path / "out")
    assert not (folder / "infiniband").exists()


def test_q3400_port_numbering_not_invented(tmp_path):
    ib = compile_ib(tmp_path, SPECS / "b300-xdr-1su.yaml")
    assert (ib / "opensm.conf").exists() and (ib / "root.guids").exists()
    assert not (ib / "topology.ibnetdiscover").exists() and not (ib / "topology.topo").exists()
    readme = (ib / "README.md").read_text()
    assert "Not written" in readme and "multi-ASIC" in readme
    with pytest.raises(twin.TwinUnavailable, match="multi-ASIC"):
        twin.run(ib)


# --- GUIDs -----------------------------------------------------------------------------

def test_guids_are_structural_and_stable_under_growth():
    small = plan_from_text(B200_RAIL.format(name="g", servers=64, tiers=2))
    large = plan_from_text(B200_RAIL.format(name="g", servers=128, tiers=2))
    g_small = dict(zip((d.name for d in small.devices), device_guids(small).tolist()))
    g_large = dict(zip((d.name for d in large.devices), device_guids(large).tolist()))
    assert all(g_large[n] == g for n, g in g_small.items())
    assert g_small["su2-leaf-r5"] == 0x0230000200000500  # 02 | leaf | SU 2 | index 5
    assert g_small["dgx-su1-017"] == 0x0210000100001100  # 02 | server | SU 1 | index 17
    assert len(set(g_large.values())) == len(g_large)


def test_expected_topology_identical_for_existing_devices_after_growth(tmp_path):
    """Growing 2 SU -> 4 SU keeps every server-leaf cable at the same GUIDs and IB ports."""
    def server_links(servers):
        ib = compile_ib(tmp_path / str(servers), spec_file(tmp_path, B200_RAIL.format(name="g", servers=servers, tiers=2),
                                                            f"g{servers}.yaml"))
        links = twin.parse_ibnetdiscover((ib / "topology.ibnetdiscover").read_text())["links"]
        return {k: v for k, v in links.items() if k[0].startswith("H-")}
    small, large = server_links(64), server_links(128)
    assert small.items() <= large.items()


# --- bad input -------------------------------------------------------------------------

def test_catalog_port_name_that_could_inject_lines_is_rejected(tmp_path):
    from compiler.catalog import load_catalog

    server = load_catalog().servers["dgx-h100"].model_dump(mode="json")
    server["id"] = "my-dgx"
    server["nic_groups"]["compute"]["ports"][0]["name"] = 'osfp4"\nrouting_engine minhop'
    (tmp_path / "cat.yaml").write_text(yaml.safe_dump({"servers": [server]}))
    spec = spec_file(tmp_path, """name: inject
servers: 2
server: my-dgx
catalog: cat.yaml
fabric: {topology: rail-optimized, switch: qm9700, scalable_unit: 2}
""")
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert "servers.0.nic_groups.compute.ports.0.name" in r.stderr and "cat.yaml" in r.stderr
    assert not (tmp_path / "out").exists()


# --- real consumers: OpenSM's config template, ibutils' topology parser -------------------

@pytest.mark.skipif(shutil.which("opensm") is None and not Path("/usr/sbin/opensm").exists(), reason="needs opensm")
def test_opensm_conf_keys_are_opensm_options(tmp_path):
    ib = compile_ib(tmp_path, SPECS / "h100-superpod-1su.yaml")
    template = tmp_path / "template.conf"
    subprocess.run([twin._tool("opensm"), "-c", str(template)], capture_output=True, timeout=60, check=True)
    known = {ln.split()[0] for ln in template.read_text().splitlines() if ln.strip() and not ln.startswith("#")}
    ours = {ln.split()[0] for ln in (ib / "opensm.conf").read_text().splitlines() if ln.strip() and not ln.startswith("#")}
    assert ours <= known, ours - known


def _ibdmchk(ib: Path, sm_system: str) -> str:
    r = subprocess.run(["ibdmchk", "-t", str(ib / "topology.topo"), "-n", f"{sm_system}/U1", "-p", "1"],
                       cwd=ib, env={**os.environ, "IBDM_IBNL_PATH": str(ib / "ibnl")},
                       capture_output=True, text=True, timeout=300)
    return r.stdout + r.stderr


@pytest.mark.skipif(not HAVE_IBDMCHK, reason="needs ibutils (ibdmchk)")
def test_ibdiagnet_topology_file_parses_in_ibdm(tmp_path):
    """ibutils' IBDM (the library behind ibdiagnet's -t) builds the whole fabric from the file."""
    ib = compile_ib(tmp_path, SPECS / "h100-superpod-1su.yaml")
    out = _ibdmchk(ib, "ufm-01")
    systems = 12 + 31 + 2
    nodes = 12 + 31 * 8 + 2 * 2
    assert f"-I- Defined {systems}/{nodes} systems/nodes" in out, out[:3000]
    assert "-E-" not in out and "Ignoring" not in out, out[:3000]


@pytest.mark.skipif(not HAVE_IBDMCHK, reason="needs ibutils (ibdmchk)")
def test_ibdm_rejects_a_topology_file_whose_ends_disagree(tmp_path):
    ib = compile_ib(tmp_path, SPECS / "h100-superpod-1su.yaml")
    topo = ib / "topology.topo"
    text = topo.read_text()
    # the leaf says its port 1 goes to dgx-su1-002; dgx-su1-002 still says it is on port 2
    topo.write_text(text.replace("  P1 -> dgx-h100 dgx-su1-001 osfp4-p2\n", "  P1 -> dgx-h100 dgx-su1-002 osfp4-p2\n", 1))
    out = _ibdmchk(ib, "ufm-01")
    assert "-E-" in out and "Fail to parse topology file" in out, out[:3000]


# --- the twin: ibsim + OpenSM ------------------------------------------------------------

def _assert_ftree_ok(result: dict) -> None:
    assert result["ok"], {k: result[k] for k in ("engine_used", "engine_lines", "errors", "counts", "expected", "discovery")}
    assert "osm_ucast_mgr_process: ftree tables configured on all switches" in result["engine_lines"]
    assert result["subnet_up"] and result["sm_state"] == "MASTER"
    assert result["counts"]["roots"] == result["expected"]["roots"]
    assert result["counts"]["compute_nodes"] == result["expected"]["compute_nodes"]


@needs_twin
@pytest.mark.slow
def test_twin_h100_superpod_with_ufm_routes_with_ftree(tmp_path):
    result = twin.run(compile_ib(tmp_path, SPECS / "h100-superpod-1su.yaml"))
    _assert_ftree_ok(result)
    # the UFM appliances' 4 ports are CAs but not compute nodes: compute.guids was read
    assert result["counts"] == {"ftree_rank": 2, "cas": 252, "ca_ports": 252, "compute_nodes": 248,
                                "switches": 12, "roots": 4}
    assert result["discovery"]["links"] == 252 + 256


@needs_twin
@pytest.mark.slow
def test_twin_b200_superpod_2su_routes_with_ftree(tmp_path):
    result = twin.run(compile_ib(tmp_path, SPECS / "b200-superpod-2su.yaml"))
    _assert_ftree_ok(result)
    assert result["counts"]["ca_ports"] == 512 and result["counts"]["switches"] == 24


@needs_twin
@pytest.mark.slow
def test_twin_three_tier_fat_tree_routes_with_ftree(tmp_path):
    spec = spec_file(tmp_path, B200_RAIL.format(name="b200-3tier", servers=64, tiers=3))
    result = twin.run(compile_ib(tmp_path, spec))
    _assert_ftree_ok(result)
    assert result["counts"]["ftree_rank"] == 3 and result["counts"]["switches"] == 16 + 32 + 32


@needs_twin
@pytest.mark.slow
def test_twin_largest_superpod_within_ibsim_default_limits(tmp_path):
    """7 SU of DGX B200 (1,792 CAs + 88 switches = 1,880 nodes) is the largest SU multiple under
    ibsim's default 2,048-node limit (8 SU is 2,144 nodes)."""
    spec = spec_file(tmp_path, B200_RAIL.format(name="b200-7su", servers=224, tiers=2))
    result = twin.run(compile_ib(tmp_path, spec))
    _assert_ftree_ok(result)
    assert result["ibsim"]["nodes"] == 1880 and result["ibsim"]["limits"] == twin.IBSIM_DEFAULT_LIMITS


def _broken(plan, drop: np.ndarray | None = None, repoint: dict | None = None):
    """A copy of the plan with some links removed or re-pointed (what a miscabled floor looks like)."""
    links = plan.links
    cols = {f: getattr(links, f).copy() for f in LinkTable.__dataclass_fields__}
    if repoint is not None:  # link index -> new (upper device, port)
        for i, (dev, port) in repoint.items():
            cols["b_dev"][i], cols["b_port"][i] = dev, port
    if drop is not None:
        keep = np.ones(len(links), dtype=bool)
        keep[drop] = False
        cols = {f: c[keep] for f, c in cols.items()}
    return replace(plan, links=LinkTable(**cols), _memo={})


def _uplinks(plan):
    return np.flatnonzero(plan.links.kind == plan.link_kinds.index("leaf-spine"))


@needs_twin
@pytest.mark.slow
def test_twin_ftree_tolerates_one_missing_cable(tmp_path):
    """ftree is built for degraded fat trees: one missing leaf-spine cable still routes."""
    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    result = twin.run(write_outputs(_broken(plan, drop=_uplinks(plan)[:1]), tmp_path) / "infiniband")
    assert result["engine_used"] == "ftree" and result["subnet_up"], result["errors"]


@needs_twin
@pytest.mark.slow
def test_twin_rejects_leaf_that_lost_its_uplinks(tmp_path):
    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    up = _uplinks(plan)
    leaf0 = plan.links.a_dev[up[0]]
    result = twin.run(write_outputs(_broken(plan, drop=up[plan.links.a_dev[up] == leaf0]), tmp_path) / "infiniband")
    assert not result["ok"] and result["engine_used"] != "ftree"
    assert "ucast_mgr_route: ftree: cannot build lid matrices" in result["errors"]
    assert not any("ftree tables configured" in ln for ln in result["engine_lines"])


@needs_twin
@pytest.mark.slow
def test_twin_rejects_miscabled_pair_and_discovery_names_the_ports(tmp_path):
    """Two cables swapped at the upper end: a server NIC lands on a spine and a leaf uplink on
    another leaf. ftree refuses the fabric (updn routes it), and comparing what ibnetdiscover
    finds with the expected file names the four port ends that differ."""
    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    links = plan.links
    i = int(np.flatnonzero(links.kind == plan.link_kinds.index("server-leaf"))[0])
    j = int(_uplinks(plan)[40])
    assert links.b_dev[i] != links.a_dev[j]  # the uplink is another leaf's
    swapped = _broken(plan, repoint={i: (int(links.b_dev[j]), int(links.b_port[j])),
                                     j: (int(links.b_dev[i]), int(links.b_port[i]))})
    as_cabled = write_outputs(swapped, tmp_path / "as-cabled") / "infiniband" / "topology.ibnetdiscover"
    expected = compile_ib(tmp_path / "expected", SPECS / "b200-superpod-2su.yaml")
    result = twin.run(expected, fabric=as_cabled)
    assert not result["ok"]
    assert result["engine_used"] == "updn"
    assert "ucast_mgr_route: ftree: cannot build lid matrices" in result["errors"]
    assert len(result["discovery"]["missing"]) == 4 and len(result["discovery"]["unexpected"]) == 4
    names = dict(re.findall(r'^(0x[0-9a-f]{16}) "([^"]+)"$', (expected / "node-name-map").read_text(), re.M))
    server_ca = f"H-{int(min(k for k, v in names.items() if v == 'dgx-su1-001 osfp4-p2'), 16):016x}"
    assert any(m.startswith(f'"{server_ca}"[1]') for m in result["discovery"]["unexpected"])


@needs_twin
@pytest.mark.slow
def test_twin_root_guid_file_is_what_ftree_uses(tmp_path):
    """Pointing root.guids at leaves instead of spines changes what ftree does: the file is read."""
    ib = compile_ib(tmp_path, SPECS / "b200-superpod-2su.yaml")
    leaves = [ln.split()[0] for ln in (ib / "node-name-map").read_text().splitlines() if "-leaf-" in ln]
    (ib / "root.guids").write_text("\n".join(leaves) + "\n")
    result = twin.run(ib)
    assert not result["ok"]
    assert result["engine_used"] != "ftree" or result["counts"].get("roots") != 8
