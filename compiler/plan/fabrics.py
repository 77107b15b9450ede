"""Several fabrics in one plan: the fabric records (plan/fabric_record.py) read by name, and the
plan of one fabric, materialised from its record for the outputs and checks that read one
fabric only.

A plan with extra fabrics (spec `fabrics:`) lists every server once, its ports being the
compute NIC group's followed by each extra fabric's group (Fabric.server_ports); each
fabric's own devices and links are index ranges of the plan's tables (Fabric.devices,
Fabric.links), the compute fabric's first, so its fabric plan keeps every index.
"""

from __future__ import annotations

import dataclasses
from ipaddress import IPv4Address, IPv4Network
from operator import attrgetter

import numpy as np

from .bom import BomLine, bill_of_materials, cable_beyond_reach, cable_of_length
from .columns import concat
from .fabric_record import COMPUTE, SCALE_UP, Fabric, kind_of
from .fabric_view import FabricView
from .model import Device, LinkTable, Plan, PortLayout
from .physical import Physical
from .routing import ManagementSubnet
from .views import label_pieces, place_prefixes

__all__ = ["CORD_MEDIUM", "COMPUTE", "SCALE_UP", "Fabric", "fabric_bom", "fabric_check_plan", "fabric_names", "fabric_plan",
           "fabric_record", "fabric_view", "is_multi_fabric", "seal_views", "serve_management_ports", "kind_of", "link_fabric",
           "single_fabric"]


def single_fabric(plan: Plan) -> dict[str, Fabric]:
    """The fabrics of a one-fabric plan: the compute fabric holds every device and link."""
    servers = 0
    while servers < len(plan.devices) and plan.devices[servers].role == "server":
        servers += 1
    ports = len(plan.layouts[plan.devices[0].layout]) if servers else 0
    return {COMPUTE: Fabric(COMPUTE, COMPUTE, COMPUTE, range(servers), range(len(plan.devices)), range(len(plan.links)),
                            (0, ports), plan.design, plan.routing)}


def fabric_names(plan: Plan) -> list[str]:
    """The network fabrics (switches and cables in the plan's tables): compute first, then the
    extra fabrics in spec order; ["compute"] for a single fabric. Not the scale-up domains."""
    return [name for name, f in plan.fabrics.items() if f.is_network] or [COMPUTE]


def fabric_record(plan: Plan, name: str = COMPUTE) -> Fabric:
    return plan.fabrics[name] if plan.fabrics else single_fabric(plan)[COMPUTE]


def is_multi_fabric(plan: Plan) -> bool:
    """More than one network fabric (spec `fabrics:`)."""
    return len(fabric_names(plan)) > 1


def link_fabric(plan: Plan) -> np.ndarray:
    """Per link, its fabric's index in fabric_names(plan) (from the records' link ranges)."""
    if not is_multi_fabric(plan):
        return np.zeros(len(plan.links), dtype=np.int64)
    sizes = [len(plan.fabrics[name].links) for name in fabric_names(plan)]
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def fabric_plan(plan: Plan, name: str = COMPUTE) -> Plan:
    """The plan of one fabric: the servers (with only that fabric's ports for compute, all
    ports otherwise, so port indices stay) plus that fabric's devices and links, its design
    and routing; it holds that one fabric record. The plan itself when it has one fabric.
    Memoised: every output shares one per fabric. Links are slices of the plan's columns
    (no copy) for the compute fabric, whose indices are the plan's."""
    if not is_multi_fabric(plan):
        return plan
    return plan.memo(f"fabric_plan:{name}", lambda p: _materialise(p, p.fabrics[name]))


def fabric_view(plan: Plan, name: str = COMPUTE) -> FabricView:
    """The typed view of one fabric (plan/fabric_view.py): its fabric plan's, sealed."""
    return fabric_plan(plan, name).view


def seal_views(plan: Plan) -> None:
    """Expand's last step: the plan's view and every fabric's, built from the finished plan
    (a fabric plan materialised while expand still ran is rebuilt)."""
    plan.seal_view()
    if is_multi_fabric(plan):
        for name in fabric_names(plan):
            fabric_plan(plan, name).seal_view()


def fabric_check_plan(plan: Plan, name: str = COMPUTE) -> Plan:
    """The plan a fabric is judged on: its fabric plan, in which the servers carry only that
    fabric's NIC ports (port 0 = its first NIC), as the compute fabric's plan always does, so
    an analysis that reads a server's ports as its NICs (the rail cut, homing per NIC) reads
    this fabric's NICs and not the compute ports before them. The fabric plan itself for the
    compute fabric and for a one-fabric plan. Memoised."""
    if not is_multi_fabric(plan) or name == COMPUTE:
        return fabric_plan(plan, name)
    return plan.memo(f"fabric_check_plan:{name}", lambda p: _materialise(p, p.fabrics[name], own_ports=True))


def _materialise(plan: Plan, fab: Fabric, own_ports: bool = False) -> Plan:
    compute = fab.name == COMPUTE
    first_port = fab.server_ports[0] if own_ports and not compute else 0
    keep = fab.device_ids()
    n = len(fab.servers)
    layouts = dict(plan.layouts)
    devices = []
    offset = 0
    fields = attrgetter(*Device.__dataclass_fields__)  # a plain copy; dataclasses.replace is 2x slower
    for i in keep.tolist():
        d = Device(*fields(plan.devices[i]))
        if d.role == "server" and (compute or own_ports):
            first, end = fab.server_ports
            lid = d.layout.split("+")[0] if compute else f"{d.layout}[{first}:{end}]"
            if lid not in layouts:
                layouts[lid] = PortLayout(lid, plan.layouts[d.layout].ports[first:end])
            d.layout = lid
        d.port_offset = offset
        offset += len(layouts[d.layout])
        devices.append(d)
    used = {d.layout for d in devices}
    layouts = {k: v for k, v in layouts.items() if k in used}
    sel = slice(fab.links.start, fab.links.stop)
    lt = plan.links
    if compute:  # a prefix of the plan: device indices hold
        a_dev, b_dev = lt.a_dev[sel], lt.b_dev[sel]
    else:  # servers keep theirs; the fabric's own devices follow them
        shift = np.int32(fab.devices.start - n)
        a_dev = np.where(lt.a_dev[sel] < n, lt.a_dev[sel], lt.a_dev[sel] - shift).astype(np.int32)
        b_dev = (lt.b_dev[sel] - shift).astype(np.int32)
    a_port = lt.a_port[sel]
    if first_port:  # the servers' ports renumbered from this fabric's first NIC
        a_port = np.where(lt.a_dev[sel] < n, a_port - first_port, a_port).astype(np.int32)
    links = LinkTable(a_dev, a_port, b_dev, lt.b_port[sel], lt.kind[sel], lt.media[sel], lt.speed_gbps[sel])
    design = dict(plan.design) if compute else {**plan.design, **fab.design, "fabric": fab.name}
    kinds, media = plan.link_kinds, plan.media
    if compute:  # the compute fabric's kinds and media are a prefix of the plan's: indices hold
        kinds = [k for k in kinds if ":" not in k]
        media = media[:int(links.media.max()) + 1] if len(links) else []
    own = Fabric(fab.name, fab.kind, fab.nic_group, range(n), range(0 if compute else n, len(devices)), range(len(links)),
                 (0, fab.server_ports[1] - first_port) if first_port else fab.server_ports, design, fab.routing)
    fabrics = {fab.name: own}
    if SCALE_UP in plan.fabrics:  # the servers' domains: the same in every fabric's plan (no links of a Clos)
        fabrics[SCALE_UP] = plan.fabrics[SCALE_UP]
    return Plan(name=plan.name, devices=devices, layouts=layouts, links=links, link_kinds=kinds, media=media, design=design,
                notes=list(plan.notes), facts=plan.facts, requirements=plan.requirements if compute else {},
                analysis=plan.analysis, physical=_physical_view(plan.physical, keep, sel), routing=fab.routing,
                fabrics=fabrics)


def _physical_view(phys: Physical | None, keep: np.ndarray, sel: slice) -> Physical | None:
    """The physical side of a fabric's view: its devices' places and its links' lengths.
    Every rack stays (same indices); what a rack holds and draws is counted over every
    fabric (Physical.whole), and the physical check and the rack outputs read the whole plan."""
    if phys is None:
        return None
    return Physical(phys.racks, phys.dev_rack[keep], phys.dev_u[keep], phys.dev_height_u[keep], phys.dev_power_w[keep],
                    phys.rack_width_m, phys.row_pitch_m, phys.depth_mm,
                    length_m=None if phys.length_m is None else phys.length_m[sel],
                    order_m=None if phys.order_m is None else phys.order_m[sel], model=phys.model, whole=phys)


def serve_management_ports(plan: Plan) -> None:
    """Each switch the management network serves takes its address there: from that fabric's
    record (`management_ports` rows [fabric, switch, port, leaf, leaf port, address] and the
    leaves' `management_network` subnets), into the switch's fabric routing plan where it has
    one (its management address, the subnet's prefix and gateway, which its config says).
    The management network's own leaves take their subnets (the gateway they hold, the access
    VLAN, the cords they serve) into its routing plan (management_subnets).
    Called once the routing plans exist: by expand and by plan.json's reader."""
    for rec in plan.fabrics.values():
        ports, network = rec.management_ports, rec.management_network
        if network and "vlan" in network and rec.routing is not None:  # plan.json of an older clusterc: none
            rec.routing.management_subnets = _management_subnets(plan, rec, network, ports)
        if not ports or not ports["rows"] or not network or len(ports["rows"][0]) < 6:
            continue
        gateway = {leaf: int(IPv4Address(gw)) for leaf, _, gw in network["subnets"]["rows"]}
        index: dict[str, dict[str, int]] = {}  # fabric -> device name -> index in its view
        for row in ports["rows"]:
            fabric, switch, leaf, address = row[0], row[1], row[3], row[5]
            routing = plan.fabrics[fabric].routing if fabric in plan.fabrics else None
            if routing is None:
                continue
            if fabric not in index:
                index[fabric] = {d.name: k for k, d in enumerate(fabric_plan(plan, fabric).devices)}
                if routing.management_gateway is None:
                    routing.management_gateway = np.zeros(len(routing.management), dtype=np.uint32)
                routing.management_prefix = int(network["prefix"])
            k = index[fabric][switch]
            routing.management[k] = int(IPv4Address(address))
            assert routing.management_gateway is not None  # made above, with the fabric's index
            routing.management_gateway[k] = gateway[leaf]


def _management_subnets(plan: Plan, rec: Fabric, network: dict, ports: dict | None) -> dict[int, ManagementSubnet]:
    """Per management leaf (its index in the fabric's plan) the subnet it serves, from the
    fabric record's `management_network` subnets and `management_ports` rows."""
    view = fabric_plan(plan, rec.name)
    index = {d.name: k for k, d in enumerate(view.devices)}
    cords: dict[str, list[tuple[int, str, float | None]]] = {}
    if ports and ports["rows"]:
        col = {c: k for k, c in enumerate(ports["columns"])}
        for row in ports["rows"]:
            leaf = row[col["leaf"]]
            layout = view.layouts[view.devices[index[leaf]].layout]
            port = next(k for k, p in enumerate(layout.ports) if p.name == row[col["leaf_port"]])
            ordered = row[col["order_m"]] if "order_m" in col else None
            cords.setdefault(leaf, []).append((port, f"{row[col['switch']]}:{row[col['port']]}", ordered))
    out = {}
    for leaf, subnet, gateway in network["subnets"]["rows"]:
        net = IPv4Network(subnet)
        out[index[leaf]] = ManagementSubnet(int(network["vlan"]), int(net.network_address), net.prefixlen,
                                            int(IPv4Address(gateway)), tuple(sorted(cords.get(leaf, ()))))
    return out


def fabric_bom(plan: Plan) -> list[tuple[str, BomLine]]:
    """(fabric, BomLine) for every fabric: the compute fabric's full bill (servers, NICs,
    switches, optics, cables), then each extra fabric's switches, optics and cables
    (its servers are the compute fabric's, counted once)."""
    out = []
    for name in fabric_names(plan):
        view = fabric_plan(plan, name)
        lines = [line for line in view.memo("bom", bill_of_materials)
                 if name == COMPUTE or line.category not in ("server", "nic")]
        for cord in _management_cords(plan, name):  # one line per part and length
            same = next((k for k, line in enumerate(lines) if (line.category, line.part_number, line.length_m)
                         == (cord.category, cord.part_number, cord.length_m)), None)
            if same is None:
                lines.append(cord)
            else:
                line = lines[same]
                # the line says how its part was found; of the cords' notes, what they are (before the first ";")
                lines[same] = dataclasses.replace(line, quantity=line.quantity + cord.quantity,
                                                  notes=f"{line.notes}; {cord.quantity} of them: {cord.notes.split('; ')[0]}")
        out += [(name, line) for line in lines]
    return out


# The medium of a management cord: a switch management port and a management leaf's host
# port are both 1000BASE-T RJ45 (catalog management_port, the management switch's panel).
CORD_MEDIUM = "cat6"


@dataclasses.dataclass(frozen=True, slots=True)
class ManagementCord:
    """A cord from a switch management port to a management leaf (expand/management.py):
    not a link of the plan (management ports are not in the switches' port layouts), but a
    cable the floor pulls, the BOM orders and the cabling sheet and labels list."""

    fabric: str  # the management network's fabric (oob)
    cable_id: str  # <switch>:<port>, as a link's id names its A end
    switch: str
    port: str  # the switch's management port (catalog), e.g. eth0
    leaf: str
    leaf_port: str
    # With a layout (expand/management.py cord_lengths): the modelled length, switch rack and U
    # to the leaf's by the rule every cable follows, and the orderable length (None: none
    # reaches, the physical check says so). Both None without a layout.
    length_m: float | None = None
    order_m: float | None = None


def management_cords(plan: Plan) -> list[ManagementCord]:
    """Every management cord of the plan, fabric by fabric in plan.json's order. Not memoised:
    expand adds the cords' lengths once the layout has placed the switches."""
    out = []
    for name, record in (plan.fabrics or {}).items():
        table = record.management_ports or {}
        col = {c: k for k, c in enumerate(table.get("columns") or [])}
        measured = "length_m" in col
        for row in table.get("rows") or []:
            switch, port, leaf, leaf_port = (row[col[c]] for c in ("switch", "port", "leaf", "leaf_port"))
            out.append(ManagementCord(name, f"{switch}:{port}", switch, port, leaf, leaf_port,
                                      row[col["length_m"]] if measured else None, row[col["order_m"]] if measured else None))
    return out


def management_cord_labels(plan: Plan) -> tuple[list[str], list[str]]:
    """Per management cord (management_cords), the label text of its switch end and of its
    leaf end: `<id> <near> / <far>` as a cable's (views.label_pieces), an end `<place>:<port>`
    (views.place_prefixes). The cabling sheet, the labels, the floor sheets and NetBox read it."""
    cords = management_cords(plan)
    if not cords:
        return [], []
    prefix = place_prefixes(plan)
    ids = np.array([c.cable_id for c in cords], dtype=object)
    switch = [prefix[[plan.device_index(c.switch) for c in cords]], np.array([c.port for c in cords], dtype=object)]
    leaf = [prefix[[plan.device_index(c.leaf) for c in cords]], np.array([c.leaf_port for c in cords], dtype=object)]
    return concat(label_pieces([ids], switch, leaf)).tolist(), concat(label_pieces([ids], leaf, switch)).tolist()


def _management_cords(plan: Plan, name: str) -> list:
    """The management network's patch cords from every switch management port it serves (its
    design's `management_ports`, expand/management.py) to its leaves: RJ45 at both ends, the
    medium of its BMC cables. Those ports are not in the switches' port layouts, so they are
    no links of the plan's tables and no rows of the cabling sheet; their places are in
    plan.json (design.fabrics.<name>.management_ports)."""
    cords = [c for c in management_cords(plan) if c.fabric == name]
    cat6 = plan.view.facts.media.get(CORD_MEDIUM)
    if not cords or cat6 is None:
        return []
    note = "switch management ports to the management leaves (plan.json management_ports)"
    if cords[0].length_m is None:
        return [BomLine("cable", cat6.cable_part_number, cat6.cable_description, len(cords), cat6.cable_power_w,
                        notes=f"{note}; lengths not modelled (no layout)")]
    # one line per orderable length, spelled as the plan's cables of that length (bill_of_materials)
    count: dict[float, int] = {}
    for c in cords:
        if c.order_m is not None:
            count[float(c.order_m)] = count.get(float(c.order_m), 0) + 1
    lines = []
    for length, n in sorted(count.items()):
        part, description, how = cable_of_length(cat6, length)
        lines.append(BomLine("cable", part, description, n, cat6.cable_power_w, f"{note}; {how}", length_m=length))
    beyond = sum(c.order_m is None for c in cords)
    return lines + ([cable_beyond_reach(cat6, CORD_MEDIUM, beyond)] if beyond else [])
