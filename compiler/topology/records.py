"""Typed design records: what a plan's `design` holds, per topology family, as frozen
dataclasses that outputs and checks read by attribute. plan.json keeps the record as the
plain dict the builders write (its bytes do not change); `record_from_design` reads that
dict back, from a fresh plan or a loaded plan.json alike. Keys a builder writes only
sometimes default to None here."""

from __future__ import annotations

from dataclasses import dataclass, fields
from collections.abc import Callable
from typing import Any


def _known(cls: type, rec: dict[str, Any]) -> dict[str, Any]:
    """The keys of a nested record that are fields of `cls` (plan.json of a newer writer may carry more)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in rec.items() if k in names}


@dataclass(frozen=True, slots=True)
class PortSplit:
    """How a switch tier's ports divide: toward the servers (down) and toward the tier above
    (up), as the design builds them. `down_cages`/`up_cages` only where the two run at
    different speeds, so a cage's split differs by direction (expand/ports.py)."""

    down: int
    up: int
    down_cages: int | None = None
    up_cages: int | None = None

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> PortSplit | None:
        return None if rec is None else cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class HostsRecord:
    """How the servers are named and labelled (expand/hosts.py), as every family records it."""

    hostname_pattern: str | None  # None: the catalog's hostname prefix and an index
    hostname_prefix: str
    label_prefix: str  # Kubernetes node-label prefix
    nccl_topology: str = "skeleton"  # the NCCL topology file's style (spec hosts.nccl_topology; the default)

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> HostsRecord | None:
        return None if rec is None else cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class LinksPerPair:
    """Links between each pair of a direct network's nodes: all equal, or differing by one."""

    min: int
    max: int

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> LinksPerPair | None:
        return None if rec is None else cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class UnitCost:
    """What a choice of unit costs (expand/unit_choice.py UnitCost.record)."""

    switches: int
    cables: int
    size: int | None = None  # the unit size (absent for whole units: the design's own size)
    servers: int | None = None  # whole units: the servers they hold
    oversubscription: str | None = None  # the leaf ratio it needs set, where not the one asked

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> UnitCost | None:
        return None if rec is None else cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class UnitFill:
    """How full the last unit (scalable unit or leaf) is, and what other units would cost
    (expand/unit_choice.py fill_record; judged by check/unit_fill.py)."""

    unit: str  # scalable_unit | leaf
    size: int
    given: bool  # set by the spec, not chosen by default
    servers: int  # the servers the units are sized for (growth target included)
    units: int
    last_unit_servers: int
    last_unit_leaves: int
    last_unit_uplinks: int
    cost: UnitCost  # as built
    cheapest: UnitCost | None = None  # only where strictly cheaper than the unit in use
    whole_units: UnitCost | None = None  # the partial last unit left out
    with_room: UnitCost | None = None  # the unit that would leave leaf ports for extra endpoints

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> UnitFill | None:
        if rec is None:
            return None
        costs = ("cost", "cheapest", "whole_units", "with_room")
        values: dict[str, Any] = {k: UnitCost.from_json(v) if k in costs else v for k, v in _known(cls, rec).items()}
        return cls(**values)


@dataclass(frozen=True, slots=True)
class DesignRecord:
    """The part every family records."""

    topology: str
    tiers: int  # switch tiers; 0 for a direct network (no switch between GPUs)
    server: str  # catalog id
    switch: str | None  # catalog id of the (leaf) switch model; None when switchless
    speed_gbps: int
    switch_radix: int | None
    servers: int
    gpus: int
    hosts: HostsRecord | None = None  # naming and host-topology style (expand/hosts.py)
    direct: bool = False  # no switch between GPUs: chips (or servers) are the graph's nodes
    node_role: str = "chip"  # a direct network's nodes: chips, or servers (ring / full mesh)
    never_meet: str | None = None  # device attribute whose values the network never joins (rail, group)
    planes: int | None = None  # ports of one NIC that go to different planes (multi-plane)
    # As the spec asks, where the family has a leaf ratio (check/oversubscription.py).
    oversubscription: dict[str, str] | None = None
    unit_fill: UnitFill | None = None  # the last scalable unit's fill, where units were chosen (check/unit_fill.py)

    def switch_model(self, role: str) -> str | None:
        """The catalog model of a switch role: a per-tier model where the spec gives one."""
        return getattr(self, f"{role}_switch", None) or self.switch


@dataclass(frozen=True, slots=True)
class ClosRecord(DesignRecord):
    scalable_unit: int | None = None
    scalable_units: int | None = None
    rails: int = 1
    leaf_ports: PortSplit | None = None
    leaves_per_pod: int | None = None
    pods: int = 1
    spines_per_pod: int | None = None
    leaf_spine_links_per_pair: int | None = None
    built_for_servers: int | None = None
    uplink_speed_gbps: int | None = None  # leaf-spine and spine-core, only where it differs from speed_gbps
    spine_switch: str | None = None  # only where it differs from `switch`
    spine_radix: int | None = None
    core_switch: str | None = None
    core_radix: int | None = None
    spine_ports: PortSplit | None = None  # three tiers
    core_groups: int | None = None
    cores_per_group: int | None = None
    spine_core_links_per_pair: int | None = None


@dataclass(frozen=True, slots=True)
class TorusRecord(DesignRecord):
    dims: list[int] | None = None
    wrap: list[bool] | None = None
    twist: list[int] | None = None
    links_per_neighbor: int = 1
    host_grid: list[int] | None = None
    servers_per_router: int | None = None


@dataclass(frozen=True, slots=True)
class DragonflyRecord(DesignRecord):
    intra_group: str = "all-to-all"  # or "fat-tree" (dragonfly+)
    groups: int = 1
    switches_per_group: int = 1
    endpoints_per_switch: int = 1
    global_ports_per_switch: int = 0
    global_links_per_group_pair: int = 0
    global_arrangement: str = "circulant"
    endpoint_ports: int = 0
    endpoint_ports_per_group: int = 0
    max_groups: int | None = None


@dataclass(frozen=True, slots=True)
class PlanesRecord(DesignRecord):
    rails: int = 1
    scalable_unit: int | None = None
    segments: int | None = None
    per_rail_bisection_gbps: int | None = None  # rail-only: one rail's GPUs halved on its own switches
    leaves_per_rail: int | None = None
    spines_per_rail: int | None = None
    leaf_spine_links_per_pair: int | None = None
    leaf_ports: PortSplit | None = None
    uplink_speed_gbps: int | None = None  # multi-plane
    tor_ports: PortSplit | None = None
    tors: int | None = None
    aggregation_per_plane: int | None = None
    # multi-plane: each plane a Clos (expand/planes.py), keys as ClosRecord's, per plane
    rails_per_leaf: int | None = None
    leaves_per_plane: int | None = None
    cores_per_plane: int | None = None
    leaves_per_pod: int | None = None
    pods: int = 1
    spines_per_pod: int | None = None
    built_for_servers: int | None = None
    spine_ports: PortSplit | None = None
    core_groups: int | None = None
    cores_per_group: int | None = None
    spine_core_links_per_pair: int | None = None


@dataclass(frozen=True, slots=True)
class DirectRecord(DesignRecord):
    rails: int = 1
    rounds: int = 0
    rails_per_round: list[int] | None = None  # links per pair in each round-robin round
    links_per_pair: LinksPerPair | None = None


def uplink_gbps(uplink_speed_gbps: int | None, speed_gbps: int) -> int:
    """The speed of every switch-to-switch link (leaf-spine, spine-core): the uplink speed
    where the spec gives one (fabric.uplink_speed_gbps, recorded only where it differs),
    else the fabric's speed. Expand's design and the plan's view both call this."""
    return uplink_speed_gbps or speed_gbps


def record_from_design(cls: type[DesignRecord], design: dict[str, Any]) -> DesignRecord:
    """The typed record of a plan's design dict; keys of other stages (fabrics, a fabric
    view's name) stay in the dict. A missing required key is a bug: KeyError, loudly."""
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in design:
            nested = NESTED_RECORDS.get(f.name)
            values[f.name] = design[f.name] if nested is None else nested(design[f.name])
    return cls(**values)


# The records' fields that hold a record of their own, and how each reads plan.json's dict.
NESTED_RECORDS: dict[str, Callable[[Any], Any]] = {
    "leaf_ports": PortSplit.from_json, "spine_ports": PortSplit.from_json, "tor_ports": PortSplit.from_json,
    "hosts": HostsRecord.from_json, "links_per_pair": LinksPerPair.from_json, "unit_fill": UnitFill.from_json}
