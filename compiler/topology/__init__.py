"""Topology families as data: what each `fabric.topology` value is, which spec keys it owns
and what it can do. The one place a topology's name is spelled outside its own family code.

Every stage reads these descriptors rather than comparing names: the spec derives its
allowed values and per-family keys from them, expand picks the family's resolver and
builder (expand/families.py), check its closed forms (check/families/), and outputs
their traits (a tree for Slurm and OpenSM's ftree, servers as nodes, diagram grouping).
This module sits below every stage (it imports nothing of ours) so that the spec, the
plan and the renderers can all read it without an upward import.

Adding a family: one entry per topology value here, its expand module and one line in
expand/families.py, its closed forms and one line in check/families/__init__.py, its
routes and one line in traffic/routing.py, tests and docs (tests/test_families.py fails until every layer has every family).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from .records import ClosRecord, DesignRecord, DirectRecord, DragonflyRecord, PlanesRecord, TorusRecord, record_from_design


@dataclass(frozen=True, slots=True)
class Topology:
    name: str  # the spec's `fabric.topology` value
    family: str  # the implementation: expand/<family>.py and check/families/<family>.py
    record: type[DesignRecord]  # the plan's typed design record (records.py)
    # Fabric keys that mean something for only some topologies: this one accepts these;
    # given for a topology that does not list them, they are a spec error.
    keys: tuple[str, ...] = ()
    switch: Literal["required", "optional", "none"] = "required"  # optional: a direct torus of accelerators
    needs_dims: bool = False
    # Servers hang off a tree of switches: Slurm's tree plugin and Kueue levels, OpenSM's
    # ftree engine, rack layout and growth planning all assume one.
    tree: bool = False
    servers_as_nodes: bool = False  # switchless: the servers are cabled to each other
    # What groups servers for schedulers (Slurm leaf, Kueue level): "su" where every server
    # of a scalable unit reaches all its rail leaves, "leaf" where servers share their
    # leaf, "none" where there is no switch to group by.
    host_group: Literal["su", "leaf", "none"] = "leaf"
    # False: no network link joins two rails; traffic between rails crosses the servers'
    # scale-up domain, so collectives stay rail-aligned (per-rail bisection counts).
    rails_meet: bool = True
    supports_layout: bool = False  # placement and cable lengths (expand/placement.py) are Clos-only
    supports_growth: bool = False  # building upper tiers ahead is a Clos idea
    supports_extra_endpoints: bool = False
    supports_nos: bool = False  # switch configs are generated (fabric.nos)
    supports_extra_fabrics: bool = False  # storage / in-band / OOB fabrics beside this compute one
    # How the diagrams group devices (render/diagrams/): "tiers" servers in a row, rail
    # leaves above in rail order, spines and core on top, one page per scalable unit;
    # "grid" one box per block of torus/mesh nodes; "circle" dragonfly groups on a circle
    # joined by their global links; "servers" the few servers of a switchless fabric.
    diagram: Literal["tiers", "grid", "circle", "servers"] = "tiers"
    note: str = ""  # said after the name where the spec schema lists the topologies
    # The switch roles its plans can hold (a design may build fewer: a two-tier Clos has no
    # core, a direct torus no router): what `requirements.survive` may name.
    switch_roles: tuple[str, ...] = ()
    # What its lowering writes into Device.pod and Device.group (None: left unset); a
    # management leaf of extra endpoints (expand/endpoints.py) carries its number in both.
    pod_means: str | None = None
    group_means: str | None = None


_CLOS_KEYS = ("tiers", "oversubscription", "scalable_unit", "spine_switch", "core_switch", "uplink_speed_gbps")
# keyword arguments shared by a family's Topology entries below
_CLOS: dict[str, Any]
_TORUS: dict[str, Any]
_DRAGONFLY: dict[str, Any]
_DIRECT: dict[str, Any]
_CLOS = dict(family="clos", switch_roles=("leaf", "spine", "core"), record=ClosRecord,
             pod_means="three tiers: the pod of a leaf or spine (1-based); None with two tiers",
             group_means="a core's core group (the spine position it serves); a management leaf's number",
             tree=True, supports_layout=True, supports_growth=True, supports_extra_endpoints=True,
             supports_nos=True, supports_extra_fabrics=True, diagram="tiers")
_TORUS = dict(family="torus", record=TorusRecord, group_means="a chip's host server (1-based), on a torus of chips",
              keys=("dims", "wrap", "twist", "links_per_neighbor"), switch="optional",
              needs_dims=True, diagram="grid", switch_roles=("router",))
_DRAGONFLY = dict(family="dragonfly", record=DragonflyRecord, pod_means="the dragonfly group of a switch (1-based)",
                  keys=("groups", "switches_per_group", "endpoints_per_switch", "global_ports_per_switch",
                        "global_links_per_group_pair", "intra_group", "global_arrangement"),
                  diagram="circle")
_DIRECT = dict(family="direct", record=DirectRecord, switch="none", servers_as_nodes=True, host_group="none", diagram="servers")

# Order is the order the spec's error messages and schema list them in.
TOPOLOGIES: dict[str, Topology] = {t.name: t for t in (
    Topology("fat-tree", keys=_CLOS_KEYS + ("servers_per_leaf",), **_CLOS),
    Topology("rail-optimized", keys=_CLOS_KEYS + ("spine_leaf_group",), host_group="su", **_CLOS),
    Topology("torus", **_TORUS),
    Topology("mesh", **_TORUS),
    Topology("dragonfly", **_DRAGONFLY, switch_roles=("router",)),
    Topology("dragonfly+", **_DRAGONFLY, switch_roles=("leaf", "spine")),
    Topology("rail-only", family="planes", record=PlanesRecord, rails_meet=False, switch_roles=("leaf", "spine")),
    Topology("multi-plane", family="planes", record=PlanesRecord, supports_growth=True, supports_nos=True, supports_layout=True,
             pod_means="three tiers: a leaf's or spine's pod within its plane",
             group_means="the plane of a ToR, spine or core; a management leaf's number",
             keys=("tiers", "oversubscription", "scalable_unit", "planes", "uplink_speed_gbps", "spine_switch", "core_switch"),
             switch_roles=("leaf", "spine", "core")),
    Topology("ring", **_DIRECT),
    Topology("full-mesh", **_DIRECT, note="servers cabled to each other, no switch"),
)}

FAMILY_NAMES: tuple[str, ...] = tuple(dict.fromkeys(t.family for t in TOPOLOGIES.values()))


def is_tree(name: str | None) -> bool:
    """A known topology whose servers hang off a tree of switches (OpenSM's ftree applies)."""
    return name in TOPOLOGIES and TOPOLOGIES[name].tree


def topology(name: str) -> Topology:
    """The descriptor of a validated topology name (the spec rejects unknown ones)."""
    return TOPOLOGIES[name]


def topologies_where(trait: str) -> tuple[str, ...]:
    """Names of the topologies whose boolean trait is set, in registry order."""
    return tuple(name for name, t in TOPOLOGIES.items() if getattr(t, trait))


def switch_roles() -> tuple[str, ...]:
    """Every switch role some topology builds, in registry order (the survive requirement's keys)."""
    return tuple(dict.fromkeys(r for t in TOPOLOGIES.values() for r in t.switch_roles))


def family_keys() -> dict[str, tuple[str, ...]]:
    """Each family-only fabric key -> the topologies that accept it, in registry order."""
    out: dict[str, list[str]] = {}
    for name, t in TOPOLOGIES.items():
        for key in t.keys:
            out.setdefault(key, []).append(name)
    return {key: tuple(names) for key, names in out.items()}


def design_record(design: dict[str, Any]) -> DesignRecord:
    """The typed record of a plan's `design` dict, by its topology's family."""
    return record_from_design(TOPOLOGIES[design["topology"]].record, design)
