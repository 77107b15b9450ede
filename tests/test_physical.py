"""Physical layout: placement, cable lengths, media by reach, BOM by part and length,
and the user errors/findings of a hall that cannot work (with numbers).

Modules exercised here: expand/layout.py (the physical pass), expand/placement.py,
expand/cable_lengths.py, plan/physical.py."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.check.physical import physical_findings
from compiler.diagnostics import SpecInvalid
from compiler.plan.bom import bill_of_materials
from compiler.plan.cables import physical_cables
from compiler.plan.power import rack_draw
from compiler.plan.views import cage_table

from .conftest import SPECS, cli_in_process, plan_from_text

HALL = """name: t
servers: {servers}
server: dgx-b200
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32}}
layout:
  rows: {rows}
  racks_per_row: {per_row}
  row_pitch_m: {pitch}
  rack: {{height_u: {height}, power_kw: {kw}, depth_mm: {depth}}}
  leaf_placement: {policy}
  spine_placement: {spine}
{extra}"""


def hall(servers=128, rows=4, per_row=10, pitch=3.0, height=48, kw=60, depth=1200, policy="end-of-row", extra="",
         spine="end"):
    # spines at the end of the racks: these tests measure placement and media from known positions
    return plan_from_text(HALL.format(servers=servers, rows=rows, per_row=per_row, pitch=pitch, height=height, kw=kw,
                                      depth=depth, policy=policy, extra=extra, spine=spine))


@pytest.mark.parametrize("policy", ["end-of-row", "middle-of-row", "top-of-rack", "network-rack"])
def test_placement_respects_u_and_power_and_places_everything(policy):
    plan = hall(policy=policy)
    phys = plan.physical
    assert (phys.dev_rack >= 0).all()
    for r, rack in enumerate(phys.racks):
        members = np.nonzero(phys.dev_rack == r)[0]
        spans = sorted((int(phys.dev_u[i]), int(phys.dev_u[i] + phys.dev_height_u[i] - 1)) for i in members)
        assert spans[0][0] >= 1 and spans[-1][1] <= rack.usable_u
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:])), f"overlap in {rack.name}"
        assert rack_draw(plan).known_w[r] <= rack.power_budget_w  # switch-side optics included
    assert len({r.name for r in phys.racks}) == len(phys.racks)
    if policy == "top-of-rack":
        assert {r.kind for r in phys.racks if any(plan.devices[i].role == "leaf" for i in np.nonzero(phys.dev_rack == phys.racks.index(r))[0])} == {"compute"}


def test_placement_is_deterministic_and_leaves_sit_at_the_row_end():
    a, b = hall(), hall()
    assert [r.name for r in a.physical.racks] == [r.name for r in b.physical.racks]
    assert (a.physical.dev_u == b.physical.dev_u).all() and (a.physical.length_m == b.physical.length_m).all()
    leaf = a.device_index("su1-leaf-r1")
    rack = a.physical.racks[int(a.physical.dev_rack[leaf])]
    assert (rack.name, rack.kind) == ("DH1.A09", "network")  # 8 compute racks of 4 DGX, then the leaves
    assert a.physical.dev_u[leaf] == 46  # top usable U of a 48U rack with 2U reserved


def test_lengths_follow_the_stated_model():
    plan = hall()
    phys = plan.physical
    i = 0  # C000001: dgx-su1-001 (A01, U1-10) to su1-leaf-r1 (A09, U46)
    routed = (48 - 10) * 0.04445 + 0.3 + (48 - 46) * 0.04445 + 0.3 + 8 * 0.6
    assert phys.length_m[i] == pytest.approx(round(routed + max(0.1 * routed, 0.5), 2))
    assert phys.order_m[i] == 10  # next orderable multimode length above 7.9 m


def test_media_by_reach_copper_in_rack_rows_and_optics_across():
    plan = hall()
    media = np.array(plan.media)[plan.links.media]
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    assert set(media[kinds == "server-leaf"]) == {"mmf"}  # a DGX cage feeds two leaves: no cage-to-cage copper
    # SU4's leaves sit next to the spine rack: twin-port copper, DAC to 2 m then LACC
    copper = np.isin(media, ["dac", "lacc"])
    assert copper.any() and (plan.physical.order_m[media == "dac"] <= 2).all()
    assert (plan.physical.order_m[media == "lacc"] <= 5).all()
    # every cage carries a single medium
    cage, *_ = cage_table(plan)
    offs = plan.port_offsets()
    ends = np.concatenate([offs[plan.links.a_dev] + plan.links.a_port, offs[plan.links.b_dev] + plan.links.b_port])
    per = {}
    for c, m in zip(cage[ends].tolist(), np.concatenate([media, media]).tolist()):
        per.setdefault(c, set()).add(m)
    assert all(len(v) == 1 for v in per.values())


def test_long_rows_switch_the_whole_cage_group_to_single_mode():
    plan = hall(pitch=16.0)  # row A leaves to the spine rack in row D: 3 x 16 m and more
    phys = plan.physical
    media = np.array(plan.media)[plan.links.media]
    assert phys.length_m.max() > 50 and "smf" in set(media)
    assert (phys.order_m[media == "mmf"] <= 50).all()
    assert not [f for f in physical_findings(plan) if f.code == "LINK_BEYOND_REACH"]


def test_link_beyond_every_medium_is_a_finding_with_numbers():
    plan = hall(pitch=20.0, rows=10, per_row=5)  # leaves in row B, spines in row I: 7 x 20 m, beyond 100 m
    phys = plan.physical
    assert phys.length_m.max() > 100 and np.isnan(phys.order_m).any()
    f = [f for f in physical_findings(plan) if f.code == "LINK_BEYOND_REACH"][0]
    assert f.severity == "error"
    assert f"{phys.length_m.max():.1f} m" in f.message and "100 m" in f.message, f.message
    assert any(line.part_number.startswith("NOT IN CATALOG") for line in bill_of_materials(plan))


def test_rack_over_power_budget_is_a_finding():
    plan = hall(kw=60, extra="  servers_per_rack: 4\n")
    assert not [f for f in physical_findings(plan) if f.code == "RACK_OVER_POWER"]
    plan = hall(kw=50, extra="  servers_per_rack: 4\n")
    over = [f for f in physical_findings(plan) if f.code == "RACK_OVER_POWER"]
    assert over and "57.2 kW" in over[0].message and "50 kW" in over[0].message


@pytest.mark.parametrize("kwargs,code,numbers", [
    (dict(rows=2), "LAYOUT_HALL_TOO_SMALL", ["need 4 rows of 10", "the layout has 2"]),
    (dict(depth=800), "LAYOUT_DEVICE_TOO_DEEP", ["897 mm", "800 mm"]),
    (dict(height=10), "LAYOUT_DEVICE_TOO_TALL", ["10U", "8U"]),
    (dict(kw=10), "LAYOUT_RACK_POWER_TOO_LOW", ["14.3 kW", "10 kW"]),
])
def test_impossible_halls_are_spec_errors(kwargs, code, numbers):
    with pytest.raises(SpecInvalid) as exc:
        hall(**kwargs)
    d = exc.value.diagnostics[0]
    assert d.code == code and d.path.startswith("layout") and d.line > 0
    for n in numbers:
        assert n in d.message, d.message


def test_hall_too_small_exits_2_without_traceback(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(HALL.format(servers=128, rows=1, per_row=10, pitch=3, height=48, kw=60, depth=1200,
                                policy="end-of-row", extra="", spine="auto"))
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "hall is too small" in r.stderr and "Traceback" not in r.stderr


def test_bom_cables_by_part_and_length_cover_every_link():
    plan = hall()
    cables = [line for line in bill_of_materials(plan) if line.category == "cable"]
    assert all(line.part_number.split("-N")[-1][:3].isalnum() for line in cables)
    assert {line.part_number for line in cables} >= {"MFP7E10-N010", "MCA4J80-N003"}
    media = np.array(plan.media)[plan.links.media]
    assert sum(line.quantity for line in cables) == len(physical_cables(plan))  # one per physical cable (plan/cables.py)
    twin = sum(line.quantity for line in cables if line.part_number.startswith(("MCA4J80", "MCP4Y10")))
    assert twin * 2 == int(np.isin(media, ["dac", "lacc"]).sum())


SPLIT_CATALOG = """servers:
  - id: hgx-6u
    vendor: OEM
    model: HGX H100 6U
    gpu: H100
    gpus: 8
    hostname_prefix: hgx
    rack_units: 6
    power_w: 10000
    nic_groups:
      compute:
        nic: ConnectX-7 OSFP
        nics: 8
        speed_gbps: 400
        cage: {form_factor: OSFP, top: flat, gbps: 400}
        ports: [{name: nic1, cage: nic1}, {name: nic2, cage: nic2}, {name: nic3, cage: nic3}, {name: nic4, cage: nic4},
                {name: nic5, cage: nic5}, {name: nic6, cage: nic6}, {name: nic7, cage: nic7}, {name: nic8, cage: nic8}]
        port_map_confidence: inferred
    confidence: inferred
    sources: [test]
"""


def test_splitter_where_one_switch_cage_feeds_two_single_port_nics(tmp_path):
    (tmp_path / "cat.yaml").write_text(SPLIT_CATALOG)
    spec = tmp_path / "s.yaml"
    spec.write_text("""name: split
servers: 8
server: hgx-6u
catalog: cat.yaml
fabric: {topology: fat-tree, switch: qm9700, tiers: 2}  # a leaf per rack, not the one switch auto takes
layout: {rows: 1, racks_per_row: 8, leaf_placement: top-of-rack, rack: {power_kw: 45}}
""")
    from compiler.pipeline import build_plan

    _, plan = build_plan(spec)
    media = np.array(plan.media)[plan.links.media]
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    assert set(media[kinds == "server-leaf"]) == {"dac-split"}
    line = [b for b in bill_of_materials(plan) if b.part_number.startswith("MCP7Y00")]
    assert sum(b.quantity for b in line) * 2 == int((kinds == "server-leaf").sum())


def test_committed_hall_example_compiles_with_layout():
    from compiler.pipeline import build_plan

    _, plan = build_plan(SPECS / "b200-superpod-4su-hall.yaml")
    assert plan.physical is not None and not np.isnan(plan.physical.order_m).any()
