"""Management cords (a switch's management port to its management leaf: no link of the plan,
plan/fabrics.py management_cords) have a modelled length from the layout, by the rule every
cable follows (expand/cable_lengths.py), an orderable Cat6 length, a reach the physical check
judges, and BOM lines per length spelled as the plan's own Cat6 cables."""

from __future__ import annotations

import json
import math

import pytest

from compiler.check.physical import physical_findings
from compiler.pipeline import build_plan
from compiler.plan.fabrics import fabric_bom, fabric_plan, management_cords
from compiler.plan.physical import U_M
from compiler.plan.serialize import plan_from_json, plan_json_text

from .conftest import SPECS

HALL = SPECS / "h100-superpod-1su-multi-fabric-hall.yaml"


@pytest.fixture(scope="module")
def hall():
    return build_plan(HALL)[1]


def _by_hand(plan, a: int, b: int) -> float:
    """hardware.md 4 as the spec's layout.cabling states it, one cable at a time."""
    phys, c = plan.physical, plan.physical.model["cabling"]
    ra, rb = phys.racks[int(phys.dev_rack[a])], phys.racks[int(phys.dev_rack[b])]
    ua, ub = (int(phys.dev_u[d]) + int(phys.dev_height_u[d]) - 1 for d in (a, b))
    if ra.name == rb.name:
        routed = abs(ua - ub) * U_M + c["in_rack_m"]
    else:
        routed = ((ra.height_u - ua) * U_M + (rb.height_u - ub) * U_M + 2 * c["tray_drop_m"]
                  + abs(ra.position - rb.position) * phys.rack_width_m + abs(ra.row_index - rb.row_index) * phys.row_pitch_m)
    return round(routed + max(routed * c["slack_fraction"], c["slack_min_m"]), 2)


def test_cord_lengths_follow_the_rule_of_every_cable(hall):
    cords = management_cords(hall)
    assert len(cords) == 14  # 8 rail leaves + 4 spines (QM9700 mgmt0), 2 storage SN5600 (eth0)
    racks = set()
    for c in cords:
        a, b = hall.device_index(c.switch), hall.device_index(c.leaf)
        racks.add(hall.physical.dev_rack[a] == hall.physical.dev_rack[b])
        assert c.length_m == pytest.approx(_by_hand(hall, a, b), abs=0.006), c
        assert c.order_m == math.ceil(c.length_m)  # a generic Cat6 cord: whole metres (media.yaml lists no lengths)
    assert racks == {True, False}  # both branches of the rule: in the OOB leaf's rack, and from the spines' rack


def test_cords_survive_plan_json(hall):
    again = plan_from_json(json.loads(plan_json_text(hall)))
    assert management_cords(again) == management_cords(hall)


def test_bom_orders_each_cord_at_its_length_with_the_bmc_cables(hall):
    """Cat6 lines of the OOB fabric: one per orderable length, the BMC cables' and the cords'
    of that length together, spelled as the plan's own Cat6 cables."""
    oob = fabric_plan(hall, "oob")
    cat6 = oob.media.index("cat6")
    bmc = oob.physical.order_m[oob.links.media == cat6]
    want: dict[float, int] = {}
    for length in [*bmc.tolist(), *(c.order_m for c in management_cords(hall))]:
        want[length] = want.get(length, 0) + 1
    lines = [line for fabric, line in fabric_bom(hall) if fabric == "oob" and line.part_number.startswith("CAT6")]
    assert {line.length_m: line.quantity for line in lines} == want
    assert sum(want.values()) == 31 + 14
    assert all(line.part_number.endswith(f" {line.length_m:g} m") for line in lines)


def test_a_cord_beyond_cat6_reach_is_an_error_and_unpriced(hall):
    data = json.loads(plan_json_text(hall))
    table = data["design"]["fabrics"]["oob"]["management_ports"]
    col = {c: k for k, c in enumerate(table["columns"])}
    row = table["rows"][9]  # spine-02's cord, as if its rack stood 120 m away
    row[col["length_m"]], row[col["order_m"]] = 120.4, None
    plan = plan_from_json(data)
    [finding] = [f for f in physical_findings(plan) if f.code == "LINK_BEYOND_REACH"]
    assert finding.severity == "error" and finding.where == "spine-02:mgmt0"
    assert "1 management cord(s)" in finding.message and "(100 m)" in finding.message and "120.4 m" in finding.message
    beyond = [line for fabric, line in fabric_bom(plan) if fabric == "oob" and "longer than 100 m" in line.part_number]
    assert [(line.quantity, line.unit_power_w) for line in beyond] == [(1, None)]
    # and none in the plan as compiled
    assert not [f for f in physical_findings(hall) if f.code == "LINK_BEYOND_REACH"]


def test_without_a_layout_cords_have_no_length():
    plan = build_plan(SPECS / "h100-superpod-1su-multi-fabric.yaml")[1]
    cords = management_cords(plan)
    assert len(cords) == 14 and all(c.length_m is None and c.order_m is None for c in cords)
    [line] = [line for fabric, line in fabric_bom(plan) if fabric == "oob" and line.part_number.startswith("CAT6")
              and "management ports" in line.notes]
    # one line with the BMC cables, which have no length either
    assert line.length_m is None and line.quantity == 31 + 14 and "14 of them: switch management ports" in line.notes
    assert not [f for f in physical_findings(plan) if f.code == "LINK_BEYOND_REACH"]
