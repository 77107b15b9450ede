"""Clos leaves at two speeds (fabric.uplink_speed_gbps): an SN5600 leaf with 400G to the
hosts in 2 x 400G cages and 800G to the spines, a cage each. Counts computed by hand in
specs/spectrum-x-h100-2su.yaml's comment; metamorphic relations against the same fabric
at one speed; every NOS's ports by their own speed (SONiC through libyang); bad input."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess

import pytest
import yaml

from compiler.check import run_checks
from compiler.diagnostics import SpecInvalid
from compiler.expand.sizing import LeafPorts, PortSplit, SizingError
from compiler.pipeline import build_plan, write_outputs
from compiler.plan.bom import bill_of_materials
from compiler.plan.serialize import plan_from_json, plan_json_text
from compiler.render.summary import summarize
from compiler.spec.ratio import Ratio

from .conftest import ROOT, SPECS, cli_in_process, shared_checks, shared_plan


EXAMPLE = SPECS / "spectrum-x-h100-2su.yaml"
SN5600_LANE_GBPS = 100  # hardware.md section 2: 64 x 800GbE OSFP, 100G per lane (8 SerDes per cage)


def _spec_text(**fabric) -> str:
    """The example spec with fabric keys replaced (None removes a key)."""
    data = yaml.safe_load(EXAMPLE.read_text())
    for k, v in fabric.items():
        if v is None:
            data["fabric"].pop(k, None)
        else:
            data["fabric"][k] = v
    return yaml.safe_dump(data, sort_keys=False)


def _build(tmp_path, text: str, name: str = "spec.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return build_plan(path)[1]


def _links(plan, kind: str):
    sel = plan.links.kind == plan.link_kinds.index(kind)
    return sel


def _bom(plan) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in bill_of_materials(plan):
        out[line.part_number] = out.get(line.part_number, 0) + line.quantity
    return out


@pytest.fixture(scope="module")
def example():
    return shared_plan(EXAMPLE)


# --- the committed example, counted by hand -------------------------------------------

def test_example_counts_by_hand(example):
    """128 DGX H100 (8 x 400G), SU 64, rail-optimized, SN5600 at 400G down / 800G up, 1:1."""
    plan = example
    s = summarize(plan, shared_checks(plan))
    # leaves: 2 SUs x 8 rails; each leaf 64 x 400G down (32 cages) + 64 x 400G / 800G = 32 up (32 cages)
    # spines: 16 x 32 uplinks = 512 at 800G over 64 ports each = 8, 32 / 8 = 4 links per pair
    assert s["switches"] == {"leaf": 16, "spine": 8}
    assert s["cables"] == {"server-leaf": 1024, "leaf-spine": 512}
    assert (s["speed_gbps"], s["uplink_speed_gbps"]) == (400, 800)
    d = plan.design
    assert d["leaf_ports"] == {"down": 64, "up": 32, "down_cages": 32, "up_cages": 32}
    assert d["leaf_spine_links_per_pair"] == 4
    assert d["uplink_speed_gbps"] == 800
    # every server link at 400G, every leaf-spine link at 800G
    assert set(plan.links.speed_gbps[_links(plan, "server-leaf")].tolist()) == {400}
    assert set(plan.links.speed_gbps[_links(plan, "leaf-spine")].tolist()) == {800}
    # 1:1 in Gb/s: 64 x 400 = 32 x 800 = 25,600 per leaf; 1,024 GPUs x 400G / 2
    assert s["oversubscription"] == {"leaf": "1:1"}
    assert s["bisection_gbps"] == {"analytic": 204_800, "worst_cut": 204_800}
    # optics: one twin-port module per cage in use: 16 leaves x 64 + 8 spines x 64 = 1,536; 128 DGX x 4 cages = 512
    # fibers: 1,024 at 400G + 512 x 2 at 800G (one per 400G optical port of the twin-port modules)
    bom = _bom(plan)
    assert {k: bom[k] for k in ("MMA4Z00-NS", "MMA4Z00-NS-FLT", "MFP7E10-N0xx")} == {
        "MMA4Z00-NS": 1536, "MMA4Z00-NS-FLT": 512, "MFP7E10-N0xx": 2048}
    assert s["transceivers"] == 2048
    assert shared_checks(plan).ok


def test_example_leaf_panel(example):
    """Downlinks fill cages 1-32 at 2 x 400G, uplinks cages 33-64 at 800G, one each."""
    plan = example
    leaf = next(d for d in plan.devices if d.name == "su1-leaf-r1")
    ports = plan.layouts[leaf.layout].ports
    assert len(ports) == 32 * 2 + 32
    assert [(p.name, p.cage, p.lane, p.speed_gbps) for p in ports[:2]] == [("swp1s0", "1", 1, 400), ("swp1s1", "1", 2, 400)]
    assert [(p.name, p.cage, p.speed_gbps) for p in ports[64:66]] == [("swp33", "33", 800), ("swp34", "34", 800)]
    spine = next(d for d in plan.devices if d.name == "spine-01")
    assert {p.speed_gbps for p in plan.layouts[spine.layout].ports} == {800}
    rows = list(csv.DictReader(io.StringIO((write_outputs(plan, _tmp(), ["cabling"]) / "cabling.csv").read_text())))
    # one row per fiber: an 800G uplink between twin-port modules is two, `<link>.1` and `.2`
    both = [r for r in rows if r["a_device"] == "su1-leaf-r1" and r["kind"] == "leaf-spine"]
    ups = [r for r in both if r["cable_id"].endswith(".1")]
    assert [r["cable_id"] for r in both] == [f"{r['links']}.{k}" for r in ups for k in (1, 2)]
    assert [r["a_port"] for r in ups] == [f"swp{c}" for c in range(33, 65)]
    # uplink t -> spine t // 4: the first four to spine-01, its ports 1-4
    assert [(r["b_device"], r["b_port"]) for r in ups[:5]] == [("spine-01", f"swp{i}") for i in range(1, 5)] + [("spine-02", "swp1")]
    assert {r["connector"] for r in both} == {"MPO-12/APC"}
    assert {r["connector"] for r in rows if r["kind"] == "server-leaf"} == {"MPO-12/APC"}
    assert {(r["a_transceiver"], r["b_transceiver"]) for r in ups} == {("MMA4Z00-NS", "MMA4Z00-NS")}


def _tmp():
    import tempfile
    from pathlib import Path
    from .conftest import scratch_dir
    return Path(tempfile.mkdtemp(dir=scratch_dir("mixed-speed")))


def test_example_outputs_agree_and_round_trip(example):
    """cabling.csv, bom.csv and summary.json agree (fibers included); plan.json reads back byte for byte."""
    from .test_metamorphic import assert_counts_agree

    assert_counts_agree(example, yaml.safe_load(EXAMPLE.read_text()))
    text = plan_json_text(example)
    assert plan_json_text(plan_from_json(json.loads(text))) == text


# --- metamorphic: one speed written out, and 800G uplinks against 400G -----------------

@pytest.mark.parametrize("spec", ["roce-2spine-4leaf-sonic", "roce-2spine-4leaf-eos", "lab-3tier-frr",
                                  "h100-superpod-1su", "h100-roce-2su-hall"])
def test_uplink_speed_equal_to_speed_is_the_same_plan(tmp_path, spec):
    """uplink_speed_gbps: <speed_gbps> is the default written out: plan.json byte for byte."""
    data = yaml.safe_load((SPECS / f"{spec}.yaml").read_text())
    if "catalog" in data:
        data["catalog"] = str((SPECS / data["catalog"]).resolve())
    if "bom" in data and "prices" in data["bom"]:
        data["bom"]["prices"] = str((SPECS / data["bom"]["prices"]).resolve())
    plain = _build(tmp_path, yaml.safe_dump(data), "a.yaml")
    data["fabric"]["uplink_speed_gbps"] = plain.design["speed_gbps"]
    written = _build(tmp_path, yaml.safe_dump(data), "b.yaml")
    assert "uplink_speed_gbps" not in plain.design
    assert plan_json_text(written) == plan_json_text(plain)


CASES = {
    # (topology, servers, fabric keys) at 1:1, 2 and 3 tiers. Three tiers with whole pods and
    # full cores at both speeds: a pod is 64 leaves under 64 spines at 400G (128 ports, 64
    # down) and 32 under 32 at 800G (64 ports, 32 down); 128 leaves are 2 or 4 pods, 128
    # spines, and 64 cores either way (2 x 64 or 4 x 16 links from each spine's core group).
    "rail 2 tiers": ("rail-optimized", 128, {"scalable_unit": 32}),
    "fat-tree 2 tiers": ("fat-tree", 64, {}),
    "rail 3 tiers": ("rail-optimized", 1024, {"scalable_unit": 64, "tiers": 3}),
    "fat-tree 3 tiers": ("fat-tree", 1024, {"tiers": 3}),
}


@pytest.mark.parametrize("case", CASES)
def test_800g_uplinks_halve_the_uplink_cables_at_the_same_bisection(tmp_path, case):
    """1:1 at 400G down / 800G up against 1:1 at 400G: the same switches, optics, fibers and
    bisection; half the leaf-spine (and spine-core) links, each twice as fast."""
    topology, servers, keys = CASES[case]
    base = {"topology": topology, "scalable_unit": None, "nos": None, **keys}
    plans = {}
    for up in (400, 800):
        text = _spec_text(**base, uplink_speed_gbps=up).replace("servers: 128", f"servers: {servers}")
        plans[up] = _build(tmp_path, text, f"{up}.yaml")
    one, two = plans[400], plans[800]
    tiers = one.design["tiers"]
    assert tiers == two.design["tiers"] == (3 if "3 tiers" in case else 2)
    for kind in ("leaf-spine", "spine-core")[: tiers - 1]:
        assert int(_links(two, kind).sum()) * 2 == int(_links(one, kind).sum()), kind
        assert set(two.links.speed_gbps[_links(two, kind)].tolist()) == {800}
    assert int(_links(two, "server-leaf").sum()) == int(_links(one, "server-leaf").sum())
    s1, s2 = (summarize(p, run_checks(p)) for p in (one, two))
    assert s1["switches"] == s2["switches"]
    assert s1["bisection_gbps"] == s2["bisection_gbps"]
    assert s1["bisection_gbps"]["analytic"] == servers * 8 * 400 // 2
    assert s1["oversubscription"] == s2["oversubscription"] and set(s2["oversubscription"].values()) == {"1:1"}
    assert s1["transceivers"] == s2["transceivers"]
    assert _bom(one)["MFP7E10-N0xx"] == _bom(two)["MFP7E10-N0xx"]  # 800G: two fibers a link
    assert run_checks(two).ok


def test_oversubscription_is_bandwidth(tmp_path):
    """2:1 at 400G down / 800G up: a quarter as many uplinks as downlinks, measured 2:1."""
    plan = _build(tmp_path, _spec_text(oversubscription="2:1", scalable_unit=None, nos=None).replace("servers: 128", "servers: 84"))
    d = plan.design
    assert d["leaf_ports"]["down"] == 4 * d["leaf_ports"]["up"]
    s = summarize(plan, run_checks(plan))
    assert s["oversubscription"] == {"leaf": "2:1"}
    codes = {f.code for f in run_checks(plan).findings}
    assert "OVERSUBSCRIPTION_NOT_AS_REQUESTED" not in codes


def test_leaf_ports_in_cages():
    """Sizing in cages: SN5600, 64 cages, 2 x 400G or 1 x 800G each."""
    leaf = LeafPorts(cages=64, down_gbps=400, down_per_cage=2, up_gbps=800, up_per_cage=1)
    assert leaf.most(Ratio(down=1, up=1)) == PortSplit(64, 32)  # 32 + 32 cages
    assert leaf.most(Ratio(down=2, up=1)) == PortSplit(84, 21)  # 42 + 21 = 63 cages; 88 + 22 = 66 would not fit
    assert leaf.most(Ratio(down=1, up=2)) == PortSplit(42, 42)  # 21 + 42 = 63 cages: 42 x 400 : 42 x 800 is 1:2
    assert leaf.uplinks(6, Ratio(down=1, up=1)) == 3 and leaf.uplinks(5, Ratio(down=1, up=1)) is None
    assert leaf.down_step(Ratio(down=1, up=1)) == 2
    assert leaf.first_uplink(33) == 34  # 33 downlinks take 17 cages; the last one's second port stays spare
    assert leaf.ports(64) == 96 and leaf.spare(PortSplit(64, 32)) == 0
    with pytest.raises(SizingError, match="33 downlinks at 400G per leaf at 1:1 would need 16.5 uplinks at 800G"):
        leaf.split(33, Ratio(down=1, up=1), "scalable_unit")
    with pytest.raises(SizingError, match=r"44 uplinks at 800G \(44 cages\) = 88 cages"):
        leaf.split(88, Ratio(down=1, up=1), "scalable_unit")
    same = LeafPorts(cages=64, down_gbps=400, down_per_cage=2, up_gbps=400, up_per_cage=2)
    assert same.most(Ratio(down=1, up=1)) == PortSplit(64, 64) and same.first_uplink(33) == 33


def test_management_leaves_uplink_from_the_uplink_cages(tmp_path):
    # SUs of 48: a leaf 48 down + 24 up, 3 SUs = 24 leaves x 24 = 576 uplinks on 12 spines (2 per pair): 16 spare ports each
    text = _spec_text(nos=None, scalable_unit=48) + "extra_endpoints:\n  - {role: ufm, count: 2, ports: 2, attach: management-leaf}\n"
    plan = _build(tmp_path, text)
    names = [d.name for d in plan.devices]
    mgmt = names.index("mgmt-leaf-01")
    sel = plan.links.a_dev == mgmt
    ups = sel & _links(plan, "leaf-spine")
    assert int(ups.sum()) == 12 and set(plan.links.speed_gbps[ups].tolist()) == {800}  # one to each of 12 spines
    ports = plan.layouts[plan.devices[mgmt].layout].ports
    # 48 downlinks fill cages 1-24; the uplinks (the compute leaves' and this one's) start at cage 25
    assert plan.design["leaf_ports"] == {"down": 48, "up": 24, "down_cages": 24, "up_cages": 24}
    assert {ports[p].cage for p in plan.links.a_port[ups].tolist()} == {str(c) for c in range(25, 37)}
    assert run_checks(plan).ok


def test_with_a_hall_layout(tmp_path):
    """Placed in a hall: media by length per link (copper where short), counts still agree."""
    from .test_metamorphic import assert_counts_agree

    text = _spec_text(nos=None) + "layout: {rows: 4, racks_per_row: 12, leaf_placement: end-of-row}\n"
    plan = _build(tmp_path, text)
    assert plan.physical is not None
    assert_counts_agree(plan, yaml.safe_load(text))
    assert not [f for f in run_checks(plan).findings if f.severity == "error"]


# --- switch configs: every port by its own speed ---------------------------------------

@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    out = tmp_path_factory.mktemp("mixed-configs")
    folders = {}
    for nos, switch in (("sonic", "sn5600"), ("cumulus", "sn5600"), ("eos", "arista-7060x6-64pe"), ("frr", "tomahawk5")):
        path = out / f"{nos}.yaml"
        path.write_text(_spec_text(nos=nos, switch=switch).replace("spectrum-x-h100-2su", f"mixed-{nos}"))
        _, plan = build_plan(path)
        folders[nos] = write_outputs(plan, out / nos)
    return folders


def test_sonic_ports_of_two_speeds(configs, sonic_yang):
    """PORT: each port's lanes are its own SerDes (4 at 400G, 8 at 800G, 100G a lane), named
    after its first lane, disjoint; the config validates against SONiC's YANG models."""
    yang = sonic_yang
    for name, ports, by_speed in (("su1-leaf-r1", 96, {400_000: 64, 800_000: 32}), ("spine-01", 64, {800_000: 64})):
        cfg = json.loads((configs["sonic"] / "configs" / name / "config_db.json").read_text())
        assert yang.validate(cfg) == [], name
        port = cfg["PORT"]
        assert len(port) == ports
        seen: set[int] = set()
        speeds: dict[int, int] = {}
        for pname, p in port.items():
            lanes = [int(x) for x in p["lanes"].split(",")]
            assert int(p["speed"]) == len(lanes) * SN5600_LANE_GBPS * 1000, pname
            assert pname == f"Ethernet{lanes[0]}" and lanes == list(range(lanes[0], lanes[0] + len(lanes)))
            assert not seen & set(lanes)
            seen |= set(lanes)
            speeds[int(p["speed"])] = speeds.get(int(p["speed"]), 0) + 1
        assert speeds == by_speed
    leaf = json.loads((configs["sonic"] / "configs/su1-leaf-r1/config_db.json").read_text())["PORT"]
    # alias and index as SN5600's platform.json breakout_modes spell each cage's split (2x400G:
    # etp32a/etp32b, 1x800G: etp33); index is the cage, shared by the two 400G ports of one
    assert (leaf["Ethernet256"]["alias"], leaf["Ethernet256"]["index"], leaf["Ethernet256"]["speed"]) == ("etp33", "33", "800000")
    assert (leaf["Ethernet252"]["alias"], leaf["Ethernet252"]["index"], leaf["Ethernet252"]["lanes"]) == (
        "etp32b", "32", "252,253,254,255")
    assert (leaf["Ethernet248"]["alias"], leaf["Ethernet248"]["index"]) == ("etp32a", "32")
    assert (leaf["Ethernet504"]["alias"], leaf["Ethernet504"]["index"]) == ("etp64", "64")
    assert len({p["alias"] for p in leaf.values()}) == len(leaf)


def test_sonic_yang_gate_sees_a_bad_speed(configs, sonic_yang):
    yang = sonic_yang
    yang.require(("PORT",))
    cfg = json.loads((configs["sonic"] / "configs/su1-leaf-r1/config_db.json").read_text())
    cfg = {t: v for t, v in cfg.items() if t in yang.tables}  # a gate: the modelled tables suffice
    cfg["PORT"]["Ethernet256"]["speed"] = "3200000"
    assert any("range" in e for e in yang.validate(cfg))


def test_nvue_breaks_out_only_the_downlink_cages(configs):
    doc = yaml.safe_load((configs["cumulus"] / "configs/su1-leaf-r1/startup.yaml").read_text())
    iface = doc[0]["set"]["interface"]
    broken = sorted(int(k[3:]) for k, v in iface.items() if "breakout" in v.get("link", {}))
    assert broken == list(range(1, 33))
    assert all(iface[f"swp{c}"]["link"]["breakout"] == {"2x": {"lanes-per-port": 4}} for c in broken)
    assert {iface[f"swp{c}s{i}"]["link"]["speed"] for c in range(1, 33) for i in (0, 1)} == {"400G"}
    assert {iface[f"swp{c}"]["link"]["speed"] for c in range(33, 65)} == {"800G"}
    spine = yaml.safe_load((configs["cumulus"] / "configs/spine-01/startup.yaml").read_text())[0]["set"]["interface"]
    assert not any("breakout" in v.get("link", {}) for v in spine.values())


def test_eos_speeds_per_port(configs):
    text = (configs["eos"] / "configs/su1-leaf-r1/startup-config").read_text()
    blocks = dict(re.findall(r"^interface (Ethernet\S+)\n((?:   .*\n)+)", text, re.M))
    assert "   speed 400g-4\n" in blocks["Ethernet1/1"] and "   speed 400g-4\n" in blocks["Ethernet1/5"]
    assert "   speed 800g-8\n" in blocks["Ethernet33/1"] and "Ethernet33/5" not in blocks
    assert sum("speed 800g-8" in b for b in blocks.values()) == 32
    assert sum("speed 400g-4" in b for b in blocks.values()) == 64


@pytest.mark.skipif(not shutil.which("vtysh"), reason="FRR's vtysh is not installed (Debian package frr, .ci/debian-packages)")
def test_frr_configs_pass_vtysh(configs, tmp_path):
    (tmp_path / "vtysh.conf").touch()
    for name in ("su1-leaf-r1", "spine-01"):
        f = configs["frr"] / "configs" / name / "frr.conf"
        r = subprocess.run(["vtysh", "--config_dir", str(tmp_path), "-C", "-f", str(f)], capture_output=True, text=True)
        assert r.returncode == 0, f"{f}: {r.stdout}{r.stderr}"
    leaf = (configs["frr"] / "configs/su1-leaf-r1/frr.conf").read_text()
    assert leaf.count("remote-as 65534") == 32  # 32 uplinks at 800G, one BGP session each


# --- bad input: file:line, field, hint, exit 2 ------------------------------------------

BAD = {
    "below the server speed": (dict(uplink_speed_gbps=200),
                               ["uplink_speed_gbps", "uplink speed 200G is below the 400G", "800G"], "SPEC_SPEED_MISMATCH"),
    "not a switch mode": (dict(uplink_speed_gbps=1600),
                          ["uplink_speed_gbps", "sn5600 has no 1600G port mode", "sn5600 runs 100G, 200G, 400G, 800G"],
                          "SPEC_SPEED_UNSUPPORTED"),
    "spine model lacks it": (dict(spine_switch="sn5400"),
                             ["fabric.spine_switch", "sn5400 has no 800G port mode", "fabric.uplink_speed_gbps"],
                             "SPEC_SPEED_UNSUPPORTED"),
    "InfiniBand": (dict(switch="qm9700", nos=None), ["uplink_speed_gbps", "qm9700 has no 800G port mode"], "SPEC_SPEED_UNSUPPORTED"),
    "not whole uplinks": (dict(oversubscription="5:3"),
                          ["oversubscription", "would need", "uplinks at 800G"], "DESIGN_IMPOSSIBLE"),
    "unit over the cages": (dict(scalable_unit=66),
                            ["fabric.scalable_unit", "66 downlinks at 400G (33 cages) + 33 uplinks at 800G (33 cages) = 66 cages",
                             "at most 64 downlinks"], "DESIGN_IMPOSSIBLE"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_uplink_speed_is_a_clear_error(tmp_path, case):
    keys, needles, code = BAD[case]
    path = tmp_path / "spec.yaml"
    path.write_text(_spec_text(**keys))
    r = cli_in_process("compile", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert re.search(r"spec\.yaml:\d+:\d+: error", r.stderr), r.stderr
    for needle in needles:
        assert needle in r.stderr, (needle, r.stderr)
    assert not (tmp_path / "out").exists()
    with pytest.raises(SpecInvalid) as exc:
        build_plan(path)
    assert code in {d.code for d in exc.value.diagnostics}


def test_bad_uplink_speed_points_at_its_line(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(_spec_text(uplink_speed_gbps=200))
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "uplink_speed_gbps" in t)
    with pytest.raises(SpecInvalid) as exc:
        build_plan(path)
    (d,) = exc.value.diagnostics
    assert (d.line, d.path, d.code) == (line, "fabric.uplink_speed_gbps", "SPEC_SPEED_MISMATCH")


def test_endpoints_on_800g_spine_ports_are_refused(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(_spec_text() + "extra_endpoints:\n  - {role: ufm, count: 2, ports: 2, attach: spine}\n")
    with pytest.raises(SpecInvalid) as exc:
        build_plan(path)
    (d,) = exc.value.diagnostics
    assert (d.code, d.path) == ("SPEC_SPEED_MISMATCH", "extra_endpoints.0.attach")
    assert "run at 800G" in d.message and "attach: leaf" in d.hint


def test_infiniband_at_two_speeds_is_refused(tmp_path):
    """An InfiniBand switch with both speeds (a user catalog): the subnet-manager outputs have
    one link rate, so two are refused rather than written wrong."""
    cat = tmp_path / "cat.yaml"
    cat.write_text(yaml.safe_dump({"switches": [{
        "id": "ib-two", "vendor": "test", "model": "two-speed IB", "part_number": "none", "asic": "none",
        "protocol": "infiniband", "cages": 32, "cage": {"form_factor": "OSFP", "top": "finned", "gbps": 800},
        "modes": {400: {"ports_per_cage": 2, "name": "1/{cage}/{lane}"}, 800: {"ports_per_cage": 1, "name": "1/{cage}"}},
        "confidence": "unconfirmed", "sources": ["test"]}]}))
    path = tmp_path / "spec.yaml"
    path.write_text(_spec_text(switch="ib-two", nos=None) + f"catalog: {cat}\n")
    with pytest.raises(SpecInvalid) as exc:
        build_plan(path)
    (d,) = exc.value.diagnostics
    assert (d.code, d.path) == ("SPEC_UNSUPPORTED", "fabric.uplink_speed_gbps") and "Ethernet only" in d.message


# --- verify: the fabric as built, from LLDP, at both speeds -----------------------------

def test_verify_reads_a_two_speed_fabric(example):
    """LLDP tables of the example as built match it cable for cable; two leaf-spine cables
    swapped at a leaf are one finding naming both (ports at 800G named by their own mode)."""
    from compiler.verify import verify_discovery
    from compiler.verify.expected import expected_discovery

    from .verify_faults import Faults, apply, expected_findings, reported

    result = verify_discovery(example, expected_discovery(example, style="lldp"))
    assert result["ok"] and result["checked_cables"] == result["matched_cables"] == len(example.links)
    ups = [int(i) for i in (_links(example, "leaf-spine")).nonzero()[0][:2]]
    faults = Faults(swaps=[tuple(ups)])
    found = verify_discovery(example, expected_discovery(example, style="lldp", links=apply(example, faults)), scope=["all"])
    assert not found["ok"] and reported(found) == expected_findings(example, faults)


# --- traffic: static ECMP over uplinks that carry two line-rate flows -------------------

def test_static_ecmp_on_800g_uplinks_lands_where_balls_into_bins_expects(example):
    """A permutation under static ECMP: each leaf's 64 flows (63/1023 stay on it) hash onto
    32 uplinks of 800G, each carrying two 400G flows at line rate. Closed form with c = 2:
    uplink collisions alone serve u/n E[min(X, 2)], X ~ Binomial(n, 1/u); equal sharing on
    both hops gives each flow min(1, 2/max(K_up, K_down)). The measured mean lies between,
    near the equal share, as at one speed (tests/test_traffic.py)."""
    import math

    import jsonschema

    from compiler.traffic import SCHEMA, traffic_report
    from compiler.traffic.analysis import balls_into_bins

    expect = balls_into_bins(32, 64, 1024, 2)
    q = 63 / 1023
    n = round(64 * (1 - q))
    assert n == 60
    single = 32 / n * sum(min(k, 2) * math.comb(n, k) * (1 / 32) ** k * (31 / 32) ** (n - k) for k in range(n + 1))
    pmf = [math.comb(n - 1, k) * (1 / 32) ** k * (31 / 32) ** (n - 1 - k) for k in range(n)]
    equal = sum(pmf[a] * pmf[b] * min(1, 2 / (1 + max(a, b))) for a in range(n) for b in range(n))
    assert expect == {"single_hop_bound": round(q + (1 - q) * single, 4), "equal_share": round(q + (1 - q) * equal, 4),
                      "uplinks": 32, "flows_per_leaf": 64, "uplink_line_rates": 2}
    measured = []
    for seed in (1, 2, 3):
        report = traffic_report(example, ["permutation"], ["ecmp"], seed=seed)
        jsonschema.validate(report, json.loads(SCHEMA.read_text()))
        (r,) = [r for r in report["results"] if r["pattern"] == "permutation"]
        assert r["balls_into_bins"] == expect
        measured.append(r["fraction"])
    mean = sum(measured) / len(measured)
    assert expect["equal_share"] < mean < expect["single_hop_bound"], (mean, expect)


def test_schedulers_and_nccl_do_not_see_the_uplink_speed(tmp_path, example):
    """The same fabric at 400G everywhere (SU 64: 64 down + 64 up fill 128 ports; 8 spines of
    128) has the same devices and names: Slurm, Kubernetes and NCCL files are byte for byte
    the same. Only the network's inside differs."""
    one = _build(tmp_path, _spec_text(uplink_speed_gbps=None))
    assert [d.name for d in one.devices] == [d.name for d in example.devices]
    files = {}
    for name, plan in (("one", one), ("two", example)):
        folder = write_outputs(plan, tmp_path / name, ["slurm", "k8s", "nccl"])
        files[name] = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                       if p.is_file() and p.name != "manifest.json"}  # the manifest names the plan's hash
    assert files["one"] == files["two"] and any(k.startswith("slurm/") for k in files["one"])


def test_a_cage_holds_one_speed_within_its_bandwidth(example):
    """CAGE_OVER_BUDGET: a layout that put an 800G port beside a 400G one in an 800G cage
    (2 x 400G or 1 x 800G, never both) is an error of the plan, not a silent breakout."""
    import copy
    import dataclasses

    from compiler.check.invariants import cage_invariants

    assert cage_invariants(example) == []
    plan = copy.copy(example)
    leaf = next(d for d in plan.devices if d.role == "leaf")
    layout = plan.layouts[leaf.layout]
    bad = dataclasses.replace(layout, ports=(dataclasses.replace(layout.ports[0], speed_gbps=800),) + layout.ports[1:])
    plan.layouts = {**plan.layouts, leaf.layout: bad}
    (f,) = cage_invariants(plan)
    assert f.code == "CAGE_OVER_BUDGET" and f.severity == "error"
    assert "cage 1" in f.message and "400G/800G = 1200 Gb/s" in f.message and "800 Gb/s" in f.message


def test_htsim_oversubscription_is_bandwidth(example):
    """csg-htsim derives a ToR tier's uplinks as nodes x its speed / (next speed x Oversubscribed)
    (FatTreeTopology::set_custom_params): 1 here, not the port ratio 64:32, or htsim would
    build 256 uplinks for the plan's 512 and 4 spines for its 8."""
    from compiler.traffic.exports import htsim_files

    from .test_traffic_exports import _htsim_consistent

    topo = htsim_files(example)["fat_tree.topo"]
    assert "Oversubscribed 1\n" in topo and "Downlink_speed_Gbps 800\n" in topo
    assert _htsim_consistent(topo) == {"tors": 16, "aggs": 8, "cores": 0}
