"""Rail-only and multi-plane (dual-homed) networks: rails or planes that never meet in the network.

- rail-only: NIC port i of every server goes to the one switch of rail i (or, when a rail
  outgrows one switch, to that rail's own non-blocking leaf/spine sub-fabric); no switch
  joins two rails. Traffic between rails crosses the servers' scale-up domain (NVLink), never the
  network: the network's own bisection across rails is 0.
- multi-plane (Alibaba HPN, SIGCOMM 2024; NVIDIA's dual-plane Spectrum-X): every NIC has P
  ports and port p goes to plane p. Each plane is its own rail-optimized Clos, sized by the
  same rules and code as the Clos families (resolve.py, sizing.py, unit_choice.py): fewest
  ports, equal links per leaf-spine pair, the default unit and its notes, growth, two or
  three tiers. The planes never meet.

A plane's leaf may serve g rails of its scalable unit (NVIDIA's HGX B300 RA at 32 nodes: a
leaf per rail pair 1+5, 2+6, 3+7, 4+8, 64 x 400G down). That is a rail-optimized Clos whose
"servers" are rail groups: server s is g virtual servers of R/g NIC ports, virtual server
(s, k) holding NICs k*R/g .. (k+1)*R/g - 1, so leaf r of a unit takes rails r, r + R/g, ...
Every g that divides R is sized; the cheapest (ports, switches, cables) wins, the fewest
rails per leaf of equals (the most traffic stays on one leaf).

Wiring (multi-plane): server s, NIC n, port p -> plane p, virtual server v = s*g + n // (R/g)
of SU v // U (U virtual servers per SU), leaf (SU, n % (R/g)), port v % U; leaves, spines
and cores of a plane then follow clos.py's rules (uplink t -> spine t // m, ...). Links are
numpy columns.

A leaf may run its host ports and its uplinks at different speeds on one box (HPN: 128 x
200G down in 32 cages of 4 x 200G, 60 x 400G up in 30 cages of 2 x 400G); see
sizing.LeafPorts.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan import naming
from ..plan.model import Device
from ..spec.load import LoadedSpec
from ..spec.model import Spec
from . import ports
from . import resolve as clos_resolve
from .assembly import PlanAssembly
from .clos_inputs import SU_ONLY, ClosShape, SizingInputs
from .hosts import plain_hosts_record
from .resolve import ClosDesign, Common, OnCommon, resolve_common, size_field
from .scale_up import scale_up_domains
from .sizing import SizingError


@dataclass(frozen=True)
class PlanesDesign(OnCommon):
    c: Common
    rail_only: bool
    rails: int  # NICs per server (rail-only: NIC ports per server)
    planes: int  # ports per NIC (rail-only: 1)
    segment: int  # servers per segment: host ports used on each ToR (rail-only: per leaf)
    segments: int  # rail-only: leaves per rail
    uplink_speed_gbps: int
    uplinks: int  # per ToR = aggregation switches per plane (rail-only: spines per rail, 0 for one switch)
    down_cages: int  # ToR cages at host speed (first in panel order)
    up_cages: int
    notes: tuple[str, ...]
    links_per_pair: int = 1  # rail-only sub-fabric: links from a leaf to each spine of its rail
    plane: ClosDesign | None = None  # multi-plane: one plane, over rail groups as servers (module doc)
    rails_per_leaf: int = 1  # multi-plane: g, the rails of a unit one leaf serves

    # What placement (expand/placement.py, layout.py) reads of a design, as ClosDesign has it.
    @property
    def server(self):
        return self.c.server

    @property
    def switch(self):
        return self.c.switch

    @property
    def servers(self) -> int:
        return self.c.servers

    @property
    def final_servers(self) -> int:
        return self.plane.final_servers // self.rails_per_leaf if self.plane else self.c.servers

    @property
    def media_requested(self) -> dict:
        return self.c.media_requested

    @property
    def servers_per_leaf(self) -> int:
        return self.segment

    @property
    def clos_plane(self) -> ClosDesign:
        """Multi-plane: the one plane's Clos design, which _resolve_multi_plane always sets."""
        assert self.plane is not None
        return self.plane

    # What addressing (expand/addressing.py) reads: the plane's tiers, and unique slots.
    @property
    def sizing(self):
        return self.clos_plane.sizing

    def structural_slots(self, plan) -> np.ndarray:
        """Per device its 0-based place within its role, plane-major (planes never share a
        slot): servers by index, leaves (plane, unit, leaf of the unit), spines and cores by
        their index, which _build_planes numbers plane-major."""
        vr = self.rails // self.rails_per_leaf
        L = self.clos_plane.sizing.leaves
        out = np.empty(len(plan.devices), dtype=np.int64)
        for i, d in enumerate(plan.devices):
            if d.role == "leaf":
                out[i] = (d.group - 1) * L + (d.su - 1) * vr + d.rail - 1
            else:
                out[i] = d.index - 1
        return out


def resolve(loaded: LoadedSpec) -> PlanesDesign:
    c = resolve_common(loaded)
    if loaded.spec.fabric.topology == "rail-only":
        return _resolve_rail_only(loaded, c)
    return _resolve_multi_plane(loaded, c)


def _resolve_rail_only(loaded: LoadedSpec, c: Common) -> PlanesDesign:
    """Rail-only: a switch per rail, or where a rail does not fit one, a non-blocking
    leaf/spine sub-fabric per rail."""
    sw, speed = c.required_switch(), c.speed_gbps
    nic_ports = len(c.required_nics().ports)
    notes: list[str] = []
    radix = sw.radix(speed)
    half = radix // 2
    leaves, spines, m = 1, 0, 0
    if c.servers > radix:
        # One switch cannot hold the rail: a non-blocking leaf/spine sub-fabric per rail,
        # half of each leaf's ports down, half up, split evenly over the fewest spines.
        leaves = math.ceil(c.servers / half)
        spines = min((k for k in range(1, half + 1) if half % k == 0 and leaves * (half // k) <= radix), default=0)
        if spines == 0:
            raise SpecInvalid([loaded.diagnostic(
                "DESIGN_IMPOSSIBLE", size_field(loaded.spec),
                f"rail-only: {c.servers:,} servers need {leaves} leaves per rail, more than a {sw.id} spine "
                f"({radix} ports at {speed}G) can join", f"use at most {radix * half:,} servers, or rail-optimized")])
        m = half // spines
        notes.append(f"a rail does not fit one {sw.id} ({radix} ports): each rail is a 2-tier sub-fabric of "
                     f"{leaves} leaves ({half} servers each) and {spines} spines, non-blocking")
    up = scale_up_domains(c.server, c.servers)
    domain = f" ({up.phrase()})" if up else ""
    notes.append(f"rail-only: {nic_ports} rails; rails never meet in the network, so traffic "
                 f"between rails crosses the servers' scale-up domain{domain} and the network's bisection across rails is 0")
    if sw.protocol == "infiniband" and nic_ports > 1:
        notes.append("InfiniBand: each rail is a separate subnet (no switch joins them): "
                     "it needs its own subnet manager, e.g. one OpenSM per rail")
    seg = c.servers if leaves == 1 else half
    return PlanesDesign(c, True, nic_ports, 1, seg, leaves, speed, spines, 0, 0, tuple(notes), m)


def _planes(loaded: LoadedSpec, c: Common) -> int:
    """The planes: one per port of a NIC (fabric.planes, if given, must say so)."""
    nics = c.required_nics()
    spec, nic_ports = loaded.spec, len(nics.ports)
    per_nic, rest = divmod(nic_ports, nics.nics)
    if rest or per_nic < 2:
        raise SpecInvalid([loaded.diagnostic(
            "DESIGN_IMPOSSIBLE", ("server",),
            f"multi-plane needs NICs with 2 or more ports (one per plane); {c.server.id} has {nic_ports} ports on {nics.nics} NICs",
            "use a server with dual-port NICs (e.g. hpn-8x2x200g, hgx-b300), or rail-optimized")])
    planes = spec.fabric.planes or per_nic
    if planes != per_nic:
        raise SpecInvalid([loaded.diagnostic(
            "DESIGN_IMPOSSIBLE", ("fabric", "planes"),
            f"planes: {planes}, but each {c.server.id} NIC has {per_nic} ports and each port goes to its own plane",
            f"use planes: {per_nic}, or leave it out")])
    if spec.layout is not None and spec.growth is not None:
        raise SpecInvalid([loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("layout",), "multi-plane: a physical layout together with growth is not supported yet",
            "remove `growth:` to place today's fabric, or `layout:` to build ahead for the growth target")])
    return planes


def _resolve_multi_plane(loaded: LoadedSpec, c: Common) -> PlanesDesign:
    """Multi-plane: one plane per NIC port, each the cheapest rail-optimized Clos over rail
    groups (_size_plane)."""
    planes = _planes(loaded, c)
    plane, g = _size_plane(loaded, c)
    assert plane.su_size is not None  # a plane is a rail-optimized Clos: built of SUs
    seg = plane.su_size // g
    # The plane's own notes count its switches and cables: one plane's.
    notes = [f"each plane: {_translate(n, g)}" for n in plane.notes]
    R = c.required_nics().nics
    if g > 1:
        groups = (f"all {R} rails" if g == R else
                  f"{g} rails (" + ", ".join("+".join(str(r + 1 + k * (R // g)) for k in range(g)) for r in range(R // g)) + ")")
        notes.insert(0, f"a leaf serves {groups} of the {seg} servers of its scalable unit: "
                        f"{plane.sizing.leaf.down} downlinks, fewer leaves than one per rail")
    s_ = plane.sizing
    per_plane = s_.leaves + s_.spines + s_.cores
    notes.append(f"{planes} planes that never meet, each a {s_.tiers}-tier rail-optimized Clos of {s_.leaves} leaves"
                 + (f", {s_.spines} spines and {s_.cores} cores" if s_.tiers == 3 else f" and {s_.spines} spines")
                 + f" ({per_plane * planes:,} switches over all planes); a GPU's bandwidth is its {planes} plane ports "
                   f"together, and a plane lost takes 1/{planes} of it")
    return PlanesDesign(c, False, R, planes, seg, plane.sus, plane.up_gbps, s_.spines,
                        0, 0, tuple(notes), s_.leaf_spine_links, plane, g)


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _translate(note: str, g: int) -> str:
    """A plane's notes count rail groups as servers (module doc): g per server. Say servers."""
    if g == 1:
        return note
    note = re.sub(r"(\d[\d,]*) servers", lambda m: f"{int(m.group(1).replace(',', '')) // g:,} servers", note)
    return re.sub(r"scalable_unit: (\d+)", lambda m: f"scalable_unit: {int(m.group(1)) // g}", note)


def plane_shape(spec: Spec, g: int) -> ClosShape:
    """One plane's shape over rail groups of `g` rails (module doc): rail-optimized, the
    spec's tiers and ratios, its SU and growth target counted in rail groups (g per server)."""
    shape = ClosShape.of_spec(spec)
    growth = shape.growth
    if growth is not None and growth.max_servers:
        growth = growth.model_copy(update={"max_servers": growth.max_servers * g})
    su = shape.scalable_unit
    return dataclasses.replace(shape, topology="rail-optimized", scalable_unit=su * g if su else None, growth=growth,
                               unit_keys=SU_ONLY)


def _size_plane(loaded: LoadedSpec, c: Common) -> tuple[ClosDesign, int]:
    """One plane as a rail-optimized Clos over rail groups, for every g (rails per leaf)
    that divides the NICs; the cheapest, and its g. The plane's Clos is sized by the Clos
    families' own code (resolve.size_clos), so every rule and note is theirs."""
    nics, switch = c.required_nics(), c.required_switch()
    R = nics.nics
    up_gbps = clos_resolve.uplink_speed(loaded, c)
    upper = clos_resolve._upper_switches(loaded, c, up_gbps)
    best, first_error = None, None
    for g in _divisors(R):
        if c.server.gpus % g:
            continue
        vserver = c.server.model_copy(update={"gpus": c.server.gpus // g})
        vnics = nics.model_copy(update={"nics": R // g, "ports": [nics.ports[n * (len(nics.ports) // R)]
                                                                  for n in range(R // g)]})
        inputs = SizingInputs(plane_shape(loaded.spec, g), vserver, vnics, switch, upper, c.speed_gbps, c.servers * g)
        try:
            design = clos_resolve.size_clos(inputs, loaded.spec, c.catalog, c.media_requested)
        except SizingError as exc:
            first_error = first_error or exc
            continue
        assert design.unit_fill is not None  # a plane's SU is chosen, and its fill recorded
        cost = design.unit_fill["cost"]
        uppers = cost["switches"] - design.final_leaves
        ports = design.final_leaves * switch.radix(c.speed_gbps) + uppers * upper.spine_radix + 2 * cost["cables"]
        key = (ports, cost["switches"], cost["cables"], g)
        if best is None or key < best[0]:
            best = (key, design, g)
    if best is None:
        err = first_error
        assert err is not None  # g = 1 divides every server's GPUs: it was sized, or failed
        raise SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", err.path, err.message, err.hint)])
    return best[1], best[2]


def build(d: PlanesDesign):
    c = d.c
    b = PlanAssembly(c.catalog, c.media_requested)
    # Device indices are unique per role (and SU for ToRs): planned IB GUIDs derive from them.
    server_layout = b.layout(ports.server_layout(c.server.id, "compute", c.required_nics()))
    for s in range(c.servers):
        # multi-plane: servers carry their scalable unit (placement racks a unit together)
        su = s // d.segment + 1 if d.plane is not None else None
        b.add(Device(naming.server(c.server.hostname_prefix, s + 1, None), "server", c.server.id, server_layout, 0, s + 1,
                     su=su))
    first_tor = len(b.devices)
    R, S = d.rails, d.segment
    if d.rail_only:
        switch = c.required_switch()
        layout = b.layout(ports.switch_layout(switch, c.speed_gbps))
        for r in range(R):
            for i in range(d.segments):
                name = naming.rail_switch(r + 1) if d.segments == 1 else naming.rail_leaf_of(r + 1, i + 1)
                b.add(Device(name, "leaf", switch.id, layout, 1, r * d.segments + i + 1, rail=r + 1))
        # Server s, NIC port r -> leaf (rail r, s // S), port s % S.
        srv = np.repeat(np.arange(c.servers, dtype=np.int64), R)
        rail = np.tile(np.arange(R, dtype=np.int64), c.servers)
        b.link_block("server-leaf", srv, rail, first_tor + rail * d.segments + srv // S, srv % S)
        if d.uplinks:
            first_spine = len(b.devices)
            for r in range(R):
                for j in range(d.uplinks):
                    b.add(Device(naming.rail_spine(r + 1, j + 1), "spine", switch.id, layout, 2, r * d.uplinks + j + 1, rail=r + 1))
            # Leaf i of rail r, uplink u -> spine u // m of rail r, port i * m + u % m.
            m, up = d.links_per_pair, d.uplinks * d.links_per_pair
            leaf = np.repeat(np.arange(R * d.segments, dtype=np.int64), up)
            u = np.tile(np.arange(up, dtype=np.int64), R * d.segments)
            r_of, i_of = np.divmod(leaf, d.segments)
            b.link_block("leaf-spine", first_tor + leaf, S + u, first_spine + r_of * d.uplinks + u // m, i_of * m + u % m)
        return b.plan(c.spec.name, _design_record(d), list(d.notes))
    return _build_planes(d, b)


def _build_planes(d: PlanesDesign, b: PlanAssembly):
    """P copies of the plane's Clos (module doc for the wiring); device index p-major so
    planned ids stay unique per role."""
    first_leaf, first_spine, first_core = _add_plane_switches(d, b)
    _wire_planes(d, b, first_leaf, first_spine, first_core)
    return b.plan(d.c.spec.name, _design_record(d), list(d.notes))


def _add_plane_switches(d: PlanesDesign, b: PlanAssembly) -> tuple[int, int, int]:
    """Every plane's leaves, then spines, then cores, plane by plane; the first of each."""
    c, pd = d.c, d.clos_plane
    s = pd.sizing
    P, vr = d.planes, d.rails // d.rails_per_leaf  # leaves per unit in a plane (virtual rails)
    leaf_sw = c.required_switch()
    spine_sw = pd.spine_switch or leaf_sw
    core_sw = pd.core_switch or spine_sw
    leaf_layout = b.layout(ports.leaf_layout(leaf_sw, c.speed_gbps, pd.up_gbps, pd.leaf_ports.down_cages(s.leaf.down)))
    spine_layout = b.layout(ports.switch_layout(spine_sw, pd.up_gbps))
    core_layout = b.layout(ports.switch_layout(core_sw, pd.up_gbps))
    L, S, C = s.leaves, s.spines, s.cores
    first_leaf = len(b.devices)
    for p in range(P):
        for li in range(L):
            su, r = divmod(li, vr)
            pod = li // s.leaves_per_pod + 1 if s.tiers == 3 else None
            b.add(Device(naming.plane_tor(p + 1, su + 1, r + 1), "leaf", leaf_sw.id, leaf_layout, 1,
                         p * vr + r + 1, su=su + 1, rail=r + 1, group=p + 1, pod=pod))
    first_spine = len(b.devices)
    for p in range(P):
        for k in range(S):
            pod, j = divmod(k, s.spines_per_pod)
            name = naming.plane_agg(p + 1, k + 1) if s.tiers == 2 else naming.plane_spine(p + 1, pod + 1, j + 1)
            b.add(Device(name, "spine", spine_sw.id, spine_layout, 2, p * S + k + 1, group=p + 1,
                         pod=pod + 1 if s.tiers == 3 else None))
    first_core = len(b.devices)
    for p in range(P):
        for k in range(C):
            b.add(Device(naming.plane_core(p + 1, k + 1), "core", core_sw.id, core_layout, 3, p * C + k + 1, group=p + 1))
    return first_leaf, first_spine, first_core


def _wire_planes(d: PlanesDesign, b: PlanAssembly, first_leaf: int, first_spine: int, first_core: int) -> None:
    """Server -> leaf over the planes, then each plane's leaf -> spine (-> core) as clos.py."""
    c, pd = d.c, d.clos_plane
    s = pd.sizing
    assert pd.su_size is not None  # a plane is a rail-optimized Clos: built of SUs
    P, R, g = d.planes, d.rails, d.rails_per_leaf
    vr = R // g
    L, S, C = s.leaves, s.spines, s.cores
    # Server -> leaf. Port i of a server: NIC i // P, plane i % P.
    n_ports = R * P
    srv = np.repeat(np.arange(c.servers, dtype=np.int64), n_ports)
    port = np.tile(np.arange(n_ports, dtype=np.int64), c.servers)
    nic, plane = np.divmod(port, P)
    v = srv * g + nic // vr
    unit, slot = np.divmod(v, pd.su_size)  # virtual servers per unit
    b.link_block("server-leaf", srv, port, first_leaf + plane * L + unit * vr + nic % vr, slot)
    # Leaf -> spine, per plane as clos.py.
    up, m = s.leaf.up, s.leaf_spine_links
    leaf = np.repeat(np.arange(P * L, dtype=np.int64), up)
    t = np.tile(np.arange(up, dtype=np.int64), P * L)
    p_of, li = np.divmod(leaf, L)
    if s.tiers == 2:
        b_dev, b_port = first_spine + p_of * S + t // m, li * m + t % m
    else:
        pod, in_pod = np.divmod(li, s.leaves_per_pod)
        b_dev, b_port = first_spine + p_of * S + pod * s.spines_per_pod + t, in_pod
    b.link_block("leaf-spine", first_leaf + leaf, pd.leaf_ports.first_uplink(s.leaf.down) + t, b_dev, b_port)
    if s.tiers == 3:
        us, mc = s.spine.up, s.spine_core_links
        sp = np.repeat(np.arange(P * S, dtype=np.int64), us)
        t = np.tile(np.arange(us, dtype=np.int64), P * S)
        p_of, k = np.divmod(sp, S)
        pod, j = np.divmod(k, s.spines_per_pod)
        b.link_block("spine-core", first_spine + sp, s.spine.down + t,
                     first_core + p_of * C + j * s.cores_per_group + t // mc, pod * mc + t % mc)


def _design_record(d: PlanesDesign) -> dict:
    c = d.c
    switch = c.required_switch()
    rec = {
        "topology": c.spec.fabric.topology,
        "tiers": 1 if d.rail_only and not d.uplinks else 2,
        "server": c.server.id,
        "switch": switch.id,
        "speed_gbps": c.speed_gbps,
        "switch_radix": switch.radix(c.speed_gbps),
        "hosts": plain_hosts_record(c.spec, c.server),
        "servers": c.servers,
        "gpus": d.gpus,
        "rails": d.rails,
        "planes": d.planes,
        "scalable_unit": d.segment,
        "segments": d.segments,
        # Device attribute whose values the network never joins (checks: not a partition).
        "never_meet": "rail" if d.rail_only else "group",
    }
    if d.rail_only:
        # One direction, the GPUs of one rail halved on its own switch.
        rec["per_rail_bisection_gbps"] = c.servers // 2 * c.speed_gbps  # non-blocking within a rail
        if d.uplinks:
            rec.update({"leaves_per_rail": d.segments, "spines_per_rail": d.uplinks,
                        "leaf_spine_links_per_pair": d.links_per_pair, "leaf_ports": {"down": d.segment, "up": d.segment}})
    else:
        pd = d.clos_plane
        sz, lp = pd.sizing, pd.leaf_ports
        leaf_ports = {"down": sz.leaf.down, "up": sz.leaf.up,
                      **({"down_cages": lp.down_cages(sz.leaf.down), "up_cages": lp.up_cages(sz.leaf.up)} if lp.mixed else {})}
        rec.update({
            "tiers": sz.tiers,
            "uplink_speed_gbps": d.uplink_speed_gbps,
            "rails_per_leaf": d.rails_per_leaf,
            "leaf_ports": leaf_ports,
            "tor_ports": leaf_ports,
            "tors": d.planes * sz.leaves,
            "leaves_per_plane": sz.leaves,
            "aggregation_per_plane": sz.spines,
            "cores_per_plane": sz.cores,
            "leaves_per_pod": sz.leaves_per_pod,
            "pods": sz.pods,
            "spines_per_pod": sz.spines_per_pod,
            "leaf_spine_links_per_pair": sz.leaf_spine_links,
            "built_for_servers": pd.final_servers // d.rails_per_leaf,
            "oversubscription": {"leaf": str(c.spec.fabric.oversubscription.leaf),
                                 **({"spine": str(c.spec.fabric.oversubscription.spine)} if sz.tiers == 3 else {})},
        })
        if sz.tiers == 3:
            rec.update({"spine_ports": {"down": sz.spine.down, "up": sz.spine.up}, "core_groups": sz.spines_per_pod,
                        "cores_per_group": sz.cores_per_group, "spine_core_links_per_pair": sz.spine_core_links})
        if pd.unit_fill is not None:
            rec["unit_fill"] = _unit_fill(pd.unit_fill, d.rails_per_leaf, d.planes)
    return rec


def _unit_fill(fill: dict, g: int, planes: int) -> dict:
    """A plane's unit fill (unit_choice.fill_record) in servers (not rail groups) and over
    every plane (switches and cables of all planes)."""
    def cost(rec: dict | None) -> dict | None:
        if rec is None:
            return None
        out = {**rec, "switches": rec["switches"] * planes, "cables": rec["cables"] * planes}
        for k in ("size", "servers"):
            if k in out:
                out[k] //= g
        return out
    out = {**fill, "size": fill["size"] // g, "servers": fill["servers"] // g,
           "last_unit_servers": fill["last_unit_servers"] // g,
           "last_unit_leaves": fill["last_unit_leaves"] * planes, "last_unit_uplinks": fill["last_unit_uplinks"] * planes}
    for k in ("cost", "cheapest", "whole_units", "with_room"):
        if k in out:
            out[k] = cost(out[k])
    return out
