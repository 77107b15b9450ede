"""Scale-up domains as plan data: NVL72 racks (72 GPUs, 9 NVLink switch trays, no field
cables) and DGX baseboards (8 GPUs), in the plan, BOM, summary, checks and collectives.

Scale-up domains are plan/scale_up.py's."""

from __future__ import annotations

import csv
import json

import pytest

from compiler.catalog import load_catalog
from compiler.pipeline import build_plan
from compiler.plan.bom import bill_of_materials
from compiler.plan.serialize import plan_from_json, plan_json_text
from compiler.render.summary import summarize
from compiler.check import run_checks

from .conftest import SPECS, cli_in_process, plan_from_text

SU = (SPECS / "gb200-nvl72-su.yaml").read_text()


@pytest.fixture(scope="module")
def su_plan():
    return plan_from_text(SU)


@pytest.fixture(scope="module")
def su_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("su")
    r = cli_in_process("compile", str(SPECS / "gb200-nvl72-su.yaml"), "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return out / "gb200-nvl72-su"


def test_catalog_has_the_nvlink_switch_tray_as_data():
    cat = load_catalog()
    tray = cat.scale_up_parts["nvlink5-switch-tray"]
    assert (tray.kind, tray.rack_units, tray.switch_asics, tray.confidence) == ("switch-tray", 1, 2, "vendor")
    assert tray.sources and tray.part_number is None  # no orderable number in our sources: not guessed
    up = cat.servers["gb200-nvl72"].scale_up
    assert (up.domain_gpus, up.switch_tray, up.switch_trays_per_domain, up.backplane) == \
        (72, "nvlink5-switch-tray", 9, "nvl72-nvlink-cartridges")
    assert cat.scale_up_parts[up.backplane].kind == "backplane"
    # DGX: the NVSwitch chips are on the baseboard, not separate parts
    assert cat.servers["dgx-h100"].scale_up.switch_tray is None


def test_a_user_catalog_naming_an_unknown_tray_is_an_input_error(tmp_path):
    (tmp_path / "cat.yaml").write_text(
        "servers:\n  - {id: my-nvl, vendor: x, model: y, gpu: z, gpus: 4, hostname_prefix: gb, confidence: unconfirmed,\n"
        "     sources: [], scale_up: {kind: nvlink5, domain_gpus: 72, switch_tray: nvlink5-switch-try,\n"
        "     switch_trays_per_domain: 9},\n"
        "     nic_groups: {compute: {nic: cx7, nics: 4, speed_gbps: 400, cage: {form_factor: OSFP, top: flat, gbps: 400},\n"
        "       ports: [{name: p1, cage: p1}, {name: p2, cage: p2}, {name: p3, cage: p3}, {name: p4, cage: p4}],\n"
        "       port_map_confidence: unconfirmed}}}\n")
    (tmp_path / "s.yaml").write_text("name: u\nservers: 18\nserver: my-nvl\ncatalog: cat.yaml\n"
                                     "fabric: {topology: rail-optimized, switch: qm9700, scalable_unit: 18}\n")
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2
    assert "nvlink5-switch-try" in r.stderr and "did you mean nvlink5-switch-tray?" in r.stderr


def test_su_plan_knows_its_nvl72_domains(su_plan):
    up = su_plan.scale_up
    assert (up.kind, up.gpus_per_domain, up.servers_per_domain, up.domains) == ("nvlink5", 72, 18, 8)
    assert up.gpus == su_plan.design["gpus"] == 576
    assert up.switch_trays_per_domain == 9 and up.gbytes_per_s_per_gpu == 1800
    assert up.domain_gbytes_per_s == 72 * 1800 == 129_600
    assert abs(up.domain_gbytes_per_s / 1000 - 130) / 130 < 0.01  # NVIDIA: "~130 TB/s per rack"
    assert [up.domain_of(i) for i in (0, 17, 18, 143)] == [0, 0, 1, 7]


def test_plan_json_round_trips_scale_up(su_plan):
    text = plan_json_text(su_plan)
    data = json.loads(text)
    assert data["scale_up"]["gpus_per_domain"] == 72 and data["scale_up"]["switch_trays_per_domain"] == 9
    again = plan_from_json(data)
    assert again.scale_up == su_plan.scale_up
    assert plan_json_text(again) == text


def test_plan_json_scale_up_follows_its_schema(su_plan):
    jsonschema = pytest.importorskip("jsonschema")
    from importlib import resources

    schema = json.loads((resources.files("compiler.plan") / "plan.schema.json").read_text())
    jsonschema.validate(json.loads(plan_json_text(su_plan)), schema)
    bad = json.loads(plan_json_text(su_plan))
    bad["scale_up"]["servers_per_domain"] = 0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_bom_has_switch_trays_and_backplanes_but_cabling_has_no_nvlink(su_plan, su_out):
    lines = [x for x in bill_of_materials(su_plan) if x.category == "scale-up"]
    assert [(x.description.split(",")[0], x.quantity) for x in lines] == [
        ("NVIDIA NVLink 5 switch tray", 72), ("NVIDIA NVL72 NVLink cable-cartridge backplane (passive copper)", 8)]
    assert all("no field cables" in x.notes for x in lines)
    rows = list(csv.DictReader(open(su_out / "bom.csv", newline="")))
    assert sum(int(r["quantity"]) for r in rows if r["category"] == "scale-up" and "switch tray" in r["description"]) == 72
    cabling = list(csv.DictReader(open(su_out / "cabling.csv", newline="")))
    assert len(cabling) == 576 + 576  # 576 compute ports to leaves + leaf-spine; nothing for NVLink
    assert not any("nvlink" in json.dumps(r).lower() for r in cabling)


def test_summary_and_checks_report_the_domain(su_out):
    s = json.loads((su_out / "summary.json").read_text())
    assert s["gpus"] == 576 and s["servers"] == 144
    assert s["scale_up"] == {"kind": "nvlink5", "wiring": "switched", "domains": 8, "gpus_per_domain": 72,
                             "servers_per_domain": 18, "gbytes_per_s_per_gpu": 1800, "domain_gbytes_per_s": 129_600,
                             "switch_trays_per_domain": 9, "switch_trays": 72}
    report = json.loads((su_out / "report" / "checks.json").read_text())
    f = report["figures"]["scale_up"]
    assert f["network_gbps_per_gpu"] == 400.0  # 4 x 400G per 4-GPU tray
    assert f["scale_up_to_network_ratio"] == 18.0  # 900 GB/s = 7,200 Gb/s each way vs 400 Gb/s
    tray = f["switch_tray_failure"]
    assert tray["trays_left"] == 8 and tray["gbytes_per_s_per_gpu_left"] == 1600.0 and tray["gpus_cut_off"] == 0
    assert abs(tray["bandwidth_left_percent"] - 100 * 8 / 9) < 0.01
    codes = {x["code"] for x in report["findings"]}
    assert {"SCALE_UP_DOMAINS", "SCALE_UP_TRAY_FAILURE"} <= codes
    hosts = list(csv.DictReader(open(su_out / "hosts.csv", newline="")))
    assert [h["nvlink_domain"] for h in hosts] == [f"nvl{i // 18 + 1:03d}" for i in range(144)]


def test_dgx_h100_domains_are_the_server():
    plan = plan_from_text((SPECS / "h100-superpod-1su.yaml").read_text())
    up = plan.scale_up
    assert (up.kind, up.gpus_per_domain, up.servers_per_domain, up.gbytes_per_s_per_gpu) == ("nvlink4", 8, 1, 900)
    assert up.domains == plan.design["servers"] and up.switch_trays_per_domain == 0
    assert not [x for x in bill_of_materials(plan) if x.category == "scale-up"]
    checks = run_checks(plan)
    f = checks.as_json()["figures"]
    assert f["scale_up"]["switch_tray_failure"] is None and f["collectives"]["gpus_per_domain"] == 8
    assert summarize(plan, checks)["scale_up"]["domain_gbytes_per_s"] == 8 * 900


def test_torus_of_chips_is_one_domain_in_the_plan_links():
    plan = plan_from_text((SPECS / "tpu-v4-pod.yaml").read_text())
    assert plan.scale_up.in_plan_links and plan.scale_up.domains == 1 and not plan.scale_up.spans_servers
    # the scale-up fabric's record: its links are the compute fabric's, all of the plan's
    up, compute = plan.fabrics["scale-up"], plan.fabrics["compute"]
    assert up.kind == "scale-up" and up.links == compute.links == range(len(plan.links)) and len(plan.links) > 0


def test_nvl72_domains_are_a_scale_up_fabric_without_cables(su_plan):
    """The NVL72 racks' NVLink is a fabric of the plan (kind scale-up, 8 domains of 18 trays),
    wired by the rack's backplane: no devices or links in the plan's tables."""
    up = su_plan.fabrics["scale-up"]
    assert (up.kind, up.domains.domains, up.design["servers_per_domain"]) == ("scale-up", 8, 18)
    assert up.servers == su_plan.fabrics["compute"].servers == range(144)
    assert up.devices == range(0) and up.links == range(0)


@pytest.mark.parametrize("size, hint", [("servers: 140", "use servers: 126 or servers: 144 (7 or 8 domains)"),
                                        ("gpus: 500", "use gpus: 432 or gpus: 504 (6 or 7 domains)"),
                                        ("servers: 10", "use servers: 18 (one domain)")])
def test_partial_nvl72_racks_are_exit_2_with_whole_rack_hints(tmp_path, size, hint):
    (tmp_path / "s.yaml").write_text(SU.replace("servers: 144", size))
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2 and "not a whole number of NVL72 racks" in r.stderr and hint in r.stderr


def test_growth_target_must_be_whole_nvl72_racks(tmp_path):
    """growth.max_servers sizes the upper tiers for the final cluster: 200 trays is 11.1 racks
    (compiled without a word before); 198 or 216 are whole racks."""
    (tmp_path / "s.yaml").write_text(SU + "growth: {max_servers: 200}\n")
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "growth.max_servers" in r.stderr and "not a whole number of NVL72 racks" in r.stderr
    assert "use max_servers: 198 or max_servers: 216 (11 or 12 domains)" in r.stderr
    (tmp_path / "ok.yaml").write_text(SU + "growth: {max_servers: 216}\n")
    assert cli_in_process("validate", str(tmp_path / "ok.yaml")).returncode == 0


def test_scalable_unit_must_hold_whole_domains(tmp_path):
    (tmp_path / "s.yaml").write_text(SU.replace("scalable_unit: 18", "scalable_unit: 27"))
    r = cli_in_process("validate", str(tmp_path / "s.yaml"))
    assert r.returncode == 2 and "a domain must sit in one SU" in r.stderr and "e.g. 18 or 36" in r.stderr
    # without a scalable_unit the default is an SU of whole racks: 18 trays (a leaf holds 32 at 1:1)
    (tmp_path / "d.yaml").write_text(SU.replace("  scalable_unit: 18\n", ""))
    plan = build_plan(tmp_path / "d.yaml")[1]
    assert plan.design["scalable_unit"] == 18
    # where no whole rack fits a leaf (16 downlinks at 1:3), the default cannot help: said so
    (tmp_path / "t.yaml").write_text(SU.replace("  scalable_unit: 18\n", "").replace('"1:1"', '"1:3"'))
    r = cli_in_process("validate", str(tmp_path / "t.yaml"))
    assert r.returncode == 2 and "(the default)" in r.stderr and "a scalable unit of 16 servers" in r.stderr


def _collectives(server: str, servers: int) -> dict:
    plan = plan_from_text(f"name: c-{server}\nservers: {servers}\nserver: {server}\n"
                          "fabric: {topology: rail-optimized, switch: qm9700, oversubscription: '1:1', scalable_unit: 18}\n"
                          "collectives: {message_sizes: [1073741824]}\n")
    return run_checks(plan).as_json()["figures"]["collectives"]


def test_hierarchical_allreduce_uses_the_nvl72_domain():
    nvl = _collectives("gb200-nvl72", 144)  # 576 GPUs, 400G per GPU
    b200 = _collectives("dgx-b200", 72)  # 576 GPUs, 400G per GPU: the same network per GPU
    h100 = _collectives("dgx-h100", 72)
    assert nvl["network_gbps_per_gpu"] == b200["network_gbps_per_gpu"] == h100["network_gbps_per_gpu"] == 400
    assert (nvl["gpus_per_domain"], nvl["domains"]) == (72, 8) and (b200["gpus_per_domain"], b200["domains"]) == (8, 72)
    n, b, h = nvl["allreduce"][0], b200["allreduce"][0], h100["allreduce"][0]
    # NVLink stage: NVL72 at 1.8 TB/s beats DGX H100's 0.9 TB/s; B200's 8-GPU stage is a little
    # shorter (7/8 vs 71/72 of the data at the same bandwidth), but the network stage moves 1/72
    # of the data per GPU instead of 1/8, so the whole all-reduce is faster on NVL72.
    assert n["hierarchical_scale_up_s"] < h["hierarchical_scale_up_s"]
    assert n["hierarchical_network_s"] * 8 < b["hierarchical_network_s"]
    assert n["hierarchical_s"] < b["hierarchical_s"] < h["hierarchical_s"]
    assert n["used"] == "hierarchical" and n["ring_s"] > n["hierarchical_s"]
    S, bw, a = 1073741824, 7200e9, 5e-6  # bytes, one-direction NVLink 5 in bit/s, default latency
    assert n["hierarchical_scale_up_s"] == pytest.approx(2 * 71 / 72 * S * 8 / bw + 2 * 71 * a, rel=1e-4)


@pytest.mark.parametrize("server, servers, g, domains, one_way_gbps", [
    ("dgx-h100", 72, 8, 72, 3600e9),  # 900 GB/s bidirectional = 450 GB/s each way
    ("gb200-nvl72", 144, 72, 8, 7200e9),  # 1,800 GB/s bidirectional
])
def test_hierarchical_allreduce_algebra_by_hand(server, servers, g, domains, one_way_gbps):
    """t = 2(g-1)/g S/B_su + 2(g-1)a (ring RS+AG in the domain) + 2(M-1)/M (S/g)/B_net + 2(M-1)a.
    The scale-up stage used to carry no latency: at 1 MiB on NVL72 that priced 142 ring steps
    at 0 s and called hierarchical fastest (73 us) where the same model gives 0.78 ms and tree wins."""
    S, a, net = 1073741824, 5e-6, 400e9
    row = _collectives(server, servers)["allreduce"][0]
    intra = 2 * (g - 1) / g * S * 8 / one_way_gbps + 2 * (g - 1) * a
    inter = 2 * (domains - 1) / domains * (S / g) * 8 / net + 2 * (domains - 1) * a
    assert row["hierarchical_scale_up_s"] == pytest.approx(intra, abs=1e-6)
    assert row["hierarchical_network_s"] == pytest.approx(inter, abs=1e-6)
    assert row["hierarchical_s"] == pytest.approx(intra + inter, abs=2e-6)
    small = plan_from_text(f"name: c\nservers: {servers}\nserver: {server}\n"
                           "fabric: {topology: rail-optimized, switch: qm9700, scalable_unit: 18}\n"
                           "collectives: {message_sizes: [1048576]}\n")
    r = run_checks(small).as_json()["figures"]["collectives"]["allreduce"][0]
    assert r["hierarchical_scale_up_s"] >= 2 * (g - 1) * a
    if server == "gb200-nvl72":
        assert r["used"] == "tree" and r["tree_s"] < r["hierarchical_s"]


def test_hierarchical_is_not_estimated_without_scale_up_bandwidth():
    """hpn-8x2x200g: an NVLink domain of 8 GPUs with no GB/s in the catalog. Its scale-up stage
    was 0 s, so hierarchical always looked fastest; now it is not estimated."""
    plan = plan_from_text("name: h\nservers: 16\nserver: hpn-8x2x200g\n"
                          "fabric: {topology: fat-tree, switch: tomahawk5, speed_gbps: 200}\n")
    rep = run_checks(plan).as_json()
    c = rep["figures"]["collectives"]
    assert c["allreduce"], "the spec sets message sizes"
    for r in c["allreduce"]:
        assert r["hierarchical_s"] is None and r["hierarchical_scale_up_s"] is None and r["used"] in ("ring", "tree")
    assert any("hierarchical not estimated" in f["message"] for f in rep["findings"] if f["code"] == "COLLECTIVE_ESTIMATE")


def test_rail_only_names_the_domain_that_carries_cross_rail_traffic():
    plan = plan_from_text((SPECS / "rail-only-h100-64.yaml").read_text())
    assert any("scale-up domain (nvlink4 domains of 8 GPUs (1 server), 900 GB/s per GPU)" in n for n in plan.notes)
    text = run_checks(plan).as_json()["figures"]["bisection"]
    assert "nvlink4 domains of 8 GPUs" in json.dumps(text)


def test_scale_up_outputs_are_deterministic(su_plan):
    again = plan_from_text(SU)
    assert plan_json_text(again) == plan_json_text(su_plan)
    assert summarize(again, run_checks(again)) == summarize(su_plan, run_checks(su_plan))


def test_extra_fabrics_do_not_order_the_nvlink_trays_again(tmp_path):
    """The trays and backplanes come with the racks: one storage fabric beside the compute
    fabric must not bill them a second time (bom.csv had 72 + 72 trays and 8 + 8 backplanes)."""
    path = tmp_path / "st.yaml"
    path.write_text(SU + "fabrics:\n  - {name: storage, switch: sn5600}\n")
    r = cli_in_process("compile", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stdout + r.stderr
    rows = list(csv.DictReader(open(tmp_path / "out" / "gb200-nvl72-su" / "bom.csv", newline="")))
    trays = [(r["fabric"], int(r["quantity"])) for r in rows if r["category"] == "scale-up" and "switch tray" in r["description"]]
    backplanes = [(r["fabric"], int(r["quantity"])) for r in rows if r["category"] == "scale-up" and "backplane" in r["description"]]
    assert trays == [("compute", 72)] and backplanes == [("compute", 8)]
    assert sum(int(r["quantity"]) for r in rows if r["category"] == "server") == 144


def test_growth_note_counts_whole_nvl72_racks(tmp_path):
    """Without growth:, the note says how far the design grows: in whole racks (18 trays), not
    by a leaf's 5 servers ("grows to 40 servers ... at 45" named sizes an NVL72 cannot have)."""
    plan = plan_from_text("name: f\nservers: 36\nserver: gb200-nvl72\n"
                          "fabric: {topology: fat-tree, switch: qm9700, servers_per_leaf: 5}\n")
    note = next(n for n in plan.notes if n.startswith("grows to"))
    # 54 trays = 11 leaves x 20 uplinks = 220 <= 4 spines x 64; 72 trays = 15 leaves: 300 > 256
    assert "grows to 54 servers without moving a cable; at 72 servers" in note, note
