"""Dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) and Dragonfly+.

Symbols as in the paper: p endpoint ports per switch, a switches per group, h global ports
per switch, g groups. Router radix = p + (a - 1) + h; at most g = a*h + 1 groups;
N = a*p*g endpoints; balanced when a = 2p = 2h (the defaults where the spec leaves them out).
Dragonfly+ (intra_group: fat-tree) splits a group into a/2 leaves (p endpoints, one link
to every spine of the group) and a/2 spines (h global ports each).

Wiring rules (one each):
- endpoints: NIC port r of server s is endpoint e = s*R + r, on switch e // p, port e % p;
- local, all-to-all: switch i of a group reaches switch j on local port j (j < i) or j - 1;
  fat-tree: leaf l, uplink s -> spine s, downlink l;
- global: group x's k-th link (lane k < m, m = global_links_per_group_pair) to group y takes
  its global slot t = k*(g-1) + pos_x(y), and slot t is global port t % h of the group's
  switch t // h (router by router, as Kim et al. and Hastings et al. number global ports).
  pos_x(y) follows `global_arrangement` (Hastings, Rincon-Cruz, Spehlmann, Meyers, Xu,
  Bunde, Leung, "Comparing Global Link Arrangements for Dragonfly Networks", CLUSTER 2015):
  relative (y - x - 1) mod g; absolute y if y < x else y - 1; circulant 2(d-1) for the
  offset d = (y - x) mod g up to g/2, else 2(g-d) - 1 (ports in +d / -d pairs).
  Lanes are whole rounds over the peers, so a pair's m links sit on m different switches.
  The switch that holds a slot matters more than the arrangement: when slots were dealt
  round-robin over the switches, every Valiant detour of a shift between neighbouring
  groups crossed the same local cable (19 % of line rate at 33 groups, where the global
  cables allow 31/64 = 48 %); router by router, all three arrangements reach 48 %.
  Circulant is the default: measured with `clusterc traffic` on 17 and 33 groups it ties
  on group shifts and leads on all-to-all under Valiant and UGAL (e.g. 33 groups, Valiant:
  32.5 % against 24.7 % relative and 25.7 % absolute).
  Unused global ports stay spare (the last ports of the last switches).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan.model import Device
from ..spec.load import LoadedSpec
from ..spec.model import Fabric
from ..plan import naming
from . import ports
from .assembly import PlanAssembly
from .hosts import plain_hosts_record
from .resolve import Common, OnCommon, Report, resolve_common, size_field

LINK_KINDS = ("server-router", "server-leaf", "local", "global")


@dataclass(frozen=True)
class DragonflyDesign(OnCommon):
    c: Common
    fat_tree: bool  # dragonfly+: leaf/spine inside the group
    groups: int
    a: int  # switches per group (leaves + spines for dragonfly+)
    p: int  # endpoint ports per switch (per leaf)
    h: int  # global ports per switch (per spine)
    m: int  # global links between each pair of groups
    arrangement: str  # relative | absolute | circulant: which group each global slot reaches
    notes: tuple[str, ...]

    @property
    def edge_per_group(self) -> int:
        """Switches with endpoints per group (routers, or leaves)."""
        return self.a // 2 if self.fat_tree else self.a

    @property
    def global_per_group(self) -> int:
        """Switches with global ports per group (routers, or spines)."""
        return self.a // 2 if self.fat_tree else self.a

    @property
    def endpoint_ports(self) -> int:
        return self.c.servers * len(self.c.required_nics().ports)


@dataclass(frozen=True)
class _Group:
    """A group's switches and ports: p endpoint ports per leaf (router), a switches, h global
    ports per spine (router); endpoint and global ports per group; the most groups that
    can each reach every other (`rule`, for messages)."""

    p: int
    a: int
    h: int
    per_group: int
    global_ports: int
    rule: str


def resolve(loaded: LoadedSpec) -> DragonflyDesign:
    f = loaded.spec.fabric
    c = resolve_common(loaded, LINK_KINDS)
    fat_tree = (f.intra_group or ("fat-tree" if f.topology == "dragonfly+" else "all-to-all")) == "fat-tree"
    errors = []
    notes: list[str] = []

    def error(code, path, message, hint=""):
        errors.append(loaded.diagnostic(code, path, message, hint))

    if f.topology == "dragonfly+" and f.intra_group == "all-to-all":
        error("SPEC_INVALID", ("fabric", "intra_group"), "dragonfly+ has a leaf/spine (fat-tree) group",
              "use topology: dragonfly for all-to-all groups")
    grp = _fat_tree_group(c, f, error) if fat_tree else _all_to_all_group(c, f, error, notes)
    if errors:
        raise SpecInvalid(errors)
    endpoints = c.servers * len(c.required_nics().ports)
    if not f.switches_per_group and not (f.groups or 0) > 1 and endpoints <= grp.per_group:
        grp = _one_group(grp, fat_tree, endpoints, notes)
    g, m = _groups(loaded, grp, endpoints, error, notes)
    if errors:
        raise SpecInvalid(errors)
    if g == 1:  # balance is between local and global links: one group has no global links
        notes = [n for n in notes if not n.startswith("dragonfly not balanced")]
    if endpoints < g * grp.per_group:
        notes.append(f"{g * grp.per_group - endpoints:,} of {g * grp.per_group:,} endpoint ports are spare")
    return DragonflyDesign(c, fat_tree, g, grp.a, grp.p, grp.h, m, f.global_arrangement, tuple(notes))


def _fat_tree_group(c: Common, f: Fabric, error: Report) -> _Group:
    """A dragonfly+ group: a/2 leaves of p endpoint ports and a/2 spines of h global ports,
    every leaf to every spine; by default a the radix, p and h what a switch has left."""
    switch = c.required_switch()
    k = switch.radix(c.speed_gbps)
    p, a, h = f.endpoints_per_switch, f.switches_per_group, f.global_ports_per_switch
    a = a or k
    half = a // 2
    p = p or max(1, k - half)
    h = h or max(1, k - half)
    if a % 2:
        error("DESIGN_IMPOSSIBLE", ("fabric", "switches_per_group"),
              f"a dragonfly+ group is a/2 leaves and a/2 spines; {a} switches do not split", f"use {a + 1} or {a - 1}")
    if p + half > k:
        error("DESIGN_IMPOSSIBLE", ("fabric", "switch"),
              f"a leaf needs p + a/2 = {p} + {half} = {p + half} ports; {switch.id} has {k} at {c.speed_gbps}G",
              f"lower endpoints_per_switch to {k - half} or switches_per_group")
    if half + h > k:
        error("DESIGN_IMPOSSIBLE", ("fabric", "switch"),
              f"a spine needs a/2 + h = {half} + {h} = {half + h} ports; {switch.id} has {k} at {c.speed_gbps}G",
              f"lower global_ports_per_switch to {k - half}")
    return _Group(p, a, h, half * p, half * h, "a/2 * h + 1")


def _all_to_all_group(c: Common, f: Fabric, error: Report, notes: list[str]) -> _Group:
    """A dragonfly group of a routers, each joined to every other, with p endpoint and h
    global ports; by default balanced (a = 2p = 2h) within the radix."""
    switch = c.required_switch()
    k = switch.radix(c.speed_gbps)
    p, a, h = f.endpoints_per_switch, f.switches_per_group, f.global_ports_per_switch
    given = [v for v in (p, a and a // 2, h) if v]
    base = given[0] if given else (k + 1) // 4  # balanced a = 2p = 2h within the radix
    p, a, h = p or base, a or 2 * base, h or base
    if p + a - 1 + h > k:
        error("DESIGN_IMPOSSIBLE", ("fabric", "switch"),
              f"router radix too small: p + (a - 1) + h = {p} + {a - 1} + {h} = {p + a - 1 + h} ports; "
              f"{switch.id} has {k} at {c.speed_gbps}G",
              f"balanced within {k} ports: endpoints_per_switch {(k + 1) // 4}, switches_per_group {2 * ((k + 1) // 4)}, "
              f"global_ports_per_switch {(k + 1) // 4}")
    if not (a == 2 * p == 2 * h):
        notes.append(f"dragonfly not balanced: a = {a}, p = {p}, h = {h} (balanced: a = 2p = 2h)")
    return _Group(p, a, h, a * p, a * h, "a * h + 1")


def _one_group(grp: _Group, fat_tree: bool, endpoints: int, notes: list[str]) -> _Group:
    """One group holds every endpoint: it needs the routers its endpoints fill, not the
    balanced a (one DGX on 64-port routers took 32 routers and 496 local cables)."""
    p, a, h = grp.p, grp.a, grp.h
    edge = -(-endpoints // p)
    if edge >= (a // 2 if fat_tree else a):
        return grp
    a = 2 * edge if fat_tree else edge
    built = (f"{edge} lea{'f' if edge == 1 else 'ves'} of {p} endpoint ports and {edge} spine{'s' if edge > 1 else ''}"
             if fat_tree else f"{edge} router{'s' if edge > 1 else ''} of {p} endpoint ports")
    notes[:] = [n for n in notes if not n.startswith("dragonfly not balanced")]  # balance is between groups
    notes.append(f"switches_per_group not given: one group holds all {endpoints:,} endpoint ports: {built}, "
                 f"not the {grp.a} switches of a balanced group; with more endpoints come more groups "
                 "and their global links")
    return dataclasses.replace(grp, a=a, per_group=edge * p, global_ports=(a // 2 if fat_tree else a) * h)


def _groups(loaded: LoadedSpec, grp: _Group, endpoints: int, error: Report, notes: list[str]) -> tuple[int, int]:
    """The groups (fabric.groups, else what the endpoints fill) and the global links
    between each pair of groups, within the group's global ports."""
    f, spec = loaded.spec.fabric, loaded.spec
    per_group, global_ports = grp.per_group, grp.global_ports
    max_groups = global_ports + 1
    g = f.groups or math.ceil(endpoints / per_group)
    if g > max_groups:
        where = ("fabric", "groups") if f.groups else size_field(spec)
        error("DESIGN_IMPOSSIBLE", where,
              f"{g:,} groups, but with {global_ports} global ports per group at most {grp.rule} = {max_groups:,} groups "
              f"can each reach every other", f"at most {max_groups * per_group:,} endpoint ports ({max_groups} groups); "
              f"use a larger switch or more global ports per switch")
        return g, 0
    if endpoints > g * per_group:
        error("DESIGN_IMPOSSIBLE", size_field(spec) if f.groups else ("fabric", "groups"),
              f"{endpoints:,} endpoint ports do not fit {g} groups of {per_group} ({g * per_group:,})",
              f"use groups: {math.ceil(endpoints / per_group)}")
        return g, 0
    m = 0
    if g > 1:
        m = f.global_links_per_group_pair or global_ports // (g - 1)
        if m * (g - 1) > global_ports:
            error("DESIGN_IMPOSSIBLE", ("fabric", "global_links_per_group_pair"),
                  f"{m} links to each of {g - 1} other groups = {m * (g - 1)} global ports; a group has {global_ports}",
                  f"use at most {global_ports // (g - 1)}")
            return g, m
        spare = global_ports - m * (g - 1)
        if spare:
            notes.append(f"{spare} of {global_ports} global ports per group are spare ({m} link(s) to each of {g - 1} groups)")
    return g, m



def build(d: DragonflyDesign):
    c = d.c
    switch = c.required_switch()
    nics = c.required_nics()
    b = PlanAssembly(c.catalog, c.media_requested)
    server_layout = b.layout(ports.server_layout(c.server.id, "compute", nics))
    switch_layout = b.layout(ports.switch_layout(switch, c.speed_gbps))
    for s in range(c.servers):
        b.add(Device(naming.server(c.server.hostname_prefix, s + 1, None), "server", c.server.id, server_layout, 0, s + 1))
    first = len(b.devices)
    per_group = d.a  # devices per group: routers, or leaves then spines
    E, A = d.edge_per_group, d.global_per_group
    for q in range(d.groups):
        if d.fat_tree:
            for i in range(E):
                b.add(Device(naming.group_switch("leaf", q + 1, i + 1), "leaf", switch.id, switch_layout, 1, i + 1, pod=q + 1))
            for i in range(A):
                b.add(Device(naming.group_switch("spine", q + 1, i + 1), "spine", switch.id, switch_layout, 2, i + 1, pod=q + 1))
        else:
            for i in range(d.a):
                b.add(Device(naming.group_switch("router", q + 1, i + 1), "router", switch.id, switch_layout, 1, i + 1, pod=q + 1))
    group_base = first + np.arange(d.groups, dtype=np.int64) * per_group
    spine_off = E if d.fat_tree else 0  # position of the first global switch within a group

    # endpoints
    nic = len(nics.ports)
    e = np.arange(d.endpoint_ports, dtype=np.int64)
    edge, port = np.divmod(e, d.p)
    grp, local = np.divmod(edge, E)
    b.link_block("server-leaf" if d.fat_tree else "server-router", e // nic, e % nic, group_base[grp] + local, port)

    # local links inside each group
    if d.fat_tree:
        leaf = np.repeat(np.arange(E), A)
        spine = np.tile(np.arange(A), E)
        gq = np.repeat(group_base, leaf.size)
        b.link_block("local", gq + np.tile(leaf, d.groups), d.p + np.tile(spine, d.groups),
                     gq + spine_off + np.tile(spine, d.groups), np.tile(leaf, d.groups))
    elif d.a > 1:
        ri, rj = np.triu_indices(d.a, 1)  # router pairs ri < rj of a group
        gq = np.repeat(group_base, ri.size)
        b.link_block("local", gq + np.tile(ri, d.groups), d.p + np.tile(rj - 1, d.groups),
                     gq + np.tile(rj, d.groups), d.p + np.tile(ri, d.groups))

    # global links between groups
    if d.groups > 1 and d.m:
        x, y = np.triu_indices(d.groups, 1)
        lane = np.repeat(np.arange(d.m), x.size)
        x, y = np.tile(x, d.m), np.tile(y, d.m)
        slot_x = lane * (d.groups - 1) + peer_position(x, y, d.groups, d.arrangement)
        slot_y = lane * (d.groups - 1) + peer_position(y, x, d.groups, d.arrangement)
        first_global = d.a // 2 if d.fat_tree else d.p + d.a - 1
        order = np.lexsort((lane, y, x))  # link rows by group pair, then lane (stable ids)
        x, y, slot_x, slot_y = x[order], y[order], slot_x[order], slot_y[order]
        b.link_block("global", group_base[x] + spine_off + slot_x // d.h, first_global + slot_x % d.h,
                     group_base[y] + spine_off + slot_y // d.h, first_global + slot_y % d.h)
    return b.plan(c.spec.name, _design_record(d), list(d.notes))


def peer_position(x: np.ndarray, y: np.ndarray, g: int, arrangement: str) -> np.ndarray:
    """The position (0 .. g-2) among group x's peers at which its global links to group y
    sit, under one of the three arrangements the literature compares (module docstring)."""
    if arrangement == "absolute":
        return np.where(y < x, y, y - 1)
    d = (y - x) % g
    if arrangement == "relative":
        return d - 1
    if arrangement == "circulant":
        return np.where(2 * d <= g, 2 * (d - 1), 2 * (g - d) - 1)
    raise ValueError(f"unknown global arrangement {arrangement!r}")


def _design_record(d: DragonflyDesign) -> dict:
    c = d.c
    switch = c.required_switch()
    rec = {
        "topology": c.spec.fabric.topology,
        "intra_group": "fat-tree" if d.fat_tree else "all-to-all",
        "tiers": 2 if d.fat_tree else 1,
        "server": c.server.id,
        "switch": switch.id,
        "speed_gbps": c.speed_gbps,
        "switch_radix": switch.radix(c.speed_gbps),
        "hosts": plain_hosts_record(c.spec, c.server),
        "servers": c.servers,
        "gpus": d.gpus,
        "groups": d.groups,
        "switches_per_group": d.a,
        "endpoints_per_switch": d.p,
        "global_ports_per_switch": d.h,
        "global_links_per_group_pair": d.m,
        "global_arrangement": d.arrangement,
        "endpoint_ports": d.endpoint_ports,
        "endpoint_ports_per_group": d.edge_per_group * d.p,
        "max_groups": d.global_per_group * d.h + 1,
    }
    return rec
