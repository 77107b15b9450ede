"""Closed-form sizing of Clos tiers: how many switches, and how ports split.

Pure arithmetic on counts, no plan objects, so it is cheap at any scale and
tested directly against the published closed forms (k²/2, k³/4, ...).

Rules we hold to, because ECMP needs equal paths:
- every leaf has the same number of links (m) to every spine of its pod, and every
  spine the same number (m_c) to every core of its core group;
- where the minimum switch count does not give whole m, the count is rounded up to
  the next count that does, and the rounding is reported;
- two tiers have at least two spines when a leaf has two or more uplinks: one spine
  would carry every path between leaves, and no architect builds a fabric that one
  switch takes down (a small fabric's ports would fit one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..spec.model import Ratio


class SizingError(Exception):
    """An impossible design; `path` names the spec field to change."""

    def __init__(self, path: tuple, message: str, hint: str = ""):
        super().__init__(message)
        self.path = path
        self.message = message
        self.hint = hint


@dataclass(frozen=True)
class PortSplit:
    down: int
    up: int

    @property
    def used(self) -> int:
        return self.down + self.up


def split_for_ratio(radix: int, ratio: Ratio) -> PortSplit:
    """The largest down:up split of `radix` ports that is exactly `ratio`."""
    t = radix // (ratio.down + ratio.up)
    if t == 0:
        raise SizingError(
            ("fabric", "oversubscription"),
            f"oversubscription {ratio} needs at least {ratio.down + ratio.up} ports per switch; the switch has {radix}",
        )
    return PortSplit(ratio.down * t, ratio.up * t)


def uplinks_for(down: int, ratio: Ratio, radix: int, what: str) -> PortSplit:
    """Uplinks that give exactly `ratio` for `down` provisioned downlinks."""
    if (down * ratio.up) % ratio.down:
        raise SizingError(
            ("fabric", "oversubscription"),
            f"{down} downlinks per leaf at {ratio} would need {down * ratio.up / ratio.down:g} uplinks; "
            f"oversubscription must give a whole number of uplinks",
            f"choose a {what} whose downlink count is a multiple of {ratio.down}",
        )
    up = down * ratio.up // ratio.down
    if down + up > radix:
        best = split_for_ratio(radix, ratio)
        raise SizingError(
            ("fabric", "scalable_unit"),
            f"{down} downlinks + {up} uplinks per leaf = {down + up} ports at {ratio}; the switch has {radix}",
            f"at {ratio} a leaf takes at most {best.down} downlinks",
        )
    return PortSplit(down, up)


@dataclass(frozen=True)
class LeafPorts:
    """A leaf's panel as sizing counts it: `cages` cages, downlinks at `down_gbps` with
    `down_per_cage` of them to a cage, uplinks at `up_gbps` with `up_per_cage` to a cage
    (SN5600 at 400G down / 800G up: 2 x 400G or 1 x 800G per OSFP cage).

    At one speed downlinks and uplinks are ports of one kind: any split of the radix, as
    before. At two, a cage runs one breakout mode (every port of a cage at one speed), so
    downlinks fill whole cages from the first (one port of an odd last cage stays spare)
    and the uplinks take the cages after them. Oversubscription is bandwidth either way:
    down x down_gbps : up x up_gbps.
    """

    cages: int
    down_gbps: int
    down_per_cage: int
    up_gbps: int
    up_per_cage: int
    # Cages of a second group of another type that the uplinks take (a management switch's
    # QSFP28 uplinks beside its RJ45 host ports); 0: uplinks share the `cages`.
    up_group_cages: int = 0

    @classmethod
    def of(cls, switch, down_gbps: int, up_gbps: int) -> LeafPorts:
        group = switch.uplink_cages
        if group is not None and up_gbps in group.modes:
            return cls(switch.cages, down_gbps, switch.modes[down_gbps].ports_per_cage,
                       up_gbps, group.modes[up_gbps].ports_per_cage, group.cages)
        return cls(switch.cages, down_gbps, switch.modes[down_gbps].ports_per_cage,
                   up_gbps, switch.modes[up_gbps].ports_per_cage)

    @property
    def mixed(self) -> bool:
        return self.down_gbps != self.up_gbps

    @property
    def radix(self) -> int:
        """Ports at the downlink speed (the leaf's radix at one speed)."""
        return self.cages * self.down_per_cage

    def down_cages(self, down: int) -> int:
        return -(-down // self.down_per_cage)

    def up_cages(self, up: int) -> int:
        return -(-up // self.up_per_cage)

    def uplinks(self, down: int, ratio: Ratio) -> int | None:
        """Uplinks that give exactly `ratio` in Gb/s for `down` downlinks; None if not whole."""
        need, per = down * self.down_gbps * ratio.up, ratio.down * self.up_gbps
        return None if need % per else need // per

    def down_step(self, ratio: Ratio) -> int:
        """Downlink counts that give whole uplinks are the multiples of this."""
        per = ratio.down * self.up_gbps
        return per // math.gcd(self.down_gbps * ratio.up, per)

    def fits(self, split: PortSplit) -> bool:
        if self.up_group_cages:
            return split.down <= self.radix and self.up_cages(split.up) <= self.up_group_cages
        if not self.mixed:
            return split.used <= self.radix
        return self.down_cages(split.down) + self.up_cages(split.up) <= self.cages

    def first_uplink(self, down: int) -> int:
        """0-based port of the first uplink: right after the downlinks, or at two speeds
        the first port of the cage after the downlinks' cages, or with an uplink cage group
        its first port (after every host port)."""
        if self.up_group_cages:
            return self.radix
        return self.down_cages(down) * self.down_per_cage if self.mixed else down

    def ports(self, down: int) -> int:
        """Logical ports of the leaf's layout: at two speeds the downlinks' cages split for
        the downlink speed and every other cage for the uplink speed; with an uplink cage
        group, every host port and every uplink port."""
        if self.up_group_cages:
            return self.radix + self.up_group_cages * self.up_per_cage
        if not self.mixed:
            return self.radix
        dc = self.down_cages(down)
        return dc * self.down_per_cage + (self.cages - dc) * self.up_per_cage

    def spare(self, split: PortSplit) -> int:
        return self.ports(split.down) - split.used

    def used_text(self, split: PortSplit) -> str:
        """What a split takes, for messages: ports at one speed, cages at two."""
        if not self.mixed:
            return f"{split.down} downlinks + {split.up} uplinks = {split.used} ports"
        dc, uc = self.down_cages(split.down), self.up_cages(split.up)
        return (f"{split.down} downlinks at {self.down_gbps}G ({dc} cages) + {split.up} uplinks at "
                f"{self.up_gbps}G ({uc} cages) = {dc + uc} cages")

    @property
    def capacity_text(self) -> str:
        return f"{self.radix} ports" if not self.mixed else f"{self.cages} cages"

    def most(self, ratio: Ratio) -> PortSplit:
        """The split with the most downlinks that is exactly `ratio` (in Gb/s) and fits."""
        if not self.mixed:
            return split_for_ratio(self.radix, ratio)
        for down in range(self.radix, 0, -1):
            up = self.uplinks(down, ratio)
            if up and self.fits(PortSplit(down, up)):
                return PortSplit(down, up)
        raise SizingError(
            ("fabric", "oversubscription"),
            f"no downlink count at {self.down_gbps}G gives whole uplinks at {self.up_gbps}G for {ratio} "
            f"within {self.cages} cages", "choose another oversubscription or uplink_speed_gbps")

    def split(self, down: int, ratio: Ratio, what: str) -> PortSplit:
        """`uplinks_for` on this panel: uplinks that give exactly `ratio` for `down`."""
        if not self.mixed:
            return uplinks_for(down, ratio, self.radix, what)
        up = self.uplinks(down, ratio)
        if up is None:
            raise SizingError(
                ("fabric", "oversubscription"),
                f"{down} downlinks at {self.down_gbps}G per leaf at {ratio} would need "
                f"{down * self.down_gbps * ratio.up / (ratio.down * self.up_gbps):g} uplinks at {self.up_gbps}G; "
                f"oversubscription must give a whole number of uplinks",
                f"choose a {what} whose downlink count is a multiple of {self.down_step(ratio)}")
        split = PortSplit(down, up)
        if not self.fits(split):
            best = self.most(ratio)
            raise SizingError(
                ("fabric", "scalable_unit"),
                f"{self.used_text(split)} per leaf at {ratio}; the switch has {self.cages}",
                f"at {ratio} a leaf takes at most {best.down} downlinks")
        return split


def even_spread(groups: int, links_each: int, peer_ports: int, minimum: int | None = None) -> tuple[int, int] | None:
    """Smallest peer count p >= ceil(groups*links_each/peer_ports) with p | links_each and groups*(links_each/p) <= peer_ports.

    `groups` switches each spread `links_each` uplinks evenly over p peers with
    `peer_ports` ports. Returns (p, links per pair) or None if no p works.
    """
    low = max(1, math.ceil(groups * links_each / peer_ports), minimum or 1)
    for p in range(low, links_each + 1):
        if links_each % p == 0 and groups * (links_each // p) <= peer_ports:
            return p, links_each // p
    return None


@dataclass(frozen=True)
class ClosSizing:
    tiers: int
    leaves: int
    leaf: PortSplit  # provisioned per leaf
    spine: PortSplit  # spine ports facing leaves / cores (2-tier: up = 0)
    leaves_per_pod: int  # 2-tier: all leaves
    pods: int
    spines_per_pod: int
    leaf_spine_links: int  # per leaf-spine pair (m)
    cores_per_group: int = 0
    spine_core_links: int = 0  # per spine-core pair (m_c)
    notes: tuple[str, ...] = field(default=())

    @property
    def spines(self) -> int:
        return self.pods * self.spines_per_pod

    @property
    def cores(self) -> int:
        return self.spines_per_pod * self.cores_per_group if self.tiers == 3 else 0


def two_tier(leaves: int, leaf: PortSplit, spine_radix: int) -> ClosSizing | None:
    redundant = 2 if leaf.up >= 2 else 1
    spread = even_spread(leaves, leaf.up, spine_radix, minimum=redundant)
    if spread is None:
        return None
    spines, m = spread
    notes = []
    minimum = math.ceil(leaves * leaf.up / spine_radix)
    if minimum < redundant == spines:
        notes.append(f"2 spines, not 1: the {leaves * leaf.up} leaf uplinks would fit one spine, which every path "
                     f"between leaves would then cross (one switch lost would cut the fabric apart)")
    elif spines != minimum:
        notes.append(
            f"spines rounded up from {minimum} to {spines} so every leaf has {m} link(s) to every spine "
            f"(equal ECMP paths); {spines * spine_radix - leaves * leaf.up} spine ports stay spare"
        )
    return ClosSizing(2, leaves, leaf, PortSplit(spine_radix, 0), leaves, 1, spines, m, notes=tuple(notes))


def max_two_tier_leaves(leaf: PortSplit, spine_radix: int) -> int:
    """With one link per leaf-spine pair a spine reaches `spine_radix` leaves."""
    return spine_radix if leaf.up >= 1 else 0


def three_tier(leaves: int, leaf: PortSplit, spine: PortSplit, core_radix: int, leaves_per_group: int) -> ClosSizing:
    """Pods of leaves under `leaf.up` spines (one link per leaf-spine pair), cores above.

    `leaves_per_group`: pods hold whole groups of this many leaves (the rail leaves of
    an SU for rail-optimized fabrics, 1 otherwise).
    """
    spines_per_pod = leaf.up
    groups_per_pod = spine.down // leaves_per_group
    if groups_per_pod == 0:
        raise SizingError(
            ("fabric", "tiers"),
            f"a spine has {spine.down} downlinks but a scalable unit brings {leaves_per_group} leaves; "
            f"a pod cannot hold one SU",
            "use a switch with a larger radix or fewer rails per SU",
        )
    per_pod = groups_per_pod * leaves_per_group
    pods = math.ceil(leaves / per_pod)
    spread = even_spread(pods, spine.up, core_radix)
    if spread is None:
        raise SizingError(
            ("fabric", "tiers"),
            f"{pods} pods exceed what three tiers can join: a core has {core_radix} ports, so at most "
            f"{core_radix} pods of {per_pod} leaves",
            "use a larger-radix switch or a higher oversubscription",
        )
    cores_per_group, m_c = spread
    notes = []
    minimum = math.ceil(pods * spine.up / core_radix)
    if cores_per_group != minimum:
        notes.append(
            f"cores per group rounded up from {minimum} to {cores_per_group} so every spine has {m_c} "
            f"link(s) to every core of its group (equal ECMP paths)"
        )
    if leaves % per_pod:
        notes.append(f"last pod is partial: {leaves % per_pod} of {per_pod} leaves; its spines keep spare downlinks")
    return ClosSizing(3, leaves, leaf, spine, per_pod, pods, spines_per_pod, 1, cores_per_group, m_c, tuple(notes))


def max_three_tier_leaves(leaf: PortSplit, spine: PortSplit, core_radix: int, leaves_per_group: int) -> int:
    per_pod = (spine.down // leaves_per_group) * leaves_per_group
    return per_pod * core_radix if spine.up >= 1 else 0
