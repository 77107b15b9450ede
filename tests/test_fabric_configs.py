"""Switch configs of Ethernet extra fabrics (spec `fabrics[].nos`, `fabrics[].addressing`):
each fabric gets its own RFC 7938 routing plan on its own view and its configs pass the
same real consumers as the compute fabric's (vtysh -C for frr.conf, SONiC YANG through
libyang for config_db.json, the NVUE shape for startup.yaml); pools of different fabrics
may not overlap; compute configs keep their bytes."""

from __future__ import annotations

import json
import shutil
from ipaddress import IPv4Address, IPv4Network

import jsonschema
import pytest
import yaml

from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan, write_outputs
from compiler.plan.fabrics import fabric_plan
from compiler.plan.serialize import plan_from_json, plan_json_text

from .conftest import SPECS, cli_in_process, plan_from_text, shared_outputs, shared_plan, tree_bytes

from .test_switch_configs import _nvue_shape, _OnOffLoader, _vtysh_check

MULTI = SPECS / "h100-superpod-1su-multi-fabric.yaml"
# InfiniBand compute (as the SuperPOD example) plus an Ethernet storage fabric: {storage} is filled in.
IB_PLUS = """name: {name}
servers: 31
server: dgx-h100
fabric: {{topology: rail-optimized, switch: qm9700, oversubscription: "1:1", scalable_unit: 32}}
fabrics:
  - {{name: storage, switch: sn5600, oversubscription: "1:1", {storage}}}
  - {{name: oob, switch: sn2201, oversubscription: "2:1", {oob}}}
"""
ROCE = SPECS / "roce-2spine-4leaf-frr.yaml"


def _write(tmp_path, name, storage="nos: frr", oob="tiers: auto"):
    path = tmp_path / f"{name}.yaml"
    path.write_text(IB_PLUS.format(name=name, storage=storage, oob=oob))
    _, plan = build_plan(path)
    return plan, write_outputs(plan, tmp_path / "out")


@pytest.fixture(scope="module")
def example():
    return shared_plan(MULTI), shared_outputs(MULTI)


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """storage as one FRR switch, as a two-tier FRR Clos (BGP peers), as a two-tier SONiC
    Clos, unnumbered FRR; oob on Cumulus (one switch)."""
    out = {}
    for key, storage, oob in (
        ("frr1", "nos: frr, homing: single", "tiers: auto"),
        ("frr2", "nos: frr, tiers: 2", "tiers: auto"),
        ("sonic2", "nos: sonic, tiers: 2", "tiers: auto"),
        ("unnumbered", "nos: frr, tiers: 2, addressing: {peering: unnumbered}", "tiers: auto"),
        ("cumulus", "nos: cumulus, tiers: 2", "nos: cumulus"),
    ):
        out[key] = _write(tmp_path_factory.mktemp(key), f"mf-{key}", storage, oob)
    return out


def _configs(folder, name):
    files = sorted(folder.glob(f"configs/*/{name}"))
    assert files, f"no {name} under {folder}"
    return files


# --- the committed example: InfiniBand compute, SONiC storage -----------------------------
def test_example_writes_storage_configs_only(example):
    plan, folder = example
    folders = sorted(p.name for p in (folder / "configs").iterdir())
    assert folders == ["storage-su1-leaf-r1", "storage-su1-leaf-r2"]  # compute is InfiniBand, oob names no NOS
    r = plan.fabrics["storage"].routing
    view = fabric_plan(plan, "storage")
    assert view.routing is r and len(r.loopback) == len(view.devices) and len(r.link_net) == len(view.links) == 62
    assert plan.routing is None  # the compute fabric is InfiniBand


def test_example_storage_config_db(example, sonic_yang):
    _, folder = example
    cfg = json.loads((folder / "configs/storage-su1-leaf-r1/config_db.json").read_text())
    assert sonic_yang.validate(cfg) == []
    assert cfg["DEVICE_METADATA"]["localhost"]["bgp_asn"] == "64512"
    assert "BGP_NEIGHBOR" not in cfg  # no spine tier: no fabric peers (JSON holds no comment)
    # dual-homed: this leaf takes storage NIC 1 of each of the 31 DGX
    assert len(cfg["PORT"]) == 31 and all(p["speed"] == "400000" for p in cfg["PORT"].values())
    assert list(cfg["LOOPBACK_INTERFACE"])[1] == "Loopback0|10.198.0.1/32"
    subnets = [k.split("|")[1] for k in cfg["INTERFACE"] if "|" in k]
    assert len(subnets) == 31 and all(IPv4Network(s, strict=False).subnet_of(IPv4Network("10.192.0.0/14")) for s in subnets)


def test_plan_json_records_each_fabric_routing(example):
    plan, folder = example
    data = json.loads((folder / "plan.json").read_text())
    jsonschema.validate(data, json.loads((folder / "plan.schema.json").read_text()))
    # oob is Ethernet too: its addresses are planned (plan only, no NOS named: no configs)
    assert "addressing" not in data and list(data["fabric_addressing"]) == ["storage", "oob"]
    assert data["fabric_addressing"]["oob"]["nos"] is None
    st = data["fabric_addressing"]["storage"]
    assert st["nos"] == "sonic" and st["pools"]["loopbacks"] == "10.198.0.0/16"
    # management addresses from the OOB network: its leaf's subnet 10.207.0.0/26 (gateway .1),
    # host port p at .(2 + p); BMCs hold swp1-32, then the 12 compute switches, then these two
    assert st["devices"]["rows"] == [["storage-su1-leaf-r1", "10.198.0.1", 64512, "10.207.0.46"],
                                     ["storage-su1-leaf-r2", "10.198.0.2", 64513, "10.207.0.47"]]
    cables = {row[0] for row in (folder / "cabling.csv").read_text().splitlines()[1:] for row in [row.split(",")]}
    assert len(st["links"]["rows"]) == 62 and {c for c, _ in st["links"]["rows"]} <= cables
    again = plan_from_json(data)  # round trip: the structure and each fabric's routing plan come back
    assert fabric_plan(again, "storage").count_by_kind() == {"storage:server-leaf": 62}
    assert plan_json_text(again).startswith('{\n  "$schema"')
    bad = json.loads(json.dumps(data))
    bad["fabric_addressing"]["storage"]["links"]["rows"][0][1] = "10.192.0.0/30"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, json.loads((folder / "plan.schema.json").read_text()))


# --- the same real consumers as the compute fabric ------------------------------------------
@pytest.mark.skipif(not shutil.which("vtysh"), reason="FRR's vtysh is not installed (Debian package frr, .ci/debian-packages)")
@pytest.mark.parametrize("key", ["frr1", "frr2", "unnumbered"])
def test_storage_frr_configs_pass_vtysh(variants, key, tmp_path):
    _, folder = variants[key]
    for f in _configs(folder, "frr.conf"):
        assert f.parent.name.startswith("storage-")
        r = _vtysh_check(f, tmp_path)
        assert r.returncode == 0, f"{f}: {r.stdout}{r.stderr}"


def test_one_switch_fabric_says_it_has_no_peers(variants):
    _, folder = variants["frr1"]
    [f] = _configs(folder, "frr.conf")
    text = f.read_text()
    assert " ! no BGP fabric peers: this fabric is one switch" in text
    assert "neighbor" not in text.replace("! no BGP fabric peers", "")
    assert text.count("\ninterface swp") == 62 and "router bgp 64512\n" in text


def test_two_tier_storage_peers_within_its_fabric(variants):
    plan, folder = variants["frr2"]
    r = plan.fabrics["storage"].routing
    view = fabric_plan(plan, "storage")
    spines = [i for i, d in enumerate(view.devices) if d.role == "spine"]
    leaves = [i for i, d in enumerate(view.devices) if d.role == "leaf"]
    assert spines and leaves and {int(r.asn[i]) for i in spines} == {r.asn_range[1]}
    leaf = (folder / f"configs/{view.devices[leaves[0]].name}/frr.conf").read_text()
    peers = {line.split()[1] for line in leaf.splitlines() if " remote-as " in line}
    assert peers and all(IPv4Address(p) in IPv4Network("10.196.0.0/15") for p in peers)
    assert f"remote-as {r.asn_range[1]}" in leaf and "storage-spine-" in leaf and "dgx-" in leaf


def test_storage_sonic_configs_validate_against_yang(variants, sonic_yang):
    _, folder = variants["sonic2"]
    files = _configs(folder, "config_db.json")
    assert any("leaf" in f.parent.name for f in files) and any("spine" in f.parent.name for f in files)
    for f in files:
        cfg = json.loads(f.read_text())
        assert sonic_yang.validate(cfg) == [], f
        assert cfg["BGP_NEIGHBOR"]  # two tiers: leaves and spines peer


def test_cumulus_storage_and_oob_nvue_shape(variants):
    _, folder = variants["cumulus"]
    files = _configs(folder, "startup.yaml")
    assert {f.parent.name.split("-")[0] for f in files} == {"storage", "oob"}
    for f in files:
        text = f.read_text()
        doc = yaml.load(text, Loader=_OnOffLoader)
        assert _nvue_shape(doc) == [], f
        bgp = doc[0]["set"]["vrf"]["default"]["router"]["bgp"]
        if f.parent.name.startswith("oob-"):  # one switch: no neighbor key, a comment instead
            assert "neighbor" not in bgp and "# no BGP fabric peers" in text
        else:
            assert bgp["neighbor"]


# --- compute configs keep their bytes; pools stay apart --------------------------------------
def test_compute_configs_unchanged_beside_an_ethernet_storage_fabric(tmp_path):
    base = ROCE.read_text()
    alone = tmp_path / "alone.yaml"
    alone.write_text(base.replace("hgx-h100", "dgx-h100"))
    both = tmp_path / "both.yaml"
    both.write_text(base.replace("hgx-h100", "dgx-h100") + "fabrics:\n  - {name: storage, switch: sn5600, nos: frr}\n")
    a = write_outputs(build_plan(alone)[1], tmp_path / "a")
    b = write_outputs(build_plan(both)[1], tmp_path / "b")
    before = tree_bytes(a / "configs")
    after = tree_bytes(b / "configs")
    assert before and {k: v for k, v in after.items() if not k.startswith("storage-")} == before
    assert any(k.startswith("storage-su1-leaf-r1") for k in after)


def _spec(tmp_path, storage="", oob="", compute="switch: qm9700"):
    path = tmp_path / "spec.yaml"
    path.write_text(f"""name: bad
servers: 16
server: dgx-h100
fabric: {{topology: rail-optimized, {compute}, scalable_unit: 16}}
fabrics:
  - name: storage
    switch: sn5600
{storage}  - name: oob
    switch: sn2201
{oob}""")
    return path


def test_pools_of_two_fabrics_may_not_overlap(tmp_path):
    path = _spec(tmp_path, storage="    addressing:\n      loopbacks: 10.200.0.0/16\n")
    r = cli_in_process("compile", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    # the storage pool the user wrote is blamed (line 9), not the oob default it hits
    assert f"{path}:9:18: error: fabrics.0.addressing.loopbacks: fabric 'storage' loopbacks 10.200.0.0/16 overlaps " \
           "fabric 'oob' server_links 10.200.0.0/14" in r.stderr and "hint: give each fabric its own ranges" in r.stderr


def test_extra_pools_may_not_overlap_an_ethernet_compute_fabric(tmp_path):
    path = _spec(tmp_path, storage="    addressing: {server_links: 10.64.0.0/16}\n", compute="switch: sn5600, nos: frr")
    with pytest.raises(SpecInvalid) as exc:
        build_plan(path)
    [d] = exc.value.diagnostics
    assert d.code == "ADDRESS_POOL_OVERLAP" and d.path == "fabrics.0.addressing.server_links" and d.line == 8
    assert "overlaps fabric 'compute' server_links 10.64.0.0/10" in d.message


def test_infiniband_compute_pools_are_not_in_use(tmp_path):
    """An InfiniBand compute fabric has no IP pools: an extra fabric may use the compute defaults."""
    path = _spec(tmp_path, storage="    nos: frr\n    addressing: {loopbacks: 10.0.0.0/16, server_links: 10.64.0.0/10, "
                                   "fabric_links: 10.128.0.0/10, management: 172.16.0.0/12}\n")
    _, plan = build_plan(path)
    assert plan.fabrics["storage"].routing.pools["loopbacks"] == "10.0.0.0/16"


@pytest.mark.parametrize("oob, needles", [
    ("    nos: sonic\n", ["sn2201 does not run sonic", "use one of: cumulus", ":10:"]),  # the SN2201 runs Cumulus only (catalog)
    ("    nos: junos\n", ["fabrics.1.nos", ":10:"]),
    ("    addressing: {loopbacks: 10.0.0.0/33}\n", ["fabrics.1.addressing.loopbacks", "not an IPv4 prefix"]),
    # 10.0.0.0/8 holds the fabric's own default pools: the Addressing model's own check
    ("    addressing: {loopbacks: 10.0.0.0/8}\n", ["fabrics.1.addressing", "overlap"]),
])
def test_bad_extra_fabric_nos_or_addressing(tmp_path, oob, needles):
    path = _spec(tmp_path, oob=oob)
    r = cli_in_process("compile", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert all(n in r.stderr for n in needles), r.stderr


def test_defaults_of_every_extra_fabric_are_apart():
    from compiler.spec.model import Addressing, extra_fabric_pools

    nets = [n for i in range(8) for n in extra_fabric_pools(i).values()] + list(Addressing().pools().values())
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    assert all(n.subnet_of(IPv4Network("10.192.0.0/10")) for n in nets[:32])


def test_deterministic(example, tmp_path):
    _, folder = example
    r = cli_in_process("compile", str(MULTI), "-o", str(tmp_path))
    assert r.returncode == 0
    assert tree_bytes(tmp_path / MULTI.stem / "configs") == tree_bytes(folder / "configs")


def test_eos_one_switch_storage(tmp_path):
    """EOS: the one-switch storage config keeps EOS structure (3-space indents, `end`) and
    says in a comment that it has no fabric peers, with no peer group or address family."""
    path = tmp_path / "eos.yaml"
    path.write_text(IB_PLUS.format(name="mf-eos", storage="nos: eos, homing: single", oob="tiers: auto")
                    .replace("switch: sn5600", "switch: arista-7060x6-64pe"))
    folder = write_outputs(build_plan(path)[1], tmp_path / "out")
    [f] = _configs(folder, "startup-config")
    lines = f.read_text().splitlines()
    assert f.parent.name == "storage-leaf-001" and lines[-1] == "end"
    assert all((len(ln) - len(ln.lstrip(" "))) % 3 == 0 and "\t" not in ln for ln in lines)
    text = "\n".join(lines)
    assert "   ! no BGP fabric peers: this fabric is one switch" in text and "router bgp 64512\n" in text
    assert " neighbor " not in text and "address-family" not in text
    assert text.count("\ninterface Ethernet") == 62


def test_storage_targets_get_addressed_ports_that_pass_yang(tmp_path, sonic_yang):
    """Storage targets on the storage fabric: their switch ports are server-facing /31s
    from the storage pools, and the SONiC config still validates."""
    text = MULTI.read_text().replace("    nos: sonic\n", "    nos: sonic\n    extra_endpoints:\n      - {role: vast, count: 4, ports: 2}\n")
    spec = tmp_path / "targets.yaml"
    spec.write_text(text)
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    cfg = json.loads((tmp_path / "out/h100-superpod-1su-multi-fabric/configs/storage-su1-leaf-r1/config_db.json").read_text())
    assert sonic_yang.validate(cfg) == []
    assert len(cfg["PORT"]) == 31 + 4  # dual-homed: one NIC of each DGX, one port of each target
    subnets = [k.split("|")[1] for k in cfg["INTERFACE"] if "|" in k]
    assert len(subnets) == 35 and all(IPv4Network(s, strict=False).subnet_of(IPv4Network("10.192.0.0/14")) for s in subnets)


# --- the management network: each leaf holds the gateway of the subnet it serves -------------
def _management_facts(plan):
    """Per management leaf, from the plan's one record of it (design.fabrics.oob.management_network
    and management_ports): (gateway/prefix, VLAN, the ports it serves as 'device:port')."""
    oob = plan.fabrics["oob"].design
    network, cords = oob["management_network"], oob["management_ports"]
    served: dict[str, set[str]] = {}
    for server, port, leaf, _ in network["bmc"]["rows"]:
        served.setdefault(leaf, set()).add(f"{server}:{port}")
    col = {c: k for k, c in enumerate(cords["columns"])}
    for row in cords["rows"]:
        served.setdefault(row[col["leaf"]], set()).add(f"{row[col['switch']]}:{row[col['port']]}")
    return {leaf: (f"{gateway}/{network['prefix']}", network["vlan"], served.get(leaf, set()))
            for leaf, _, gateway in network["subnets"]["rows"]}


def test_oob_leaf_holds_the_gateway_every_host_it_serves_points_at(variants):
    """Cumulus OOB leaf: an SVI in one access VLAN with its subnet's gateway, every BMC and
    switch management port it serves an access port of that VLAN, and every served switch's
    eth0 routes via that same address (one figure, read from the plan's management_network)."""
    plan, folder = variants["cumulus"]
    facts = _management_facts(plan)
    assert list(facts) == ["oob-leaf-001"]
    for leaf, (gateway, vlan, served) in facts.items():
        body = yaml.load((folder / f"configs/{leaf}/startup.yaml").read_text(), Loader=_OnOffLoader)[0]["set"]
        ifaces = body["interface"]
        assert ifaces[f"vlan{vlan}"] == {"type": "svi", "vlan": vlan, "ip": {"address": {gateway: {}}}}
        assert body["bridge"] == {"domain": {"br_default": {"vlan": {str(vlan): {}}}}}
        members = {i["description"] for i in ifaces.values()
                   if i.get("bridge", {}).get("domain", {}).get("br_default", {}).get("access") == vlan}
        storage = sum(d.role != "server" for d in fabric_plan(plan, "storage").devices)
        assert members == served and len(served) == 31 + 12 + storage  # 31 BMCs, 8 + 4 QM9700, the storage Clos
        assert not any("ip" in i for i in ifaces.values() if "bridge" in i)  # members are not routed
        # Cumulus runs adaptive routing on Spectrum-4 only: not on the SN2201 (Spectrum-1), whose
        # NVUE would refuse it; the storage SN5600s have it, and the plan says both
        assert "adaptive-routing" not in body["router"] and not any("router" in i for i in ifaces.values())
        assert not plan.fabrics["oob"].routing.adaptive_routing and plan.fabrics["storage"].routing.adaptive_routing
        # the subnet is redistributed toward the site network (the spines, where there are)
        rules = body["router-policy"]["prefix-list"]["CLUSTERC-LOCAL"]["rule"].values()
        subnet = str(IPv4Network(gateway, strict=False))
        assert any(subnet in r["match"] for r in rules)
        # the storage switches (Cumulus here) point their eth0 at it
        for row in plan.fabrics["oob"].design["management_ports"]["rows"]:
            if row[0] == "storage" and row[3] == leaf:
                served_cfg = yaml.load((folder / f"configs/{row[1]}/startup.yaml").read_text(), Loader=_OnOffLoader)[0]["set"]
                assert served_cfg["interface"]["eth0"]["ip"]["address"] == {f"{row[5]}/{gateway.split('/')[1]}": {}}
                via = served_cfg["vrf"]["mgmt"]["router"]["static"]["0.0.0.0/0"]["via"]
                assert list(via) == [gateway.split("/")[0]]
        # and every BMC address is a host of that subnet, not the gateway
        net = IPv4Network(gateway, strict=False)
        bmcs = [row[3] for row in plan.fabrics["oob"].design["management_network"]["bmc"]["rows"] if row[2] == leaf]
        assert len(bmcs) == 31 and all(IPv4Address(a) in net and f"{a}/{net.prefixlen}" != gateway for a in bmcs)


def _oob_leaf_config(plan, nos):
    """The OOB leaf's structured config, spelled for another NOS (no 1G management switch of
    the catalog runs SONiC, EOS or FRR: the templates are exercised on the Cumulus plan's leaf,
    its ports named as that NOS names a 48 + 4 port panel)."""
    import dataclasses

    from compiler.render.structured_config import switch_configs

    view = fabric_plan(plan, "oob")
    rename = {"sonic": lambda k: f"Ethernet{k - 1}", "eos": lambda k: f"Ethernet{k}", "frr": lambda k: f"swp{k}"}[nos]
    switches = {d.layout for d in view.devices if d.role != "server"}
    names = {lid: tuple(rename(k + 1) for k in range(len(view.layouts[lid]))) for lid in switches}
    routing = dataclasses.replace(view.routing, port_names={**view.routing.port_names, nos: names})
    [config] = [c for c in switch_configs(dataclasses.replace(view, routing=routing, _memo={}), nos) if c.access]
    return config


def test_oob_leaf_gateway_in_sonic_config_db_validates_against_yang(variants, sonic_yang):
    from compiler.render.switch_configs import render_switch

    plan, _ = variants["cumulus"]
    [(gateway, vlan, served)] = _management_facts(plan).values()
    config = _oob_leaf_config(plan, "sonic")
    cfg = json.loads(render_switch(config)["config_db.json"])
    sonic_yang.require(("VLAN", "VLAN_MEMBER", "VLAN_INTERFACE"))
    assert sonic_yang.validate(cfg) == []
    assert cfg["VLAN"] == {f"Vlan{vlan}": {"vlanid": str(vlan), "admin_status": "up"}}
    assert cfg["VLAN_INTERFACE"] == {f"Vlan{vlan}": {}, f"Vlan{vlan}|{gateway}": {}}
    members = {k.split("|")[1] for k, v in cfg["VLAN_MEMBER"].items() if v == {"tagging_mode": "untagged"}}
    assert {cfg["PORT"][m]["description"] for m in members} == served
    assert not members & {k.split("|")[0] for k in cfg["INTERFACE"]}  # a VLAN member is no routed interface
    bad = json.loads(json.dumps(cfg))
    bad["VLAN_MEMBER"][f"Vlan{vlan}|Ethernet999"] = {"tagging_mode": "untagged"}
    assert any("leafref" in e or "Ethernet999" in e for e in sonic_yang.validate(bad))  # the gate can fail


def test_oob_leaf_gateway_in_eos_and_frr(variants, tmp_path):
    from compiler.render.switch_configs import render_switch

    plan, _ = variants["cumulus"]
    [(gateway, vlan, served)] = _management_facts(plan).values()
    eos = render_switch(_oob_leaf_config(plan, "eos"))["startup-config"]
    assert f"\nvlan {vlan}\n" in eos and f"\ninterface Vlan{vlan}\n   ip address {gateway}\n" in eos
    blocks = [b for b in eos.split("\n!\n") if b.startswith("interface Ethernet")]
    access = [b for b in blocks if f"   switchport access vlan {vlan}" in b]
    assert {b.split("   description ")[1].split("\n")[0] for b in access} == served
    assert all("no switchport" not in b and "ip address" not in b for b in access)
    assert all((len(ln) - len(ln.lstrip(" "))) % 3 == 0 for ln in eos.splitlines())  # EOS indents by 3
    frr = render_switch(_oob_leaf_config(plan, "frr"))["frr.conf"]
    assert f"\ninterface vlan{vlan}\n ip address {gateway}\nexit\n" in frr
    if shutil.which("vtysh"):
        path = tmp_path / "frr.conf"
        path.write_text(frr)
        r = _vtysh_check(path, tmp_path)
        assert r.returncode == 0, r.stdout + r.stderr
