"""The unit a Clos fabric is built from, when the spec does not give it: servers per
scalable unit (rail-optimized) or servers per leaf (fat-tree), and what a unit costs.

An architect picks the unit that builds the cluster with the fewest switches and cables,
every leaf alike (one downlink/uplink split for all leaves; a partial last unit keeps it,
as NVIDIA's SuperPOD guides build a partial SU with its full leaves and leaf-spine
cables). A leaf's largest unit is often not that one: 256 DGX H200 at 2:1 on SN5600
(400G) in SUs of the largest, 84 servers, leave 4 servers in a fourth SU and need 14
spines and 1,344 leaf-spine cables; SUs of 64 fill four SUs with 8 spines and 1,024.

Where one unit has fewer switches and another fewer cables, they are weighed in ports:
a switch costs its ports (it is bought, racked and powered whole, used or not) and a
cable its two ends (a transceiver or cable end each). Both extremes are wrong otherwise:
- switches first: 64 Gaudi 3 servers on Tomahawk 5 (200G, 1:1) in an SU of 70 save one
  spine (7 of 256 ports, against 8) but buy 144 uplinks for 6 absent servers per leaf
  and measure 32:35, not the 1:1 asked; the SU of 64 costs fewer ports.
- cables (or items) first: 100 DGX H100 on QM9700 in SUs of 25 need 25 spines (25
  uplinks spread evenly), each half empty; SUs of 32 need 16 and fewer ports overall.

Sizing is arithmetic (sizing.py), so every unit size a leaf can hold is tried: at most a
few hundred closed-form sizings, independent of the cluster size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from .sizing import ClosSizing


@dataclass(frozen=True)
class UnitCost:
    size: int  # servers per unit
    switches: int
    cables: int  # server-leaf + leaf-spine + spine-core
    ports: int  # switch ports bought (radix of every switch) + two ends per cable

    def key(self) -> tuple[int, int, int]:
        # Fewest ports, then fewest switches; of equals the larger unit (fewer SUs to name and place).
        return (self.ports, self.switches, -self.size)

    def record(self) -> dict:
        return {"size": self.size, "switches": self.switches, "cables": self.cables}


def cost(size: int, sizing: ClosSizing, server_ports: int, radix: tuple[int, int, int]) -> UnitCost:
    """Switches, cables and ports of a sized fabric. `server_ports`: server-leaf cables;
    `radix`: ports of a leaf, a spine and a core switch."""
    cables = server_ports + sizing.leaves * sizing.leaf.up
    if sizing.tiers == 3:
        cables += sizing.spines * sizing.spine.up
    bought = sizing.leaves * radix[0] + sizing.spines * radix[1] + sizing.cores * radix[2]
    return UnitCost(size, sizing.leaves + sizing.spines + sizing.cores, cables, bought + 2 * cables)


def cheapest(sizes: Iterable[int], cost_of: Callable[[int], UnitCost | None]) -> UnitCost | None:
    """The cheapest unit among `sizes` (cost_of returns None where a size cannot be built)."""
    costs = [c for c in (cost_of(s) for s in sizes) if c is not None]
    return min(costs, key=UnitCost.key, default=None)


def fill_record(unit: str, size: int, given: bool, servers: int, chosen: UnitCost, best: UnitCost | None,
                whole: UnitCost | None, leaves_per_unit: int, uplinks_per_leaf: int) -> dict:
    """What the checks need to judge the unit (check/unit_fill.py): how full the last unit
    is, what the design costs, and what the cheapest unit and whole units would cost.
    `unit`: "scalable_unit" or "leaf"; `servers`: the size the fabric is built for."""
    last = servers % size
    return {
        "unit": unit,
        "size": size,
        "given": given,
        "servers": servers,
        "units": -(-servers // size),
        "last_unit_servers": last or size,
        "last_unit_leaves": leaves_per_unit,
        "last_unit_uplinks": leaves_per_unit * uplinks_per_leaf,
        "cost": chosen.record(),
        # Only where it is strictly cheaper than the unit in use.
        "cheapest": best.record() if best is not None and best.ports < chosen.ports else None,
        # The same units with the partial last one left out (None when all are full or there is one).
        "whole_units": ({"servers": servers - last, **whole.record()} if whole is not None and last else None),
    }
