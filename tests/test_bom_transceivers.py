"""The BOM's transceivers: one per (cage, medium) with a link, by the catalog part that cage
and medium take, and how many of them sit in servers. The BOM counts them by marking
cages per medium; here they are counted link end by link end, in plain Python."""

from __future__ import annotations

import pytest

from compiler.plan.bom import bill_of_materials
from compiler.plan.views import cage_table, link_ends, part_label, transceiver_part
from tests.conftest import shared_plan

# several media in one plan (a hall's copper and optics), twin-port cages, multi-fabric, dual plane; dragonfly and tori
EXAMPLES = ["h100-superpod-1su-multi-fabric-hall", "h100-roce-2su-hall", "gb200-nvl72-su", "hgx-b300-dual-plane",
            "alibaba-hpn-pod", "lab-3tier-frr", "dragonfly-2k", "torus-switched-512"]


def _by_link_end(plan) -> tuple[dict[str, int], dict[str, int]]:
    cage, ctype, keys, _ = plan.memo("cage_table", cage_table)
    links = plan.links
    in_server: dict[tuple[int, int], bool] = {}
    for ends, devs in zip(link_ends(plan), (links.a_dev, links.b_dev), strict=True):
        for g, d, m in zip(ends.tolist(), devs.tolist(), links.media.tolist(), strict=True):
            in_server[(int(cage[g]), m)] = plan.devices[d].tier == 0
    type_of = {int(cage[g]): int(ctype[g]) for g in range(cage.size)}
    tally: dict[str, int] = {}
    hosted: dict[str, int] = {}
    for (c, m), at_server in in_server.items():
        part = transceiver_part(plan.view.facts, plan.media[m], keys[type_of[c]])
        if part is None:
            continue
        label = part_label(plan.view.facts, part) if plan.view.facts.transceivers.get(part) else part
        tally[label] = tally.get(label, 0) + 1
        hosted[label] = hosted.get(label, 0) + at_server
    return tally, hosted


@pytest.mark.parametrize("example", EXAMPLES)
def test_transceivers_equal_a_count_link_end_by_link_end(example):
    plan = shared_plan(example)
    lines = [line for line in bill_of_materials(plan) if line.category == "transceiver"]
    tally, hosted = _by_link_end(plan)
    assert tally, "the example has transceivers to count"
    assert {line.part_number: line.quantity for line in lines} == tally
    assert {line.part_number: line.in_servers for line in lines} == hosted


def test_a_direct_network_without_optics_orders_no_transceivers():
    plan = shared_plan("tpu-v4-pod")  # ICI over board traces and copper: no (cage, medium) takes a module
    assert len(plan.links)
    assert _by_link_end(plan) == ({}, {})
    assert not [line for line in bill_of_materials(plan) if line.category == "transceiver"]
