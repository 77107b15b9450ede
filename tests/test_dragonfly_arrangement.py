"""Dragonfly global links as the literature arranges them (expand/dragonfly.py).

Known results: every arrangement is a proper wiring (each group pair joined by exactly m
global cables, no switch over its h global ports, no port twice), each port reaches the
group its arrangement's formula names, and on the adversarial pattern (every endpoint of
group x sends to group x+1) Valiant and UGAL reach what the global cables allow,
(g-2)/(2(g-1)) of line rate (derivation in the test below).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from compiler.expand.dragonfly import peer_position
from compiler.traffic import traffic_report

from .conftest import plan_from_text

LAB_CATALOG = Path(__file__).parent / "data" / "lab-ib.yaml"
ARRANGEMENTS = ("circulant", "relative", "absolute")


def lab_dragonfly(groups: int, arrangement: str, p: int = 2, a: int = 4, h: int = 2):
    servers = groups * a * p
    switch = "lab-ib-8port" if p + a - 1 + h <= 8 else "qm9700"
    text = (f"name: df\nservers: {servers}\nserver: lab-1nic\ncatalog: {LAB_CATALOG}\n"
            f"fabric: {{topology: dragonfly, switch: {switch}, endpoints_per_switch: {p}, switches_per_group: {a},\n"
            f"          global_ports_per_switch: {h}, groups: {groups}, global_arrangement: {arrangement}}}\n")
    return plan_from_text(text, file=str(LAB_CATALOG))


def _global_cables(plan):
    kinds = np.array(plan.link_kinds, dtype=object)[plan.links.kind]
    rows = np.flatnonzero(kinds == "global")
    pods = np.array([d.pod or 0 for d in plan.devices])
    return rows, pods[plan.links.a_dev[rows]] - 1, pods[plan.links.b_dev[rows]] - 1


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.parametrize("groups", [5, 8, 9])
def test_every_arrangement_is_a_proper_wiring(arrangement, groups):
    plan = lab_dragonfly(groups, arrangement)
    rows, ga, gb = _global_cables(plan)
    pairs = Counter(tuple(sorted(p)) for p in zip(ga.tolist(), gb.tolist()))
    m = plan.design["global_links_per_group_pair"]
    assert set(pairs) == {(x, y) for x in range(groups) for y in range(x + 1, groups)}
    assert set(pairs.values()) == {m}
    ends = Counter(plan.links.a_dev[rows].tolist()) + Counter(plan.links.b_dev[rows].tolist())
    assert max(ends.values()) <= plan.design["global_ports_per_switch"]
    ports = list(zip(plan.links.a_dev[rows].tolist(), plan.links.a_port[rows].tolist())) + \
        list(zip(plan.links.b_dev[rows].tolist(), plan.links.b_port[rows].tolist()))
    assert len(set(ports)) == len(ports)  # no port used twice


@pytest.mark.parametrize("groups", [8, 9, 33])
def test_positions_follow_the_published_formulas(groups):
    x = np.repeat(np.arange(groups), groups)
    y = np.tile(np.arange(groups), groups)
    keep = x != y
    x, y = x[keep], y[keep]
    for arrangement in ARRANGEMENTS:
        pos = peer_position(x, y, groups, arrangement)
        for g in range(groups):  # a bijection of group g's peers onto positions 0 .. g-2
            assert sorted(pos[x == g].tolist()) == list(range(groups - 1))
    rel = peer_position(x, y, groups, "relative")
    assert ((x + rel + 1) % groups == y).all()
    absolute = peer_position(x, y, groups, "absolute")
    assert (np.where(absolute < x, absolute, absolute + 1) == y).all()
    circ = peer_position(x, y, groups, "circulant")
    k = circ // 2 + 1
    assert (np.where(circ % 2 == 0, (x + k) % groups, (x - k) % groups) == y).all()


@pytest.mark.parametrize("arrangement", ARRANGEMENTS)
@pytest.mark.parametrize("groups, fraction", [(9, 7 / 16), (33, 31 / 64)])
def test_valiant_and_ugal_reach_what_the_global_cables_allow(arrangement, groups, fraction):
    """A group's a*p endpoints all send to the next group. Its a*h global cables (one per other
    group when g = a*h + 1) carry its own flows' first hops (a*p/(g-2) on each but the cable to
    the destination) and, for the g-2 groups that detour through it, their second hops: 2 a*p /
    (g-2) per cable against a*h = g-1 cables' worth of capacity, so (g-2)/(2(g-1)) of line rate:
    7/16 at 9 groups, 31/64 at 33. With global slots dealt round-robin over the switches every
    detour crossed one local cable (19.4 % at 33 groups, 2.3x minimal at 9)."""
    p, a, h = (2, 4, 2) if groups == 9 else (4, 8, 4)
    plan = lab_dragonfly(groups, arrangement, p, a, h)
    report = traffic_report(plan, ["shift:group"], ["minimal", "valiant", "ugal"])
    by = {r["routing"]: r for r in report["results"]}
    assert by["minimal"]["fraction"] == round(1 / (a * p), 4)
    for routing in ("valiant", "ugal"):
        assert by[routing]["fraction"] == pytest.approx(fraction, abs=0.001)
        assert by[routing]["min_fraction"] == pytest.approx(fraction, abs=0.001)
