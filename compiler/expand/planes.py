"""Rail-only and multi-plane (dual-homed) networks: rails or planes that never meet in the network.

- rail-only: NIC port i of every server goes to the one switch of rail i (or, when a rail
  outgrows one switch, to that rail's own non-blocking leaf/spine sub-fabric); no switch
  joins two rails. Traffic between rails crosses the servers' scale-up domain (NVLink), never the
  network: the network's own bisection across rails is 0.
- multi-plane (Alibaba HPN, SIGCOMM 2024): every NIC has P ports and port p goes to plane
  p (dual-ToR when P = 2). Servers are cut into segments; a ToR serves one (plane, segment,
  rail) and has one host port per server of its segment. Each ToR links once to every
  aggregation switch of its plane; the planes never meet.

Wiring rule: server s, NIC n (0-based), port p -> ToR (plane p, segment s // S, rail n),
host port s % S. ToR k of plane p (k = segment * rails + rail) uplink j -> aggregation
switch j of plane p, port k. Links are numpy columns.

A ToR runs its host ports and its uplinks at different speeds on one box (HPN: 128 x 200G
down in 32 cages of 4 x 200G, 60 x 400G up in 30 cages of 2 x 400G: 62 of 64 OSFP cages
of a 51.2T switch); see ports.mixed_switch_layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan.model import Device
from ..spec.load import LoadedSpec
from ..plan import naming
from . import ports
from .assembly import PlanAssembly
from .hosts import plain_hosts_record
from .scale_up import scale_up_domains
from .resolve import Common, OnCommon, resolve_common, size_field


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


def _uplinks(segment: int, speed: int, up_speed: int, ratio) -> int:
    """Uplinks so that down:up bandwidth is at most the ratio."""
    return math.ceil(segment * speed * ratio.up / (ratio.down * up_speed))


def resolve(loaded: LoadedSpec) -> PlanesDesign:
    spec, fabric = loaded.spec, loaded.spec.fabric
    c = resolve_common(loaded)
    errors = []

    def error(code, path, message, hint=""):
        errors.append(loaded.diagnostic(code, path, message, hint))

    sw, speed = c.switch, c.speed_gbps
    nic_ports = len(c.nics.ports)
    notes: list[str] = []
    if fabric.topology == "rail-only":
        radix = sw.radix(speed)
        half = radix // 2
        leaves, spines, m = 1, 0, 0
        if c.servers > radix:
            # One switch cannot hold the rail: a non-blocking leaf/spine sub-fabric per rail,
            # half of each leaf's ports down, half up, split evenly over the fewest spines.
            leaves = math.ceil(c.servers / half)
            spines = min((k for k in range(1, half + 1) if half % k == 0 and leaves * (half // k) <= radix), default=0)
            if spines == 0:
                error("DESIGN_IMPOSSIBLE", size_field(spec),
                      f"rail-only: {c.servers:,} servers need {leaves} leaves per rail, more than a {sw.id} spine "
                      f"({radix} ports at {speed}G) can join",
                      f"use at most {radix * half:,} servers, or rail-optimized")
            else:
                m = half // spines
                notes.append(f"a rail does not fit one {sw.id} ({radix} ports): each rail is a 2-tier sub-fabric of "
                             f"{leaves} leaves ({half} servers each) and {spines} spines, non-blocking")
        if errors:
            raise SpecInvalid(errors)
        up = scale_up_domains(c.server, c.servers)
        domain = f" ({up.phrase()})" if up else ""
        notes.append(f"rail-only: {nic_ports} rails; rails never meet in the network, so traffic "
                     f"between rails crosses the servers' scale-up domain{domain} and the network's bisection across rails is 0")
        if sw.protocol == "infiniband" and nic_ports > 1:
            notes.append("InfiniBand: each rail is a separate subnet (no switch joins them): "
                         "it needs its own subnet manager, e.g. one OpenSM per rail")
        seg = c.servers if leaves == 1 else half
        return PlanesDesign(c, True, nic_ports, 1, seg, leaves, speed, spines, 0, 0, tuple(notes), m)

    per_nic, rest = divmod(nic_ports, c.nics.nics)
    if rest or per_nic < 2:
        error("DESIGN_IMPOSSIBLE", ("server",),
              f"multi-plane needs NICs with 2 or more ports (one per plane); {c.server.id} has {nic_ports} ports on {c.nics.nics} NICs",
              "use a server with dual-port NICs (e.g. hpn-8x2x200g), or rail-optimized")
        raise SpecInvalid(errors)
    planes = fabric.planes or per_nic
    if planes != per_nic:
        error("DESIGN_IMPOSSIBLE", ("fabric", "planes"),
              f"planes: {planes}, but each {c.server.id} NIC has {per_nic} ports and each port goes to its own plane",
              f"use planes: {per_nic}, or leave it out")
    up_speed = fabric.uplink_speed_gbps or speed
    if up_speed not in sw.modes:
        modes = ", ".join(f"{s}G" for s in sorted(sw.modes))
        error("SPEC_SPEED_UNSUPPORTED", ("fabric", "uplink_speed_gbps"), f"{sw.id} has no {up_speed}G port mode", f"{sw.id} runs {modes}")
    if errors:
        raise SpecInvalid(errors)
    ratio = fabric.oversubscription.leaf
    ppc_down, ppc_up = sw.modes[speed].ports_per_cage, sw.modes[up_speed].ports_per_cage

    def cages(seg: int) -> tuple[int, int, int]:
        u = _uplinks(seg, speed, up_speed, ratio)
        return u, math.ceil(seg / ppc_down), math.ceil(u / ppc_up)

    if fabric.scalable_unit:
        segment = fabric.scalable_unit
    else:
        segment = max((s for s in range(1, sw.cages * ppc_down + 1) if sum(cages(s)[1:]) <= sw.cages), default=0)
        notes.append(f"scalable_unit not given: {segment} servers per segment (the most a ToR holds at {ratio})")
    uplinks, down_cages, up_cages = cages(segment)
    if segment == 0 or down_cages + up_cages > sw.cages:
        error("DESIGN_IMPOSSIBLE", ("fabric", "scalable_unit") if fabric.scalable_unit else ("fabric", "oversubscription"),
              f"a ToR needs {segment} host ports at {speed}G ({down_cages} cages) + {uplinks} uplinks at {up_speed}G "
              f"({up_cages} cages) = {down_cages + up_cages} cages; {sw.id} has {sw.cages}",
              "use a smaller scalable_unit or a higher oversubscription")
        raise SpecInvalid(errors)
    segments = math.ceil(c.servers / segment)
    tors_per_plane = segments * c.nics.nics
    agg_radix = sw.radix(up_speed)
    if tors_per_plane > agg_radix:
        most = agg_radix // c.nics.nics * segment
        error("DESIGN_IMPOSSIBLE", size_field(spec),
              f"{segments} segments x {c.nics.nics} rails = {tors_per_plane} ToRs per plane, but an aggregation switch "
              f"({sw.id}) has {agg_radix} ports at {up_speed}G: one per ToR of its plane",
              f"use at most {most:,} servers ({most * c.server.gpus:,} GPUs) per pod")
        raise SpecInvalid(errors)
    if c.servers % segment:
        notes.append(f"the last segment has {c.servers % segment} of {segment} servers")
    return PlanesDesign(c, False, c.nics.nics, planes, segment, segments, up_speed, uplinks, down_cages, up_cages, tuple(notes))


def build(d: PlanesDesign):
    c = d.c
    b = PlanAssembly(c.catalog, c.media_requested)
    # Device indices are unique per role (and SU for ToRs): planned IB GUIDs derive from them.
    server_layout = b.layout(ports.server_layout(c.server.id, "compute", c.nics))
    for s in range(c.servers):
        b.add(Device(naming.server(c.server.hostname_prefix, s + 1, None), "server", c.server.id, server_layout, 0, s + 1))
    first_tor = len(b.devices)
    R, P, S = d.rails, d.planes, d.segment
    if d.rail_only:
        layout = b.layout(ports.switch_layout(c.switch, c.speed_gbps))
        for r in range(R):
            for i in range(d.segments):
                name = naming.rail_switch(r + 1) if d.segments == 1 else naming.rail_leaf_of(r + 1, i + 1)
                b.add(Device(name, "leaf", c.switch.id, layout, 1, r * d.segments + i + 1, rail=r + 1))
        # Server s, NIC port r -> leaf (rail r, s // S), port s % S.
        srv = np.repeat(np.arange(c.servers, dtype=np.int64), R)
        rail = np.tile(np.arange(R, dtype=np.int64), c.servers)
        b.link_block("server-leaf", srv, rail, first_tor + rail * d.segments + srv // S, srv % S)
        if d.uplinks:
            first_spine = len(b.devices)
            for r in range(R):
                for j in range(d.uplinks):
                    b.add(Device(naming.rail_spine(r + 1, j + 1), "spine", c.switch.id, layout, 2, r * d.uplinks + j + 1, rail=r + 1))
            # Leaf i of rail r, uplink u -> spine u // m of rail r, port i * m + u % m.
            m, up = d.links_per_pair, d.uplinks * d.links_per_pair
            leaf = np.repeat(np.arange(R * d.segments, dtype=np.int64), up)
            u = np.tile(np.arange(up, dtype=np.int64), R * d.segments)
            r_of, i_of = np.divmod(leaf, d.segments)
            b.link_block("leaf-spine", first_tor + leaf, S + u, first_spine + r_of * d.uplinks + u // m, i_of * m + u % m)
        return b.plan(c.spec.name, _design_record(d), list(d.notes))
    tor_layout = b.layout(ports.mixed_switch_layout(c.switch, [(d.down_cages, c.speed_gbps), (d.up_cages, d.uplink_speed_gbps)]))
    for p in range(P):
        for seg in range(d.segments):
            for r in range(R):
                b.add(Device(naming.plane_tor(p + 1, seg + 1, r + 1), "leaf", c.switch.id, tor_layout, 1,
                             p * R + r + 1, su=seg + 1, rail=r + 1, group=p + 1))
    # Server -> ToR. Port i of a server: NIC i // P, plane i % P.
    n_ports = R * P
    srv = np.repeat(np.arange(c.servers, dtype=np.int64), n_ports)
    port = np.tile(np.arange(n_ports, dtype=np.int64), c.servers)
    nic, plane = np.divmod(port, P)
    tor = first_tor + (plane * d.segments + srv // S) * R + nic
    b.link_block("server-leaf", srv, port, tor, srv % S)
    first_agg = len(b.devices)
    agg_layout = b.layout(ports.switch_layout(c.switch, d.uplink_speed_gbps))
    for p in range(P):
        for j in range(d.uplinks):
            b.add(Device(naming.plane_agg(p + 1, j + 1), "spine", c.switch.id, agg_layout, 2, p * d.uplinks + j + 1, group=p + 1))
    per_plane = d.segments * R
    k = np.repeat(np.arange(P * per_plane, dtype=np.int64), d.uplinks)  # ToR, plane-major
    j = np.tile(np.arange(d.uplinks, dtype=np.int64), P * per_plane)
    up_base = d.down_cages * c.switch.modes[c.speed_gbps].ports_per_cage
    b.link_block("leaf-spine", first_tor + k, up_base + j, first_agg + (k // per_plane) * d.uplinks + j, k % per_plane)
    return b.plan(c.spec.name, _design_record(d), list(d.notes))


def _design_record(d: PlanesDesign) -> dict:
    c = d.c
    rec = {
        "topology": c.spec.fabric.topology,
        "tiers": 1 if d.rail_only and not d.uplinks else 2,
        "server": c.server.id,
        "switch": c.switch.id,
        "speed_gbps": c.speed_gbps,
        "switch_radix": c.switch.radix(c.speed_gbps),
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
        rec.update({
            "uplink_speed_gbps": d.uplink_speed_gbps,
            "tor_ports": {"down": d.segment, "up": d.uplinks, "down_cages": d.down_cages, "up_cages": d.up_cages},
            "tors": d.planes * d.segments * d.rails,
            "aggregation_per_plane": d.uplinks,
        })
    return rec
