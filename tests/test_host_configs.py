"""The servers' side of a RoCE fabric (host-configs/): netplan files the real `netplan
generate` accepts, addresses and gateways that match the switches' ends of the same
cables, NCCL HCAs in rail order, and one RoCE profile shared with the switch configs.

RDMA device names come from catalog/nics.py."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

import compiler.render.structured_config as sc
from compiler.catalog.load import roce_profile_data
from compiler.pipeline import build_plan, write_outputs

from .conftest import SPECS, shared_outputs, shared_plan



@pytest.fixture(scope="module")
def frr_out():
    return shared_outputs("roce-2spine-4leaf-frr", ["configs", "host-configs"])


@pytest.fixture(scope="module")
def dgx_out():
    return shared_outputs("h100-roce-2su-hall", ["host-configs", "cabling"])


def _netplan_generate(files: list[Path], root: Path) -> subprocess.CompletedProcess:
    (root / "etc" / "netplan").mkdir(parents=True)
    for i, f in enumerate(files):
        dst = root / "etc" / "netplan" / f"{60 + i}-{f.stem}.yaml"
        dst.write_bytes(f.read_bytes())
        os.chmod(dst, 0o600)  # netplan warns about world-readable files
    return subprocess.run(["netplan", "generate", "--root-dir", str(root)], capture_output=True, text=True)


def _frr_interface_addresses(folder: Path) -> dict[tuple[str, str], str]:
    """(switch, peer:peer_port from the description) -> the switch's address, from frr.conf."""
    out = {}
    for f in sorted(folder.glob("configs/*/frr.conf")):
        for block in re.findall(r"^interface \S+\n description (\S+)\n ip address (\S+)/31", f.read_text(), re.M):
            out[(f.parent.name, block[0])] = block[1]
    return out


# --- netplan -------------------------------------------------------------------------
@pytest.mark.skipif(not shutil.which("netplan"), reason="netplan is not installed (Debian netplan.io, .ci/debian-packages)")
@pytest.mark.parametrize("which", ["frr", "dgx"])
def test_every_netplan_file_passes_netplan_generate(which, frr_out, dgx_out, tmp_path):
    folder = frr_out if which == "frr" else dgx_out
    files = sorted((folder / "host-configs" / "netplan").glob("*.yaml"))
    assert len(files) == 32  # one per server of each spec
    for f in files:
        root = tmp_path / f.stem
        r = _netplan_generate([f], root)
        assert r.returncode == 0, f"{f}: {r.stderr}"
        networks = sorted((root / "run" / "systemd" / "network").glob("*.network"))
        assert len(networks) == 8, f"{f}: one networkd file per fabric NIC"


@pytest.mark.skipif(not shutil.which("netplan"), reason="netplan is not installed")
def test_netplan_gate_can_fail(frr_out, tmp_path):
    good = (frr_out / "host-configs" / "netplan" / "gpu-0001.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.replace("addresses: [", "addresses: [300.", 1))
    assert _netplan_generate([bad], tmp_path / "root").returncode != 0


def test_netplan_matches_the_switch_end_of_every_cable(frr_out):
    """Each NIC's address is the odd end of its /31 and its gateway the leaf's address on the
    same cable as frr.conf spells it; each rail has its own table and a rule for its address."""
    leaf_side = _frr_interface_addresses(frr_out)
    by_peer = {peer: addr for (_, peer), addr in leaf_side.items()}
    checked = 0
    for f in sorted((frr_out / "host-configs" / "netplan").glob("*.yaml")):
        eths = yaml.safe_load(f.read_text())["network"]["ethernets"]
        assert list(eths) == [f"nic{k}" for k in range(1, 9)]  # hgx-h100 ports, rail order
        for k, (ifname, e) in enumerate(eths.items(), start=1):
            (addr,) = e["addresses"]
            ip, length = addr.split("/")
            gw = by_peer[f"{f.stem}:{ifname}"]
            assert length == "31" and int(ip.split(".")[-1]) == int(gw.split(".")[-1]) + 1
            assert ip.rsplit(".", 1)[0] == gw.rsplit(".", 1)[0]
            table = 100 + k
            assert {r["via"] for r in e["routes"]} == {gw}
            assert sorted(r["to"] for r in e["routes"] if r.get("table") == table) == ["10.0.0.0/16", "10.64.0.0/10"]
            assert e["routing-policy"] == [{"from": ip, "table": table, "priority": table}]
            assert e["mtu"] == 9000
            checked += 1
        # the main table reaches the fabric over rail 1 only
        assert sum(1 for e in eths.values() for r in e["routes"] if "table" not in r) == 2
        assert all("table" in r for r in eths["nic2"]["routes"])
    assert checked == 32 * 8


# --- NCCL and NIC QoS ----------------------------------------------------------------
def test_dgx_nccl_names_hcas_in_rail_order(dgx_out):
    conf = dict(line.split("=", 1) for line in (dgx_out / "host-configs" / "dgx-h100" / "nccl.conf").read_text().splitlines()
                if line and not line.startswith("#"))
    # DGX H100 User Guide, Table 6: GPU 0..7 <-> mlx5_0,3,4,5,6,9,10,11 and OSFP ports
    assert conf["NCCL_IB_HCA"] == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert conf["NCCL_SOCKET_IFNAME"] == "=osfp4-p2,osfp3-p2,osfp3-p1,osfp4-p1,osfp1-p2,osfp2-p2,osfp2-p1,osfp1-p1"
    assert conf["NCCL_IB_TC"] == str(26 * 4 + 2) and conf["NCCL_IB_GID_INDEX"] == "3"
    # rail k's port is the one cabling.csv cables to the rail-k leaf (su1-leaf-r<k>)
    netplan = yaml.safe_load((dgx_out / "host-configs" / "netplan" / "dgx-su1-001.yaml").read_text())
    assert list(netplan["network"]["ethernets"]) == conf["NCCL_SOCKET_IFNAME"][1:].split(",")
    with open(dgx_out / "cabling.csv", newline="") as fh:
        leaf_of = {r["a_port"]: r["b_device"] for r in csv.DictReader(fh) if r["a_device"] == "dgx-su1-001"}
    assert [leaf_of[p] for p in netplan["network"]["ethernets"]] == [f"su1-leaf-r{k}" for k in range(1, 9)]


def test_hcas_from_the_server_ports_where_no_host_topology_is(tmp_path):
    """DGX B200: no host topology (its NIC bus ids are not evidenced), but each compute port
    names its RDMA device (host-topology/dgx-b200.yaml, nccl-tests#333 topo -m: GPU0..7 on
    mlx5_4,7,8,9,10,13,14,15): NCCL_IB_HCA in rail order all the same; no .link files."""
    (tmp_path / "b200.yaml").write_text("name: b200\nservers: 16\nserver: dgx-b200\n"
                                        "fabric: {topology: rail-optimized, switch: sn5600, speed_gbps: 400, oversubscription: '1:1'}\n")
    _, plan = build_plan(tmp_path / "b200.yaml")
    out = write_outputs(plan, tmp_path / "out", ["host-configs"]) / "host-configs"
    conf = dict(line.split("=", 1) for line in (out / "dgx-b200" / "nccl.conf").read_text().splitlines()
                if line and not line.startswith("#"))
    assert conf["NCCL_IB_HCA"] == "=mlx5_4,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_13,mlx5_14,mlx5_15"
    assert "qos osfp4-p2 mlx5_4  # rail 1" in (out / "dgx-b200" / "roce-qos.sh").read_text()
    assert not (out / "dgx-b200" / "systemd-link").exists()


def test_without_rdma_names_nccl_conf_says_how_to_read_them(frr_out):
    """HGX H100 (generic OEM): no RDMA device names anywhere in the catalog, so no NCCL_IB_HCA
    line, and the file gives the command that reads them off a server in rail order."""
    text = (frr_out / "host-configs" / "hgx-h100" / "nccl.conf").read_text()
    assert "\nNCCL_IB_HCA" not in text
    ports = " ".join(f"nic{k}" for k in range(1, 9))
    assert f"#   for i in {ports}; do ls /sys/class/net/$i/device/infiniband; done | paste -sd, -\n" in text


def test_dgx_nics_are_named_by_pci_path(dgx_out):
    links = sorted((dgx_out / "host-configs" / "dgx-h100" / "systemd-link").glob("*.link"))
    assert [p.name for p in links] == [f"10-clusterc-rail{k}.link" for k in range(1, 9)]
    first = links[0].read_text()
    assert "Path=pci-0000:18:00.0\n" in first and "Name=osfp4-p2\n" in first and "MTUBytes=9000\n" in first


def test_qos_script_is_valid_shell_and_follows_the_profile(dgx_out):
    script = dgx_out / "host-configs" / "dgx-h100" / "roce-qos.sh"
    if shutil.which("sh"):
        assert subprocess.run(["sh", "-n", str(script)]).returncode == 0
    text = script.read_text()
    assert text.count("\nqos ") == 8 and "qos osfp4-p2 mlx5_0  # rail 1" in text
    assert "--trust dscp" in text and "--dscp2prio set,26,3 --dscp2prio set,48,6" in text
    assert "--pfc 0,0,0,1,0,0,0,0" in text and "--tcbw 50,0,0,50,0,0,0,0" in text
    assert "cma_roce_tos -d \"$hca\" -t 106" in text and "ecn/$point/enable/3" in text


# --- one profile for both sides --------------------------------------------------------
def test_changing_the_profile_moves_switch_and_host_together(tmp_path, monkeypatch):
    changed = roce_profile_data()
    changed.update(roce_dscp=34, roce_priority=4, roce_tc=4, roce_queue=4, pfc_priorities=[4], ets_percent={0: 60, 4: 40})
    monkeypatch.setattr(sc, "roce_profile_data", lambda: dict(changed))
    sc.roce_profile.cache_clear()
    try:
        _, plan = build_plan(SPECS / "roce-2spine-4leaf-sonic.yaml")
        out = write_outputs(plan, tmp_path, ["configs", "host-configs"])
    finally:
        sc.roce_profile.cache_clear()
    db = json.loads((out / "configs" / "leaf-001" / "config_db.json").read_text())
    assert db["DSCP_TO_TC_MAP"]["ROCE"]["34"] == "4" and db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "0"
    assert {q["pfc_enable"] for q in db["PORT_QOS_MAP"].values()} == {"4"}
    conf = (out / "host-configs" / "hgx-h100" / "nccl.conf").read_text()
    assert "NCCL_IB_TC=138\n" in conf  # 34 << 2 | ECT(0)
    qos = (out / "host-configs" / "hgx-h100" / "roce-qos.sh").read_text()
    assert "--dscp2prio set,34,4" in qos and "--pfc 0,0,0,0,1,0,0,0" in qos and "--tcbw 60,0,0,0,40,0,0,0" in qos
    assert "ecn/$point/enable/4" in qos and "enable/3" not in qos


def test_a_nos_with_a_builtin_profile_refuses_a_changed_one(tmp_path, monkeypatch):
    """NVUE's `qos roce mode lossless` is NVIDIA's profile: a changed profile must not leave
    Cumulus switches silently on the old numbers while the hosts move."""
    changed = roce_profile_data()
    changed.update(roce_dscp=34, roce_priority=4, roce_tc=4, roce_queue=4, pfc_priorities=[4], ets_percent={0: 60, 4: 40})
    monkeypatch.setattr(sc, "roce_profile_data", lambda: dict(changed))
    sc.roce_profile.cache_clear()
    try:
        _, plan = build_plan(SPECS / "roce-2spine-4leaf-cumulus.yaml")
        with pytest.raises(sc.RoceProfileMismatch, match="roce_dscp is 26.*roce_dscp 34"):
            write_outputs(plan, tmp_path, ["configs"])
    finally:
        sc.roce_profile.cache_clear()


def test_host_topology_rail_order_agrees_with_the_server_ports():
    """NCCL_IB_HCA takes rail k = the host topology's NIC nearest GPU k-1; the server's compute
    ports (servers.yaml, rail order) name their GPU and RDMA device too. Where both say, they
    must agree, or nccl.conf and the cabling would disagree silently."""
    from compiler.catalog.load import load_catalog
    from compiler.plan.facts import HostTopologyFacts
    from compiler.render.host_configs import rail_nics

    catalog = load_catalog()
    checked = 0
    for sid, topo in catalog.host_topology.items():
        if sid not in catalog.servers:  # a cloud instance's topology, for NCCL files only
            continue
        ports = catalog.servers[sid].nic_groups["compute"].ports
        nics = rail_nics(HostTopologyFacts.from_json(topo.model_dump(mode="json")), len(ports))
        assert nics is not None, f"{sid}: the host topology has not one NIC per compute port"
        assert [p.gpu for p in ports] == list(range(len(ports))), f"{sid}: compute ports not in GPU (rail) order"
        named = [p.device for p in ports]
        if all(named):
            assert [n.name for n in nics] == named, sid
            checked += 1
    assert checked >= 1  # dgx-h100 at least


# --- storage and in-band fabrics ------------------------------------------------------------
MULTI = SPECS / "h100-superpod-1su-multi-fabric.yaml"
# DGX H100 with every fabric Ethernet: RoCE compute (SONiC), storage (SONiC: RoCE), in-band
# (FRR: routing only, so not RoCE), oob (the BMC port: not the host's)
CONVERGED = """name: converged
servers: 16
server: dgx-h100
fabric: {topology: rail-optimized, switch: sn5600, speed_gbps: 400, oversubscription: "1:1", scalable_unit: 16, nos: sonic}
fabrics:
  - {name: storage, switch: sn5600, oversubscription: "1:1", nos: sonic}
  - {name: oob, switch: sn2201, oversubscription: "2:1"}
  - {name: inband, switch: sn5600, oversubscription: "1:1", nos: frr}
"""


def _networkd(root: Path) -> dict[str, dict]:
    """netplan's systemd-networkd output: interface -> address, routes (destination, gateway,
    table or None) and policy rules (from, table)."""
    out = {}
    for f in sorted((root / "run" / "systemd" / "network").glob("*.network")):
        sections = re.split(r"^\[(\w+)\]\n", f.read_text(), flags=re.M)[1:]
        nic = {"routes": [], "rules": []}
        for name, body in zip(sections[::2], sections[1::2]):
            kv = dict(line.split("=", 1) for line in body.splitlines() if "=" in line)
            if name == "Match":
                ifname = kv["Name"]
            elif name == "Network":
                nic["address"] = kv["Address"]
            elif name == "Route":
                nic["routes"].append((kv["Destination"], kv["Gateway"], kv.get("Table")))
            elif name == "RoutingPolicyRule":
                nic["rules"].append((kv["From"], kv["Table"]))
        out[ifname] = nic
    return out


def _switch_addresses(folder: Path) -> dict[str, str]:
    """server:port -> the switch's address on that cable, from every config_db.json and frr.conf."""
    out = {}
    for f in sorted(folder.glob("configs/*/config_db.json")):
        cfg = json.loads(f.read_text())
        for key in cfg["INTERFACE"]:
            if "|" in key:
                port, prefix = key.split("|")
                out[cfg["PORT"][port]["description"]] = prefix.split("/")[0]
    for f in sorted(folder.glob("configs/*/frr.conf")):
        for peer, addr in re.findall(r"^interface \S+\n description (\S+)\n ip address (\S+)/31", f.read_text(), re.M):
            out[peer] = addr
    return out


@pytest.fixture(scope="module")
def multi_out():
    return shared_plan(MULTI), shared_outputs(MULTI, ["configs", "host-configs"])


@pytest.fixture(scope="module")
def converged_out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hosts-converged")
    (folder / "converged.yaml").write_text(CONVERGED)
    _, plan = build_plan(folder / "converged.yaml")
    return plan, write_outputs(plan, folder / "out", ["configs", "host-configs"])


def _in(address: str, pools: list[str]) -> bool:
    from ipaddress import ip_network

    return any(ip_network(address, strict=False).subnet_of(ip_network(p)) for p in pools)


@pytest.mark.skipif(not shutil.which("netplan"), reason="netplan is not installed (Debian netplan.io, .ci/debian-packages)")
def test_storage_nics_of_an_infiniband_cluster_pass_netplan_generate(multi_out, tmp_path):
    """The SuperPOD example (InfiniBand compute, SONiC storage): each DGX's two storage ports
    get the odd end of their cables' /31s (the storage leaf's config_db holds the even end),
    routes to the storage pools only, a table and rule each (two NICs on the fabric)."""
    plan, folder = multi_out
    pools = [plan.fabrics["storage"].routing.pools[p] for p in ("server_links", "loopbacks")]
    assert pools == ["10.192.0.0/14", "10.198.0.0/16"]
    leaf_end = _switch_addresses(folder)
    files = sorted((folder / "host-configs" / "netplan").glob("*.yaml"))
    assert len(files) == 31
    for f in files:
        r = _netplan_generate([f], tmp_path / f.stem)
        assert r.returncode == 0, f"{f}: {r.stderr}"
        nics = _networkd(tmp_path / f.stem)
        assert list(nics) == ["slot1-p1", "slot2-p1"]  # storage only: no compute (IB), no BMC (oob)
        for k, (ifname, nic) in enumerate(nics.items(), start=1):
            ip = nic["address"].split("/")[0]
            gw = leaf_end[f"{f.stem}:{ifname}"]
            assert nic["address"].endswith("/31") and int(ip.split(".")[-1]) == int(gw.split(".")[-1]) + 1
            assert {d for d, _, _ in nic["routes"]} == set(pools) and {g for _, g, _ in nic["routes"]} == {gw}
            assert {t for _, _, t in nic["routes"]} == ({str(200 + k), None} if k == 1 else {str(200 + k)})
            assert nic["rules"] == [(ip, str(200 + k))]
    qos = (folder / "host-configs" / "dgx-h100" / "roce-qos.sh").read_text()
    assert re.findall(r"^qos (\S+) (\S+)  # (\w+)$", qos, re.M) == [("slot1-p1", '""', "storage"), ("slot2-p1", '""', "storage")]
    readme = (folder / "host-configs" / "README.md").read_text()
    assert "| dgx-h100/nccl.conf | /etc/nccl.conf |" in readme and "The compute fabric is InfiniBand" in readme


def _nccl_conf(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


def _nccl_ib_devices(value: str, devices: list[str]) -> list[str]:
    """The RDMA devices (port 1 each) NCCL takes for NCCL_IB_HCA=value, as NVIDIA/nccl reads it
    (src/transport/net_ib: a leading '^' excludes, then a leading '=' makes every entry an exact
    name; src/misc/utils.cc parseStringList/matchIfList: entries are prefixes otherwise and may
    end in :<port>)."""
    exclude = value.startswith("^")
    value = value[exclude:]
    exact = value.startswith("=")
    entries = [(e.split(":")[0], e.split(":")[1] if ":" in e else None) for e in value[exact:].split(",") if e]
    def hit(d: str) -> bool:
        return any((d == name if exact else d.startswith(name)) and port in (None, "1") for name, port in entries)
    return [d for d in devices if hit(d) != exclude]


# DGX H100 RDMA devices (../shared/reference/host-topology/dgx-h100.yaml): 8 compute ConnectX-7 in
# rail order (User Guide Table 6), and the two dual-port storage / in-band cards' ports.
DGX_H100_COMPUTE = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
DGX_H100_STORAGE = ["mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"]


def test_infiniband_compute_nccl_keeps_off_the_storage_nics(multi_out):
    """InfiniBand compute beside a RoCE storage fabric: nccl.conf names the compute HCAs in rail
    order, exactly, so NCCL takes none of the storage ConnectX-7 ports; nothing RoCE-only."""
    _, folder = multi_out
    conf = _nccl_conf(folder / "host-configs" / "dgx-h100" / "nccl.conf")
    assert conf == {"NCCL_IB_HCA": "=" + ",".join(DGX_H100_COMPUTE)}  # no GID index, TC or socket netdevs
    every = sorted(DGX_H100_COMPUTE + DGX_H100_STORAGE, key=lambda d: int(d.split("_")[1]))
    assert _nccl_ib_devices(conf["NCCL_IB_HCA"], every) == sorted(DGX_H100_COMPUTE, key=lambda d: int(d.split("_")[1]))
    # without the exact-match '=', a prefix list would take more than it names
    assert _nccl_ib_devices("mlx5_1", every) == ["mlx5_1", "mlx5_10", "mlx5_11"]


def test_infiniband_compute_without_hca_names_says_how_to_read_them(tmp_path):
    """No RDMA names for the compute ports: no NCCL_IB_HCA line (never a guess), and the file
    says how to list the InfiniBand-link-layer devices on a server."""
    (tmp_path / "lab.yaml").write_text(SINGLE_NIC_CATALOG)
    (tmp_path / "ib.yaml").write_text(
        "name: ib\nservers: 4\nserver: lab-2nic\ncatalog: lab.yaml\n"
        "fabric: {topology: rail-optimized, switch: qm9700, oversubscription: '1:1'}\n"
        "fabrics:\n  - {name: storage, switch: sn5600, oversubscription: '1:1', nos: sonic}\n")
    _, plan = build_plan(tmp_path / "ib.yaml")
    folder = write_outputs(plan, tmp_path / "out", ["host-configs"]) / "host-configs"
    text = (folder / "lab-2nic" / "nccl.conf").read_text()
    assert _nccl_conf(folder / "lab-2nic" / "nccl.conf") == {}
    assert "link_layer)\" = InfiniBand" in text and "(nic1, nic2)" in text and "the storage ones too" in text
    assert re.findall(r"^qos (\S+) ", (folder / "lab-2nic" / "roce-qos.sh").read_text(), re.M) == ["stor1"]


@pytest.mark.skipif(not shutil.which("netplan"), reason="netplan is not installed")
def test_every_fabric_routes_only_on_its_own_nics(converged_out, tmp_path):
    """RoCE compute, storage and in-band in one netplan file per server: each fabric's pools are
    reached only on that fabric's NICs (storage traffic never on a compute NIC), every table and
    rule is its NIC's own, the BMC port is not there, and RoCE QoS covers compute and storage
    (SONiC) but not in-band (FRR configs set no QoS)."""
    plan, folder = converged_out
    pools = {name: [plan.fabrics[name].routing.pools[p] for p in ("server_links", "loopbacks")]
             for name in ("compute", "storage", "inband")}
    ports = {"compute": [f"osfp{c}-p{p}" for c, p in ((4, 2), (3, 2), (3, 1), (4, 1), (1, 2), (2, 2), (2, 1), (1, 1))],
             "storage": ["slot1-p1", "slot2-p1"], "inband": ["slot1-p2", "slot2-p2"]}
    first_table = {"compute": 100, "storage": 200, "inband": 400}  # 100 x (place in the plan: compute, storage, oob, inband)
    leaf_end = _switch_addresses(folder)
    files = sorted((folder / "host-configs" / "netplan").glob("*.yaml"))
    assert len(files) == 16
    for f in files:
        r = _netplan_generate([f], tmp_path / f.stem)
        assert r.returncode == 0, f"{f}: {r.stderr}"
        nics = _networkd(tmp_path / f.stem)
        assert sorted(nics) == sorted(p for ps in ports.values() for p in ps)
        tables = []
        for fabric, names in ports.items():
            for k, ifname in enumerate(names, start=1):
                nic = nics[ifname]
                assert nic["address"].split("/")[0] != leaf_end[f"{f.stem}:{ifname}"]
                assert all(_in(d, pools[fabric]) for d, _, _ in nic["routes"]), (f, ifname, nic["routes"])
                assert {d for d, _, _ in nic["routes"]} == set(pools[fabric])
                assert nic["rules"] == [(nic["address"].split("/")[0], str(first_table[fabric] + k))]
                tables.append(first_table[fabric] + k)
        assert len(tables) == len(set(tables)) == 12
    qos = (folder / "host-configs" / "dgx-h100" / "roce-qos.sh").read_text()
    assert subprocess.run(["sh", "-n", "-c", qos]).returncode == 0
    assert [p for p, _ in re.findall(r"^qos (\S+) (\S+)  # ", qos, re.M)] == ports["compute"] + ports["storage"]
    conf = (folder / "host-configs" / "dgx-h100" / "nccl.conf").read_text()
    assert "NCCL_SOCKET_IFNAME==" + ",".join(ports["compute"]) + "\n" in conf and "slot" not in conf
    readme = (folder / "host-configs" / "README.md").read_text()
    assert "## storage fabric" in readme and "## inband fabric" in readme and "oob" not in readme


SINGLE_NIC_CATALOG = """servers:
  - id: lab-2nic
    vendor: lab
    model: two compute NICs and one storage NIC
    gpu: none
    gpus: 2
    hostname_prefix: host
    nic_groups:
      compute:
        nic: ConnectX-7 single-port OSFP
        built_in: false
        nics: 2
        speed_gbps: 400
        cage: {form_factor: OSFP, top: flat, gbps: 400}
        ports:
          - {name: nic1, cage: nic1, gpu: 0}
          - {name: nic2, cage: nic2, gpu: 1}
        port_map_confidence: vendor
      storage:
        nic: ConnectX-7 single-port OSFP
        nics: 1
        speed_gbps: 400
        cage: {form_factor: OSFP, top: flat, gbps: 400}
        ports:
          - {name: stor1, cage: stor1}
        port_map_confidence: vendor
    confidence: unconfirmed
    sources: [test fixture]
"""


@pytest.mark.skipif(not shutil.which("netplan"), reason="netplan is not installed")
def test_a_one_nic_storage_fabric_needs_no_table(tmp_path):
    (tmp_path / "lab.yaml").write_text(SINGLE_NIC_CATALOG)
    (tmp_path / "one.yaml").write_text(
        "name: one\nservers: 4\nserver: lab-2nic\ncatalog: lab.yaml\n"
        "fabric: {topology: rail-optimized, switch: sn5600, speed_gbps: 400, oversubscription: '1:1', nos: frr, tiers: 2}\n"
        "fabrics:\n  - {name: storage, switch: sn5600, oversubscription: '1:1'}\n")
    _, plan = build_plan(tmp_path / "one.yaml")
    folder = write_outputs(plan, tmp_path / "out", ["host-configs"])
    f = folder / "host-configs" / "netplan" / "host-su1-001.yaml"
    r = _netplan_generate([f], tmp_path / "root")
    assert r.returncode == 0, r.stderr
    nics = _networkd(tmp_path / "root")
    storage = plan.fabrics["storage"].routing.pools
    assert nics["stor1"]["rules"] == [] and {t for _, _, t in nics["stor1"]["routes"]} == {None}
    assert {d for d, _, _ in nics["stor1"]["routes"]} == {storage["server_links"], storage["loopbacks"]}
    assert [t for _, t in nics["nic1"]["rules"] + nics["nic2"]["rules"]] == ["101", "102"]
    # no NOS on the storage fabric: its switches are not set lossless, so its NIC gets no RoCE QoS
    qos = (folder / "host-configs" / "lab-2nic" / "roce-qos.sh").read_text()
    assert "qos stor1" not in qos and "qos nic1 " in qos


def test_servers_filled_a_matrix_at_a_time_get_their_own_nics(monkeypatch):
    """Servers of 2, 0, 1, 3 and 2 NICs, filled three servers at a time (one %-format of the
    whole file per NIC count): each file is its own NICs' blocks, as one format per NIC spells
    them, in rail order, the first NIC with the main table's routes; a server with none gets
    the plain header."""
    import numpy as np

    from compiler.render import host_configs as hc

    monkeypatch.setattr(hc, "SERVERS_AT_ONCE", 3)
    counts = [2, 0, 1, 3, 2]
    hosts = [f"gpu-{i}" for i in range(len(counts))]
    rows = [(i, k) for i, n in enumerate(counts) for k in range(1, n + 1)]
    nic = [hc.HostNic(k, f"eth{k}", f"10.0.{i}.{2 * k + 1}", f"10.0.{i}.{2 * k}", 100 + k) for i, k in rows]
    columns = hc.NicColumns(np.array([n.rail for n in nic]), np.array([n.ifname for n in nic], dtype=object),
                            np.array([n.address for n in nic], dtype=object), np.array([n.gateway for n in nic], dtype=object),
                            np.array([n.table for n in nic]), np.concatenate([[0], np.cumsum(counts)]))
    pools = ["10.0.0.0/16", "10.1.0.0/24"]
    texts = list(hc.netplan_texts(hosts, columns, pools, 9000))
    head, plain = hc.row_format(hc.NETPLAN, "header", 1), hc.row_format(hc.NETPLAN, "plain_header", 1)
    at = 0
    for host, n, text in zip(hosts, counts, texts, strict=True):
        mine = nic[at:at + n]
        at += n
        if not n:
            assert text == plain % (host,)
            continue
        expected = (head % (host,) + hc._nic_blocks(mine[:1], pools, 9000, True, True)[0]
                    + "".join(hc._nic_blocks(mine[1:], pools, 9000, True, False)))
        assert text == expected
        assert text.count("table: ") == 3 * n and text.count(f"via: {mine[0].gateway}}}") == len(pools)
        assert all(f"{x.ifname}:" in text and f"[{x.address}/31]" in text for x in mine)


def test_host_and_switch_configs_make_their_records_with_the_cyclic_gc_paused(tmp_path, monkeypatch):
    """compiler/cyclic_gc.py: a record per NIC and per port, none cyclic; with the collector on,
    each collection they set off scanned the whole process (superlinear at 524,288 GPUs). It is
    on again afterwards."""
    import gc

    from compiler import cyclic_gc
    from compiler.render import host_configs as hc
    from compiler.render import switch_configs as swc
    from compiler.render.writer import OutputDir

    seen: dict[str, bool] = {}

    def spy(name, real):
        def call(*args):
            seen.setdefault(name, gc.isenabled())
            return real(*args)
        return call

    monkeypatch.setattr(hc, "nic_columns", spy("nics", hc.nic_columns))
    monkeypatch.setattr(swc, "switch_configs", spy("switches", swc.switch_configs))
    _, plan = build_plan(SPECS / "lab-3tier-frr.yaml")
    enabled = gc.isenabled()
    gc.enable()
    try:
        with OutputDir(tmp_path / "out") as out:
            hc.render(plan, None, out)
            swc.render(plan, None, out)
        assert seen == {"nics": False, "switches": False} and gc.isenabled()
        with cyclic_gc.paused():
            assert not gc.isenabled()
    finally:
        (gc.enable if enabled else gc.disable)()
    assert list((tmp_path / "out" / "host-configs" / "netplan").glob("*.yaml")) and list((tmp_path / "out" / "configs").glob("*/frr.conf"))
