"""Cabling mistakes applied to a plan's link table, and the findings `verify` must report
for them: the ground truth of the property and real-tool tests.

A swap exchanges the upper (B) ends of two cables; a move puts a cable's B end in a
spare port (same device: wrong-port, another: wrong-device); a removal takes a cable
out; an addition joins two spare ports. Faults never share a cable or a spare port.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import numpy as np

from compiler.plan.model import NO_LINK, LinkTable, Plan
from compiler.verify.names import cable_id_list, floor_name


@dataclass
class Faults:
    swaps: list[tuple[int, int]] = field(default_factory=list)  # link indices
    moves: list[tuple[int, int, int]] = field(default_factory=list)  # link, new B device, new B port
    removals: list[int] = field(default_factory=list)
    additions: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)  # two (device, port) spares
    speed: list[int] = field(default_factory=list)  # links up at a lower signalling rate (4xEDR for 4xNDR)
    width: list[int] = field(default_factory=list)  # links up on 2 lanes of 4
    renamed: dict[int, str] = field(default_factory=dict)  # switch device -> the name it announces

    def touched(self) -> set[int]:
        out = {c for pair in self.swaps for c in pair} | {m[0] for m in self.moves} | set(self.removals)
        return out | set(self.speed) | set(self.width)


def apply(plan: Plan, f: Faults) -> LinkTable:
    links = plan.links
    cols = {name: getattr(links, name).copy() for name in LinkTable.__dataclass_fields__}
    for x, y in f.swaps:
        for col in ("b_dev", "b_port"):
            cols[col][x], cols[col][y] = cols[col][y], cols[col][x]
    for c, dev, port in f.moves:
        cols["b_dev"][c], cols["b_port"][c] = dev, port
    keep = np.ones(len(links), dtype=bool)
    keep[f.removals] = False
    cols = {k: v[keep] for k, v in cols.items()}
    for (d1, p1), (d2, p2) in f.additions:
        for col, value in (("a_dev", d1), ("a_port", p1), ("b_dev", d2), ("b_port", p2), ("kind", 0), ("media", 0),
                           ("speed_gbps", int(links.speed_gbps[0]))):
            cols[col] = np.append(cols[col], np.array([value], dtype=cols[col].dtype))
    return LinkTable(**cols)


def rates_after(plan: Plan, f: Faults) -> dict[int, tuple[int, float]]:
    """Rate faults re-indexed to the link table `apply` returns (removals shift indices)."""
    keep = np.ones(len(plan.links), dtype=bool)
    keep[f.removals] = False
    new_index = np.cumsum(keep) - 1
    out = {int(new_index[c]): (4, 25.0) for c in f.speed}
    out.update({int(new_index[c]): (2, 100.0) for c in f.width})
    return out


def expected_findings(plan: Plan, f: Faults) -> set[tuple]:
    ids = cable_id_list(plan)
    out = {("swapped", frozenset({ids[x], ids[y]})) for x, y in f.swaps}
    for c, dev, _port in f.moves:
        out.add(("wrong-port" if dev == int(plan.links.b_dev[c]) else "wrong-device", frozenset({ids[c]})))
    out |= {("missing", frozenset({ids[c]})) for c in f.removals}
    for (d1, p1), (d2, p2) in f.additions:
        ends = frozenset({f"{plan.devices[d1].name} {floor_name(plan, d1, p1)[0]}", f"{plan.devices[d2].name} {floor_name(plan, d2, p2)[0]}"})
        out.add(("unplanned", ends))
    out |= {("speed", frozenset({ids[c]})) for c in f.speed}
    out |= {("width", frozenset({ids[c]})) for c in f.width}
    out |= {("name", frozenset({plan.devices[d].name})) for d in f.renamed}
    return out


def reported(result: dict) -> set[tuple]:
    out = set()
    for m in result["mismatches"]:
        if m["kind"] == "unplanned":
            out.add(("unplanned", frozenset({f"{m['anchor']['device']} {m['anchor']['port']}", f"{m['found']['device']} {m['found']['port']}"})))
        elif m["kind"] == "name":
            out.add(("name", frozenset({m["expected"]["device"]})))
        else:
            out.add((m["kind"], frozenset(m["cables"])))
    return out


def spare_ports(plan: Plan, roles=("leaf", "spine", "core")) -> list[tuple[int, int]]:
    lop = plan.link_of_port()
    out = []
    for i, d in enumerate(plan.devices):
        if d.role not in roles:
            continue
        n = len(plan.layouts[d.layout])
        free = np.flatnonzero(lop[d.port_offset:d.port_offset + n] == NO_LINK)
        out += [(i, int(p)) for p in free]
    return out


def random_faults(plan: Plan, rng: random.Random, swaps=0, moves=0, removals=0, additions=0, speed=0, width=0,
                  renames=0) -> Faults:
    f = Faults()
    cables = list(range(len(plan.links)))
    rng.shuffle(cables)
    take = iter(cables)
    f.swaps = [(next(take), next(take)) for _ in range(swaps)]
    spares = spare_ports(plan)
    rng.shuffle(spares)
    spare = iter(spares)
    moves = min(moves, len(spares))  # a plan without spare ports takes no moves or extra cables
    additions = min(additions, (len(spares) - moves) // 2)
    for _ in range(moves):
        c = next(take)
        dev, port = next(spare)
        f.moves.append((c, dev, port))
    f.removals = [next(take) for _ in range(removals)]
    f.additions = [(next(spare), next(spare)) for _ in range(additions)]
    f.speed = [next(take) for _ in range(speed)]
    f.width = [next(take) for _ in range(width)]
    switches = [i for i, d in enumerate(plan.devices) if d.tier > 0]
    for d in rng.sample(switches, renames):
        f.renamed[d] = f"switch-{rng.randrange(16**6):06x}"
    return f
