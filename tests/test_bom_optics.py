"""Optics in the BOM: which module each cage takes and which fiber joins two modules,
against counts worked out by hand from hardware.md and NVIDIA's LinkX pages.

Regressions for two wrong parts the BOM once ordered without a word (issue 12):
- the DGX B300's XDR 800G cage got an NDR 2 x 400G twin-port (MMS4X00-NS-FLT);
- 200G hosts on 4 x 200G twin-port switch cages got straight fibers (MFP7E10), where
  NVIDIA's 1:2 splitter fibers (MFP7E20 multimode, MFP7E40 single-mode) are needed.
"""

from __future__ import annotations

import collections
import csv
import json

import jsonschema
import numpy as np
import pytest
import yaml

from compiler.catalog import load_catalog
from compiler.check.physical import physical_findings
from compiler.expand import facts, media
from compiler.pipeline import build_plan
from compiler.plan.bom import bill_of_materials
from compiler.plan.serialize import plan_from_json, plan_json_text
from compiler.plan.views import cage_table, port_table, splitter_heads
from compiler.render.plan_json import schema_text
from compiler.render.summary import summarize

from .conftest import SPECS, outputs_of, shared_checks, shared_plan

XDR_800 = "PART NUMBER NOT PUBLISHED: XDR 800G single-port OSFP single-mode flat-top"
XDR_1600 = "PART NUMBER NOT PUBLISHED: XDR 1.6T twin-port OSFP 2x800G single-mode finned-top"


def _optics(plan) -> dict[tuple[str, str], int]:
    """(category, part) -> quantity of the BOM's transceiver and cable lines."""
    out: dict[tuple[str, str], int] = collections.Counter()
    for line in bill_of_materials(plan):
        if line.category in ("transceiver", "cable"):
            out[(line.category, line.part_number)] += line.quantity
    return dict(out)


# --- DGX B300 on Quantum-X800: XDR modules, part numbers not published ----------------

@pytest.fixture(scope="module")
def b300():
    return shared_plan("b300-xdr-1su")


def test_b300_xdr_su_orders_xdr_modules_not_ndr_ones(b300):
    """NVIDIA's B300 XDR SU (hardware.md 2, RA table): 72 DGX, 8 leaf, 4 spine Q3400,
    576 node-leaf and 576 leaf-spine links, all 800G XDR.
    - server side: 72 DGX x 8 single-port ConnectX-8 cages = 576 XDR 800G modules (one port
      each, 4 x 200G lanes); no NDR part (MMS4X00-NS-FLT is 2 x 400G at 100G lanes).
    - switch side: twin-port 1.6T cages, 2 x 800G ports each: leaves 8 x (72 down + 72 up)
      = 1,152 ports, spines 576 ports; 1,728 / 2 = 864 XDR 1.6T modules.
    - fiber: one 800G optical port at each end, so one single-mode fiber per link:
      576 + 576 = 1,152 MFP7E30.
    Neither XDR module has a published part number (hardware.md 6): the BOM says so."""
    assert _optics(b300) == {("transceiver", XDR_800): 576, ("transceiver", XDR_1600): 864,
                             ("cable", "MFP7E30-N0xx"): 1152}
    xdr = [line for line in bill_of_materials(b300) if line.category == "transceiver"]
    assert all(line.notes.startswith("part number not published") and line.unit_power_w is None for line in xdr)
    notes = summarize(b300, shared_checks(b300))["notes"]
    assert [n for n in notes if "part number not published" in n] == [
        f"BOM: 864 x transceiver: part number not published ({XDR_1600.split(': ', 1)[1]}); ask the vendor before ordering",
        f"BOM: 576 x transceiver: part number not published ({XDR_800.split(': ', 1)[1]}); ask the vendor before ordering"]


def test_b300_cabling_sheet_names_the_xdr_module_at_every_end(b300, tmp_path):
    """cabling.csv, as a CSV reader sees it: every server end an XDR 800G module, every
    switch end an XDR 1.6T twin-port; distinct (device, cage) ends per part equal the BOM."""
    target = outputs_of(b300, tmp_path, ["cabling"])
    rows = list(csv.DictReader((target / "cabling.csv").open()))
    assert len(rows) == 1152
    ends = collections.defaultdict(set)
    for r in rows:
        for side in "ab":
            ends[r[f"{side}_transceiver"]].add((r[f"{side}_device"], r[f"{side}_cage"]))
    assert {part: len(cages) for part, cages in ends.items()} == {XDR_800: 576, XDR_1600: 864}
    assert {r["a_transceiver"] for r in rows if r["kind"] == "server-leaf"} == {XDR_800}


def test_b300_plan_json_keeps_the_lane_rate(b300):
    """plan.json carries the XDR cages' 200G lanes (a serdes_gbps column on those layouts
    only), validates against its schema, and reads back to the same bill."""
    text = plan_json_text(b300)
    data = json.loads(text)
    jsonschema.validate(data, json.loads(schema_text()))
    assert data["port_layouts"]["dgx-b300/compute"]["columns"][-1] == "serdes_gbps"
    assert bill_of_materials(plan_from_json(data)) == bill_of_materials(b300)


@pytest.mark.parametrize("server, part", [
    ("dgx-b300", "XDR 800G single-port OSFP single-mode flat-top"),  # 800G XDR, 4 x 200G lanes
    ("dgx-h100", "MMS4X00-NS-FLT"),   # 2 x 400G NDR twin-port cage: unchanged
    ("dgx-b200", "MMS4X00-NS-FLT"),
    ("hgx-h100", "MMS4X00-NS400"),    # single-port 400G ConnectX-7
])
def test_server_cages_take_the_module_of_their_signalling(server, part):
    cage = load_catalog().servers[server].nic_groups["compute"].cage
    t = load_catalog().transceiver_for("smf", cage.form_factor, cage.top, cage.gbps, cage.serdes_gbps)
    assert t.id == part


def test_a_50g_lane_cage_takes_no_100g_module():
    """SN5400: 64 x 400GbE QSFP-DD of 8 x 50G lanes (hardware.md 2); the catalog has no module
    for it, so none is chosen (the BOM then says NOT IN CATALOG) rather than a 100G-lane one."""
    cage = load_catalog().switches["sn5400"].cage
    assert cage.serdes_gbps == 50
    assert all(load_catalog().transceiver_for(f, cage.form_factor, cage.top, cage.gbps, cage.serdes_gbps) is None
               for f in ("mmf", "smf"))


def test_catalog_refuses_serdes_that_do_not_fill_the_cage(tmp_path):
    from compiler.diagnostics import SpecInvalid
    text = (SPECS / "catalogs" / "lab.yaml").read_text().replace("serdes_per_cage: 8", "serdes_per_cage: 4", 1)
    (tmp_path / "cat.yaml").write_text(text)
    with pytest.raises(SpecInvalid, match="serdes_per_cage 4 x serdes_gbps 100G"):
        load_catalog(tmp_path / "cat.yaml")


# --- Alibaba HPN: 200G hosts on 4 x 200G twin-port cages take splitter fibers ----------

@pytest.fixture(scope="module")
def hpn():
    return shared_plan("alibaba-hpn-pod")


def test_hpn_200g_hosts_take_one_splitter_per_twin_port_mpo(hpn):
    """specs/alibaba-hpn-pod.yaml: 1,920 hosts x 16 NIC ports = 30,720 host links at 200G;
    240 ToRs x 60 uplinks = 14,400 ToR-aggregation links at 400G.
    - host end: a 400G QSFP112 cage with one 200G port, single-port MMA1Z00-NS400 (run at
      200G on 2 channels): 30,720 modules, one logical port per MPO.
    - ToR downlink cages: 4 x 200G on a twin-port MMA4Z00-NS (2 MPOs): two 200G ports per
      MPO. NVIDIA: a twin-port with two 1:2 splitter fibers serves four 200G ends. So one
      MFP7E20 per ToR MPO: 30,720 / 2 = 15,360 splitters (not 30,720 straight MFP7E10).
    - ToR uplink and aggregation cages: 2 x 400G twin-ports at both ends, one MPO per port:
      straight MFP7E10, 14,400.
    - twin-port modules: 30,720 / 4 + 14,400 / 2 + 14,400 / 2 = 7,680 + 7,200 + 7,200 = 22,080."""
    assert _optics(hpn) == {("transceiver", "MMA1Z00-NS400"): 30720, ("transceiver", "MMA4Z00-NS"): 22080,
                            ("cable", "MFP7E20-N0xx"): 15360, ("cable", "MFP7E10-N0xx"): 14400}


def test_hpn_each_splitter_joins_two_ports_of_one_mpo_to_two_hosts(hpn, tmp_path):
    """From cabling.csv: one row per MFP7E20 splitter (one physical cable), its two legs (the
    `links` it carries) on one ToR MPO (lanes 1-2 or 3-4 of one cage) and at two distinct
    host cages; straight rows are the 400G uplinks only."""
    target = outputs_of(hpn, tmp_path, ["cabling"])
    legs = collections.defaultdict(list)
    kinds = collections.Counter()
    with (target / "cabling.csv").open() as f:
        for r in csv.DictReader(f):
            kinds[(r["kind"], r["part_number"], r["speed_gbps"])] += 1
            if r["part_number"] == "MFP7E20-N0xx":
                lanes = [int(x) for x in r["b_lane"].split(";")]
                hosts = list(zip(r["a_device"].split(";"), r["a_cage"].split(";") * 2))
                assert len(r["links"].split(";")) == len(lanes) == 2 and ";" not in r["b_device"] + r["b_cage"]
                assert len({(lane - 1) // 2 for lane in lanes}) == 1, r  # one MPO of the ToR cage
                legs[(r["b_device"], r["b_cage"], (lanes[0] - 1) // 2)].extend(hosts[:2])
    assert kinds == {("server-leaf", "MFP7E20-N0xx", "200"): 15360, ("leaf-spine", "MFP7E10-N0xx", "400"): 14400}
    assert len(legs) == 15360
    assert all(len(pair) == 2 and len(set(pair)) == 2 for pair in legs.values())


def _hpn_with(tmp_path, **fabric):
    data = yaml.safe_load((SPECS / "alibaba-hpn-pod.yaml").read_text())
    data["fabric"].update(fabric)
    path = tmp_path / "hpn.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return build_plan(path)[1]


def test_a_named_fiber_takes_the_straight_or_splitter_form_the_ends_need(tmp_path):
    """A spec naming `mmf` everywhere still gets splitters to the 200G hosts; naming
    `mmf-split` everywhere still gets straight fibers between 2 x 400G twin-ports."""
    for named in ("mmf", "mmf-split"):
        plan = _hpn_with(tmp_path, media=named)
        by_kind = {(kind, plan.media[m]) for kind, m in zip(np.array(plan.link_kinds)[plan.links.kind].tolist(),
                                                            plan.links.media.tolist())}
        assert by_kind == {("server-leaf", "mmf-split"), ("leaf-spine", "mmf")}, named


# --- splitter reach and lengths (with a physical layout) -----------------------------

HOST_200G = """\
servers:
  - id: host-200g
    vendor: test
    model: one 200G port in a 400G OSFP cage
    gpu: none
    gpus: 1
    rack_units: 1
    power_w: 500
    hostname_prefix: host
    nic_groups:
      compute:
        nic: ConnectX-7 single-port OSFP at 200G
        nics: 1
        speed_gbps: 200
        cage: {form_factor: OSFP, top: flat, gbps: 400}
        ports:
          - {name: nic1, cage: nic1, gpu: 0}
        port_map_confidence: inferred
    confidence: inferred
    sources: [test fixture]
"""


def _hall_plan(tmp_path):
    """64 single-port 200G hosts (OSFP, so both multimode and single-mode modules exist for
    them: MMA4Z00-NS400, MMS4X00-NS400) on one Tomahawk 5 leaf with 4 x 200G down cages."""
    (tmp_path / "cat.yaml").write_text(HOST_200G)
    (tmp_path / "h.yaml").write_text(
        "name: h200\ncatalog: cat.yaml\nserver: host-200g\nservers: 64\n"
        "fabric: {topology: fat-tree, switch: tomahawk5, speed_gbps: 200, uplink_speed_gbps: 400}\n"
        "layout: {hall: DH1, rows: 2, racks_per_row: 8, rack: {height_u: 48, power_kw: 45}}\n")
    return build_plan(tmp_path / "h.yaml")[1], load_catalog(tmp_path / "cat.yaml")


def test_splitters_in_a_hall_by_length(tmp_path):
    """64 host links at 200G on 16 leaf cages of 4 x 200G: 32 MFP7E20 splitters (whatever
    their lengths), 16 twin-port and 64 single-port modules; no 1:2 copper splitter
    (MCP7Y00 splits 800G into 2 x 400G: it cannot serve a cage broken out 4 x 200G).
    NVIDIA lists no splitter lengths in our sources: the BOM says to confirm them."""
    plan, _ = _hall_plan(tmp_path)
    lines = [line for line in bill_of_materials(plan) if line.category in ("transceiver", "cable")]
    splitters = [line for line in lines if line.part_number.startswith("MFP7E20")]
    assert sum(line.quantity for line in splitters) == 32
    assert all("orderable lengths not in our sources" in line.notes for line in splitters)
    assert not [line for line in lines if line.part_number.startswith("MCP7Y00")]
    assert {line.part_number: line.quantity for line in lines if line.category == "transceiver"} == {
        "MMA4Z00-NS": 16, "MMA4Z00-NS400": 64}


def test_splitter_reach_is_50m_and_legs_share_the_longer_length(tmp_path):
    """hardware.md 3: multimode <=50 m; single-mode MPO splitters <=50 m (straight 500 m,
    the catalog's DR4 modules 100 m). Host links at 45 m take the multimode splitter; at
    70 m no splitter reaches, though single-mode straight optics would (100 m), so they get
    no orderable length and check.physical reports them; the 400G leaf-spine links at 70 m
    take straight single-mode. The two legs of a splitter are ordered at the longer leg."""
    plan, catalog = _hall_plan(tmp_path)
    host = plan.links.kind == plan.link_kinds.index("server-leaf")
    cage, _, _, cage_ports = cage_table(plan)
    offsets = plan.port_offsets()
    ga, gb = offsets[plan.links.a_dev] + plan.links.a_port, offsets[plan.links.b_dev] + plan.links.b_port
    lane = port_table(plan)["lane"]

    legs = np.where(host, 40.0 + (lane[gb] - 1) % 2 * 5.0, 70.0)  # lanes 1 and 3 at 40 m, 2 and 4 at 45 m
    ids, idx, order = media.choose_by_length(plan, catalog, {}, legs)
    chosen = np.array(ids)[idx]
    assert set(chosen[host]) == {"mmf-split"} and set(chosen[~host]) == {"smf"}
    assert set(order[host]) == {45.0} and set(order[~host]) == {70.0}
    heads = splitter_heads(cage, cage_ports, lane, ga[host], gb[host])
    assert np.unique(heads).size == 32

    far = np.full(len(plan.links), 70.0)
    ids, idx, order = media.choose_by_length(plan, catalog, {}, far)
    assert set(np.array(ids)[idx][host]) <= {"mmf-split", "smf-split"} and np.isnan(order[host]).all()
    plan.media, plan.links.media, plan.physical.length_m, plan.physical.order_m = ids, idx, far, order
    facts.attach(plan, catalog)
    plan._memo.clear()
    split_id = np.array(ids)[idx][host][0]
    beyond = [line for line in bill_of_materials(plan) if line.part_number.startswith("NOT IN CATALOG")]
    assert [(line.part_number, line.quantity) for line in beyond] == [(f"NOT IN CATALOG: {split_id} longer than 50 m", 32)]
    (finding,) = [f for f in physical_findings(plan) if f.code == "LINK_BEYOND_REACH"]
    assert finding.message.startswith("64 link(s) are longer") and finding.message.endswith("at most 50 m")


def test_straight_fibers_from_an_mpo_shared_by_two_peers_are_flagged(tmp_path):
    """Gaudi 3 HLS-3: 6 OSFP cages of 4 x 200G on twin-port modules, two ports per MPO.
    Rail-optimized, lanes 1 and 2 of a cage go to two rail leaves, and each leaf cage's
    lanes 1 and 2 come from two servers: no straight fiber joins those MPOs. By hand:
    64 servers x 6 cages x 2 MPOs = 768 at the servers; 24 rail leaves x 64 ports / 2 per
    MPO = 768 at the leaves; 1,536 in all. The HPN and SuperPOD examples have none."""
    (tmp_path / "g3.yaml").write_text("name: g3\nserver: gaudi3-8\nservers: 64\n"
                                      "fabric: {topology: rail-optimized, switch: tomahawk5, speed_gbps: 200}\n")
    plan = build_plan(tmp_path / "g3.yaml")[1]
    (finding,) = [f for f in physical_findings(plan) if f.code == "FIBER_MPO_SHARED"]
    assert finding.severity == "warning" and finding.message.startswith("1,536 optical ports (MPOs)")
    for spec in ("alibaba-hpn-pod", "b200-superpod-4su", "spectrum-x-h100-2su", "b300-xdr-1su"):
        assert not [f for f in physical_findings(shared_plan(spec)) if f.code == "FIBER_MPO_SHARED"], spec

