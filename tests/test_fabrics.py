"""Several fabrics per cluster (spec `fabrics:`): counts by hand from the catalog facts,
labels by fabric in every all-fabric output, checks on the compute fabric only,
determinism, and bad input."""

from __future__ import annotations

import csv
import io
import json

import jsonschema
import numpy as np
import pytest

from compiler.check.context import CheckContext
from compiler.diagnostics import SpecInvalid
from compiler.plan.fabrics import fabric_names, fabric_plan
from compiler.plan.serialize import plan_from_json, plan_json_text
from compiler.plan.views import cable_ids
from compiler.pipeline import build_plan

from .conftest import SPECS, cli_in_process, shared_checks, shared_outputs, shared_plan, tree_bytes


MULTI = SPECS / "h100-superpod-1su-multi-fabric.yaml"
SINGLE = SPECS / "h100-superpod-1su.yaml"
SERVERS = 31
# DGX H100 (servers.yaml, from the BasePOD deployment guide): port 1 of each of the two
# dual-port ConnectX-7 QSFP112 cards is storage; one BMC RJ45 port.
STORAGE_PORTS, OOB_PORTS = 2, 1


@pytest.fixture(scope="module")
def multi():
    return shared_plan(MULTI)


@pytest.fixture(scope="module")
def compiled():
    """The example compiled once for the session (test_deterministic compiles it again
    through the CLI and compares)."""
    return shared_outputs(MULTI)


def test_counts_by_hand(multi):
    kinds = multi.count_by_kind()
    # compute: NVIDIA RA 1 SU (31 DGX + UFM): 252 node/UFM-leaf, 256 leaf-spine cables
    assert kinds["server-leaf"] + kinds["ufm-leaf"] == 252 and kinds["leaf-spine"] == 256
    assert kinds["storage:server-leaf"] == STORAGE_PORTS * SERVERS == 62
    # dual-homed (the default): storage NIC r of every DGX on leaf r; an SN5600 at 400G
    # (128 ports) holds one NIC of all 31 servers: two leaves, no spine (tiers: auto)
    assert "storage:leaf-spine" not in kinds
    assert kinds["oob:server-leaf"] == OOB_PORTS * SERVERS == 31  # switch management ports are not modelled
    # SN2201 48 x 1G holds all 31 BMCs: one switch
    assert "oob:leaf-spine" not in kinds
    by_fabric = {}
    for d in multi.devices:
        if d.tier > 0:
            by_fabric.setdefault(d.fabric, []).append(d.name)
    assert len(by_fabric["compute"]) == 12
    assert by_fabric["storage"] == ["storage-su1-leaf-r1", "storage-su1-leaf-r2"]
    assert by_fabric["oob"] == ["oob-leaf-001"]
    assert multi.count_by_role()["server"] == SERVERS  # servers appear once


def test_server_ports_compute_first(multi):
    layout = multi.layouts[multi.devices[0].layout]
    names = [p.name for p in layout.ports]
    assert names[:8] == [p.name for p in shared_plan(SINGLE).layouts["dgx-h100/compute"].ports]
    assert names[8:] == ["slot1-p1", "slot2-p1", "bmc"]
    assert {p.form_factor for p in layout.ports[8:10]} == {"QSFP112"} and layout.ports[10].form_factor == "RJ45"
    assert multi.fabrics["storage"].server_ports == (8, 10)
    assert multi.fabrics["oob"].server_ports == (10, 11)


def test_fabric_records_hold_each_fabric_by_index_range(multi):
    """Plan.fabrics: compute first (servers, 8 leaves + 4 spines, 2 UFMs: 31 + 12 + 2 devices; 252 +
    256 links), then storage and oob, each one switch with its own server cables."""
    assert list(multi.fabrics) == ["compute", "storage", "oob", "scale-up"]
    assert [f.kind for f in multi.fabrics.values()] == ["compute", "storage", "oob", "scale-up"]
    assert fabric_names(multi) == ["compute", "storage", "oob"]  # the network fabrics
    compute, storage, oob, up = multi.fabrics.values()
    # DGX H100: one 8-GPU NVLink4 domain per server, wired inside it: no devices or cables of its own
    assert up.domains is multi.scale_up and (up.domains.domains, up.domains.gpus_per_domain) == (SERVERS, 8)
    assert up.servers == range(SERVERS) and up.devices == range(0) and up.links == range(0) and not up.is_network
    assert compute.servers == storage.servers == oob.servers == range(SERVERS)
    assert compute.devices == range(SERVERS + 12 + 2) and compute.links == range(252 + 256)
    assert storage.devices == range(45, 47) and storage.links == range(508, 508 + 62)
    assert oob.devices == range(47, 48) and oob.links == range(570, 570 + 31) and oob.links.stop == len(multi.links)
    assert [multi.devices[i].name for i in storage.devices] == ["storage-su1-leaf-r1", "storage-su1-leaf-r2"]
    assert compute.design is multi.design and storage.design["switch"] == "sn5600" and oob.design["switch"] == "sn2201"
    assert (compute.nic_group, storage.nic_group, oob.nic_group) == ("compute", "storage", "oob")
    for f in multi.fabrics.values():  # a fabric's links end at its own switches
        assert all(multi.devices[i].fabric == f.name for i in multi.links.b_dev[f.links.start:f.links.stop].tolist())
    assert multi.routing is None and all(f.routing is not None for f in (storage, oob))  # InfiniBand compute
    # the checks judge a fabric through its record: its plan holds it (and the shared scale-up domains)
    assert [CheckContext(fabric_plan(multi, name)).fabric.kind for name in fabric_names(multi)] == ["compute", "storage", "oob"]
    assert list(fabric_plan(multi, "storage").fabrics) == ["storage", "scale-up"]


def test_plan_json_gives_back_the_fabric_records(multi):
    again = plan_from_json(json.loads(plan_json_text(multi)))
    assert "fabrics" not in again.design and list(again.fabrics) == list(multi.fabrics)
    assert again.scale_up == multi.scale_up
    for name, f in multi.fabrics.items():
        g = again.fabrics[name]
        assert (g.kind, g.nic_group, g.servers, g.devices, g.links, g.server_ports, g.design) == \
            (f.kind, f.nic_group, f.servers, f.devices, f.links, f.server_ports, f.design), name
    # byte for byte, each fabric's addressing included (read back into its record)
    assert plan_json_text(again) == plan_json_text(multi)
    for name, f in multi.fabrics.items():
        if f.routing is not None:
            assert (again.fabrics[name].routing.link_net == f.routing.link_net).all(), name
    single = shared_plan(SINGLE)
    assert list(plan_from_json(json.loads(plan_json_text(single))).fabrics) == ["compute", "scale-up"]
    assert single.fabrics["compute"].links == range(len(single.links))


def test_compute_view_is_the_single_fabric_plan(multi):
    single = shared_plan(SINGLE)
    view = fabric_plan(multi)
    assert [d.name for d in view.devices] == [d.name for d in single.devices]
    assert view.link_kinds == single.link_kinds and view.media == single.media
    assert view.port_count() == single.port_count()
    for col in ("a_dev", "a_port", "b_dev", "b_port", "kind", "media", "speed_gbps"):
        assert (getattr(view.links, col) == getattr(single.links, col)).all(), col


def test_checks_see_compute_only(compiled):
    single_out = shared_outputs(SINGLE).parent
    a = json.loads((compiled / "report/checks.json").read_text())
    b = json.loads((single_out / "h100-superpod-1su/report/checks.json").read_text())
    assert a["figures"] == b["figures"]  # storage and BMC links are no GPU paths
    for rel in ("nccl", "slurm", "infiniband"):  # one-fabric tools: byte-identical but for the name
        fresh, ref = tree_bytes(compiled / rel), tree_bytes(single_out / "h100-superpod-1su" / rel)
        assert sorted(fresh) == sorted(ref)
        for k in fresh:
            assert fresh[k].replace(b"h100-superpod-1su-multi-fabric", b"h100-superpod-1su") == ref[k], k


def test_outputs_labelled_by_fabric(compiled):
    rows = list(csv.DictReader(io.StringIO((compiled / "cabling.csv").read_text())))
    for r in rows:
        assert r["kind"].startswith(f"{r['fabric']}:") or (r["fabric"] == "compute" and ":" not in r["kind"])
    by = {}
    for r in rows:
        by[r["fabric"]] = by.get(r["fabric"], 0) + 1
    assert by == {"compute": 508, "storage": 62, "oob": 31 + 14}  # BMCs, and the switch management cords
    assert len({r["cable_id"] for r in rows}) == len(rows)
    oob = [r for r in rows if r["fabric"] == "oob"]
    assert {r["media"] for r in oob} == {"CAT6"} and {r["connector"] for r in oob} == {"RJ45"}
    storage_servers = [r for r in rows if r["kind"] == "storage:server-leaf"]
    assert {r["a_transceiver"] for r in storage_servers} == {"MMA1Z00-NS400"}  # QSFP112 at the DGX
    assert {r["b_transceiver"] for r in storage_servers} == {"MMA4Z00-NS"}  # twin-port at the SN5600

    bom = list(csv.DictReader(io.StringIO((compiled / "bom.csv").read_text())))
    assert {r["fabric"] for r in bom} == {"compute", "storage", "oob"}
    servers = [r for r in bom if r["category"] == "server"]
    assert len(servers) == 1 and servers[0]["quantity"] == "31" and servers[0]["fabric"] == "compute"
    line = {(r["fabric"], r["category"], r["part_number"]): int(r["quantity"]) for r in bom}
    assert line[("storage", "transceiver", "MMA1Z00-NS400")] == 62
    # SN5600 twin-port cages: 31 server ports on each of two leaves, 16 cages each (the last half used)
    assert line[("storage", "transceiver", "MMA4Z00-NS")] == 2 * 16
    # 31 BMCs + the management ports of 8 rail leaves, 4 spines and 2 storage leaves
    assert line[("oob", "cable", "CAT6 patch cord (generic; PN per site)")] == 31 + 12 + 2
    assert line[("storage", "switch", "MSN5600 (full ordering code per configuration)")] == 2

    summary = json.loads((compiled / "summary.json").read_text())
    assert summary["switches"] == {"leaf": 8, "spine": 4}  # top level: the compute fabric
    assert summary["fabrics"]["storage"]["cables"] == {"storage:server-leaf": 62}
    assert summary["fabrics"]["oob"]["switches"] == {"leaf": 1} and summary["fabrics"]["oob"]["tiers"] == 1
    # one switch: no uplinks in the plan, so no measured ratio
    assert summary["fabrics"]["oob"]["oversubscription"] == {}
    assert summary["fabrics"]["compute"]["oversubscription"] == summary["oversubscription"]
    assert list(summary["fabrics"]) == ["compute", "storage", "oob"]


def test_plan_json_records_fabrics_and_round_trips(compiled):
    data = json.loads((compiled / "plan.json").read_text())
    jsonschema.validate(data, json.loads((compiled / "plan.schema.json").read_text()))
    assert set(data["design"]["fabrics"]) == {"compute", "storage", "oob"}
    fabric_col = data["devices"]["columns"].index("fabric")
    assert {r[fabric_col] for r in data["devices"]["rows"]} == {"compute", "storage", "oob"}
    plan = plan_from_json(data)
    assert fabric_plan(plan, "storage").count_by_kind() == {"storage:server-leaf": 62}
    assert plan_json_text(plan).startswith('{\n  "$schema"')


def test_deterministic(tmp_path, compiled):
    r = cli_in_process("compile", str(MULTI), "-o", str(tmp_path))
    assert r.returncode == 0
    assert tree_bytes(tmp_path / "h100-superpod-1su-multi-fabric") == tree_bytes(compiled)


BASE = """name: bad
servers: 31
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: qm9700
  scalable_unit: 32
fabrics:
"""

BAD = {
    "unknown nic group": ("  - {name: backup, switch: sn5600}\n",
                          ["spec.yaml:9", "SPEC_UNKNOWN_NIC_GROUP", "no NIC group 'backup'", "inband, oob, storage"]),
    "no groups on server": ("  - {name: storage, switch: sn5600}\n",
                            ["no NIC group 'storage'", "only compute NICs"]),
    "name compute": ("  - {name: compute, switch: sn5600}\n", ["fabrics", "'compute'"]),
    "duplicate": ("  - {name: storage, switch: sn5600}\n  - {name: storage, switch: sn5600}\n", ["'storage' given twice"]),
    "group taken": ("  - {name: storage, switch: sn5600}\n  - {name: data, nic_group: storage, switch: sn5600}\n",
                    ["SPEC_NIC_GROUP_TAKEN", "already feeds fabric 'storage'"]),
    "speed mismatch": ("  - {name: storage, switch: sn5600, speed_gbps: 200}\n",
                       ["SPEC_SPEED_MISMATCH", "200G differs", "400G"]),
    "switch speed": ("  - {name: storage, switch: sn2201}\n", ["SPEC_SPEED_UNSUPPORTED", "sn2201 has no 400G", "runs 1G"]),
    "oob on 400G switch": ("  - {name: oob, switch: sn5600}\n", ["SPEC_SPEED_UNSUPPORTED", "no 1G port mode"]),
    "topology": ("  - {name: storage, switch: sn5600, topology: torus}\n", ["topology 'torus' is not supported for an extra fabric"]),
    "unknown switch": ("  - {name: storage, switch: sn5601}\n", ["SPEC_UNKNOWN_SWITCH", "sn5600"]),
    "bad name": ("  - {name: \"st;rage\", switch: sn5600}\n", ["fabrics.0.name"]),
    "unknown media": ("  - {name: storage, switch: sn5600, media: fibre}\n", ["SPEC_UNKNOWN_MEDIA", "fibre"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_fabrics(tmp_path, case):
    extra, expected = BAD[case]
    text = BASE + extra
    if case == "no groups on server":
        text = text.replace("dgx-h100", "hgx-h100")
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2, (r.stdout, r.stderr)
    message = r.stdout + r.stderr
    assert "Traceback" not in message
    codes = [p for p in expected if p.startswith("SPEC_")]
    for piece in expected:
        if piece not in codes:
            assert piece in message, (piece, message)
    if codes:  # stable codes, as `--format json` and the library report them
        with pytest.raises(SpecInvalid) as exc:
            build_plan(path)
        assert {d.code for d in exc.value.diagnostics} >= set(codes)


HALL = SPECS / "h100-superpod-1su-multi-fabric-hall.yaml"


@pytest.fixture(scope="module")
def hall():
    return shared_plan(HALL)


def _where(plan, name):
    phys, i = plan.physical, plan.device_index(name)
    return phys.racks[int(phys.dev_rack[i])].name, int(phys.dev_u[i])


def test_layout_puts_storage_and_oob_switches_with_their_servers(hall):
    """31 DGX H100 at 4 per rack fill DH1.A01-A08; the row's network rack DH1.A09 holds the
    eight rail leaves (1U QM9700, U46 down to U39) and below them the two dual-homed storage
    SN5600 (2U each: U37-38, U35-36) and the OOB SN2201 (U34), each serving every server of
    the row; the spines and the UFMs get racks of their own after it."""
    assert [_where(hall, f"su1-leaf-r{r}") for r in range(1, 9)] == [("DH1.A09", 47 - r) for r in range(1, 9)]
    assert _where(hall, "storage-su1-leaf-r1") == ("DH1.A09", 37)
    assert _where(hall, "storage-su1-leaf-r2") == ("DH1.A09", 35)
    assert _where(hall, "oob-leaf-001") == ("DH1.A09", 34)
    assert {_where(hall, f"spine-{j:02d}")[0] for j in range(1, 5)} == {"DH1.A10"}
    assert {_where(hall, f"ufm-{j:02d}")[0] for j in (1, 2)} == {"DH1.A11"}
    assert [r.name for r in hall.physical.racks] == [f"DH1.A{k:02d}" for k in range(1, 12)]


def test_layout_cables_extra_fabrics_like_the_compute_fabric(hall):
    """Storage port slot1-p1 of dgx-su1-001 (8U at DH1.A01 U1-8) to storage-su1-leaf-r1 (2U at
    DH1.A09 U37-38), by the stated model: (48 - 8) + (48 - 38) U x 0.04445 m + 2 x 0.3 m up
    to the tray, 8 positions x 0.6 m along the row = 7.6225 m, plus 10 % slack = 8.38 m;
    multimode (too long for copper), ordered at 10 m: MFP7E10-N010. BMC cables are Cat6 at
    the modelled length rounded up to a whole metre, within its 100 m."""
    from compiler.plan.views import cable_ids, link_physical

    ids = hall.memo("cable_ids", cable_ids)
    k = ids.index("dgx-su1-001:9")
    assert hall.link_kinds[int(hall.links.kind[k])] == "storage:server-leaf"
    assert hall.physical.length_m[k] == pytest.approx(8.38)
    phys = link_physical(hall)
    assert (phys["media"][k], phys["length_m"][k], phys["part_number"][k]) == ("mmf", 10.0, "MFP7E10-N010")
    assert (phys["a_transceiver"][k], phys["b_transceiver"][k]) == ("MMA1Z00-NS400", "MMA4Z00-NS")
    oob = [i for i, kind in enumerate(hall.links.kind.tolist()) if hall.link_kinds[kind] == "oob:server-leaf"]
    assert len(oob) == SERVERS * OOB_PORTS
    for i in oob:
        modelled, ordered = float(hall.physical.length_m[i]), phys["length_m"][i]
        assert phys["media"][i] == "cat6" and ordered == int(ordered) and modelled <= ordered < modelled + 1 and ordered <= 100
        assert phys["a_transceiver"][i] == phys["b_transceiver"][i] == ""


def test_layout_fabric_views_and_checks_see_every_rack(hall):
    """A fabric's view keeps its own places and lengths, and every rack's contents: the
    storage switch's 2U count in the network rack whichever view reads it; the physical
    check reads every fabric (the power warning names the storage and OOB switches)."""
    for name in ("compute", "storage", "oob"):
        view = fabric_plan(hall, name)
        assert view.physical.length_m.shape == (len(view.links),) == view.physical.order_m.shape
        assert view.physical.dev_rack.shape == (len(view.devices),)
        assert np.array_equal(view.physical.rack_used_u(), hall.physical.rack_used_u())
    a09 = [r.name for r in hall.physical.racks].index("DH1.A09")
    assert hall.physical.rack_used_u()[a09] == 8 * 1 + 2 * 2 + 1
    warning = next(f for f in shared_checks(hall).as_json()["findings"] if f["code"] == "RACK_POWER_UNKNOWN")
    assert "sn2201" in warning["message"] and "sn5600" not in warning["message"]  # sn5600: a secondary figure


def test_layout_error_points_at_the_extra_fabric_switch(tmp_path):
    """A fabric switch the catalog has no height for cannot be placed: the error names its spec entry."""
    path = tmp_path / "spec.yaml"
    path.write_text(BASE + "  - {name: storage, switch: arista-7060x6-64pe}\nlayout: {rows: 2, racks_per_row: 20}\n")
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2 and "fabrics.0.switch" in r.stderr and "no height (rack_units) for arista-7060x6-64pe" in r.stderr
    assert "Traceback" not in r.stderr


def test_ethernet_compute_with_storage(tmp_path):
    """A RoCE compute fabric keeps its addressing and configs; the storage switches get none."""
    path = tmp_path / "spec.yaml"
    path.write_text("name: roce-mf\nservers: 16\nserver: dgx-h100\nfabric: {topology: rail-optimized, switch: sn5600, "
                    "scalable_unit: 16, nos: frr}\nfabrics:\n  - {name: inband, switch: sn5600}\n")
    loaded, plan = build_plan(path)
    assert plan.count_by_kind()["inband:server-leaf"] == 32
    # each fabric's routing is sized to that fabric, not padded to the plan's tables
    view = fabric_plan(plan)
    assert plan.routing is view.routing is plan.fabrics["compute"].routing
    assert len(view.routing.loopback) == len(view.devices) == len(plan.fabrics["compute"].devices) < len(plan.devices)
    assert len(view.routing.link_net) == len(view.links) == len(plan.fabrics["compute"].links) < len(plan.links)
    # plan.json names the compute fabric's /31s by the whole plan's cable ids: the same as its own
    assert list(view.memo("cable_ids", cable_ids)) == list(plan.memo("cable_ids", cable_ids)[:len(view.links)])
    data = json.loads(plan_json_text(plan))  # the compute addressing lists the compute fabric's devices only
    assert [row[0] for row in data["addressing"]["devices"]["rows"]] == [d.name for d in view.devices]
    inband = fabric_plan(plan, "inband")
    assert len(inband.routing.loopback) == len(inband.devices) == 16 + len(plan.fabrics["inband"].devices)
    assert len(inband.routing.link_net) == len(inband.links) == len(plan.fabrics["inband"].links) == 32
    r = cli_in_process("compile", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    configs = sorted(p.name for p in (tmp_path / "out/roce-mf/configs").rglob("*") if p.is_file())
    assert configs and not any("inband" in c for c in configs)


@pytest.mark.parametrize("server, groups", [
    ("dgx-b200", {"storage": 2, "inband": 2, "oob": 1}),
    ("dgx-h200", {"storage": 2, "inband": 2, "oob": 1}),
    ("gb200-nvl72", {"storage": 4}),
])
def test_catalog_groups_feed_fabrics(tmp_path, server, groups):
    """Every extra NIC group in the catalog builds: ports per server x servers server-leaf cables."""
    switch = {"oob": "sn2201"}
    lines = "".join(f"  - {{name: {g}, switch: {switch.get(g, 'sn5600')}}}\n" for g in groups)
    path = tmp_path / "spec.yaml"
    path.write_text(f"name: t\nservers: 36\nserver: {server}\nfabric: {{topology: fat-tree, switch: qm9700}}\nfabrics:\n{lines}")
    plan = build_plan(path)[1]
    kinds = plan.count_by_kind()
    for g, ports in groups.items():
        assert kinds[f"{g}:server-leaf"] == ports * 36
    media = {plan.media[m] for m in plan.links.media[plan.links.kind == plan.link_kinds.index("storage:server-leaf")].tolist()}
    assert media == {"mmf"}


def _cables(plan, prefix):
    names = [d.name for d in plan.devices]
    lt = plan.links
    kinds = [i for i, k in enumerate(plan.link_kinds) if k.startswith(prefix)]
    sel = np.isin(lt.kind, kinds)
    return set(zip((names[i] for i in lt.a_dev[sel].tolist()), lt.a_port[sel].tolist(),
                   (names[i] for i in lt.b_dev[sel].tolist()), lt.b_port[sel].tolist()))


def test_growth_keeps_extra_fabric_cables(tmp_path):
    """growth (in compute SUs) sizes every fabric's upper tiers: growing moves no storage or OOB cable
    (the OOB's BMC blocks and its spines are built for the target's 96 servers from day one)."""
    plans = []
    for servers in (32, 96):
        path = tmp_path / f"g{servers}.yaml"
        path.write_text(BASE.replace("servers: 31", f"servers: {servers}")
                        + "  - {name: storage, switch: sn5600}\n  - {name: oob, switch: sn2201, oversubscription: \"2:1\"}\n"
                        + "growth: {max_scalable_units: 3}\n")
        plans.append(build_plan(path)[1])
    small, big = plans
    assert any("oob fabric: built for 96 servers (growth)" in n for n in small.notes)
    for prefix in ("storage:", "oob:"):
        assert _cables(small, prefix) <= _cables(big, prefix), prefix
        assert len(_cables(big, prefix)) > len(_cables(small, prefix))


def test_port_names_must_differ_across_groups(tmp_path):
    (tmp_path / "cat.yaml").write_text("""servers:
  - id: twin-p1
    vendor: lab
    model: server whose storage and in-band groups both name a port p1
    gpu: none
    gpus: 1
    hostname_prefix: host
    nic_groups:
      compute: {nic: x, nics: 1, speed_gbps: 400, cage: {form_factor: OSFP, top: flat, gbps: 400}, ports: [{name: c1, cage: c1}], port_map_confidence: unconfirmed}
      storage: {nic: x, nics: 1, speed_gbps: 400, cage: {form_factor: QSFP112, top: flat, gbps: 400}, ports: [{name: p1, cage: p1}], port_map_confidence: unconfirmed}
      inband: {nic: x, nics: 1, speed_gbps: 400, cage: {form_factor: QSFP112, top: flat, gbps: 400}, ports: [{name: p1, cage: p1}], port_map_confidence: unconfirmed}
    confidence: unconfirmed
    sources: [test fixture]
""")
    path = tmp_path / "spec.yaml"
    path.write_text("name: t\nservers: 4\nserver: twin-p1\ncatalog: cat.yaml\nfabric: {topology: fat-tree, switch: sn5600}\n"
                    "fabrics:\n  - {name: storage, switch: sn5600}\n  - {name: inband, switch: sn5600}\n")
    with pytest.raises(SpecInvalid) as exc:
        build_plan(path)
    [d] = exc.value.diagnostics
    assert d.code == "SPEC_PORT_NAME_CLASH" and d.path == "fabrics.1.name" and "p1" in d.message and d.line == 8


def test_two_tier_extra_fabric_by_hand(tmp_path):
    """tiers: 2 keeps the Clos rules: SN5600 at 400G = 128 ports; 62 storage ports at 1:1 fit
    one leaf of 62 down / 62 up (a leaf cut for 32 servers would measure 31:32, not the 1:1
    asked), its uplinks spread over two spines (31 each: one spine would carry every path);
    the SN2201 management leaf (31 BMCs + 14 switch management ports on its 48 x 1G RJ45)
    links once to each of two spines on its 100G QSFP28 uplinks (swp49, swp50)."""
    text = MULTI.read_text()
    assert text.count("switch: sn5600") == 1 and text.count("switch: sn2201") == 1
    text = text.replace("switch: sn5600", "switch: sn5600\n    tiers: 2\n    homing: single").replace(
        "switch: sn2201", "switch: sn2201\n    tiers: 2")
    path = tmp_path / "two.yaml"
    path.write_text(text)
    kinds = build_plan(path)[1].count_by_kind()
    assert kinds["storage:leaf-spine"] == 62 and kinds["oob:leaf-spine"] == 2
    plan = build_plan(path)[1]
    roles = {f: fabric_plan(plan, f).count_by_role() for f in ("storage", "oob")}
    assert [roles[f][r] for f in ("storage", "oob") for r in ("leaf", "spine")] == [1, 2, 1, 2]


def test_one_switch_that_cannot_hold_the_ports_is_an_error(tmp_path):
    text = MULTI.read_text().replace("switch: sn2201", "switch: sn2201\n    tiers: 1").replace("servers: 31", "servers: 62")
    path = tmp_path / "one.yaml"
    path.write_text(text)
    r = cli_in_process("validate", str(path))
    # 62 BMCs and the management ports of 16 rail leaves, 8 spines and 2 storage leaves
    assert r.returncode == 2 and "one switch takes 48 ports at 1G, the fabric brings 88 BMC and switch management ports" \
        in r.stderr, r.stderr


def _with_storage_endpoints(tmp_path, extra: str, name: str = "ep.yaml"):
    text = MULTI.read_text()
    assert text.count("    nos: sonic\n") == 1
    path = tmp_path / name
    path.write_text(text.replace("    nos: sonic\n", "    nos: sonic\n" + extra))
    return path


def test_storage_targets_on_the_storage_fabric_by_hand(tmp_path):
    """8 storage targets with 2 x 400G each join the 62 DGX storage ports, dual-homed like the
    servers: each of the two SN5600 leaves takes 31 server ports and one port of each target
    in the last slots (39 ports, 20 twin-port cages); the targets are storage-fabric devices."""
    path = _with_storage_endpoints(tmp_path, "    extra_endpoints:\n      - {role: vast, count: 8, ports: 2}\n")
    plan = build_plan(path)[1]
    assert plan.count_by_kind()["storage:vast-leaf"] == 16
    targets = [d for d in plan.devices if d.role == "vast"]
    assert [d.name for d in targets][:2] == ["storage-vast-01", "storage-vast-02"] and len(targets) == 8
    assert {d.fabric for d in targets} == {"storage"}
    assert "vast" not in fabric_plan(plan, "compute").count_by_role()
    from compiler.plan.fabrics import fabric_bom
    lines = {(f, line.category, line.part_number): line.quantity for f, line in fabric_bom(plan)}
    assert lines[("storage", "transceiver", "MMA4Z00-NS")] == 2 * -(-(31 + 8) // 2)
    assert lines[("storage", "transceiver", "MMA4Z00-NS400")] == 16  # flat-top single-port at the targets
    assert lines[("storage", "switch", "MSN5600 (full ordering code per configuration)")] == 2
    # switch ports: servers first (ports 1-31), targets after (one port of each on each leaf), none shared
    vast = plan.links.kind == plan.link_kinds.index("storage:vast-leaf")
    for r in (1, 2):
        leaf = plan.device_index(f"storage-su1-leaf-r{r}")
        used = plan.links.b_port[plan.links.b_dev == leaf]
        assert used.size == 39 and np.unique(used).size == 39
        assert sorted(plan.links.b_port[vast & (plan.links.b_dev == leaf)].tolist()) == list(range(31, 39))


def test_storage_targets_without_free_ports_are_an_error(tmp_path):
    """Two tiers: the storage leaf is cut for the 31 servers' 62 ports (62 down / 62 up), so
    the 16 target ports have no leaf downlink; the error is at the entry and offers the
    spines' spare ports (2 spines x (128 - 31)) and management leaves."""
    path = _with_storage_endpoints(tmp_path, "    tiers: 2\n    homing: single\n    extra_endpoints:\n"
                                             "      - {role: vast, count: 8, ports: 2}\n")
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2, r.stderr
    assert ("ep.yaml:25:9: error: fabrics.0.extra_endpoints.0: fabric 'storage': extra endpoints attached to leaves "
            "need 16 ports but only 0 leaf downlinks are free") in r.stderr, r.stderr
    assert "attach: spine (194 spare spine ports)" in r.stderr and "attach: management-leaf" in r.stderr, r.stderr


def test_storage_targets_on_spare_spine_ports(tmp_path):
    path = _with_storage_endpoints(tmp_path, "    tiers: 2\n    homing: single\n    extra_endpoints:\n"
                                             "      - {role: vast, count: 8, ports: 2, attach: spine}\n")
    plan = build_plan(path)[1]
    sel = plan.links.kind == plan.link_kinds.index("storage:vast-spine")
    spines = [plan.devices[int(b)].name for b in plan.links.b_dev[sel]]
    ports = plan.links.b_port[sel].tolist()
    # port-major from the top of each 128-port spine: ports 127, 127, 126, 126, ...
    assert spines == ["storage-spine-01", "storage-spine-02"] * 8
    assert ports == [127 - i // 2 for i in range(16)]


def test_endpoint_role_may_not_be_a_switch_role(tmp_path):
    bad = _with_storage_endpoints(tmp_path, "    extra_endpoints:\n      - {role: spine, count: 1}\n", "bad.yaml")
    r = cli_in_process("validate", str(bad))
    assert r.returncode == 2 and "role 'spine' is reserved" in r.stderr, r.stderr


# --- dual homing and every check on every fabric ------------------------------------------
def _storage_homes(plan):
    """Per server, the (leaf, cage) pairs its storage NICs land on."""
    kind = plan.link_kinds.index("storage:server-leaf")
    sel = np.nonzero(plan.links.kind == kind)[0]
    homes = {}
    for i in sel.tolist():
        leaf = plan.devices[int(plan.links.b_dev[i])]
        cage = plan.layouts[leaf.layout].ports[int(plan.links.b_port[i])].cage
        homes.setdefault(int(plan.links.a_dev[i]), []).append((leaf.name, cage))
    return homes


def test_storage_nics_are_dual_homed_by_default(multi):
    """NVIDIA's DGX storage and in-band ports are pairs that 'provide parallel pathways': each
    of a DGX's two storage NICs lands on its own leaf (so on its own switch cage and
    transceiver), so losing one leaf, cable or twin-port transceiver leaves every server its
    storage. Before: both on storage-leaf-001, on the two ports of one twin-port cage."""
    homes = _storage_homes(multi)
    assert len(homes) == SERVERS
    for server, ends in homes.items():
        leaves = {leaf for leaf, _ in ends}
        assert len(ends) == STORAGE_PORTS and len(leaves) == STORAGE_PORTS, (multi.devices[server].name, ends)
    # what the checks say about it: one leaf lost cuts no server off the storage fabric
    from compiler.check.redundancy import RedundancyFigures

    storage = shared_checks(multi).of(RedundancyFigures, fabric="storage")
    assert storage.single_failures["leaf"].servers_cut_off == 0
    assert storage.single_failures["leaf"].gpu_ports_cut_off == SERVERS  # one NIC of each, its twin keeps the server


def test_single_homing_only_when_asked_and_then_the_checks_say_so(tmp_path):
    """`homing: single` keeps every storage NIC of a server on one leaf (one SN5600 here), and
    the storage fabric's redundancy figures then show the one switch that cuts every
    server's storage off."""
    from compiler.check import run_checks
    from compiler.check.redundancy import RedundancyFigures

    path = tmp_path / "single.yaml"
    path.write_text(MULTI.read_text().replace("    nos: sonic\n", "    nos: sonic\n    homing: single\n"))
    plan = build_plan(path)[1]
    homes = _storage_homes(plan)
    assert all(len({leaf for leaf, _ in ends}) == 1 for ends in homes.values())
    assert all(len({cage for _, cage in ends}) == 1 for ends in homes.values())  # one twin-port cage
    storage = run_checks(plan).of(RedundancyFigures, fabric="storage")
    assert storage.single_failures["leaf"].servers_cut_off == SERVERS


def test_every_fabric_is_checked_and_its_findings_name_it(compiled):
    """checks.json: the compute fabric's figures where they always were; each extra fabric's
    under fabrics.<name>.figures, from every per-fabric check; every finding carries its
    fabric, and an extra fabric's message says which one."""
    data = json.loads((compiled / "report/checks.json").read_text())
    import compiler.check
    from pathlib import Path

    jsonschema.validate(data, json.loads((Path(compiler.check.__file__).parent / "checks.schema.json").read_text()))
    assert set(data["fabrics"]) == {"storage", "oob"}
    for name in ("storage", "oob"):
        assert list(data["fabrics"][name]["figures"]) == ["budgets", "physical", "bisection", "oversubscription", "redundancy"]
    # the storage fabric: 62 storage NIC ports on two leaves, none between them
    assert data["fabrics"]["storage"]["figures"]["budgets"]["ports_used"] == 2 * 62
    assert data["fabrics"]["storage"]["figures"]["redundancy"]["single_failures"]["leaf"]["servers_cut_off"] == 0
    # the oob fabric: one SN2201, so losing it cuts every BMC off, and the check says so
    assert data["fabrics"]["oob"]["figures"]["redundancy"]["single_failures"]["leaf"]["servers_cut_off"] == SERVERS
    by_fabric = {}
    for f in data["findings"]:
        by_fabric.setdefault(f["fabric"], []).append(f)
        assert f["fabric"] == "compute" or f["message"].startswith(f"{f['fabric']} fabric: ")
    assert set(by_fabric) == {"compute", "storage", "oob"}
    assert any(f["code"] == "SINGLE_SWITCH_FAILURE" and "31 servers cut off" in f["message"] for f in by_fabric["oob"])


# --- the management (OOB) network from the SN2201's real panel ------------------------------
OOB96 = """name: oob96
servers: 96
server: dgx-h100
fabric: {topology: rail-optimized, switch: qm9700, oversubscription: "1:1", scalable_unit: 32}
fabrics:
  - {name: oob, switch: sn2201}
"""


def test_oob_sized_by_bmcs_and_switch_management_ports_by_hand(tmp_path):
    """96 DGX H100 on a 3-SU QM9700 SuperPOD: 24 rail leaves + 16 spines, each with a 1GbE
    RJ45 management port (QM9700 manual), and 96 BMCs. An SN2201 has 48 x 1G RJ45 host ports
    and 4 x 100G QSFP28 uplinks: BMCs of 32 servers per leaf (two thirds of its host ports)
    make 3 leaves, whose 3 x 16 other host ports hold the 40 management ports. The leaves
    uplink once to each of 2 SN2201 spines at 100G on swp49/swp50 (AOC), the spines taking
    them on swp49-51. Before: 4 leaves + 2 spines joined by 96 links at 1G on RJ45 ports,
    and no switch's management port counted."""
    path = tmp_path / "oob96.yaml"
    path.write_text(OOB96)
    plan = build_plan(path)[1]
    view = fabric_plan(plan, "oob")
    assert view.count_by_role() == {"server": 96, "leaf": 3, "spine": 2}
    kinds = plan.count_by_kind()
    assert kinds["oob:server-leaf"] == 96 and kinds["oob:leaf-spine"] == 3 * 2
    sel = plan.links.kind == plan.link_kinds.index("oob:leaf-spine")
    assert set(plan.links.speed_gbps[sel].tolist()) == {100}
    names = {d.name: d for d in plan.devices}
    leaf_ports, spine_ports = set(), set()
    for a, ap, b, bp in zip(plan.links.a_dev[sel].tolist(), plan.links.a_port[sel].tolist(),
                            plan.links.b_dev[sel].tolist(), plan.links.b_port[sel].tolist()):
        pa = plan.layouts[plan.devices[a].layout].ports[ap]
        pb = plan.layouts[plan.devices[b].layout].ports[bp]
        assert pa.form_factor == pb.form_factor == "QSFP28"
        leaf_ports.add(pa.name)
        spine_ports.add(pb.name)
    assert leaf_ports == {"swp49", "swp50"} and spine_ports == {"swp49", "swp50", "swp51"}
    assert {plan.media[int(m)] for m in plan.links.media[sel]} == {"aoc-100"}
    layout = plan.layouts[names["oob-leaf-001"].layout]
    assert len(layout.ports) == 52 and [p.form_factor for p in layout.ports].count("RJ45") == 48
    rows = plan.fabrics["oob"].design["management_ports"]["rows"]
    assert len(rows) == 24 + 16 and {r[0] for r in rows} == {"compute"}
    # every management port on its own free host port (BMCs hold swp1-32 of each leaf)
    assert len({(r[3], r[4]) for r in rows}) == 40
    assert all(int(r[4].removeprefix("swp")) > 32 for r in rows)
    where = {r[1]: r[3] for r in rows}
    assert where["spine-01"] != where["spine-02"] and where["su1-leaf-r1"] != where["su1-leaf-r2"]

    from compiler.plan.fabrics import fabric_bom
    lines = {(f, line.category, line.part_number): line.quantity for f, line in fabric_bom(plan)}
    assert lines[("oob", "switch", "MSN2201 (full ordering code per configuration)")] == 5
    assert lines[("oob", "cable", "MFA1A00-C0xx")] == 6
    assert lines[("oob", "cable", "CAT6 patch cord (generic; PN per site)")] == 96 + 40


def test_oob_beyond_four_leaves_needs_an_aggregation_spine(tmp_path):
    """An SN2201 spine takes leaves on its 4 QSFP28 uplinks only: 5 leaves do not fit, and the
    error says so and what to do; a spine with 100G ports (an SN5600 at 100G) takes them."""
    path = tmp_path / "big.yaml"
    path.write_text(OOB96.replace("servers: 96", "servers: 160"))
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2 and "a sn2201 spine takes 4 at 100G" in r.stderr and "spine_switch" in r.stderr, r.stderr
    path.write_text(OOB96.replace("servers: 96", "servers: 160").replace("switch: sn2201}", "switch: sn2201, spine_switch: sn5600}"))
    plan = build_plan(path)[1]
    view = fabric_plan(plan, "oob")
    assert view.count_by_role()["leaf"] == 5 and view.count_by_role()["spine"] == 2
    assert {d.model for d in view.devices if d.role == "spine"} == {"sn5600"}


def test_example_oob_serves_bmcs_and_every_switch_management_port_by_hand(multi):
    """specs/h100-superpod-1su-multi-fabric.yaml: 31 BMCs and the management ports of the 8
    rail leaves + 4 spines (QM9700 mgmt0) and the 2 storage SN5600s (eth0) = 45 of one
    SN2201's 48 RJ45 host ports: one leaf, no spine. Addressed as operators address a
    management network: the leaf's subnet 10.207.0.0/26 (the server share of the OOB's
    default management pool 10.207.0.0/16), its gateway .1 on the leaf, host port p at
    .(2 + p): BMCs swp1-31, the switches from swp33 (swp32 is the SU's 32nd server's)."""
    rec = multi.fabrics["oob"].design
    net = rec["management_network"]
    assert net["prefix"] == 26 and net["subnets"]["rows"] == [["oob-leaf-001", "10.207.0.0/26", "10.207.0.1"]]
    bmc = net["bmc"]["rows"]
    assert len(bmc) == SERVERS and bmc[0] == ["dgx-su1-001", "bmc", "oob-leaf-001", "10.207.0.2"]
    rows = rec["management_ports"]["rows"]
    assert [r[:2] for r in rows] == [["compute", f"su1-leaf-r{r}"] for r in range(1, 9)] + \
        [["compute", f"spine-{j:02d}"] for j in range(1, 5)] + [["storage", "storage-su1-leaf-r1"], ["storage", "storage-su1-leaf-r2"]]
    assert rows[0][2:] == ["mgmt0", "oob-leaf-001", "swp33", "10.207.0.34"]
    assert rows[-1][2:] == ["eth0", "oob-leaf-001", "swp46", "10.207.0.47"]
    # no /31 per BMC: the OOB's routed links are none (one switch)
    assert not multi.fabrics["oob"].routing.link_net.any()
    # the storage switches' own management address and gateway come from it
    storage = multi.fabrics["storage"].routing
    view = fabric_plan(multi, "storage")
    k = [d.name for d in view.devices].index("storage-su1-leaf-r2")
    assert storage.ip(storage.management[k]) == "10.207.0.47" and storage.ip(storage.management_gateway[k]) == "10.207.0.1"
    assert storage.management_prefix == 26


def test_hall_example_oob_counts_by_hand(hall):
    """The hall variant serves the same 31 BMCs and 14 switch management ports on one SN2201;
    BMC cables and management cords alike have lengths (lines per length, together)."""
    from compiler.plan.fabrics import fabric_bom

    assert len(hall.fabrics["oob"].design["management_ports"]["rows"]) == 14
    cat6 = [line for f, line in fabric_bom(hall) if f == "oob" and line.category == "cable"
            and line.part_number.startswith("CAT6")]
    assert sum(line.quantity for line in cat6 if line.length_m is not None) == SERVERS + 14
    assert not [line for line in cat6 if line.length_m is None]


def test_served_switch_management_survives_plan_json(multi):
    """plan.json gives the served switches' OOB address, prefix and gateway back (configs
    rendered from a re-read plan say the same)."""
    again = plan_from_json(json.loads(plan_json_text(multi)))
    a, b = multi.fabrics["storage"].routing, again.fabrics["storage"].routing
    assert (a.management == b.management).all() and (a.management_gateway == b.management_gateway).all()
    assert a.management_prefix == b.management_prefix == 26


def test_oob_with_no_switch_management_port_to_serve(tmp_path):
    """A compute switch the catalog knows no management port of (QM9790, externally managed)
    is named in a note and not served; the OOB still serves every BMC, and the plan reads
    back from plan.json (a found case: the empty list of served ports broke the reader)."""
    path = tmp_path / "q.yaml"
    path.write_text(OOB96.replace("servers: 96", "servers: 1").replace("switch: qm9700", "switch: qm9790"))
    plan = build_plan(path)[1]
    assert plan.fabrics["oob"].design["management_ports"]["rows"] == []
    assert any("no management port in the catalog for qm9790" in n for n in plan.notes)
    again = plan_from_json(json.loads(plan_json_text(plan)))
    assert plan_json_text(again) == plan_json_text(plan)


def test_oob_leaves_keep_the_bmc_block_for_servers_to_come():
    """31 DGX on a 48-port SN2201: the BMC block is 32 ports (the SU's 32nd server's port stays
    free), so 16 management ports fit one leaf and a 17th takes a second leaf, never the
    32nd server's port (a found case: counting only the 31 BMCs in use put it there)."""
    from compiler.expand.management import _leaves

    assert _leaves(31, 31, 32, 1, 16, 48) == 1 and _leaves(31, 31, 32, 1, 17, 48) == 2
    assert _leaves(31, 64, 32, 1, 16, 48) == 1  # growth to 64: the second leaf's block is not needed yet
