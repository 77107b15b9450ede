"""The unit a Clos fabric is built from, when the spec does not give it: servers per
scalable unit (rail-optimized) or servers per leaf (fat-tree) and the leaf's uplink
count, and what a unit costs.

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
Of units equal in ports and switches, the one with fewer transceivers (cages in use: a
twin-port OSFP serves two links), then the larger unit (fewer SUs to name and place).

The oversubscription asked is a ceiling, not an exact figure: a leaf may take more
uplinks than its downlinks need at that ratio (or, the same thing, fewer downlinks than
the ratio allows), and does where that is cheaper. Every leaf has equal links to every
spine, so the spine count divides the leaf's uplinks, and an uplink count with a poor
divisor is dearer than one more: 128 DGX B200 on QM9700 at 5:3 in SUs of 40 (the most a
leaf holds: 40 down + 24 up) need 12 spines, while SUs of 32 with 20 uplinks (32:20,
8:5) need 10 and 128 fewer cables. The candidates of a ratio are then every leaf that
measures at or below it, which holds every candidate of a lower ratio; so asking for
more oversubscription never costs more ports, and the design of a lower ratio is never
passed over for a dearer one. Where the leaf measures below the ratio asked, the design
notes say so and why (resolve.py), never silently.

Ports are the one measure that never rises. A higher ratio may still trade one item for
another where that saves ports (fewer leaves for more spines, fewer switches for more
cables), because no choice can keep every item from rising against every lower ratio
without building worse fabrics: the ratios a leaf can measure are dense, and holding each
item to its least over all of them builds 12,500 Gaudi 3 servers on Tomahawk 5 (200G)
at 1:1 from 7,527 switches instead of 6,900 (SUs of 81, not 125), since a leaf at 81:82
needs fewer spines and cores.

Sizing is arithmetic (sizing.py), so every unit size a leaf can hold is a candidate, each
with its uplink counts from the fewest up until no more can pay (a lower bound on the
ports, `floor`, passes the best found). Sizes are tried lowest floor first, so the
cheapest is usually among the first priced and the floor cuts the rest: a few closed-form
sizings where size order took thousands, bounded by the switch radix, not the cluster size.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from collections.abc import Callable, Iterable, Sequence

from .sizing import ClosSizing


@dataclass(frozen=True)
class Panel:
    """A tier's switch panel: a leaf's at its downlink speed, a spine's or core's at the uplink speed."""

    ports: int  # radix
    ports_per_cage: int  # logical ports one transceiver serves (2 for a twin-port 800G OSFP at 400G)
    gbps: tuple[int, int]  # speed of its down and up ports (a Spectrum-X leaf: 400, 800)
    up_width: int = 1  # panel ports one uplink takes (an 800G uplink: a whole cage of 2 x 400G)


@dataclass(frozen=True)
class UnitCost:
    size: int  # servers per unit
    down: int  # downlinks per leaf
    up: int  # uplinks per leaf
    switches: int
    cables: int  # server-leaf + leaf-spine + spine-core
    ports: int  # switch ports bought (radix of every switch) + two ends per cable
    transceivers: int  # switch cages in use (server side: the same for every unit)
    gbps: tuple[int, int] = (1, 1)  # the leaf's downlink and uplink speeds: the ratio is bandwidth

    def key(self) -> tuple[int, ...]:
        # Fewest ports, then fewest switches (and cables, where tiers differ in radix), then
        # fewest transceivers; of equals the larger unit (fewer SUs to name and place), then
        # the fewer uplinks.
        return (self.ports, self.switches, self.cables, self.transceivers, -self.size, self.up)

    def measured(self) -> Fraction:
        """The leaf's down:up bandwidth as built (its full complement of servers)."""
        return Fraction(self.down * self.gbps[0], self.up * self.gbps[1])

    def record(self, asked: Fraction | None = None) -> dict:
        """For the design record; names the leaf's ratio where it is not the one `asked`
        (a unit suggested to the user then needs that ratio set as well)."""
        rec: dict[str, int | str] = {"size": self.size, "switches": self.switches, "cables": self.cables}
        if asked is not None and self.measured() != asked:
            rec["oversubscription"] = ratio_text(self.measured())
        return rec


def ratio_text(ratio: Fraction) -> str:
    return f"{ratio.numerator}:{ratio.denominator}"


def cages_in_use(spans: Iterable[tuple[int, int]], ports_per_cage: int) -> int:
    """Cages with at least one port in use; `spans`: [first, end) logical port ranges in
    panel order (cage-major: port p is in cage p // ports_per_cage)."""
    cages = sorted((first // ports_per_cage, (end - 1) // ports_per_cage) for first, end in spans if end > first)
    total, reach = 0, -1
    for lo, hi in cages:
        if hi > reach:
            total += hi - max(lo, reach + 1) + 1
            reach = hi
    return total


def transceivers(sizing: ClosSizing, leaf_downlinks_used: Iterable[tuple[int, int]],
                 panels: tuple[Panel, Panel, Panel]) -> int:
    """Switch-side transceivers of a sized fabric under the port rules of clos.py (leaf:
    downlinks from port 1, uplinks after them; spine and core ports in leaf / pod order).
    `leaf_downlinks_used`: (leaves, downlinks in use on each) over all leaves."""
    s, (leaf, spine, core) = sizing, panels
    # At two speeds the uplinks start at the cage after the downlinks' and take a cage each.
    first = s.leaf.down if leaf.up_width == 1 else -(-s.leaf.down // leaf.ports_per_cage) * leaf.ports_per_cage
    uplinks = (first, first + s.leaf.up * leaf.up_width)
    total = sum(n * cages_in_use(((0, used), uplinks), leaf.ports_per_cage) for n, used in leaf_downlinks_used)
    if s.tiers == 2:
        return total + s.spines * cages_in_use(((0, s.leaves * s.leaf_spine_links),), spine.ports_per_cage)
    full, last = divmod(s.leaves, s.leaves_per_pod)
    to_cores = (s.spine.down, s.spine.down + s.spine.up)
    for pods, leaves in ((full, s.leaves_per_pod), (1 if last else 0, last)):
        total += pods * s.spines_per_pod * cages_in_use(((0, leaves), to_cores), spine.ports_per_cage)
    return total + s.cores * cages_in_use(((0, s.pods * s.spine_core_links),), core.ports_per_cage)


def cost(size: int, sizing: ClosSizing, server_ports: int, panels: tuple[Panel, Panel, Panel],
         leaf_downlinks_used: Iterable[tuple[int, int]]) -> UnitCost:
    """Switches, cables, ports and transceivers of a sized fabric. `server_ports`:
    server-leaf cables; `panels`: a leaf's, a spine's and a core switch's."""
    cables = server_ports + sizing.leaves * sizing.leaf.up
    if sizing.tiers == 3:
        cables += sizing.spines * sizing.spine.up
    bought = sizing.leaves * panels[0].ports + sizing.spines * panels[1].ports + sizing.cores * panels[2].ports
    return UnitCost(size, sizing.leaf.down, sizing.leaf.up, sizing.leaves + sizing.spines + sizing.cores, cables,
                    bought + 2 * cables, transceivers(sizing, leaf_downlinks_used, panels), panels[0].gbps)


def cheapest(candidates: Iterable[tuple[int, Sequence[int]]], cost_of: Callable[[int, int], UnitCost | None],
             floor: Callable[[int, int], int]) -> UnitCost | None:
    """The cheapest unit among `candidates`: (size, its uplink counts, fewest first).
    `cost_of(size, up)` is None where that unit cannot be built; `floor(size, up)` is a
    lower bound on its ports that never falls as uplinks rise (each adds a cable and spine
    ports), so a size's larger uplink counts are skipped once it passes the best found.
    Sizes are tried by the floor of their fewest uplinks, lowest first: the cheapest is
    then found early and the sizes whose floor passes it are never priced (at 131,072 GPUs
    one unit priced instead of 1,849). The order changes nothing found: key() tells every
    two units apart, so the cheapest is one unit whatever the order."""
    by_floor = sorted(((floor(size, ups[0]), size, ups) for size, ups in candidates if len(ups)),
                      key=lambda t: t[0])
    best = None
    for lowest, size, ups in by_floor:
        if best is not None and lowest > best.ports:
            break  # this size's floor and every later one's pass the best found
        for up in ups:
            if best is not None and floor(size, up) > best.ports:
                break
            c = cost_of(size, up)
            if c is not None and (best is None or c.key() < best.key()):
                best = c
    return best


def fill_record(unit: str, size: int, given: bool, servers: int, chosen: UnitCost, best: UnitCost | None,
                whole: UnitCost | None, leaves_per_unit: int, uplinks_per_leaf: int, asked: Fraction) -> dict:
    """What the checks need to judge the unit (check/unit_fill.py): how full the last unit
    is, what the design costs, and what the cheapest unit and whole units would cost.
    `unit`: "scalable_unit" or "leaf"; `servers`: the size the fabric is built for;
    `asked`: the leaf ratio the spec asks for."""
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
        "cheapest": best.record(asked) if best is not None and best.ports < chosen.ports else None,
        # The same units with the partial last one left out (None when all are full or there is one).
        "whole_units": ({"servers": servers - last, **whole.record()} if whole is not None and last else None),
    }
