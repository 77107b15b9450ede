"""Generated switch configs, checked by the real consumers that run here: FRR's own parser
(vtysh -C), SONiC's YANG models through libyang, NVUE's startup.yaml shape, and the
EOS structure; one RoCE profile in all of them; bad NOS choices rejected.

SONiC platform, hwsku and port names come from catalog/sonic.py."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan, write_outputs

from .conftest import SPECS, plan_from_text, shared_outputs


NOS_SPECS = {"frr": "roce-2spine-4leaf-frr", "sonic": "roce-2spine-4leaf-sonic", "cumulus": "roce-2spine-4leaf-cumulus",
             "eos": "roce-2spine-4leaf-eos", "sonic-unnumbered": "roce-2spine-4leaf-sonic-unnumbered",
             "lab": "lab-3tier-frr"}


@pytest.fixture(scope="module")
def compiled():
    return {key: shared_outputs(name) for key, name in NOS_SPECS.items()}


def _files(folder: Path, name: str) -> list[Path]:
    files = sorted(folder.glob(f"configs/*/{name}"))
    assert files, f"no {name} under {folder}"
    return files


# --- FRR ------------------------------------------------------------------------------
def _vtysh_check(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    (tmp_path / "vtysh.conf").touch()
    return subprocess.run(["vtysh", "--config_dir", str(tmp_path), "-C", "-f", str(path)], capture_output=True, text=True)


@pytest.mark.skipif(not shutil.which("vtysh"), reason="FRR's vtysh is not installed (Debian package frr, .ci/debian-packages)")
@pytest.mark.parametrize("key", ["frr", "sonic-unnumbered", "lab"])
def test_frr_configs_pass_vtysh(compiled, key, tmp_path):
    for f in _files(compiled[key], "frr.conf"):
        r = _vtysh_check(f, tmp_path)
        assert r.returncode == 0, f"{f}: {r.stdout}{r.stderr}"


@pytest.mark.skipif(not shutil.which("vtysh"), reason="FRR's vtysh is not installed")
def test_vtysh_gate_can_fail(compiled, tmp_path):
    good = _files(compiled["frr"], "frr.conf")[0].read_text()
    bad = tmp_path / "bad.conf"
    bad.write_text(good.replace("remote-as ", "remote-az ", 1))
    assert _vtysh_check(bad, tmp_path).returncode != 0


def test_frr_config_content(compiled):
    leaf = (compiled["frr"] / "configs/leaf-001/frr.conf").read_text()
    assert "router bgp 64512\n" in leaf and " bgp bestpath as-path multipath-relax\n" in leaf
    assert leaf.count("remote-as 65534") == 64  # 64 uplinks, both spines share the top ASN
    assert "  maximum-paths 64\n" in leaf
    unnumbered = (compiled["sonic-unnumbered"] / "configs/leaf-001/frr.conf").read_text()
    assert " neighbor Ethernet256 interface remote-as 65534\n" in unnumbered  # SONiC names in SONiC's FRR


# --- SONiC ------------------------------------------------------------------------------
@pytest.mark.parametrize("key", ["sonic", "sonic-unnumbered"])
def test_sonic_config_db_validates_against_yang(compiled, key, sonic_yang):
    for f in _files(compiled[key], "config_db.json"):
        errors = sonic_yang.validate(json.loads(f.read_text()))
        assert errors == [], f"{f}: {errors}"


def test_sonic_yang_gate_can_fail(compiled, sonic_yang):
    sonic_yang.require(("PORT", "PORT_QOS_MAP", "DSCP_TO_TC_MAP"))
    cfg = json.loads((compiled["sonic"] / "configs/leaf-001/config_db.json").read_text())
    cfg = {t: v for t, v in cfg.items() if t in sonic_yang.tables}  # a gate: the modelled tables suffice
    port = next(iter(cfg["PORT"]))
    cfg["PORT"][port]["mtu"] = "10000"
    assert any("range" in e for e in sonic_yang.validate(cfg))
    cfg["PORT"][port]["mtu"] = "9216"
    cfg["PORT_QOS_MAP"][port]["dscp_to_tc_map"] = "NO_SUCH_MAP"
    assert any("leafref" in e for e in sonic_yang.validate(cfg))


MANAGEMENT_TABLES = ("MGMT_PORT", "MGMT_INTERFACE", "MGMT_VRF_CONFIG", "SYSLOG_SERVER")


def test_sonic_management_yang_gate_can_fail(compiled, sonic_yang):
    """The management tables' models catch what SONiC would refuse: an address on a port
    MGMT_PORT does not list, and a syslog server in a management VRF that is off."""
    sonic_yang.require(MANAGEMENT_TABLES)
    cfg = json.loads((compiled["sonic"] / "configs/leaf-001/config_db.json").read_text())
    assert sonic_yang.validate(cfg) == []
    no_port = {**cfg, "MGMT_PORT": {"eth1": {"alias": "eth1", "admin_status": "up"}}}
    assert any("leafref" in e and "MGMT_PORT" in e for e in sonic_yang.validate(no_port))
    vrf_off = {**cfg, "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "false"}},
               "SYSLOG_SERVER": {"192.0.2.114": {"vrf": "mgmt"}}}
    assert any("SYSLOG_SERVER" in e for e in sonic_yang.validate(vrf_off))


def test_sonic_config_db_content(compiled):
    cfg = json.loads((compiled["sonic"] / "configs/leaf-001/config_db.json").read_text())
    # SONiC's tiers: the server-facing switch is a ToRRouter (T0), which picks the t0 buffer templates
    assert cfg["DEVICE_METADATA"]["localhost"]["type"] == "ToRRouter"
    spine = json.loads((compiled["sonic"] / "configs/spine-01/config_db.json").read_text())
    assert spine["DEVICE_METADATA"]["localhost"]["type"] == "LeafRouter"
    assert cfg["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3" and cfg["PORT"]["Ethernet0"]["alias"] == "etp1a"
    assert cfg["PORT"]["Ethernet4"]["speed"] == "400000"
    assert len(cfg["BGP_NEIGHBOR"]) == 64
    meta = cfg["DEVICE_METADATA"]["localhost"]
    assert meta["default_pfcwd_status"] == "enable"  # pfcwd starts on every lossless port at boot
    assert meta["platform"] == "x86_64-nvidia_sn5600-r0" and meta["hwsku"] == "Mellanox-SN5600-O128"  # 128 x 400G
    # no layout: SONiC's defaults, 5m to the 64 servers' NICs, 40m to the spines
    lengths = cfg["CABLE_LENGTH"]["AZURE"]
    assert sorted(lengths) == sorted(cfg["PORT"])
    assert [lengths[p] for p in cfg["PORT"] if cfg["PORT"][p]["description"].startswith("gpu-")] == ["5m"] * 64
    assert [lengths[p] for p in cfg["PORT"] if cfg["PORT"][p]["description"].startswith("spine-")] == ["40m"] * 64
    unn = json.loads((compiled["sonic-unnumbered"] / "configs/leaf-001/config_db.json").read_text())
    assert "BGP_NEIGHBOR" not in unn  # config_db cannot express unnumbered; frr.conf carries it


# Rows of sonic-buildimage 086b03bd device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini
# (Mellanox-SN5600-O128 links to it), copied by hand: (speed, cable) -> size, xon, xoff, threshold
PG_LOOKUP_SN5600 = {("400000", "5m"): ("250880", "19456", "231424", "0"), ("400000", "40m"): ("303104", "19456", "283648", "0")}
# ACS-SN5600/buffers_defaults_t0.j2 and _t1.j2: ingress_lossless_pool size for a ToRRouter and a LeafRouter
POOL_T0, POOL_T1 = "67737959", "52161690"


def test_sonic_config_db_is_lossless_after_config_reload(compiled):
    """`config reload` loads config_db.json as it is: with buffer_model traditional every buffer
    object must be in it (SONiC's buffer templates run only under load_minigraph / qos reload),
    and the PFC watchdog as `pfcwd start_default` would set it. Each port's lossless PG on the
    RoCE priority carries the lookup row of its speed and cable; queue 3 is lossless."""
    for switch, pool, ports_by_cable in (("leaf-001", POOL_T0, {"5m": 64, "40m": 64}), ("spine-01", POOL_T1, {"40m": 128})):
        cfg = json.loads((compiled["sonic"] / f"configs/{switch}/config_db.json").read_text())
        assert cfg["BUFFER_POOL"]["ingress_lossless_pool"] == {"size": pool, "type": "ingress", "mode": "dynamic"}
        assert cfg["BUFFER_POOL"]["egress_lossless_pool"]["size"] == "158229504"
        profiles, pgs = cfg["BUFFER_PROFILE"], cfg["BUFFER_PG"]
        seen = {}
        for port in cfg["PORT"]:
            cable = cfg["CABLE_LENGTH"]["AZURE"][port]
            name = pgs[f"{port}|3"]["profile"]
            assert name == f"pg_lossless_{cfg['PORT'][port]['speed']}_{cable}_profile"  # buffermgrd's own name
            p = profiles[name]
            assert (p["size"], p["xon"], p["xoff"], p["dynamic_th"]) == PG_LOOKUP_SN5600[(cfg["PORT"][port]["speed"], cable)]
            assert p["pool"] == "ingress_lossless_pool"
            assert pgs[f"{port}|0"] == {"profile": "ingress_lossy_profile"}
            assert cfg["BUFFER_QUEUE"][f"{port}|3"] == {"profile": "egress_lossless_profile"}
            assert cfg["BUFFER_QUEUE"][f"{port}|0-2"] == cfg["BUFFER_QUEUE"][f"{port}|4-6"] == {"profile": "q_lossy_profile"}
            # start_default: 128 ports in PORT -> 200 ms x (127 // 32 + 1) = 800 ms
            assert cfg["PFC_WD"][port] == {"action": "drop", "detection_time": "800", "restoration_time": "800",
                                           "pfc_stat_history": "disable"}
            seen[cable] = seen.get(cable, 0) + 1
        assert seen == ports_by_cable
        assert len(pgs) == 2 * len(cfg["PORT"]) and len(cfg["BUFFER_QUEUE"]) == 3 * len(cfg["PORT"])
        assert cfg["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "800"}
        # the RoCE class's priority group is the lossless one; CNP rides the lossy PG 0 as in SONiC's own map
        assert cfg["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["3"] == "3" and cfg["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["6"] == "0"
        assert set(cfg["PORT_QOS_MAP"][next(iter(cfg["PORT"]))]["pfc_enable"].split(",")) == {"3"}


def test_sonic_buffer_and_watchdog_yang_gate_can_fail(compiled, sonic_yang):
    """The buffer and watchdog models catch a PG naming a missing profile, a profile in a missing
    pool and a detection time below the poll interval."""
    sonic_yang.require(("BUFFER_PG", "BUFFER_PROFILE", "BUFFER_POOL", "PFC_WD"))
    cfg = json.loads((compiled["sonic"] / "configs/leaf-001/config_db.json").read_text())
    cfg = {t: v for t, v in cfg.items() if t in sonic_yang.tables}
    assert sonic_yang.validate(cfg) == []
    bad_pg = {**cfg, "BUFFER_PG": {**cfg["BUFFER_PG"], "Ethernet0|3": {"profile": "no_such_profile"}}}
    assert any("no_such_profile" in e for e in sonic_yang.validate(bad_pg))  # a leafref (or "NULL") union
    bad_pool = {**cfg, "BUFFER_PROFILE": {**cfg["BUFFER_PROFILE"], "q_lossy_profile": {"pool": "no_pool", "size": "0", "dynamic_th": "3"}}}
    assert any("no_pool" in e for e in sonic_yang.validate(bad_pool))
    bad_wd = {**cfg, "PFC_WD": {**cfg["PFC_WD"], "Ethernet0": {**cfg["PFC_WD"]["Ethernet0"], "detection_time": "400"}}}
    assert any("POLL_INTERVAL" in e for e in sonic_yang.validate(bad_wd))


def test_sonic_buffers_only_where_the_platform_is_known(tmp_path):
    """A switch with no SONiC platform in the catalog gets no guessed buffer objects; the watchdog
    is the NOS's and written everywhere."""
    plan = plan_from_text("name: t\nservers: 8\nserver: dgx-b300\nfabric: {topology: fat-tree, switch: tomahawk5, "
                          "speed_gbps: 800, oversubscription: '1:1', nos: sonic}\n")
    out = write_outputs(plan, tmp_path, ["configs"])
    for f in _files(out, "config_db.json"):
        cfg = json.loads(f.read_text())
        assert not [t for t in cfg if t.startswith("BUFFER_")] and "PFC_WD" in cfg
    assert any("no buffer tables" in n for n in plan.notes if n.startswith("sonic:"))


# (switch, port speed, a server with NICs of that speed) -> DEVICE_METADATA platform and hwsku, and
# one port of that hwsku's port_config.ini (sonic-buildimage 086b03bd device/mellanox/<platform>/
# <hwsku>/port_config.ini: name and lanes), which the PORT table must repeat. None: not evidenced,
# so left out of the file, and the compile says so.
HWSKU_CASES = [
    ("sn5600", 800, "dgx-b300", "x86_64-nvidia_sn5600-r0", "ACS-SN5600", ("Ethernet8", "8,9,10,11,12,13,14,15")),
    ("sn5600", 400, "hgx-h100", "x86_64-nvidia_sn5600-r0", "Mellanox-SN5600-O128", ("Ethernet4", "4,5,6,7")),
    ("sn5600", 200, "hpn-8x2x200g", "x86_64-nvidia_sn5600-r0", "Mellanox-SN5600-V256", ("Ethernet2", "2,3")),
    ("sn5400", 400, "hgx-h100", "x86_64-nvidia_sn5400-r0", "ACS-SN5400", ("Ethernet8", "8,9,10,11,12,13,14,15")),
    ("sn5400", 200, "hpn-8x2x200g", "x86_64-nvidia_sn5400-r0", None, None),  # the platform has ACS-SN5400 only
    ("tomahawk5", 800, "dgx-b300", None, None, None),  # S9321-64EO's lane map differs (switches.yaml)
]


# PORT name -> (lanes, alias, index) as sonic-buildimage 086b03bd writes them, copied by hand from
# device/mellanox/x86_64-nvidia_sn5600-r0/<hwsku>/port_config.ini (ACS-SN5600, Mellanox-SN5600-O128,
# Mellanox-SN5600-V256) and device/mellanox/x86_64-nvidia_sn5400-r0/ACS-SN5400/port_config.ini; the
# SN5400 at 200G has no hwsku: its aliases from that platform.json's breakout_modes (2x200G: etp1a,
# etp1b), lanes as the 2 x 4 split. Tomahawk 5: no platform, so the panel name and the cage from 1.
PORT_CONFIG_ROWS = {
    ("sn5600", 800): {"Ethernet0": ("0,1,2,3,4,5,6,7", "etp1", "1"), "Ethernet8": ("8,9,10,11,12,13,14,15", "etp2", "2"),
                      "Ethernet504": ("504,505,506,507,508,509,510,511", "etp64", "64")},
    ("sn5600", 400): {"Ethernet0": ("0,1,2,3", "etp1a", "1"), "Ethernet4": ("4,5,6,7", "etp1b", "1"),
                      "Ethernet8": ("8,9,10,11", "etp2a", "2"), "Ethernet508": ("508,509,510,511", "etp64b", "64")},
    ("sn5600", 200): {"Ethernet2": ("2,3", "etp1b", "1"), "Ethernet6": ("6,7", "etp1d", "1"),
                      "Ethernet8": ("8,9", "etp2a", "2"), "Ethernet510": ("510,511", "etp64d", "64")},
    ("sn5400", 400): {"Ethernet0": ("0,1,2,3,4,5,6,7", "etp1", "1"), "Ethernet8": ("8,9,10,11,12,13,14,15", "etp2", "2"),
                      "Ethernet504": ("504,505,506,507,508,509,510,511", "etp64", "64")},
    ("sn5400", 200): {"Ethernet4": ("4,5,6,7", "etp1b", "1"), "Ethernet8": ("8,9,10,11", "etp2a", "2")},
    ("tomahawk5", 800): {"Ethernet8": ("8,9,10,11,12,13,14,15", "Ethernet2", "2")},
}


@pytest.mark.parametrize("switch, speed, server", [c[:3] for c in HWSKU_CASES])
def test_sonic_port_alias_and_index_are_the_platforms(tmp_path, switch, speed, server):
    """PORT alias and index as the platform's port_config.ini has them: index is the cage (xcvrd
    finds a port's transceiver by it), so the ports of a split cage share it; the alias names the
    cage and the port's letter in it. Every switch of the plan (leaves and spines) carries them."""
    plan = plan_from_text(f"name: t\nservers: 8\nserver: {server}\nfabric: {{topology: fat-tree, switch: {switch}, "
                          f"speed_gbps: {speed}, oversubscription: '1:1', nos: sonic, tiers: 2}}\n")
    out = write_outputs(plan, tmp_path, ["configs"])
    rows = PORT_CONFIG_ROWS[(switch, speed)]
    checked = 0
    for f in _files(out, "config_db.json"):
        port = json.loads(f.read_text())["PORT"]
        for name in rows.keys() & port.keys():
            assert (port[name]["lanes"], port[name]["alias"], port[name]["index"]) == rows[name], (f, name)
            checked += 1
        assert len({p["alias"] for p in port.values()}) == len(port), f
    assert checked >= len(rows)  # each row met on some switch


@pytest.mark.parametrize("switch, speed, server, platform, hwsku, port", HWSKU_CASES)
def test_sonic_platform_and_hwsku_per_port_split(tmp_path, sonic_yang, switch, speed, server, platform, hwsku, port):
    plan = plan_from_text(f"name: t\nservers: 8\nserver: {server}\nfabric: {{topology: fat-tree, switch: {switch}, "
                          f"speed_gbps: {speed}, oversubscription: '1:1', nos: sonic, tiers: 2}}\n")
    out = write_outputs(plan, tmp_path, ["configs"])
    files = _files(out, "config_db.json")
    switches = sum(d.role in ("leaf", "spine") for d in plan.devices)
    assert len(files) == switches >= 3
    for f in files:
        cfg = json.loads(f.read_text())
        meta = cfg["DEVICE_METADATA"]["localhost"]
        assert (meta.get("platform"), meta.get("hwsku")) == (platform, hwsku), f
        if port:
            name, lanes = port
            assert cfg["PORT"][name]["lanes"] == lanes and cfg["PORT"][name]["speed"] == str(speed * 1000)
        assert sonic_yang.validate(cfg) == [], f
    said = [n for n in plan.notes if n.startswith("sonic:")]
    if hwsku:
        assert said == []
    else:  # leaves and spines run one speed: one note for all of them
        assert len(said) == 1 and f"{switches} {switch} switches ({speed}G ports)" in said[0] and "hwsku out" in said[0]
        assert ("platform and hwsku out" in said[0]) == (platform is None)
        # no platform: PORT index and alias follow no port_config.ini, and a platform may count cages from 0
        assert ("counts cages from 0" in said[0]) == (platform is None)


def test_sonic_cable_length_follows_the_cabling_sheet(tmp_path, sonic_yang):
    """With a layout, each port's CABLE_LENGTH is its cable's length in cabling.csv rounded up
    to the next row of SONiC's lookup table (5, 40, 300 m): never less headroom than the cable needs."""
    _, plan = build_plan(SPECS / "h100-superpod-1su-multi-fabric-hall.yaml")
    out = write_outputs(plan, tmp_path, ["configs", "cabling"])
    with open(out / "cabling.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["b_device"] == "storage-su1-leaf-r1"]
    cfg = json.loads((out / "configs/storage-su1-leaf-r1/config_db.json").read_text())
    assert sonic_yang.validate(cfg) == []
    by_peer = {p["description"]: name for name, p in cfg["PORT"].items()}  # "<server>:<its port>"
    assert len(rows) == len(cfg["CABLE_LENGTH"]["AZURE"]) == len(by_peer) == 31  # dual-homed: one NIC of each DGX
    seen = set()
    for r in rows:
        want = next(c for c in (5, 40, 300) if float(r["length_m"]) <= c)
        assert cfg["CABLE_LENGTH"]["AZURE"][by_peer[f"{r['a_device']}:{r['a_port']}"]] == f"{want}m", r["cable_id"]
        seen.add(want)
    assert seen == {5, 40}  # the hall has both: the checks above compare real lengths, not one default


# --- site settings (spec `site`) -----------------------------------------------------------
SITE = """site:
  management_gateway: 172.16.0.254
  dns_servers: [192.0.2.53]
  ntp_servers: [192.0.2.123, 192.0.2.124]
  syslog_servers: [192.0.2.114]
"""


def test_site_settings_reach_every_nos(tmp_path, sonic_yang):
    texts = {}
    for nos, name in (("frr", "frr.conf"), ("sonic", "config_db.json"), ("cumulus", "startup.yaml"), ("eos", "startup-config")):
        spec = tmp_path / f"{nos}.yaml"
        spec.write_text((SPECS / f"roce-2spine-4leaf-{nos}.yaml").read_text() + SITE)
        _, plan = build_plan(spec)
        texts[nos] = (write_outputs(plan, tmp_path / nos, ["configs"]) / "configs/leaf-001" / name).read_text()
    assert all("clusterc default" not in t for t in texts.values())
    cfg = json.loads(texts["sonic"])
    assert sonic_yang.validate(cfg) == []  # with the management models: every table below too
    mgmt = plan.routing  # eos plan: same pools and device order as every roce-2spine-4leaf spec
    # DNS_NAMESERVER has no VRF: the resolver asks from the default VRF, so its servers are forced
    # into the mgmt VRF's table (interfaces.j2: ip rule to <server> table 6000)
    assert cfg["MGMT_INTERFACE"] == {"eth0|172.26.0.1/12": {"gwaddr": "172.16.0.254", "forced_mgmt_routes": ["192.0.2.53"]}}
    assert cfg["MGMT_PORT"] == {"eth0": {"alias": "eth0", "admin_status": "up"}}
    assert cfg["MGMT_VRF_CONFIG"] == {"vrf_global": {"mgmtVrfEnabled": "true"}}
    # rsyslog would send from the default VRF, which has no route to the management network
    assert cfg["DNS_NAMESERVER"] == {"192.0.2.53": {}} and cfg["SYSLOG_SERVER"] == {"192.0.2.114": {"vrf": "mgmt"}}
    assert cfg["NTP_SERVER"] == {"192.0.2.123": {}, "192.0.2.124": {}}
    assert mgmt.site["management_gateway"] == "172.16.0.254" and not mgmt.site["gateway_is_default"]
    nvue = yaml.load(texts["cumulus"], Loader=_OnOffLoader)[0]["set"]
    # as CumulusNetworks/docs' own example: nv set vrf mgmt router static 0.0.0.0/0 via <gw> type ipv4-address
    assert nvue["vrf"]["mgmt"]["router"]["static"] == {
        "0.0.0.0/0": {"address-family": "ipv4-unicast", "via": {"172.16.0.254": {"type": "ipv4-address"}}}}
    assert nvue["service"] == {"dns": {"mgmt": {"server": {"192.0.2.53": {}}}},
                               "ntp": {"mgmt": {"server": {"192.0.2.123": {}, "192.0.2.124": {}}}},
                               "syslog": {"mgmt": {"server": {"192.0.2.114": {}}}}}
    eos = texts["eos"]
    for line in ("ip route vrf MGMT 0.0.0.0/0 172.16.0.254", "ip name-server vrf MGMT 192.0.2.53",
                 "ntp server vrf MGMT 192.0.2.123", "ntp server vrf MGMT 192.0.2.124", "logging vrf MGMT host 192.0.2.114"):
        assert f"\n{line}\n" in eos
    assert "gateway 172.16.0.254)," in texts["frr"] and "NTP 192.0.2.123 192.0.2.124" in texts["frr"]


def test_sonic_without_dns_servers_forces_no_management_routes(compiled):
    cfg = json.loads((compiled["sonic"] / "configs/leaf-001/config_db.json").read_text())
    assert "DNS_NAMESERVER" not in cfg
    assert [set(v) for v in cfg["MGMT_INTERFACE"].values()] == [{"gwaddr"}]


def test_default_gateway_is_marked_as_a_default(compiled):
    # config_db.json holds no comment: plan.json records gateway_is_default
    for nos, name in (("frr", "frr.conf"), ("cumulus", "startup.yaml"), ("eos", "startup-config")):
        assert "clusterc default" in _files(compiled[nos], name)[0].read_text()
    plan = json.loads((compiled["sonic"] / "plan.json").read_text())
    # 172.16.0.0/12: the last usable address
    assert plan["addressing"]["site"]["management_gateway"] == "172.31.255.254" and plan["addressing"]["site"]["gateway_is_default"]


@pytest.mark.parametrize("gateway,code", [("10.9.9.9", "SITE_GATEWAY_OUTSIDE_POOL"), ("172.26.0.1", "SITE_GATEWAY_IN_USE")])
def test_bad_management_gateway_is_a_clear_error(gateway, code):
    text = (SPECS / "roce-2spine-4leaf-sonic.yaml").read_text() + f"site:\n  management_gateway: {gateway}\n"
    with pytest.raises(SpecInvalid) as exc:
        plan_from_text(text, "spec.yaml")
    (d,) = exc.value.diagnostics
    assert d.code == code and d.line == 14 and "site.management_gateway" in str(exc.value), str(exc.value)


# --- NVUE -------------------------------------------------------------------------------
NVUE_TOP = {"system", "interface", "router", "vrf", "qos", "router-policy", "service", "bridge"}


def _nvue_shape(doc) -> list[str]:
    """formats.md 4.3: a list holding one `set:` mapping; known top-level keys; booleans on/off."""
    problems = []
    if not (isinstance(doc, list) and len(doc) == 1 and set(doc[0]) == {"set"}):
        return ["not a one-item list of {set: ...}"]
    body = doc[0]["set"]
    problems += [f"unknown top-level key {k}" for k in body if k not in NVUE_TOP]
    for name, iface in body["interface"].items():
        if iface.get("type") not in ("loopback", "swp", "eth", "svi"):
            problems.append(f"interface {name}: type {iface.get('type')!r}")
        # a VLAN's interface and an access port name a VLAN of the bridge domain
        vlans = set(body.get("bridge", {}).get("domain", {}).get("br_default", {}).get("vlan", {}))
        used = [iface["vlan"]] if iface.get("type") == "svi" else []
        used += [d["access"] for d in iface.get("bridge", {}).get("domain", {}).values() if "access" in d]
        problems += [f"interface {name}: VLAN {v} is not a VLAN of br_default" for v in used if str(v) not in vlans]
        if iface.get("type") == "svi" and name != f"vlan{iface.get('vlan')}":
            problems.append(f"interface {name}: an SVI is named vlan<id>")
        for addr in iface.get("ip", {}).get("address", {}):
            if "/" not in addr:
                problems.append(f"interface {name}: address {addr} without prefix length")
    bgp = body["vrf"]["default"]["router"]["bgp"]
    if bgp.get("enable") != "on" or bgp["path-selection"]["multipath"]["aspath-ignore"] != "on":
        problems.append("bgp enable/aspath-ignore must be the strings on/off")
    for peer, n in bgp.get("neighbor", {}).items():  # none on a one-switch fabric
        if n.get("type") not in ("numbered", "unnumbered") or not n.get("remote-as"):
            problems.append(f"neighbor {peer}: {n}")
        if n["type"] == "unnumbered" and peer not in body["interface"]:
            problems.append(f"unnumbered neighbor {peer} is not an interface")
    if body["qos"] != {"roce": {"enable": "on", "mode": "lossless"}}:
        problems.append(f"qos {body['qos']}")
    return problems


class _OnOffLoader(yaml.SafeLoader):
    """NVUE reads on/off as strings (YAML 1.2); PyYAML's 1.1 resolver would make them booleans."""


_OnOffLoader.yaml_implicit_resolvers = {k: [(t, r) for t, r in v if t != "tag:yaml.org,2002:bool"]
                                        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def test_nvue_startup_yaml_shape(compiled):
    files = _files(compiled["cumulus"], "startup.yaml")
    for f in files:
        assert _nvue_shape(yaml.load(f.read_text(), Loader=_OnOffLoader)) == [], f
    doc = yaml.load(files[0].read_text(), Loader=_OnOffLoader)
    assert len(doc[0]["set"]["vrf"]["default"]["router"]["bgp"]["neighbor"]) == 64


def test_nvue_splits_every_cage_it_uses_and_routes_adaptively_on_fabric_ports(compiled):
    """SN5600 at 400G: each OSFP cage splits 2 x 4 lanes (switches.yaml, 400: 2 ports per cage,
    8 SerDes per cage); swpNsM exists only once swpN has `link breakout 2x`."""
    for f in _files(compiled["cumulus"], "startup.yaml"):
        body = yaml.load(f.read_text(), Loader=_OnOffLoader)[0]["set"]
        ifaces = body["interface"]
        parents = {m.group(1) for m in (re.fullmatch(r"(swp\d+)s\d+", n) for n in ifaces) if m}
        for p in parents:
            assert ifaces[p]["link"]["breakout"] == {"2x": {"lanes-per-port": 4}}, (f, p)
        assert len(parents) == 64  # 128 used 400G ports on 64 cages (leaf: 64 down, 64 up; spine: 128 down)
        assert body["router"]["adaptive-routing"] == {"enable": "on"}
        fabric = [n for n, i in ifaces.items() if "spine" in i.get("description", "") or "leaf" in i.get("description", "")]
        assert fabric and all(ifaces[n]["router"]["adaptive-routing"] == {"enable": "on"} for n in fabric)
        assert not any("router" in i for i in ifaces.values() if i.get("description", "").startswith("gpu-"))
        # PFC watchdog on every port the plan uses (all carry the lossless class)
        used = [n for n, i in ifaces.items() if "description" in i]
        assert len(used) == 128 and all(ifaces[n]["qos"] == {"pfc-watchdog": {"state": "enable"}} for n in used)


# --- EOS --------------------------------------------------------------------------------
def test_eos_startup_config_structure(compiled):
    for f in _files(compiled["eos"], "startup-config"):
        lines = f.read_text().splitlines()
        assert lines[-1] == "end"
        for ln in lines:
            indent = len(ln) - len(ln.lstrip(" "))
            assert indent % 3 == 0, f"{f}: EOS indents by 3: {ln!r}"
            assert "\t" not in ln
        text = "\n".join(lines)
        assert "interface Ethernet1/1\n" in text or "interface Ethernet33/1\n" in text
        assert "   speed 400g-4\n" in text and "   mtu 9214\n" in text
        assert "\nqos profile ROCE\n" in text and "   priority-flow-control pause watchdog\n" in text


# --- one RoCE profile everywhere ---------------------------------------------------------
def test_one_roce_profile_in_every_nos(compiled):
    frr_like = {
        "sonic": lambda t: all(s in t for s in ('"26": "3"', '"48": "6"', '"pfc_enable": "3"', '"green_min_threshold": "153600"',
                                                '"green_max_threshold": "1536000"', '"mtu": "9216"')),
        "cumulus": lambda t: "mode: lossless" in t and "mtu: 9216" in t,
        "eos": lambda t: all(s in t for s in ("qos map dscp 26 to traffic-class 3", "qos map dscp 48 to traffic-class 6",
                                              "priority-flow-control priority 3 no-drop", "minimum-threshold 150 kbytes",
                                              "maximum-threshold 1500 kbytes", "max-mark-probability 100", "mtu 9214")),
    }
    names = {"sonic": "config_db.json", "cumulus": "startup.yaml", "eos": "startup-config"}
    for nos, ok in frr_like.items():
        for f in _files(compiled[nos], names[nos]):
            assert ok(f.read_text()), f


# --- bad NOS choices -----------------------------------------------------------------------
BASE = (SPECS / "roce-2spine-4leaf-frr.yaml").read_text()


@pytest.mark.parametrize("text,needles", [
    (BASE.replace("nos: frr", "nos: eos"), ["fabric.nos", "sn5600 does not run eos", "cumulus, sonic, frr"]),
    (BASE.replace("nos: frr", "nos: junos"), ["fabric.nos", "allowed"]),
    ((SPECS / "h100-superpod-1su.yaml").read_text().replace("  switch: qm9700\n", "  switch: qm9700\n  nos: sonic\n"), ["fabric.nos", "infiniband switch: it takes no NOS"]),
])
def test_bad_nos_is_a_clear_error(text, needles):
    with pytest.raises(SpecInvalid) as exc:
        plan_from_text(text, "spec.yaml")
    for needle in needles:
        assert needle in str(exc.value), str(exc.value)


def test_catalog_names_cannot_inject_config_lines(tmp_path):
    catalog = (SPECS / "catalogs" / "lab.yaml").read_text().replace("hostname_prefix: host", 'hostname_prefix: "host\\n router bgp 1"')
    (tmp_path / "lab.yaml").write_text(catalog)
    spec = (SPECS / "lab-3tier-frr.yaml").read_text().replace("catalogs/lab.yaml", str(tmp_path / "lab.yaml"))
    (tmp_path / "s.yaml").write_text(spec)
    with pytest.raises(SpecInvalid) as exc:
        build_plan(tmp_path / "s.yaml")
    # The hostname rules (RFC 1123) stop it first; either way nothing reaches a config.
    assert "not a valid hostname part" in str(exc.value) or "cannot go into a switch config" in str(exc.value)
    port_catalog = (SPECS / "catalogs" / "lab.yaml").read_text().replace('name: "swp{cage}s{lane0}"', 'name: "swp{cage} s{lane0}"')
    (tmp_path / "lab.yaml").write_text(port_catalog)
    with pytest.raises(SpecInvalid) as exc:
        build_plan(tmp_path / "s.yaml")
    # The catalog's own name rules reject it at load, pointing into the catalog file.
    assert "lab.yaml:" in str(exc.value) and "switches.0.modes.400.name" in str(exc.value)


def test_forked_rendering_writes_what_one_process_writes(tmp_path, monkeypatch):
    import compiler.render.switch_configs as sc

    _, plan = build_plan(SPECS / "lab-3tier-frr.yaml")
    serial = write_outputs(plan, tmp_path / "serial", ["configs"])
    monkeypatch.setattr(sc, "PARALLEL_FROM", 1)
    monkeypatch.setattr("compiler.render.parallel.os.sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert sc.share_workers(20, sc.PARALLEL_FROM) == 2
    forked = write_outputs(plan, tmp_path / "forked", ["configs"])
    files = sorted(p.relative_to(serial) for p in serial.rglob("*") if p.is_file())
    assert len(files) == 20 + 1  # 20 switch configs, and manifest.json (forked writes listed as one process lists them)
    assert files == sorted(p.relative_to(forked) for p in forked.rglob("*") if p.is_file())
    assert all((serial / f).read_bytes() == (forked / f).read_bytes() for f in files)


def test_a_cable_beyond_the_headroom_lookup_is_said_and_gets_no_lossless_pg():
    """SONiC's lookup ends at 300 m: a longer cable has no headroom size, so its port gets no
    lossless PG (never the 300 m row's, which would be too small) and the compile says so."""
    import dataclasses

    from compiler.expand.sonic_platform import _beyond_lookup
    from compiler.plan.fabrics import fabric_plan
    from compiler.render.structured_config import switch_configs

    _, plan = build_plan(SPECS / "h100-superpod-1su-multi-fabric-hall.yaml")
    view = fabric_plan(plan, "storage")
    assert _beyond_lookup(view, "storage") == []
    order = view.physical.order_m.copy()
    order[0] = 350.0
    view.physical = dataclasses.replace(view.physical, order_m=order)
    [note] = _beyond_lookup(view, "storage")
    assert "1 cable(s) longer than 300 m" in note and "no lossless priority group" in note
    # the leaf the 350 m cable lands on (storage is dual-homed: storage-su1-leaf-r1 / -r2)
    leaf = next(c for c in switch_configs(view, "sonic") if any(m > 300 for m in c.cable_lengths_m))
    by_port = dict(zip((i.name for i in leaf.interfaces), leaf.sonic_buffers.pg_lossless))
    lengths = dict(zip((i.name for i in leaf.interfaces), leaf.cable_lengths_m))
    assert [p for p, m in lengths.items() if m > 300] == [p for p, prof in by_port.items() if prof is None]
    assert sum(prof is None for prof in by_port.values()) == 1
