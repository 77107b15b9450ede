"""Extra fabrics (spec `fabrics:`): storage, in-band and out-of-band management networks
beside the compute fabric, each fed by one of the server's catalog NIC groups.

Each extra fabric is resolved and built by the Clos resolver/builder from a view of the
spec in which it is the fabric and its NIC group the server's, then merged into the
compute plan: servers appear once, their ports being the compute ports followed by each
extra group's (compute port indices, hence every compute output, are unchanged); the
extra fabric's switches are appended with `Device.fabric` set and their names prefixed
(naming.fabric_device); its link kinds are prefixed (`storage:server-leaf`). Each fabric
is recorded in `Plan.fabrics` (plan/fabric_record.py) with its device and link ranges, design
and routing. All numpy column work; no per-link Python objects.
"""

from __future__ import annotations

import dataclasses
from ipaddress import IPv4Network

import numpy as np

from ..catalog import Catalog
from ..catalog.models import NicGroup, Server, Switch
from ..catalog.nos import unsupported_nos
from ..diagnostics import Diagnostic, SpecInvalid, nearest
from ..plan.fabrics import COMPUTE, fabric_plan, kind_of, serve_management_ports
from ..plan.fabric_record import Fabric as FabricRecord  # (spec.model.Fabric is the spec's section)
from ..plan.model import LinkTable, Plan, PortLayout
from ..spec.load import LoadedSpec
from ..spec.model import CLOS_TOPOLOGIES, ExtraFabric, Growth
from ..plan import naming
from . import addressing, clos, endpoints, management
from .clos_inputs import SU_ONLY, ClosShape, Endpoints, SizingInputs, UpperSwitches, size_field
from .resolve import CLOS_LINK_KINDS, NOT_SAID_OF_ONE_SWITCH, ClosDesign, Report, one_switch_sizing, size_clos
from .sizing import ClosSizing, PortSplit, SizingError

EXTRA_LINK_KINDS = tuple(k for k in CLOS_LINK_KINDS if not k.startswith("endpoint-"))


def unsupported(loaded: LoadedSpec, kind: str) -> list[Diagnostic]:
    """Combinations extra fabrics are not built for yet (a clear error, not a wrong plan)."""
    out = []
    if kind not in CLOS_TOPOLOGIES:
        out.append(loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("fabrics",),
            f"extra fabrics are built beside a fat-tree or rail-optimized compute fabric, not '{kind}' yet",
            "remove `fabrics:`, or use a Clos compute fabric"))
    return out


def resolve_extra(loaded: LoadedSpec, compute: ClosDesign, i: int, fab: ExtraFabric, taken: dict[str, str],
                  managed: tuple[list, list, int] | None = None) -> ClosDesign:
    """One extra fabric's Clos design. Raises SpecInvalid with every problem found.
    `managed`: for the management network (kind oob), the switch management ports it
    serves, the switch models without one, and how many it serves at the growth target
    (management.py)."""
    errors: list[Diagnostic] = []
    where = ("fabrics", i)

    def error(code, sub, message, hint=""):
        errors.append(loaded.diagnostic(code, where + sub, message, hint))

    server, catalog = compute.server, compute.catalog
    if fab.topology not in CLOS_TOPOLOGIES:
        error("SPEC_UNSUPPORTED", ("topology",), f"fabric '{fab.name}': topology '{fab.topology}' is not supported for an extra fabric",
              f"use one of: {', '.join(CLOS_TOPOLOGIES)}")
    group_id = fab.nic_group or fab.name
    group = _nic_group(server, fab, taken, error)
    switch = catalog.switches.get(fab.switch)
    if switch is None:
        error("SPEC_UNKNOWN_SWITCH", ("switch",), f"unknown switch '{fab.switch}'", nearest(fab.switch, catalog.switches))
    spine = catalog.switches.get(fab.spine_switch or fab.switch)
    if fab.spine_switch is not None and spine is None:
        error("SPEC_UNKNOWN_SWITCH", ("spine_switch",), f"unknown switch '{fab.spine_switch}'",
              nearest(fab.spine_switch, catalog.switches))
    requested = _media_requested(fab, catalog, error)
    if errors or group is None or switch is None or spine is None:
        raise SpecInvalid(errors)
    speed = _speed(fab, server, group_id, group, switch, catalog, error)
    targets = []
    for k, ep in enumerate(fab.extra_endpoints):
        if (ep.speed_gbps or speed) != speed:
            error("SPEC_SPEED_MISMATCH", ("extra_endpoints", k, "speed_gbps"),
                  f"endpoint speed {ep.speed_gbps}G differs from fabric '{fab.name}' speed {speed}G", f"use speed_gbps: {speed}")
        targets.append(Endpoints(ep, speed))
    if errors:
        raise SpecInvalid(errors)
    if managed is not None:
        return management.resolve_oob(loaded, compute, i, fab, group, switch, spine, speed, requested, *managed)
    if spine.id != switch.id and speed not in spine.modes:
        raise SpecInvalid([loaded.diagnostic(
            "SPEC_SPEED_UNSUPPORTED", where + ("spine_switch",), f"{spine.id} has no {speed}G port mode",
            f"{spine.id} runs {', '.join(f'{s}G' for s in sorted(spine.modes))}; choose a spine with {speed}G ports")])
    shape = extra_fabric_shape(loaded, compute, fab, len(group.ports))
    x = SizingInputs(shape, server, group, switch, UpperSwitches(spine, spine, speed), speed,  # spines and cores of one model
                     compute.servers, tuple(targets))
    return _size_extra(loaded, compute, i, fab, x, requested)


def _nic_group(server: Server, fab: ExtraFabric, taken: dict[str, str], error: Report) -> NicGroup | None:
    """The server's NIC group that feeds the fabric (nic_group, default its name): known,
    feeding no other fabric, its port names apart from the groups already in use."""
    group_id = fab.nic_group or fab.name
    group_path = ("nic_group",) if fab.nic_group else ("name",)
    group = server.nic_groups.get(group_id)
    if group is None:
        have = sorted(g for g in server.nic_groups if g != COMPUTE)
        error("SPEC_UNKNOWN_NIC_GROUP", group_path, f"server type '{server.id}' has no NIC group '{group_id}'",
              (f"its NIC groups: {', '.join(have)}" if have else f"{server.id} has only compute NICs in the catalog")
              + ("" if fab.nic_group else "; or give nic_group: <one of them>"))
    elif group_id in taken:
        error("SPEC_NIC_GROUP_TAKEN", group_path, f"NIC group '{group_id}' already feeds fabric '{taken[group_id]}'",
              "each NIC group feeds one fabric; give nic_group: another group")
    else:  # one server port list: names must tell the groups' ports apart (cabling sheets, plan.json)
        used = {p.name for g in taken for p in server.nic_groups[g].ports}
        clash = sorted(used & {p.name for p in group.ports})
        if clash:
            error("SPEC_PORT_NAME_CLASH", group_path, f"{server.id} NIC group '{group_id}' reuses port name(s) "
                  f"{', '.join(clash)} of a group already in use", "rename the ports in the catalog")
    return group


def _media_requested(fab: ExtraFabric, catalog: Catalog, error: Report) -> dict[str, str]:
    """The fabric's media as a medium per link kind, checked against its link kinds and the catalog."""
    requested = {}
    if isinstance(fab.media, str):
        requested = {k: fab.media for k in EXTRA_LINK_KINDS}
    elif isinstance(fab.media, dict):
        for kind, media_id in fab.media.items():
            if kind not in EXTRA_LINK_KINDS:
                error("SPEC_UNKNOWN_LINK_KIND", ("media", kind), f"unknown link kind '{kind}'", nearest(kind, EXTRA_LINK_KINDS))
            requested[kind] = media_id
    for kind, media_id in requested.items():
        if media_id not in catalog.media:
            error("SPEC_UNKNOWN_MEDIA", ("media",) if isinstance(fab.media, str) else ("media", kind),
                  f"unknown medium '{media_id}'", nearest(media_id, catalog.media))
    return requested


def _speed(fab: ExtraFabric, server: Server, group_id: str, group: NicGroup, switch: Switch, catalog: Catalog,
           error: Report) -> int:
    """The fabric's link speed (speed_gbps, else the NIC group's): the group's own and a mode
    of the switch. Checks the NOS."""
    if fab.nos is not None and switch.protocol != "ethernet":
        error("SPEC_NOS_NOT_ETHERNET", ("nos",), f"fabric '{fab.name}': {switch.id} is an {switch.protocol} switch: it takes no NOS",
              "remove nos")
    elif fab.nos is not None and fab.nos not in switch.nos:
        message, hint = unsupported_nos(switch, fab.nos, catalog.switches)
        error("SPEC_NOS_UNSUPPORTED", ("nos",), f"fabric '{fab.name}': {message}", hint)
    speed = fab.speed_gbps or group.speed_gbps
    if speed not in switch.modes:
        modes = ", ".join(f"{s}G" for s in sorted(switch.modes))
        error("SPEC_SPEED_UNSUPPORTED", ("speed_gbps",) if fab.speed_gbps else ("switch",),
              f"{switch.id} has no {speed}G port mode (the {server.id} '{group_id}' ports run at {group.speed_gbps}G)",
              f"{switch.id} runs {modes}; choose a switch with {speed}G ports")
    elif group.speed_gbps != speed:
        error("SPEC_SPEED_MISMATCH", ("speed_gbps",),
              f"fabric speed {speed}G differs from the {server.id} '{group_id}' port speed {group.speed_gbps}G",
              f"use speed_gbps: {group.speed_gbps}")
    return speed


def _size_extra(loaded: LoadedSpec, compute: ClosDesign, i: int, fab: ExtraFabric, x: SizingInputs,
                requested: dict[str, str]) -> ClosDesign:
    """The extra fabric sized as a Clos, then cut to one switch (or one leaf per NIC,
    dual-homed) where that holds every port."""
    where = ("fabrics", i)
    rails = x.rails
    dual, one_switch = _dual_homed(fab, rails), _may_be_one_switch(fab)
    try:
        design = size_clos(x, loaded.spec, compute.catalog, requested)
    except SizingError as exc:
        path = where + tuple(exc.path[1:]) if exc.path[:1] == ("fabric",) else exc.path
        raise SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", path, f"fabric '{fab.name}': {exc.message}", exc.hint)]) from None
    endpoint_ports = sum(e.spec.count * e.spec.ports for e in x.endpoints)
    # ports one switch must take: all of them, or with dual homing one NIC of each server
    # (and its share of the endpoints' ports) on each of `rails` leaves
    server_ports = design.final_servers + -(-endpoint_ports // rails) if dual else \
        design.final_servers * rails + endpoint_ports
    radix, speed = x.switch.radix(x.speed_gbps), x.speed_gbps
    one = "one leaf per NIC" if dual else "one switch"
    if fab.tiers == 1 and (fab.topology != "fat-tree" or fab.scalable_unit is not None or server_ports > radix):
        raise SpecInvalid([loaded.diagnostic(
            "DESIGN_IMPOSSIBLE", where + ("tiers",),
            f"fabric '{fab.name}': {one} takes {radix} ports at {speed}G, the fabric brings {server_ports} "
            f"server and endpoint ports{' per leaf' if dual else ''}" if server_ports > radix
            else f"fabric '{fab.name}': tiers: 1 is a single fat-tree tier, without SUs",
            "use tiers: 2 or auto" if server_ports > radix else "use topology: fat-tree without scalable_unit")])
    if one_switch and server_ports <= radix:
        off = [k for k, e in enumerate(x.endpoints) if e.spec.attach != "leaf"]
        if off:  # one switch: no spine, core or management leaf to attach to
            raise SpecInvalid([loaded.diagnostic(
                "DESIGN_NO_FREE_PORTS", where + ("extra_endpoints", k, "attach"),
                f"fabric '{fab.name}' is one switch: its endpoints attach to it (attach: leaf)",
                "remove attach, or set tiers: 2 for spines") for k in off])
        design = _leaf_per_nic(design, server_ports, radix) if dual else _one_switch(design, server_ports, radix)
    else:
        problems = endpoints.problems(design, loaded.diagnostic, where + ("extra_endpoints",), ("scalable_unit",))
        if problems:
            raise SpecInvalid([dataclasses.replace(p, message=f"fabric '{fab.name}': {p.message}") for p in problems])
        design = dataclasses.replace(design, notes=design.notes + tuple(endpoints.notes(design)))
    notes = tuple(f"{fab.name} fabric: {n}" for n in design.notes)
    return dataclasses.replace(design, hosts=compute.hosts, notes=notes)


def _dual_homed(fab: ExtraFabric, rails: int) -> bool:
    """Dual-homed: NIC r of every server on leaf r of its unit, which is the rail-optimized
    wiring rule; a fat-tree leaf would take all of a server's NICs on adjacent ports (often
    one twin-port cage), so one leaf or one transceiver would cut it off."""
    return fab.homing == "dual" and rails > 1


def _may_be_one_switch(fab: ExtraFabric) -> bool:
    """A fat-tree without SUs at tiers 1 or auto: one switch where that holds every port."""
    return fab.tiers in (1, "auto") and fab.topology == "fat-tree" and fab.scalable_unit is None


def extra_fabric_shape(loaded: LoadedSpec, compute: ClosDesign, fab: ExtraFabric, rails: int) -> ClosShape:
    """An extra fabric's shape: its own topology (dual homing wires rail by rail), tiers,
    ratios and SU; no servers_per_leaf or core model of its own. A fabric that may be one
    switch is sized as two tiers first (tiers: auto), the spine tier dropped after. The
    cluster's growth target in servers: the compute fabric's SUs mean nothing to an extra
    fabric's own."""
    dual, one_switch = _dual_homed(fab, rails), _may_be_one_switch(fab)
    growth = loaded.spec.growth
    if growth is not None and growth.max_scalable_units and fab.scalable_unit is None:
        growth = Growth(max_servers=growth.max_scalable_units * compute.su_size) if compute.su_size else None
    ratio = fab.oversubscription
    return ClosShape("rail-optimized" if dual else fab.topology, "auto" if one_switch else fab.tiers, ratio.leaf,
                     ratio.spine, fab.scalable_unit, None, None, growth, size_field(loaded.spec), SU_ONLY)


def _one_switch(design: ClosDesign, server_ports: int, radix: int) -> ClosDesign:
    """Every server port of the fabric on one switch: no spine. A storage or management
    network of a few racks is one switch uplinked to the site network; those uplinks
    (and the storage arrays or firewalls behind them) are the site's, not this plan's."""
    sizing = one_switch_sizing(server_ports)
    endpoint_ports = sum(e.spec.count * e.spec.ports for e in design.endpoints)
    ports_each = (server_ports - endpoint_ports) // design.final_servers
    notes = [n for n in design.notes if not n.startswith(NOT_SAID_OF_ONE_SWITCH)]
    notes.append(f"one {design.switch.id} holds all {server_ports} server{' and endpoint' if endpoint_ports else ''} "
                 f"ports: no spine tier; its other "
                 f"{radix - server_ports} ports stay spare, and its uplinks to the site network are not in this plan")
    notes.append(f"grows to {(radix - endpoint_ports) // ports_each:,} servers on this switch; beyond that the fabric needs a spine tier "
                 f"and its server cables move")
    return dataclasses.replace(design, sizing=sizing, servers_per_leaf=design.final_servers, su_size=None,
                               notes=tuple(notes))


def _leaf_per_nic(design: ClosDesign, slots: int, radix: int) -> ClosDesign:
    """Dual homing without a spine tier: one leaf per NIC of the group, leaf r holding NIC r
    of every server (slot = server) and the endpoints' ports in the last slots, so a server
    keeps the fabric through any one leaf, cable or transceiver. The leaves' uplinks to the
    site network (and the storage behind them) are the site's, as for one switch."""
    rails = design.rails
    sizing = ClosSizing(1, rails, PortSplit(slots, 0), PortSplit(0, 0), rails, 1, 0, 0)
    endpoint_ports = sum(e.spec.count * e.spec.ports for e in design.endpoints)
    notes = [n for n in design.notes if not n.startswith(("grows to", "upper tiers built for", "spines rounded",
                                                          "2 spines, not 1", "scalable_unit not given"))]
    notes.append(f"dual-homed: {rails} {design.switch.id} leaves, leaf r takes NIC r of every server"
                 f"{' and its share of the endpoint ports' if endpoint_ports else ''} ({slots} ports each): no spine "
                 f"tier; their other {radix - slots} ports each stay spare, and their uplinks to the site network are "
                 f"not in this plan, so traffic from one server's NIC on one leaf to another's on the other crosses the "
                 f"site network (the rail cut's bisection here is 0); set tiers: 2 for spines of its own")
    notes.append(f"grows to {radix - (slots - design.final_servers):,} servers on these leaves; beyond that the fabric "
                 f"needs a spine tier and its server cables move")
    return dataclasses.replace(design, sizing=sizing, servers_per_leaf=slots, su_size=slots, unit_fill=None,
                               final_leaves=rails, notes=tuple(notes))


def attach(loaded: LoadedSpec, compute: ClosDesign, plan: Plan) -> tuple[Plan, list[tuple[int, ClosDesign]]]:
    """The compute plan with every extra fabric of the spec merged in, and each extra
    fabric's design by its index in `fabrics:` (route() plans their addresses)."""
    errors = unsupported(loaded, loaded.spec.fabric.topology)
    if errors:
        raise SpecInvalid(errors)
    taken = {COMPUTE: COMPUTE}
    built: dict[int, tuple] = {}
    # the management network serves every other fabric's switches: built after them
    order = sorted(range(len(loaded.spec.fabrics)), key=lambda i: kind_of(loaded.spec.fabrics[i].name) == "oob")
    switches = compute.catalog.switches
    managed, unserved = management.managed_ports(plan, switches, COMPUTE)
    final_mgmt = management.final_managed(compute)
    for i in order:
        fab = loaded.spec.fabrics[i]
        oob = kind_of(fab.name) == "oob"
        try:
            design = resolve_extra(loaded, compute, i, fab, taken, (managed, unserved, final_mgmt) if oob else None)
        except SpecInvalid as exc:
            errors.extend(exc.diagnostics)
            continue
        taken[fab.nic_group or fab.name] = fab.name
        extra = clos.build(design)  # endpoints fit: resolve_extra checked (endpoints.problems)
        if oob:
            extra.design["management_ports"] = _management_rows(design, extra, fab.name, managed)
        else:
            more, missing = management.managed_ports(extra, switches, fab.name,
                                                     lambda name, f=fab.name: naming.fabric_device(f, name))
            managed, unserved = managed + more, sorted(set(unserved) | set(missing))
            final_mgmt += management.final_managed(design)
        built[i] = (fab, design, extra)
    if errors:
        raise SpecInvalid(errors)
    in_order = [built[i] for i in sorted(built)]
    return merge(plan, in_order), [(i, design) for i, (_, design, _) in enumerate(in_order)]


def _management_rows(design: ClosDesign, extra: Plan, name: str, managed: list) -> dict:
    """The management network's record of the switch management ports it serves: where
    each lands (management leaf and host port)."""
    leaves = [d for d in extra.devices if d.role == "leaf"]
    port_names = [p.name for p in extra.layouts[leaves[0].layout].ports]
    rows = management.assign(design, managed, [naming.fabric_device(name, d.name) for d in leaves], port_names)
    return {"columns": ["fabric", "switch", "port", "leaf", "leaf_port"], "rows": rows}


def merge(plan: Plan, built: list) -> Plan:
    servers = [i for i, d in enumerate(plan.devices) if d.role == "server"]
    n = len(servers)
    assert servers == list(range(n)), "servers come first in a Clos plan"
    base_layout = plan.devices[0].layout
    ports = list(plan.layouts[base_layout].ports)
    compute_design = dict(plan.design)
    fabrics = {COMPUTE: FabricRecord(COMPUTE, COMPUTE, COMPUTE, range(n), range(len(plan.devices)), range(len(plan.links)),
                               (0, len(ports)), compute_design)}
    first_link = len(plan.links)
    devices = plan.devices[n:]
    layouts = {k: v for k, v in plan.layouts.items() if k != base_layout}
    kinds, media = list(plan.link_kinds), list(plan.media)
    parts = [plan.links]
    notes = list(plan.notes)
    first_dev = len(plan.devices)
    for fab, _design, extra in built:
        extra_servers = extra.devices[:n]
        # Both builders list server g (0-based, spec order) as device g; names may differ (SUs), ids do not.
        assert all(d.role == "server" for d in extra_servers) and extra.devices[n].role != "server"
        port_base = len(ports)
        ports += extra.layouts[extra_servers[0].layout].ports
        for d in extra.devices[n:]:
            d.name = naming.fabric_device(fab.name, d.name)
            d.fabric = fab.name
            devices.append(d)
        layouts.update((k, v) for k, v in extra.layouts.items() if k != extra_servers[0].layout)
        # device ids: servers keep theirs, the fabric's switches follow everything before them
        dev_map = np.concatenate([np.arange(n), first_dev + np.arange(len(extra.devices) - n)]).astype(np.int32)
        own = range(first_dev, first_dev + len(extra.devices) - n)
        first_dev = own.stop
        kind_map = np.array([_index(kinds, f"{fab.name}:{k}") for k in extra.link_kinds], dtype=np.int16)
        media_map = np.array([_index(media, m) for m in extra.media], dtype=np.int16)
        lt = extra.links
        server_end = lt.a_dev < n  # end a of server-leaf links is the server
        parts.append(LinkTable(dev_map[lt.a_dev], np.where(server_end, lt.a_port + port_base, lt.a_port).astype(np.int32),
                               dev_map[lt.b_dev], lt.b_port, kind_map[lt.kind], media_map[lt.media], lt.speed_gbps))
        fabrics[fab.name] = FabricRecord(fab.name, kind_of(fab.name), fab.nic_group or fab.name, range(n), own,
                                   range(first_link, first_link + len(lt)), (port_base, len(ports)), design_record(extra))
        first_link += len(lt)
        notes += list(extra.notes)
    merged_id = base_layout + "".join(f"+{name}" for name in list(fabrics)[1:])
    merged = PortLayout(merged_id, tuple(ports))
    server_devices = []
    for d in plan.devices[:n]:
        d.layout = merged_id
        server_devices.append(d)
    all_devices = server_devices + devices
    offset = 0
    for d in all_devices:
        d.port_offset = offset
        offset += len(merged if d.layout == merged_id else layouts[d.layout])
    return Plan(name=plan.name, devices=all_devices, layouts={merged_id: merged, **layouts}, links=LinkTable.concat(parts),
                link_kinds=kinds, media=media, design=compute_design, notes=notes, fabrics=fabrics)


def design_record(extra: Plan) -> dict:
    keep = ("topology", "tiers", "switch", "speed_gbps", "uplink_speed_gbps", "switch_radix", "scalable_unit", "rails",
            "leaf_ports", "pods", "spines_per_pod", "leaf_spine_links_per_pair", "spine_ports", "cores_per_group",
            "management_ports")
    return {k: extra.design[k] for k in keep if k in extra.design}


def _index(table: list[str], value: str) -> int:
    if value not in table:
        table.append(value)
    return table.index(value)


def route(loaded: LoadedSpec, plan: Plan, designs: list[tuple[int, ClosDesign]], compute_ethernet: bool) -> None:
    """Each Ethernet extra fabric's routing plan (RFC 7938 ASNs, loopbacks, /31s from its
    own `addressing:`), planned on its fabric plan and kept on its record, after
    checking that no two Ethernet fabrics' pools overlap. The fabrics are separate routing
    domains (no link joins them), so each has its own ASN plan; their address pools
    must still be apart, as hosts and the site network see them side by side."""
    ethernet = [(i, d) for i, d in designs if d.switch.protocol == "ethernet"]
    check_pools(loaded, ([None] if compute_ethernet else []) + [i for i, _ in ethernet])
    for i, design in ethernet:
        name = loaded.spec.fabrics[i].name
        view = fabric_plan(plan, name)
        view.routing = view.fabrics[name].routing = plan.fabrics[name].routing = \
            addressing.plan_routing(loaded, design, view, extra=i)
    for i, _ in ethernet:  # the management network addresses every switch management port it serves
        if kind_of(loaded.spec.fabrics[i].name) == "oob":
            management.address(loaded, i, plan)
    serve_management_ports(plan)


def check_pools(loaded: LoadedSpec, fabrics: list[int | None]) -> None:
    """No pool of one fabric (None: compute; i: fabrics[i]) overlaps a pool of another.
    (Within one fabric the Addressing model already keeps its four pools apart.)"""
    spec = loaded.spec
    seen: list[tuple[str, str, IPv4Network, tuple]] = []  # (fabric, pool, network, path)
    errors = []
    written = loaded.source.positions  # point at the pool the user wrote, not at a default
    for i in fabrics:
        addr, fab_name, where = (spec.addressing, COMPUTE, ()) if i is None else \
            (spec.fabrics[i].addressing, spec.fabrics[i].name, ("fabrics", i))
        for pool, net in addr.pools().items():
            for other_fab, other_pool, other_net, other_path in seen:
                if net.overlaps(other_net):
                    path = where + ("addressing", pool)
                    mine, theirs = (fab_name, pool, net), (other_fab, other_pool, other_net)
                    if path not in written and other_path in written:
                        path, mine, theirs = other_path, theirs, mine
                    errors.append(loaded.diagnostic(
                        "ADDRESS_POOL_OVERLAP", path,
                        "fabric '{}' {} {} overlaps fabric '{}' {} {}".format(*mine, *theirs),
                        "give each fabric its own ranges (`fabrics[].addressing`); by default the k-th extra "
                        "fabric takes 10.(192+8(k-1)).0.0/13, apart from the compute defaults"))
            seen.append((fab_name, pool, net, where + ("addressing", pool)))
    if errors:
        raise SpecInvalid(errors)
