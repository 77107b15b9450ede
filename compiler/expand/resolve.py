"""Resolve a spec against the catalog into a Design: every number the builder needs.

All problems found here are collected and raised together as `SpecInvalid`, each
pointing at the spec field to change.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..catalog import Catalog, load_catalog
from ..catalog.models import NicGroup, Server, Switch
from ..catalog.nos import unsupported_nos
from ..diagnostics import Diagnostic, SpecInvalid, nearest
from ..spec.load import LoadedSpec
from ..spec.model import Spec
from ..topology.records import uplink_gbps
from . import endpoints, scale_up, sizing, unit_choice
from .clos_inputs import ClosShape, Endpoints, SizingInputs, UpperSwitches, size_field
from .hosts import HostsDesign, resolve_hosts
from .sizing import ClosSizing, LeafPorts, SizingError


@dataclass(frozen=True)
class ClosDesign:
    spec: Spec  # the spec compiled (its name, the field that sets its size); the fabric's shape is `shape`
    catalog: Catalog
    server: Server
    nics: NicGroup
    switch: Switch
    speed_gbps: int
    servers: int
    su_size: int | None  # servers per SU (None: fat-tree without SUs)
    servers_per_leaf: int  # fat-tree only; rail-optimized: su_size
    sizing: ClosSizing
    endpoints: tuple[Endpoints, ...]
    media_requested: dict[str, str] = field(default_factory=dict)  # link kind -> media id
    notes: tuple[str, ...] = ()
    final_servers: int = 0  # the size the upper tiers are built for (growth), else servers
    hosts: HostsDesign | None = None  # hostnames, scheduler labels, NCCL style (expand/hosts.py)
    spine_switch: Switch | None = None  # fabric.spine_switch; None: the leaf switch
    core_switch: Switch | None = None  # fabric.core_switch; None: the spine switch
    unit_fill: dict | None = None  # the last unit's fill and the unit's cost (unit_choice.fill_record)
    final_leaves: int = 0  # leaves at the size the upper tiers are built for (growth), else today's
    uplink_speed_gbps: int | None = None  # fabric.uplink_speed_gbps: leaf-spine and spine-core; None: speed_gbps
    slg_units: int | None = None  # fabric.spine_leaf_group: a pod is one rail of this many SUs (spine_leaf_groups.py)
    shape: ClosShape = field(kw_only=True)  # what the fabric's section asks (topology, tiers, ratios, unit)

    @property
    def up_gbps(self) -> int:
        """Speed of every switch-to-switch link (leaf-spine, spine-core)."""
        return uplink_gbps(self.uplink_speed_gbps, self.speed_gbps)

    @property
    def leaf_ports(self) -> LeafPorts:  # by name: the field `sizing` hides the module here
        return sizing.LeafPorts.of(self.switch, self.speed_gbps, self.up_gbps)

    @property
    def rail_optimized(self) -> bool:
        """Wired rail by rail: NIC r of every server of an SU on leaf r. A fabric that is one
        switch has every rail on that switch, and is wired as a fat-tree leaf (a dual-homed
        extra fabric of one leaf per NIC and no spine stays rail by rail)."""
        return self.shape.rail_optimized and not (self.sizing.tiers == 1 and self.sizing.leaves == 1)

    @property
    def rails(self) -> int:
        return len(self.nics.ports)

    @property
    def gpus(self) -> int:
        return self.servers * self.server.gpus

    @property
    def sus(self) -> int:
        return math.ceil(self.servers / self.su_size) if self.su_size else 0


def _catalog_for(loaded: LoadedSpec, errors: list[Diagnostic]) -> Catalog:
    user = loaded.spec.catalog
    if user is None:
        return load_catalog()
    path = Path(user)
    if not path.is_absolute():
        path = Path(loaded.file).parent / path
    try:
        return load_catalog(path)
    except SpecInvalid as exc:
        errors.extend(exc.diagnostics)
        return load_catalog()


def raw_catalog_diagnostics(source) -> list[Diagnostic]:
    """Catalog-id problems in a spec that failed schema validation, so that one run
    reports them together with the schema errors (best effort on the raw values)."""
    data = source.data if isinstance(source.data, dict) else {}
    raw_fabric = data.get("fabric")
    fabric = raw_fabric if isinstance(raw_fabric, dict) else {}
    if data.get("catalog") is not None:
        return []  # ids may come from the user's catalog, which we only read for a valid spec
    catalog = load_catalog()
    out = []
    for path, value, table, what, code in (
        (("server",), data.get("server"), catalog.servers, "server type", "SPEC_UNKNOWN_SERVER"),
        (("fabric", "switch"), fabric.get("switch"), catalog.switches, "switch", "SPEC_UNKNOWN_SWITCH"),
        (("fabric", "spine_switch"), fabric.get("spine_switch"), catalog.switches, "switch", "SPEC_UNKNOWN_SWITCH"),
        (("fabric", "core_switch"), fabric.get("core_switch"), catalog.switches, "switch", "SPEC_UNKNOWN_SWITCH"),
        (("fabric", "media"), fabric.get("media"), catalog.media, "medium", "SPEC_UNKNOWN_MEDIA"),
    ):
        if isinstance(value, str) and value not in table:
            line, col = source.where(path)
            out.append(Diagnostic(code, f"unknown {what} '{value}'", path=".".join(path), file=source.file,
                                  line=line, column=col, hint=nearest(value, table)))
    return out


def error_nos(loaded: LoadedSpec, switch: Switch, switches: dict[str, Switch], error) -> None:
    """fabric.nos must be one the switch model runs; InfiniBand switches take none."""
    nos = loaded.spec.fabric.nos
    if nos is None:
        return
    if switch.protocol != "ethernet":
        error("SPEC_NOS_NOT_ETHERNET", ("fabric", "nos"),
              f"{switch.id} is an {switch.protocol} switch: it takes no NOS (the subnet manager configures it)",
              "remove fabric.nos")
    elif nos not in switch.nos:
        error("SPEC_NOS_UNSUPPORTED", ("fabric", "nos"), *unsupported_nos(switch, nos, switches))


CLOS_LINK_KINDS = ("server-leaf", "leaf-spine", "spine-core", "endpoint-leaf", "endpoint-spine", "endpoint-core")


@dataclass(frozen=True)
class Common:
    """What every topology family resolves the same way: catalog entries, speed, size."""

    spec: Spec
    catalog: Catalog
    server: Server
    nics: NicGroup | None  # the server's compute NIC group (None: a direct network of accelerators)
    switch: Switch | None  # None: a direct network (no switches)
    speed_gbps: int
    servers: int
    endpoints: tuple[Endpoints, ...]
    media_requested: dict[str, str]

    def required_switch(self) -> Switch:
        """The switch model of a switched fabric, which resolve_common has required."""
        assert self.switch is not None
        return self.switch

    def required_nics(self) -> NicGroup:
        """The compute NIC group of a fabric of NICs (not a direct network of accelerators),
        which resolve_common has required (_nic_speed)."""
        assert self.nics is not None
        return self.nics


class OnCommon:
    """What a family's design (holding its Common as `c`) exposes the same way."""

    c: Common

    @property
    def gpus(self) -> int:
        return self.c.servers * self.c.server.gpus

    @property
    def catalog(self) -> Catalog:
        return self.c.catalog


# Collects one spec diagnostic: (code, field path, message, hint).
Report = Callable[..., None]


def resolve_common(loaded: LoadedSpec, link_kinds: tuple[str, ...] = CLOS_LINK_KINDS, direct: bool = False,
                   switchless: bool = False) -> Common:
    """Catalog ids, media per link kind, NIC/switch speeds and the server count, shared by
    every family. `direct`: no switch; the speed is the accelerators' own port speed.
    `switchless`: no switch; the servers' compute NIC ports link to each other at the NIC speed.
    Raises SpecInvalid with every problem found."""
    spec = loaded.spec
    errors: list[Diagnostic] = []
    catalog = _catalog_for(loaded, errors)

    def error(code, path, message, hint=""):
        errors.append(loaded.diagnostic(code, path, message, hint))

    server, switch = _catalog_models(spec, catalog, error)
    media_requested = _media_requested(spec, catalog, link_kinds, error)
    if errors or server is None or (switch is None and not (direct or switchless)):
        raise SpecInvalid(errors)
    nics = server.nic_groups.get("compute")
    speed = _direct_speed(loaded, server) if direct else _nic_speed(loaded, server, switch, catalog, error)
    extra = []
    for i, ep in enumerate(spec.extra_endpoints):
        ep_speed = ep.speed_gbps or speed
        if ep_speed != speed:
            error("SPEC_SPEED_MISMATCH", ("extra_endpoints", i, "speed_gbps"),
                  f"endpoint speed {ep_speed}G differs from the fabric speed {speed}G", f"use speed_gbps: {speed}")
        extra.append(Endpoints(ep, ep_speed))
    servers = _server_count(spec, server, error)
    if not errors:
        errors += scale_up.size_diagnostics(loaded, server, servers, size_field(spec))
    if errors:
        raise SpecInvalid(errors)
    return Common(spec, catalog, server, nics, switch, speed, servers, tuple(extra), media_requested)


def _catalog_models(spec: Spec, catalog: Catalog, error: Report) -> tuple[Server | None, Switch | None]:
    """The server type and the switch model the spec names (None where unknown or not
    given), and every switch model `requirements` names checked against the catalog."""
    fabric = spec.fabric
    server = catalog.servers.get(spec.server)
    if server is None:
        error("SPEC_UNKNOWN_SERVER", ("server",), f"unknown server type '{spec.server}'", nearest(spec.server, catalog.servers))
    switch = None
    if fabric.switch is not None:
        switch = catalog.switches.get(fabric.switch)
        if switch is None:
            error("SPEC_UNKNOWN_SWITCH", ("fabric", "switch"), f"unknown switch '{fabric.switch}'", nearest(fabric.switch, catalog.switches))
    for i, sid in enumerate((spec.requirements.switch_models or []) if spec.requirements else []):
        if sid not in catalog.switches:
            error("SPEC_UNKNOWN_SWITCH", ("requirements", "switch_models", i), f"unknown switch '{sid}'",
                  nearest(sid, catalog.switches))
    return server, switch


def _media_requested(spec: Spec, catalog: Catalog, link_kinds: tuple[str, ...], error: Report) -> dict[str, str]:
    """fabric.media as a medium per link kind (one medium: every kind), each checked
    against the link kinds of the family and the catalog."""
    fabric = spec.fabric
    media_requested: dict[str, str] = {}
    if isinstance(fabric.media, str):
        media_requested = {k: fabric.media for k in link_kinds}
    elif isinstance(fabric.media, dict):
        known_kinds = set(link_kinds)
        for kind, media_id in fabric.media.items():
            if kind not in known_kinds:
                error("SPEC_UNKNOWN_LINK_KIND", ("fabric", "media", kind), f"unknown link kind '{kind}'", nearest(kind, known_kinds))
            media_requested[kind] = media_id
    if isinstance(fabric.media, str):  # one medium for every kind: one error, not one per kind
        if fabric.media not in catalog.media:
            error("SPEC_UNKNOWN_MEDIA", ("fabric", "media"), f"unknown medium '{fabric.media}'", nearest(fabric.media, catalog.media))
    else:
        for kind, media_id in media_requested.items():
            if media_id not in catalog.media:
                error("SPEC_UNKNOWN_MEDIA", ("fabric", "media", kind), f"unknown medium '{media_id}'",
                      nearest(media_id, catalog.media))
    return media_requested


def _direct_speed(loaded: LoadedSpec, server: Server) -> int:
    """A direct network's link speed: fabric.speed_gbps, else the accelerators' own ports'."""
    up = server.scale_up
    if up is None or up.ports_per_gpu is None or up.port_gbps is None:
        raise SpecInvalid([loaded.diagnostic(
            "SPEC_NO_DIRECT_PORTS", ("server",),
            f"server type '{server.id}' has no chip-to-chip ports in the catalog (scale_up.ports_per_gpu / port_gbps)",
            "give fabric.switch for a switched torus, or use a server whose accelerators link directly (tpu-v4, tpu-v5p)")])
    return loaded.spec.fabric.speed_gbps or up.port_gbps


def _nic_speed(loaded: LoadedSpec, server: Server, switch: Switch | None, catalog: Catalog, error: Report) -> int:
    """The server-side link speed: fabric.speed_gbps, else the compute NICs'; it must be the
    NICs' own and a mode of the switch (switchless: the NIC's at both ends). Checks the NOS."""
    fabric = loaded.spec.fabric
    nics = server.nic_groups.get("compute")
    if nics is None:
        raise SpecInvalid([loaded.diagnostic("SPEC_NO_COMPUTE_NICS", ("server",),
                                             f"server type '{server.id}' has no compute NIC group in the catalog")])
    speed = fabric.speed_gbps or nics.speed_gbps
    if switch is None:  # switchless: both ends are the same NIC, so only its own speed
        if speed != nics.speed_gbps:
            error("SPEC_SPEED_MISMATCH", ("fabric", "speed_gbps"),
                  f"fabric speed {speed}G differs from the {server.id} NIC speed {nics.speed_gbps}G",
                  f"leave speed_gbps out, or use speed_gbps: {nics.speed_gbps}")
    elif speed not in switch.modes:
        modes = ", ".join(f"{s}G" for s in sorted(switch.modes))
        error("SPEC_SPEED_UNSUPPORTED", ("fabric", "speed_gbps") if fabric.speed_gbps else ("fabric", "switch"),
              f"{switch.id} has no {speed}G port mode (the {server.id} NICs run at {nics.speed_gbps}G)",
              f"{switch.id} runs {modes}; choose a switch with {speed}G ports")
    elif nics.speed_gbps != speed:
        error("SPEC_SPEED_MISMATCH", ("fabric", "speed_gbps"),
              f"fabric speed {speed}G differs from the {server.id} NIC speed {nics.speed_gbps}G",
              "splitter-based speed changes are not supported yet; use the NIC speed")
    if switch is not None:
        error_nos(loaded, switch, catalog.switches, error)
    return speed


def _server_count(spec: Spec, server: Server, error: Report) -> int:
    """spec.servers, or spec.gpus in whole servers."""
    if spec.servers is not None:
        return spec.servers
    assert spec.gpus is not None  # a spec gives servers or gpus (spec/model.py)
    servers, rest = divmod(spec.gpus, server.gpus)
    if rest:
        error("SPEC_GPUS_NOT_WHOLE_SERVERS", ("gpus",),
              f"{spec.gpus} GPUs is not a whole number of {server.id} servers ({server.gpus} GPUs each)",
              f"use gpus: {servers * server.gpus} or {(servers + 1) * server.gpus}")
    return servers


def _upper_switches(loaded: LoadedSpec, c: Common, up_gbps: int) -> UpperSwitches:
    """fabric.spine_switch and core_switch, checked like fabric.switch; default: the leaf model.
    Every port of a spine and a core runs at `up_gbps` (the uplink speed)."""
    fabric = loaded.spec.fabric
    leaf_sw = c.switch
    assert leaf_sw is not None  # a Clos is switched: resolve_common required the leaf switch
    errors: list[Diagnostic] = []

    def pick(key: str, default: Switch) -> Switch:
        sid = getattr(fabric, key)
        if sid is None:
            return default
        path = ("fabric", key)
        sw = c.catalog.switches.get(sid)
        if sw is None:
            errors.append(loaded.diagnostic("SPEC_UNKNOWN_SWITCH", path, f"unknown switch '{sid}'", nearest(sid, c.catalog.switches)))
        elif up_gbps not in sw.modes:
            modes = ", ".join(f"{s}G" for s in sorted(sw.modes))
            runs = (f"the fabric runs at {up_gbps}G" if up_gbps == c.speed_gbps else
                    f"leaf-spine{'' if key == 'spine_switch' else ' and spine-core'} links run at "
                    f"{up_gbps}G, fabric.uplink_speed_gbps")
            errors.append(loaded.diagnostic("SPEC_SPEED_UNSUPPORTED", path, f"{sw.id} has no {up_gbps}G port mode "
                                            f"({runs})", f"{sw.id} runs {modes}"))
        elif sw.protocol != leaf_sw.protocol:
            errors.append(loaded.diagnostic("SPEC_SWITCH_PROTOCOL_MISMATCH", path, f"{sw.id} is an {sw.protocol} switch; "
                                            f"the leaf switch {leaf_sw.id} is {leaf_sw.protocol}",
                                            f"choose an {leaf_sw.protocol} switch"))
        elif sw.protocol == "infiniband" and sw.id != leaf_sw.id:
            # The subnet-manager outputs (render/infiniband.py) describe one switch model.
            errors.append(loaded.diagnostic("SPEC_UNSUPPORTED", path, "InfiniBand fabrics of mixed switch models are not "
                                            "supported yet", f"remove fabric.{key}"))
        elif fabric.nos is not None and fabric.nos not in sw.nos:
            errors.append(loaded.diagnostic("SPEC_NOS_UNSUPPORTED", path, *unsupported_nos(sw, fabric.nos, c.catalog.switches)))
        else:
            return sw
        return default

    spine = pick("spine_switch", leaf_sw)
    core = pick("core_switch", spine)
    if loaded.spec.layout is not None and {spine.id, core.id} != {leaf_sw.id}:
        # Placement sizes every switch as fabric.switch (RU, power).
        errors.append(loaded.diagnostic("SPEC_UNSUPPORTED", ("layout",), "physical layout with spine_switch / core_switch "
                                        "is not supported yet", "remove `layout:` or the per-tier switch keys"))
    if errors:
        raise SpecInvalid(errors)
    return UpperSwitches(spine, core, up_gbps)


def uplink_speed(loaded: LoadedSpec, c: Common) -> int:
    """fabric.uplink_speed_gbps of a Clos: the speed of every leaf-spine and spine-core link
    (a Spectrum-X leaf: 400G to the hosts, 800G to the spines, on one SN5600). Default and
    equal to speed_gbps: one speed, the fabric as before. Raises SpecInvalid with every problem."""
    fabric = loaded.spec.fabric
    up, down, sw = fabric.uplink_speed_gbps, c.speed_gbps, c.switch
    if up is None or up == down:
        return down
    assert sw is not None  # a Clos is switched: resolve_common required the leaf switch
    path = ("fabric", "uplink_speed_gbps")
    modes = ", ".join(f"{s}G" for s in sorted(sw.modes))
    faster = [f"{s}G" for s in sorted(sw.modes) if s > down]
    errors = []
    if up < down:
        errors.append(loaded.diagnostic(
            "SPEC_SPEED_MISMATCH", path, f"uplink speed {up}G is below the {down}G the servers' ports run at: "
                                         f"every leaf-spine link would be slower than a server link",
            f"leave uplink_speed_gbps out (uplinks at {down}G)" + (f", or use {' or '.join(faster)}" if faster else "")))
    elif up not in sw.modes:
        errors.append(loaded.diagnostic(
            "SPEC_SPEED_UNSUPPORTED", path, f"{sw.id} has no {up}G port mode for the leaf uplinks",
            f"{sw.id} runs {modes}" + (f"; faster than {down}G: {', '.join(faster)}" if faster else
                                       f"; none faster than the {down}G downlinks, so leave uplink_speed_gbps out")))
    elif sw.protocol != "ethernet":
        # The subnet-manager outputs (render/infiniband.py) describe one link rate per fabric.
        errors.append(loaded.diagnostic(
            "SPEC_UNSUPPORTED", path, f"{sw.id} is an {sw.protocol} switch: fabrics at two link speeds are "
                                      f"supported on Ethernet only so far", "remove fabric.uplink_speed_gbps"))
    for i, e in enumerate(c.endpoints):
        if e.spec.attach in ("spine", "core") and e.speed_gbps != up:
            errors.append(loaded.diagnostic(
                "SPEC_SPEED_MISMATCH", ("extra_endpoints", i, "attach"),
                f"{e.spec.role}: attach: {e.spec.attach} puts its {e.speed_gbps}G ports on {e.spec.attach} ports, "
                f"which run at {up}G (fabric.uplink_speed_gbps)",
                "use attach: leaf or management-leaf (leaf downlinks run at the server speed)"))
    if errors:
        raise SpecInvalid(errors)
    return up


def resolve(loaded: LoadedSpec) -> ClosDesign:
    c = resolve_common(loaded)
    assert c.nics is not None and c.switch is not None  # a Clos has both (resolve_common checked)
    up_gbps = uplink_speed(loaded, c)
    upper = _upper_switches(loaded, c, up_gbps)
    inputs = SizingInputs(ClosShape.of_spec(loaded.spec), c.server, c.nics, c.switch, upper, c.speed_gbps, c.servers,
                          c.endpoints)
    try:
        design = size_clos(inputs, loaded.spec, c.catalog, c.media_requested)
    except SizingError as exc:
        raise SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", exc.path, exc.message, exc.hint)]) from None
    design = _one_switch_when_it_holds_everything(loaded, design)
    problems = endpoints.problems(design, loaded.diagnostic, ("extra_endpoints",))
    if problems:
        raise SpecInvalid(problems)
    hosts, host_errors, host_notes = resolve_hosts(loaded, c.catalog, c.server, design.servers, design.su_size)
    host_errors = scale_up.scalable_unit_diagnostics(loaded, c.server, design.su_size) + host_errors
    if loaded.spec.growth is not None and loaded.spec.growth.max_servers:  # the growth target is whole domains too
        host_errors = scale_up.size_diagnostics(loaded, c.server, design.final_servers, ("growth", "max_servers")) + host_errors
    if host_errors:
        raise SpecInvalid(host_errors)
    return dataclasses.replace(design, hosts=hosts, notes=design.notes + tuple(endpoints.notes(design)) + tuple(host_notes))


# Notes of a leaf-spine sizing that mean nothing once the fabric is one switch.
NOT_SAID_OF_ONE_SWITCH = ("grows to", "upper tiers built for", "spines rounded", "2 spines, not 1",
                          "servers_per_leaf not given", "scalable_unit not given")


def one_switch_sizing(server_ports: int) -> sizing.ClosSizing:
    """A fabric that is one switch: every server (and endpoint) port on it, no spine tier."""
    return sizing.ClosSizing(1, 1, sizing.PortSplit(server_ports, 0), sizing.PortSplit(0, 0), 1, 0, 0, 0)


def _one_switch_when_it_holds_everything(loaded: LoadedSpec, design: ClosDesign) -> ClosDesign:
    """`tiers: auto` takes the fewest tiers that fit, and the fewest is one: when one switch
    holds every server (and endpoint) port, and no unit, growth or uplink speed asks for
    more, the fabric is that switch. A leaf-spine for one DGX built 9 switches (one leaf per
    rail and a spine joining them), or a leaf and 2 spines that joined nothing."""
    fabric, spec = loaded.spec.fabric, loaded.spec
    endpoint_ports = sum(e.spec.count * e.spec.ports for e in design.endpoints)
    server_ports = design.servers * design.rails + endpoint_ports
    radix = design.switch.radix(design.speed_gbps)
    more = [key for key, value in (("scalable_unit", fabric.scalable_unit), ("growth", spec.growth),
                                   # a leaf of N servers asks for leaves, unless tiers: 1 holds them all anyway
                                   ("servers_per_leaf", fabric.servers_per_leaf
                                    if not (fabric.tiers == 1 and fabric.servers_per_leaf == design.servers) else None),
                                   ("uplink_speed_gbps", fabric.uplink_speed_gbps if fabric.uplink_speed_gbps != design.speed_gbps else None),
                                   ("spine_switch", fabric.spine_switch if fabric.spine_switch != design.switch.id else None),
                                   ("core_switch", fabric.core_switch if fabric.core_switch != design.switch.id else None))
            if value is not None]
    off_leaf = [k for k, e in enumerate(design.endpoints) if e.spec.attach != "leaf"]
    if fabric.tiers == 1:  # insisted on: say why it cannot be
        why = (f"one {design.switch.id} takes {radix} ports at {design.speed_gbps}G; the fabric brings {server_ports} "
               "server and endpoint ports" if server_ports > radix else
               f"tiers: 1 is a single switch; {more[0]} asks for more" if more else
               "tiers: 1 is a single switch: endpoints attach to it (attach: leaf)" if off_leaf else "")
        if why:
            raise SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", ("fabric", "tiers"), why, "use tiers: 2 or auto")])
    elif fabric.tiers != "auto" or more or off_leaf or server_ports > radix:
        return design
    one = one_switch_sizing(server_ports)
    notes = [n for n in design.notes if not n.startswith(NOT_SAID_OF_ONE_SWITCH)]
    kind = "rail" if fabric.topology == "rail-optimized" else "server"
    notes.append(f"one {design.switch.id} holds all {server_ports} {kind} ports: no spine tier (tiers: auto takes the fewest "
                 f"that fit); its other {radix - server_ports} ports stay spare. Set tiers: 2 (or a scalable_unit) to "
                 "build leaves and spines")
    if design.servers == 1:
        notes.append("one server: its GPUs talk over the scale-up domain (NVLink), so this switch carries no GPU-to-GPU "
                     "traffic; it serves what the NICs reach beyond the server")
    per_server = design.rails
    notes.append(f"grows to {(radix - endpoint_ports) // per_server:,} servers on this switch; beyond that the fabric needs "
                 "a spine tier and its server cables move")
    return dataclasses.replace(design, sizing=one, servers_per_leaf=design.servers, su_size=None, notes=tuple(notes),
                               final_leaves=1, unit_fill=None)


@dataclass(frozen=True)
class _LeafPlan:
    leaf: sizing.PortSplit
    servers_per_leaf: int
    su: int | None
    group: int  # leaves that pods keep together (an SU's rail leaves; 1 for fat-tree without SUs)

    def leaves(self, servers: int, rails: int, rail_optimized: bool) -> int:
        if rail_optimized:
            assert self.su is not None  # a rail-optimized leaf is planned per SU
            return math.ceil(servers / self.su) * rails
        if self.su is not None:
            return math.ceil(servers / self.su) * self.group
        return math.ceil(servers / self.servers_per_leaf)

    def downlinks_used(self, servers: int, rails: int, rail_optimized: bool) -> tuple[tuple[int, int], ...]:
        """(leaves, downlinks in use on each) over every leaf, as clos.py wires servers:
        the j-th server of an SU on port j of each rail leaf; a fat-tree leaf's servers in order."""
        if rail_optimized:
            assert self.su is not None  # a rail-optimized leaf is planned per SU
            full, last = divmod(servers, self.su)
            return (full * rails, self.su), (rails if last else 0, last)
        n = self.servers_per_leaf
        full, last = divmod(servers, n)
        empty = self.leaves(servers, rails, False) - full - (1 if last else 0)  # a fat-tree SU's unfilled leaves
        return (full, n * rails), (1 if last else 0, last * rails), (empty, 0)


def _given_leaf(spl: int, ratio, leaf: sizing.LeafPorts, rails: int, notes: list[str]) -> sizing.PortSplit:
    """fabric.servers_per_leaf: downlinks for exactly those servers, uplinks at the ratio."""
    down = spl * rails
    path = ("fabric", "servers_per_leaf")
    up = leaf.uplinks(down, ratio)
    if up is None:
        need = down * leaf.down_gbps * ratio.up / (ratio.down * leaf.up_gbps)
        at = f" at {leaf.up_gbps}G" if leaf.mixed else ""
        raise SizingError(path, f"{spl} servers x {rails} NIC ports = {down} downlinks per leaf at {ratio} would need "
                                f"{need:g} uplinks{at}; oversubscription must give a whole number",
                          f"choose servers_per_leaf so that {down} becomes a multiple of {leaf.down_step(ratio)}")
    split = sizing.PortSplit(down, up)
    if not leaf.fits(split):
        most = leaf.most(ratio).down // rails
        raise SizingError(path, f"{spl} servers per leaf need {leaf.used_text(split)} at {ratio}; the leaf switch "
                                f"has {leaf.capacity_text}",
                          f"at {ratio} a leaf holds at most {most} servers of {rails} NIC ports" if most else
                          "use a larger leaf switch or a higher oversubscription")
    of = f"of its {leaf.radix} ports" if not leaf.mixed else f"of its {leaf.cages} cages ({leaf.ports(down)} ports)"
    notes.append(f"servers_per_leaf {spl}: a leaf uses {down} downlinks + {up} uplinks {of}; "
                 f"{leaf.spare(split)} stay spare")
    return split


@dataclass(frozen=True)
class _Units:
    """The units a leaf can be built for: servers per SU (rail-optimized) or per leaf
    (fat-tree), each with the uplink counts that keep the leaf at or below the ratio asked
    (unit_choice.py), and what each costs at a server count."""

    x: SizingInputs
    leaf: sizing.LeafPorts  # x.leaf, computed once (the search prices many units)
    today: int  # servers built today: the leaf endpoints' room is on today's leaves
    room: int  # leaf downlinks the extra endpoints attached to leaves need
    panels: tuple[unit_choice.Panel, unit_choice.Panel, unit_choice.Panel]  # a leaf's, a spine's, a core's
    spine_split: sizing.PortSplit | None  # a spine at the spine ratio; None: no three tiers at that ratio
    sizes: list[int] = field(default_factory=list)  # ascending
    searched: dict = field(default_factory=dict)  # (servers, room, exact) -> the cheapest unit found

    @classmethod
    def of(cls, x: SizingInputs, room: int) -> _Units:
        leaf, up = x.leaf, x.upper
        try:
            spine_split = sizing.split_for_ratio(up.spine_radix, x.shape.spine_ratio)
        except SizingError:  # no three tiers at this spine ratio; _upper_tiers says so where they are needed
            spine_split = None
        # The leaf's panel at its downlink speed: at two speeds an uplink takes a whole cage
        # (`up_width` downlink-speed ports).
        leaf_panel = unit_choice.Panel(leaf.radix, leaf.down_per_cage, (leaf.down_gbps, leaf.up_gbps),
                                       leaf.down_per_cage // leaf.up_per_cage if leaf.mixed else 1)
        units = cls(x, leaf, x.servers, room, (leaf_panel, _panel(up.spine, up.speed_gbps),
                                                _panel(up.core, up.speed_gbps)), spine_split)
        units.sizes.extend(units.candidate_sizes())
        return units

    @property
    def rail(self) -> bool:
        return self.x.shape.rail_optimized

    @property
    def per_server(self) -> int:
        """Downlinks of a unit per server: an SU's server slots on each rail leaf, or a
        fat-tree leaf's servers' NIC ports (a leaf provisioned for more servers would
        measure better than asked)."""
        return 1 if self.rail else self.x.rails

    def candidate_sizes(self) -> list[int]:
        """Unit sizes a leaf fits at the ratio asked, bounded by the leaf's ports at the
        downlink speed."""
        radix, su = self.leaf.radix, self.x.shape.scalable_unit
        if self.rail:
            # A multi-server scale-up domain (an NVL72 rack) sits in one SU: SUs of whole domains only.
            domain = scale_up.domain_servers(self.x.server)
            return [s for s in range(domain, radix, domain) if self.fits(s)]
        return [n for n in range(1, radix // self.x.rails + 1) if self.fits(n) and (su is None or su % n == 0)]

    def fewest_uplinks(self, size: int) -> int:
        # The ratio is bandwidth: down x down_gbps : up x up_gbps (800G uplinks over 400G
        # downlinks: half as many uplinks at 1:1).
        leaf, ratio = self.leaf, self.x.shape.leaf_ratio
        return -(-size * self.per_server * leaf.down_gbps * ratio.up // (ratio.down * leaf.up_gbps))

    def most_uplinks(self, size: int) -> int:
        # Every port the downlinks leave (at two speeds: every cage they leave, one uplink per cage).
        leaf, down = self.leaf, size * self.per_server
        if not leaf.mixed:
            return leaf.radix - down
        return (leaf.cages - leaf.down_cages(down)) * leaf.up_per_cage

    def uplinks(self, size: int) -> range:
        """A size's uplink counts, fewest (the ratio asked, rounded up) first."""
        return range(self.fewest_uplinks(size), self.most_uplinks(size) + 1)

    def exact(self, size: int) -> int | None:
        """A size's uplinks at exactly the ratio asked; None where not whole."""
        return self.leaf.uplinks(size * self.per_server, self.x.shape.leaf_ratio)

    def fits(self, size: int) -> bool:
        return self.fewest_uplinks(size) <= self.most_uplinks(size)

    def plan_for(self, size: int, uplinks: int) -> _LeafPlan:
        rails, su = self.x.rails, self.x.shape.scalable_unit
        if self.rail:
            return _LeafPlan(sizing.PortSplit(size, uplinks), size, size, rails)
        return _LeafPlan(sizing.PortSplit(size * rails, uplinks), size, su, (su // size) if su else 1)

    def unit_servers(self, size: int) -> int:
        """Servers of a unit of `size`: an SU, or a fat-tree's SU of such leaves, else the leaf's."""
        return size if self.rail else (self.x.shape.scalable_unit or size)

    def leaves_at(self, size: int, at_servers: int) -> int:
        unit = self.unit_servers(size)
        return -(-at_servers // unit) * (self.x.rails if self.rail else unit // size)

    def cost_of(self, size: int, uplinks: int, at_servers: int, room: int = 0) -> unit_choice.UnitCost | None:
        """What a unit costs at `at_servers`; None if it cannot be built or leaves fewer
        than `room` leaf downlinks free on today's leaves for extra endpoints."""
        rails, unit = self.x.rails, self.unit_servers(size)
        slots = -(-self.today // unit) * unit
        if (slots - min(slots, at_servers)) * rails < room:
            return None
        lp = self.plan_for(size, uplinks)
        try:
            sized = _upper_tiers(self.x, lp, at_servers)
        except SizingError:
            return None
        return unit_choice.cost(size, sized, at_servers * rails, self.panels,
                                lp.downlinks_used(at_servers, rails, self.rail))

    def floor(self, size: int, uplinks: int, at_servers: int) -> int:
        """A lower bound on the ports a unit's fabric takes at `at_servers`. Leaves and
        server cables are fixed by the size; uplinks add their cables and at least their
        share of spine ports (two spines at least where a leaf has two uplinks), a bound for
        two tiers and three alike. Past a spine's ports in leaves (a spine takes a link from
        every leaf below it) the fabric has three tiers, as _upper_tiers builds them:
        `uplinks` spines per pod, and the cores and spine-core cables those need."""
        rails, su, split = self.x.rails, self.x.shape.scalable_unit, self.spine_split
        leaves, (p_leaf, p_spine, p_core) = self.leaves_at(size, at_servers), self.panels
        cables = at_servers * rails + leaves * uplinks
        if split is not None and (self.x.shape.tiers == 3 or leaves > p_spine.ports):
            group = rails if self.rail else ((su // size) if su else 1)
            pods = -(-leaves // max(1, (split.down // group) * group))
            spines, cores = pods * uplinks, uplinks * -(-pods * split.up // p_core.ports)
            cables += spines * split.up
        else:
            spines, cores = max(2 if uplinks >= 2 else 1, -(-leaves * uplinks // p_spine.ports)), 0
        return leaves * p_leaf.ports + spines * p_spine.ports + cores * p_core.ports + 2 * cables

    def _cheapest(self, servers: int, room: int, exact: bool = False) -> unit_choice.UnitCost | None:
        # The unit is chosen, then priced again for the design record: search once.
        known = self.searched.get((servers, room, exact), False)
        if known is not False:
            return known
        candidates: list[tuple[int, range | tuple[int]]]
        if exact:
            candidates = [(s, (u,)) for s in self.sizes if (u := self.exact(s)) is not None]
        else:
            candidates = [(s, self.uplinks(s)) for s in self.sizes]
        best = unit_choice.cheapest(candidates, lambda size, up: self.cost_of(size, up, servers, room),
                                    lambda size, up: self.floor(size, up, servers))
        self.searched[(servers, room, exact)] = best
        return best

    def with_room(self, servers: int) -> unit_choice.UnitCost | None:
        """The cheapest unit that leaves room for the leaf endpoints."""
        return self._cheapest(servers, self.room)

    def at_exactly(self, servers: int) -> unit_choice.UnitCost | None:
        """The cheapest unit whose leaf measures exactly the ratio asked (for the notes)."""
        return self._cheapest(servers, 0, exact=True)

    def cheapest(self, servers: int) -> unit_choice.UnitCost | None:
        """The cheapest unit, with room for the leaf endpoints where that costs no switch
        more. Buying switches for a few endpoint ports is not a default an architect takes
        (NVIDIA's SuperPOD gives up a server slot for UFM instead): without room,
        endpoints.problems says so and offers that unit, the slot and the other places."""
        best = self._cheapest(servers, 0)
        if not self.room or best is None:
            return best
        roomy = self.with_room(servers)
        return roomy if roomy is not None and roomy.switches <= best.switches else best


def _panel(switch: Switch, gbps: int) -> unit_choice.Panel:
    """A spine's or a core's front panel: every port at the uplink speed."""
    return unit_choice.Panel(switch.radix(gbps), switch.modes[gbps].ports_per_cage, (gbps, gbps))


def _leaf_plan(x: SizingInputs, servers: int, notes: list[str]) -> tuple[_LeafPlan, _Units]:
    """The leaf's port split and the fabric's unit: servers per SU (rail-optimized) or per
    leaf (fat-tree), as the spec gives it, else the cheapest for `servers` (the size the
    upper tiers are built for; unit_choice.py) that leaves room on today's leaves for the
    extra endpoints attached to leaves."""
    units = _Units.of(x, endpoints.leaf_ports_wanted(x.endpoints))
    # A ratio no split of the leaf's ports reaches (41:30 on 64 ports needs 71) is the error
    # to give first, whatever the unit.
    units.leaf.most(x.shape.leaf_ratio)
    given = x.shape.scalable_unit if units.rail else x.shape.servers_per_leaf
    if given is not None:
        return _given_unit(units, given, notes), units
    if not units.sizes:
        return _largest_unit(units), units
    return _cheapest_unit(units, servers, notes), units


def _given_unit(units: _Units, given: int, notes: list[str]) -> _LeafPlan:
    """The unit the spec gives: an SU's rail leaves at the ratio, or `given` servers a leaf."""
    x, leaf = units.x, units.leaf
    ratio, su = x.shape.leaf_ratio, x.shape.scalable_unit
    if units.rail:
        return units.plan_for(given, leaf.split(given, ratio, "scalable_unit").up)
    split = _given_leaf(given, ratio, leaf, x.rails, notes)
    if su is not None and su % given:
        raise SizingError(("fabric", "scalable_unit"),
                          f"scalable_unit {su} is not a whole number of leaves ({given} servers per leaf)",
                          f"use a multiple of {given}")
    return _LeafPlan(split, given, su, (su // given) if su else 1)


def _largest_unit(units: _Units) -> _LeafPlan:
    """No unit fits the ratio: rail-optimized where no SU of whole scale-up domains fits a
    leaf, the largest (which resolve() refuses); a fat-tree, the error saying why."""
    x, leaf = units.x, units.leaf
    ratio, rails = x.shape.leaf_ratio, x.rails
    if units.rail:
        most = leaf.most(ratio)
        return units.plan_for(most.down, most.up)
    one = sizing.PortSplit(rails, units.fewest_uplinks(1))
    raise SizingError(("fabric", "oversubscription"),
                      f"one {x.server.id} brings {rails} NIC ports, which at {ratio} need {one.up} uplinks: "
                      f"{leaf.used_text(one)}; a leaf has {leaf.capacity_text}",
                      "use rail-optimized, a larger switch, or a higher oversubscription")


def _cheapest_unit(units: _Units, servers: int, notes: list[str]) -> _LeafPlan:
    """The cheapest unit for `servers` (unit_choice.py), and a note saying what it was
    chosen over, unless a fat-tree leaf is simply filled with servers at the ratio."""
    sizes = units.sizes
    best = units.cheapest(servers)
    if best is None:  # nothing fits the tiers: the largest unit, whose sizing error says the limit
        return units.plan_for(sizes[-1], units.fewest_uplinks(sizes[-1]))
    lp = units.plan_for(best.size, best.up)
    ratio = units.x.shape.leaf_ratio
    below = best.measured() != Fraction(ratio.down, ratio.up)
    if not units.rail and best.size == sizes[-1] and not units.leaf.spare(lp.leaf) and not below:
        return lp  # a fat-tree leaf filled with servers, as before: nothing to say
    notes.append(_unit_note(units, best, lp, servers, below))
    return lp


def _unit_note(units: _Units, best: unit_choice.UnitCost, lp: _LeafPlan, servers: int, below: bool) -> str:
    """Why the unit chosen: the fewest switches and cables, against the largest unit at
    exactly the ratio asked (NVIDIA's largest SU, where uplinks are whole there)."""
    x, room = units.x, units.room
    ratio = x.shape.leaf_ratio
    top = max((s for s in units.sizes if units.exact(s) is not None), default=None)
    largest = None
    if top is not None:
        top_uplinks = units.exact(top)
        assert top_uplinks is not None  # top is one of the sizes exact at the ratio
        largest = units.cost_of(top, top_uplinks, servers, room)
    what = "servers per SU" if units.rail else "servers per leaf"
    versus = (f"; {top} {what}, the most a leaf holds, would take {largest.switches:,} switches and "
              f"{largest.cables:,} cables" if largest is not None and largest.size != best.size else "")
    key = "scalable_unit" if units.rail else "servers_per_leaf"
    spare = units.leaf.spare(lp.leaf)
    if best.size == 1:
        what = what.replace("servers", "server")
    return (f"{key} not given: {best.size} {what}, the fewest switches and cables for {servers:,} "
            f"server{'s' if servers != 1 else ''} "
            + (f"with room for {room} extra endpoint port(s) on leaves "
               if room and units.cost_of(best.size, best.up, servers, room) else "")
            + f"({best.switches:,} switches, {best.cables:,} cables{versus})"
            + (f"; a leaf uses {lp.leaf.down} downlinks + {lp.leaf.up} uplinks, {spare} ports stay spare" if spare else "")
            + (_below_ratio(best, ratio, units.at_exactly(servers), what, largest if versus else None) if below else "")
            + (f". Set {key}: {best.size}" + (f" and oversubscription: '{unit_choice.ratio_text(best.measured())}'"
                                              if below else "") + " to keep it as the cluster grows"
               if key in x.shape.unit_keys else ""))


def _below_ratio(best: unit_choice.UnitCost, ratio, exact: unit_choice.UnitCost | None, what: str,
                 shown: unit_choice.UnitCost | None) -> str:
    """Why the leaf measures below the ratio asked: cheaper than any leaf at exactly that
    ratio, or no leaf at exactly it builds the fabric (uplinks not whole, or the tiers run
    out). `shown`: a unit the note already prices (not priced twice)."""
    if exact is None:
        why = f"no leaf at exactly {ratio} builds it (a whole number of uplinks, within the tiers)"
    elif shown is not None and exact.key() == shown.key():
        why = f"cheaper than any leaf at exactly {ratio} (the cheapest is the {exact.size} {what} above)"
    else:
        same = exact.switches == best.switches and exact.cables == best.cables  # cheaper in transceivers only
        why = (f"cheaper than any leaf at exactly {ratio} (the cheapest: {exact.size} {what}, {exact.switches:,} "
               f"switches, {exact.cables:,} cables"
               + (f", {exact.transceivers - best.transceivers:,} switch transceivers more" if same else "") + ")")
    return (f"; the leaf measures {unit_choice.ratio_text(best.measured())} ({best.down} down : {best.up} up), less "
            f"oversubscribed than the {ratio} asked: {why}")


def _upper_tiers(x: SizingInputs, lp: _LeafPlan, servers: int) -> sizing.ClosSizing:
    """Spines (and cores) for `servers`, or a SizingError saying the limit."""
    shape, up, rails = x.shape, x.upper, x.rails
    ratio = shape.leaf_ratio
    leaves = lp.leaves(servers, rails, shape.rail_optimized)
    per_leaf = lp.servers_per_leaf if shape.topology == "fat-tree" else lp.servers_per_leaf / rails
    radix = up.spine_radix
    two = sizing.two_tier(leaves, lp.leaf, radix)
    if shape.tiers == 2 and two is None:
        cap = sizing.max_two_tier_leaves(lp.leaf, radix)
        raise SizingError(("fabric", "tiers"),
                          f"{leaves} leaves do not fit two tiers of {up.spine.id}: a spine with {radix} ports joins at most "
                          f"{cap} leaves ({int(cap * per_leaf * x.server.gpus):,} GPUs at {ratio})",
                          "use tiers: 3 or tiers: auto")
    if shape.tiers == 2 or (shape.tiers in ("auto", 1) and two is not None):  # tiers 1: cut to one switch later
        assert two is not None  # tiers 2 without a fit raised above
        return two
    spine_split = sizing.split_for_ratio(radix, shape.spine_ratio)
    cap = sizing.max_three_tier_leaves(lp.leaf, spine_split, up.core_radix, lp.group)
    if leaves > cap:
        where = ("growth",) if shape.growth else shape.size_path
        raise SizingError(where,
                          f"{servers:,} servers need {leaves:,} leaves; three tiers of {up.name} at leaf {ratio} / "
                          f"spine {shape.spine_ratio} hold at most {cap:,} leaves "
                          f"({int(cap * per_leaf) * x.server.gpus:,} GPUs)",
                          "use a larger-radix switch or a higher oversubscription")
    return sizing.three_tier(leaves, lp.leaf, spine_split, up.core_radix, lp.group)


def _shrink(final: sizing.ClosSizing, leaves: int) -> sizing.ClosSizing:
    """The final design's upper tiers, with only today's leaves (and pods) built."""
    pods = math.ceil(leaves / final.leaves_per_pod) if final.tiers == 3 else 1
    return dataclasses.replace(final, leaves=leaves, pods=pods)


def _same_wiring(a: sizing.ClosSizing, b: sizing.ClosSizing) -> bool:
    # Two tiers: leaf i's uplink t lands on spine t // m, port i * m + t % m (clos.py), so more
    # leaves on the same spines and m move nothing; leaves_per_pod (= all leaves) is not wiring there.
    keys = ("tiers", "spines_per_pod", "leaf_spine_links", "cores_per_group", "spine_core_links")
    return (all(getattr(a, k) == getattr(b, k) for k in keys)
            and (a.spines == b.spines if a.tiers == 2 else a.leaves_per_pod == b.leaves_per_pod))


def _growth_note(x: SizingInputs, lp: _LeafPlan, now: sizing.ClosSizing, cap: int | None,
                 held: tuple[int, int]) -> str:
    """Without `growth:`, how far the design grows before a pulled cable has to move.
    `cap`: servers the leaves hold before a server slot that extra endpoints took;
    `held`: ports at the top of every spine and every core that extra endpoints hold."""
    up, servers = x.upper, x.servers
    domain = scale_up.domain_servers(x.server)  # an NVL72 grows by whole racks, not by a leaf's servers
    step = lp.su or (domain if domain > 1 else lp.servers_per_leaf)
    last_ok = servers
    probe = (servers // step + 1) * step
    for _ in range(4096):
        if cap is not None and probe > cap:
            return (f"grows to {cap:,} servers without moving a cable; server {cap + 1:,} takes a slot the extra "
                    f"endpoints on leaves hold, so their cables move. Set growth: {{max_servers: N}} to keep the "
                    f"endpoints clear of the servers to come")
        try:
            nxt = _upper_tiers(x, lp, probe)
        except SizingError:
            return f"grows to {last_ok:,} servers without moving a cable; beyond that the tiers run out ({up.name})"
        if _same_wiring(now, nxt) and (nxt.leaves * nxt.leaf_spine_links > up.spine_radix - held[0] if nxt.tiers == 2
                                       else nxt.pods * nxt.spine_core_links > up.core_radix - held[1]):
            tier = "spine" if nxt.tiers == 2 else "core"
            return (f"grows to {last_ok:,} servers without moving a cable; at {probe:,} servers the new "
                    f"{'leaves' if nxt.tiers == 2 else 'pods'} need the {tier} ports the extra endpoints hold (the top "
                    f"{held[0] if nxt.tiers == 2 else held[1]} of every {tier}), so their cables move. Set growth: "
                    f"{{max_servers: N}} to keep the endpoints clear of the fabric to come")
        if not _same_wiring(now, nxt):
            return _rewired_note(now, nxt, last_ok, probe)
        last_ok = probe
        probe += step
    return f"grows to at least {last_ok:,} servers without moving a cable"


def _rewired_note(now: sizing.ClosSizing, nxt: sizing.ClosSizing, last_ok: int, probe: int) -> str:
    """The growth note where the next size re-plugs every cable of a tier."""
    what = []
    if nxt.tiers != now.tiers:
        what.append(f"{now.tiers} -> {nxt.tiers} tiers")
    elif now.tiers == 2:
        what.append(f"leaf-spine: {now.spines} -> {nxt.spines} spines, "
                    f"{now.leaf_spine_links} -> {nxt.leaf_spine_links} link(s) per leaf-spine pair")
    else:
        what.append(f"spine-core: {now.cores_per_group} -> {nxt.cores_per_group} cores per group, "
                    f"{now.spine_core_links} -> {nxt.spine_core_links} link(s) per spine-core pair")
    return (f"grows to {last_ok:,} servers without moving a cable; at {probe:,} servers every existing "
            f"{'leaf-spine' if now.tiers == 2 else 'spine-core'} cable is re-plugged ({'; '.join(what)}). "
            f"Set growth: {{max_servers: N}} to build the upper tiers for the final size from day one")


def _growth_target(shape: ClosShape, servers: int) -> int:
    """The servers the upper tiers are built for: `growth:`'s target, else today's."""
    growth = shape.growth
    if growth is None:
        return servers
    if growth.max_scalable_units and not shape.scalable_unit:
        # The default SU is chosen for the final size, so it cannot also define that size.
        raise SizingError(("growth", "max_scalable_units"), "max_scalable_units needs fabric.scalable_unit",
                          "set fabric.scalable_unit, or use growth: {max_servers: N}")
    if growth.max_servers:
        final_servers = growth.max_servers
    else:
        # growth gives exactly one of the two (spec/model.py); a unit count needs scalable_unit (above)
        assert growth.max_scalable_units is not None and shape.scalable_unit is not None
        final_servers = growth.max_scalable_units * shape.scalable_unit
    if final_servers < servers:
        raise SizingError(("growth",), f"growth target {final_servers:,} servers is below today's {servers:,}",
                          f"use max_servers >= {servers}")
    return final_servers


def size_clos(x: SizingInputs, spec: Spec, catalog: Catalog, media_requested: dict[str, str]) -> ClosDesign:
    """The Clos design for `x`: the unit, the leaf's port split and the upper tiers, built
    for the growth target, with the notes that explain them. `spec` (the spec compiled),
    `catalog` and `media_requested` are carried into the design. Raises SizingError."""
    shape, leaf, rails = x.shape, x.leaf, x.rails
    notes: list[str] = []
    final_servers = _growth_target(shape, x.servers)
    lp, units = _leaf_plan(x, final_servers, notes)
    final = _upper_tiers(x, lp, final_servers)
    if leaf.mixed:
        notes.append(f"two link speeds: a leaf takes {leaf.used_text(lp.leaf)} of its {leaf.cages} "
                     f"({leaf.down_per_cage} x {leaf.down_gbps}G or {leaf.up_per_cage} x {leaf.up_gbps}G per cage); "
                     f"{'spines and cores run' if final.tiers == 3 else 'spines run'} every port at {leaf.up_gbps}G; "
                     f"{shape.leaf_ratio} is measured in Gb/s ({lp.leaf.down * leaf.down_gbps:,} down : "
                     f"{lp.leaf.up * leaf.up_gbps:,} up per leaf)")
    if final.tiers == 2 and shape.core_switch is not None:
        raise SizingError(("fabric", "core_switch"), f"the design has two tiers, so there is no core tier for "
                                                     f"core_switch {shape.core_switch}",
                          "remove core_switch, or set tiers: 3")
    result = _shrink(final, lp.leaves(x.servers, rails, shape.rail_optimized))
    notes.extend(result.notes)
    notes.append(_growth_or_target_note(x, lp, final, final_servers))
    if x.nics.port_map_confidence != "vendor":
        notes.append(f"{x.server.id}: which cage feeds which GPU is {x.nics.port_map_confidence}, not from a vendor "
                     f"table; verify server-side ports against the server's manual before cabling")
    fill = _unit_fill(x, lp, final, final_servers, units)
    up = x.upper
    return ClosDesign(spec, catalog, x.server, x.nics, x.switch, x.speed_gbps, x.servers, lp.su, lp.servers_per_leaf,
                      result, x.endpoints, media_requested, tuple(notes), final_servers, spine_switch=up.spine,
                      core_switch=up.core, unit_fill=fill, final_leaves=final.leaves,
                      uplink_speed_gbps=up.speed_gbps if up.speed_gbps != x.speed_gbps else None, shape=shape)


def _growth_or_target_note(x: SizingInputs, lp: _LeafPlan, final: sizing.ClosSizing, final_servers: int) -> str:
    """With `growth:`, what building for the target means; without, how far today's
    design grows before a cable moves."""
    if x.shape.growth is not None:
        return (f"upper tiers built for {final_servers:,} servers (growth): adding servers up to that size "
                f"adds devices and cables and moves none")
    wanted = endpoints.leaf_ports_wanted(x.endpoints)
    cap = endpoints.growth_cap(x.shape.rail_optimized, lp.su or lp.servers_per_leaf, lp.servers_per_leaf,
                               x.servers, x.rails, wanted)
    k = endpoints.management_leaf_count(x.endpoints, lp.leaf.down)
    held = (endpoints.held_top_ports(x.endpoints, final.spines, "spine", k),
            endpoints.held_top_ports(x.endpoints, final.cores, "core"))
    return _growth_note(x, lp, final, cap, held)


def _unit_fill(x: SizingInputs, lp: _LeafPlan, final: sizing.ClosSizing, servers: int, units: _Units) -> dict:
    """How full the last unit (SU, or leaf of a fat-tree without SUs) is, and what the
    design costs against the cheapest unit and against whole units (check/unit_fill.py)."""
    shape, rails = x.shape, x.rails
    rail = shape.rail_optimized
    if lp.su is not None:
        size, given, leaves = lp.su, shape.scalable_unit is not None, (lp.group if not rail else rails)
    else:
        size, given, leaves = lp.servers_per_leaf, shape.servers_per_leaf is not None, 1
    chosen = unit_choice.cost(size, final, servers * rails, units.panels, lp.downlinks_used(servers, rails, rail))
    # The alternatives are units of the kind we choose: a rail-optimized SU, or a fat-tree's
    # servers per leaf (a fat-tree's SU is the spec's own grouping of leaves).
    best = units.cheapest(servers) if rail or lp.su is None else None
    whole_servers = servers - servers % size
    whole = (units.cost_of(lp.servers_per_leaf, lp.leaf.up, whole_servers, 0) if 0 < whole_servers < servers
             else None)
    ratio = shape.leaf_ratio
    asked = Fraction(ratio.down, ratio.up)
    fill = unit_choice.fill_record("scalable_unit" if lp.su is not None else "leaf", size, given, servers, chosen, best,
                                   whole, leaves, lp.leaf.up, asked)
    roomy = units.with_room(servers) if units.room and (rail or lp.su is None) else None
    if roomy is not None and units.cost_of(lp.servers_per_leaf, lp.leaf.up, servers, units.room) is None:
        fill["with_room"] = roomy.record(asked)  # the unit that would give the leaf endpoints their ports
    return fill
