"""The out-of-band management network (spec `fabrics:` entry named oob): sized by the ports
it must serve and built from the management switch's real panel.

Ports served, each on a host port of a management leaf:
- every BMC: the servers' `oob` NIC group (DGX: one 1GbE RJ45 port);
- the management port of every other switch of the plan (compute and extra fabrics), from
  the catalog's `management_port` (a switch without one is listed in a note, not served).
The management switches' own management ports are not cabled into the network they run:
a cable from a leaf's eth0 into the same network adds no independent path (losing the
network loses both), so operators reach them in band, on each leaf's management address
(its subnet's gateway), or through a console server.

Leaves: BMCs of consecutive servers on the first two thirds of a leaf's host ports (32 of
48: one leaf per 32-DGX SU, a block that growth never moves), more leaves where the
management ports do not fit in what is left; the management ports take the free host ports
port-major over the leaves, so switches that back each other up (spine-01, spine-02) land
on different management leaves. Uplinks: from the switch's uplink cage group (SN2201:
4 x 100GbE QSFP28, swp49-52) at its speed, one link from every leaf to each of two spines
of the same model, which take leaves on that group only: an SN2201 spine tier holds 4
leaves (192 host ports). Without an uplink group, uplinks run on host ports at the host
speed, one to each spine.

O(servers + switches).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from ipaddress import IPv4Address, IPv4Network

import numpy as np

from ..catalog import Catalog
from ..catalog.models import NicGroup, Switch
from ..diagnostics import SpecInvalid
from ..plan.fabrics import CORD_MEDIUM
from ..spec.load import LoadedSpec
from ..spec.model import ExtraFabric
from .addressing import REGIONS
from .clos_inputs import SU_ONLY, ClosShape, size_field
from .cable_lengths import pair_lengths
from .media import orderable
from .resolve import ClosDesign
from .sizing import ClosSizing, PortSplit

# The management leaves' access VLAN: every host port a leaf serves is an untagged member, the
# gateway an interface in it. Any id from 2 to 4094 (VLAN 1 is the default VLAN every NOS
# puts unconfigured ports in, so it would take stray ports in too); one id on every leaf,
# since each leaf's VLAN is local to it (the leaves are routed to the spines).
MANAGEMENT_VLAN = 10
SPINES = 2  # two management spines: one lost leaves every leaf reachable
# The extra fabric's default topology: leaves holding their hosts, at most a spine tier above.
ONE_TIER = ExtraFabric.model_fields["topology"].default


@dataclasses.dataclass(frozen=True)
class ManagedPort:
    """A switch management port the management network serves."""

    fabric: str  # the switch's fabric: compute, storage, ...
    device: str  # its name in the plan
    port: str  # its management port's name (catalog), e.g. eth0


def managed_ports(plan, switches: dict[str, Switch], fabric: str, rename=lambda name: name) -> tuple[list[ManagedPort], list[str]]:
    """The management ports of a plan's switches (leaf, spine, core) in plan order, and the
    switch models that have none in the catalog. `rename` gives a device its final name."""
    out, missing = [], set()
    for d in plan.devices:
        if d.role not in ("leaf", "spine", "core"):
            continue
        port = switches[d.model].management_port
        if port is None:
            missing.add(d.model)
            continue
        out.append(ManagedPort(fabric, rename(d.name), port.name))
    return out, sorted(missing)


def final_managed(design: ClosDesign) -> int:
    """Management ports of a Clos design's switches at its growth target (its final leaves,
    its spines and cores, which are built for the target from day one), counting the models
    that have one."""
    s = design.sizing
    spine = design.spine_switch or design.switch
    core = design.core_switch or spine
    return sum(count for count, model in ((max(design.final_leaves, s.leaves), design.switch), (s.spines, spine),
                                          (s.cores, core)) if model.management_port is not None)


def resolve_oob(loaded: LoadedSpec, compute: ClosDesign, i: int, fab: ExtraFabric, group: NicGroup, switch: Switch,
                spine: Switch, speed: int, requested: dict[str, str], managed: list[ManagedPort],
                unserved: list[str], final_mgmt: int) -> ClosDesign:
    """The management network's design: leaves sized by BMCs and management ports, uplinks on
    the uplink cage group. Raises SpecInvalid when it cannot be built."""
    where = ("fabrics", i)

    def impossible(sub: tuple, message: str, hint: str):
        return SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", where + sub, f"fabric '{fab.name}': {message}", hint)])

    if fab.extra_endpoints:
        raise impossible(("extra_endpoints",), "the management network serves BMCs and switch management ports, "
                         "not extra endpoints", "attach the devices' management ports in their own fabric, or remove them")
    if fab.tiers == 3 or fab.scalable_unit is not None or fab.topology != ONE_TIER:
        raise impossible(("tiers",) if fab.tiers == 3 else ("scalable_unit",) if fab.scalable_unit is not None
                         else ("topology",), "the management network is one leaf tier with at most a spine tier, "
                         "without SUs", "leave tiers, topology and scalable_unit out")
    n, per_server = compute.servers, len(group.ports)
    bmc_ports, mgmt = n * per_server, len(managed)
    host = switch.radix(speed)
    # Growth: BMC blocks (servers per leaf) and the spine tier for the final size, so growing
    # moves no cable; `final_mgmt`: the other fabrics' switches at their growth targets.
    final = _final_servers(loaded, compute)
    final_mgmt = max(final_mgmt, mgmt)
    # BMCs of consecutive servers take the first two thirds of a leaf's host ports (32 of an
    # SN2201's 48: one leaf per 32-DGX SU), the last third the switches' management ports:
    # a block that depends on nothing but the panel, so growing never moves a BMC cable.
    spl = max(1, (2 * host // 3) // per_server)
    leaves, final_leaves = _leaves(n, final, spl, per_server, mgmt, host), _leaves(final, final, spl, per_server,
                                                                                      final_mgmt, host)
    up_gbps = _uplink_speed(switch, speed)
    if up_gbps not in spine.modes and up_gbps not in spine.uplink_speeds():
        raise impossible(("spine_switch",), f"{spine.id} has no {up_gbps}G ports for the leaves' uplinks",
                         f"choose a spine with {up_gbps}G ports")
    notes = _serving_notes(switch, speed, host, leaves, bmc_ports, managed, unserved, final > n)
    if final > n:
        notes.append(f"built for {final:,} servers (growth): {spl} servers' BMCs per leaf, "
                     f"{final_leaves} leaves at the target; growing adds leaves and moves no cable")
    if fab.tiers == 1 and final_leaves > 1:
        raise impossible(("tiers",), f"one switch takes {host} ports at {speed}G, the fabric brings "
                         f"{final * per_server + final_mgmt} BMC and switch management ports", "use tiers: 2 or auto")
    if final_leaves == 1 and fab.tiers in (1, "auto"):
        sizing = ClosSizing(1, 1, PortSplit(spl * per_server, 0), PortSplit(0, 0), 1, 1, 0, 0)
        notes.append(f"one {switch.id}: no spine tier; its uplinks to the site network are not in this plan")
        up_gbps = speed
    else:
        sizing = _two_tiers(fab, switch, spine, up_gbps, leaves, final_leaves, spl * per_server, impossible, notes)
    ratio = fab.oversubscription
    shape = ClosShape(ONE_TIER, fab.tiers, ratio.leaf, ratio.spine, None, spl, None, None, size_field(loaded.spec), SU_ONLY)
    fabric_notes = tuple(f"{fab.name} fabric: {note}" for note in notes)
    return ClosDesign(loaded.spec, compute.catalog, compute.server, group, switch, speed, n, None, spl, sizing, (),
                      requested, fabric_notes, final_servers=final, hosts=compute.hosts, final_leaves=final_leaves,
                      spine_switch=spine if spine.id != switch.id else None,
                      uplink_speed_gbps=up_gbps if up_gbps != speed else None, shape=shape)


def _final_servers(loaded: LoadedSpec, compute: ClosDesign) -> int:
    """The servers the management network is built for: the growth target where one is set."""
    n, growth = compute.servers, loaded.spec.growth
    if growth and growth.max_servers:
        return max(n, growth.max_servers)
    if growth and compute.su_size:
        assert growth.max_scalable_units is not None  # growth gives exactly one of the two (spec/model.py)
        return max(n, growth.max_scalable_units * compute.su_size)
    return n


def _uplink_speed(switch: Switch, speed: int) -> int:
    """A management leaf's uplink speed: its uplink cage group's fastest, else its host ports'."""
    up_speeds = switch.uplink_speeds()
    return max(up_speeds) if up_speeds else speed


def _serving_notes(switch: Switch, speed: int, host: int, leaves: int, bmc_ports: int, managed: list[ManagedPort],
                   unserved: list[str], growing: bool) -> list[str]:
    """What the management leaves serve (BMCs, switch management ports by fabric), what they
    do not, and how the management switches themselves are reached."""
    mgmt = len(managed)
    by_fabric: dict[str, int] = {}
    for m in managed:
        by_fabric[m.fabric] = by_fabric.get(m.fabric, 0) + 1
    served = ", ".join(f"{k} {v}" for k, v in by_fabric.items()) or "none"
    notes = [f"{leaves} {switch.id} lea{'ves' if leaves > 1 else 'f'} of {host} x {speed}G host ports serve "
             f"{bmc_ports} BMC port{'s' if bmc_ports != 1 else ''} and {mgmt} switch management ports ({served}); "
             f"{leaves * host - bmc_ports - mgmt} host ports stay spare"
             + (", some held for the BMCs of servers still to come" if growing else "")]
    if unserved:
        notes.append(f"no management port in the catalog for {', '.join(unserved)}: those switches are not served")
    notes.append("the management switches' own management ports are not cabled into the network they run: "
                 "they are reached on their management address (each leaf holds its subnet's gateway) or a console server")
    return notes


def _two_tiers(fab: ExtraFabric, switch: Switch, spine: Switch, up_gbps: int, leaves: int, final_leaves: int,
               bmc_down: int, impossible: Callable[[tuple, str, str], SpecInvalid], notes: list[str]) -> ClosSizing:
    """Leaves and SPINES spines, each leaf linked once to each spine on its uplink cage group
    (else host ports); a spine takes every leaf at the growth target."""
    up_speeds = switch.uplink_speeds()
    up_first = switch.radix(min(switch.modes)) if up_speeds else None
    uplink_ports = spine.radix(up_gbps)  # a spine of the leaf model takes leaves on its uplink group only
    if final_leaves > uplink_ports:
        raise impossible(("spine_switch",) if fab.spine_switch else (),
                         f"{final_leaves} management leaves need {final_leaves} leaf links on each spine; a {spine.id} "
                         f"spine takes {uplink_ports} at {up_gbps}G",
                         f"give spine_switch: a switch with {final_leaves} or more {up_gbps}G ports to aggregate "
                         f"the management leaves, or split the management network (one per hall or row)")
    if up_speeds:
        group = switch.uplink_cages
        assert group is not None and up_first is not None  # uplink speeds are those of its uplink cage group
        if SPINES > group.cages * group.modes[up_gbps].ports_per_cage:
            raise impossible((), f"a {switch.id} leaf has too few uplinks for {SPINES} spines", "use another switch")
        where_up = f"{up_gbps}G on its {group.cage.form_factor} uplinks (ports {up_first + 1}-{up_first + SPINES})"
    else:
        where_up = f"{up_gbps}G on host ports"
    notes.append(f"each leaf links once to each of {SPINES} {spine.id} spines at {where_up}; a spine takes "
                 f"{uplink_ports} leaves at most")
    return ClosSizing(2, leaves, PortSplit(bmc_down, SPINES), PortSplit(final_leaves, 0), leaves, 1, SPINES, 1)


def _leaves(servers: int, final: int, spl: int, per_server: int, mgmt: int, host: int) -> int:
    """Leaves for the BMCs of `servers` (`spl` servers a leaf) and, on the host ports left,
    `mgmt` management ports (more leaves where those do not fit). A leaf that holds BMCs now
    or at the growth target (`final` servers) keeps its whole block of BMC ports for them."""
    leaves = max(1, math.ceil(servers / spl))
    while leaves * host - min(leaves, math.ceil(final / spl)) * spl * per_server < mgmt:
        leaves += 1
    return leaves


def assign(design: ClosDesign, managed: list[ManagedPort], leaf_names: list[str], leaf_port_names: list[str]) -> list[list]:
    """Each management port's place: [fabric, switch, its port, management leaf, leaf port],
    port-major over the leaves' free host ports: after each leaf's block of BMC ports (kept
    whole where servers are still to come, up to the growth target), so a server added later
    finds its BMC port free."""
    spl, per_server = design.servers_per_leaf, design.rails
    host = design.switch.radix(design.speed_gbps)
    bmc_leaves = math.ceil(max(design.servers, design.final_servers) / spl)
    used = [spl * per_server if k < bmc_leaves else 0 for k in range(len(leaf_names))]
    slots = [(leaf, port) for port in range(host) for leaf in range(len(leaf_names)) if port >= used[leaf]]
    if len(slots) < len(managed):  # resolve_oob sized the leaves for them: our bug
        raise RuntimeError(f"{len(managed)} management ports, {len(slots)} free host ports on the management leaves")
    return [[m.fabric, m.device, m.port, leaf_names[leaf], leaf_port_names[port]]
            for m, (leaf, port) in zip(managed, slots, strict=False)]  # the first free slots; more may be free


def subnet_prefix(host_ports: int) -> int:
    """The longest prefix whose subnet holds a leaf's host ports, its gateway, and the network
    and broadcast addresses (48 ports: /26)."""
    return 32 - math.ceil(math.log2(host_ports + 3))


def _leaf_subnets(loaded: LoadedSpec, i: int, pool: IPv4Network, prefix: int, leaves: list[str]) -> Callable[[str], int]:
    """Leaf k (its name's index) -> the first address of the k-th /prefix of the pool's
    server share; SpecInvalid where the share holds fewer subnets than the leaves need."""
    shares, denominator = REGIONS["management"]
    first, count = shares["server"]
    size = pool.num_addresses // denominator * count
    base = int(pool.network_address) + pool.num_addresses // denominator * first
    block = 1 << (32 - prefix)
    slot = {name: int(name.rsplit("-", 1)[1]) - 1 for name in leaves}
    need = (max(slot.values()) + 1) * block
    if need > size:
        raise SpecInvalid([loaded.diagnostic(
            "ADDRESS_POOL_EXHAUSTED", ("fabrics", i, "addressing", "management"),
            f"management {pool}: its server share ({size:,} addresses) holds {size // block} management subnets "
            f"of /{prefix}; {len(leaves)} leaves need {need // block}",
            f"use a /{32 - math.ceil(math.log2(need * denominator / count))} or larger")])
    return lambda leaf: base + slot[leaf] * block


def address(loaded: LoadedSpec, i: int, plan) -> None:
    """The management network's addresses, as operators address one: a subnet per management
    leaf, from the server share of the fabric's `addressing.management` pool (an extra fabric's
    servers take no address from it), leaf k (its name's index) the k-th subnet, its gateway
    the subnet's first address, on that leaf's interface in the subnet; the device on
    host port p (swp1 = 0) takes first + 2 + p. No /31 per BMC. Every switch management port
    it serves gets its address there. Records the subnets, the BMCs' and the switch ports'
    addresses in the fabric's design (plan.json); plan/fabrics.py serve_management_ports
    puts them into the served switches' routing plans."""
    fab = loaded.spec.fabrics[i]
    rec = plan.fabrics[fab.name]
    view_routing = rec.routing
    pool = fab.addressing.pools()["management"]
    leaves = [d for d in (plan.devices[j] for j in rec.devices) if d.role == "leaf"]
    layout = plan.layouts[leaves[0].layout]
    host = sum(1 for p in layout.ports if p.speed_gbps == layout.ports[0].speed_gbps)
    prefix = subnet_prefix(host)
    subnet = _leaf_subnets(loaded, i, pool, prefix, [d.name for d in leaves])

    port_index = {p.name: k for k, p in enumerate(layout.ports)}
    n_servers = len(rec.servers)
    # The gateway is the leaf's address on the subnet (the subnets table); the leaf's own
    # management address (its eth0, not cabled: module doc) stays the pool's leaf share.
    # No /31 per BMC: a BMC is a host on its leaf's subnet
    kinds = [k for k, name in enumerate(plan.link_kinds) if name == f"{fab.name}:server-leaf"]
    lt = plan.links
    own = slice(rec.links.start, rec.links.stop)
    bmc = np.isin(lt.kind[own], kinds)
    view_routing.link_net[bmc] = 0
    names = [d.name for d in plan.devices]
    server_ports = plan.layouts[plan.devices[0].layout].ports if n_servers else ()
    bmc_rows = []
    for a, ap, b, bp in zip(lt.a_dev[own][bmc].tolist(), lt.a_port[own][bmc].tolist(),
                            lt.b_dev[own][bmc].tolist(), lt.b_port[own][bmc].tolist(), strict=True):
        bmc_rows.append([names[a], server_ports[ap].name, names[b], str(IPv4Address(subnet(names[b]) + 2 + bp))])
    ports = rec.management_ports
    if ports:
        ports["columns"] = ports["columns"][:5] + ["address"]
        for row in ports["rows"]:
            del row[5:]
            row.append(str(IPv4Address(subnet(row[3]) + 2 + port_index[row[4]])))
    rec.design["management_network"] = {
        "pool": str(pool), "prefix": prefix, "vlan": MANAGEMENT_VLAN,
        "rule": "a subnet per management leaf, its gateway the subnet's first address on that leaf, "
                "in an access VLAN holding every host port the leaf serves; "
                "the device on host port p (swp1 = 0) takes first + 2 + p",
        "subnets": {"columns": ["leaf", "subnet", "gateway"],
                    "rows": [[d.name, str(IPv4Network((subnet(d.name), prefix))), str(IPv4Address(subnet(d.name) + 1))]
                             for d in leaves]},
        "bmc": {"columns": ["server", "port", "leaf", "address"], "rows": bmc_rows}}


def cord_lengths(loaded: LoadedSpec, i: int, plan, catalog: Catalog) -> None:
    """With a layout: each management cord's modelled length (the switch's rack and U to its
    management leaf's, the rule every copper cable of the plan follows: cable_lengths.py) and
    its orderable length as the cord medium's cable comes (a generic Cat6 cord: whole metres,
    up to its 100 m reach; none beyond, which the physical check reports). Appended to the
    fabric's `management_ports` rows as `length_m` and `order_m` (null: none reaches)."""
    layout = loaded.spec.layout
    ports = plan.fabrics[loaded.spec.fabrics[i].name].design.get("management_ports")
    if layout is None or plan.physical is None or not ports or not ports["rows"]:
        return
    col = {c: k for k, c in enumerate(ports["columns"])}
    a = np.array([plan.device_index(row[col["switch"]]) for row in ports["rows"]], dtype=np.int64)
    b = np.array([plan.device_index(row[col["leaf"]]) for row in ports["rows"]], dtype=np.int64)
    need = pair_lengths(plan.physical, a, b, layout.cabling)
    cable = catalog.cables[catalog.media[CORD_MEDIUM].cable]
    order = orderable(cable.lengths_m, need, cable.reach_m)
    ports["columns"] = [c for c in ports["columns"] if c not in ("length_m", "order_m")] + ["length_m", "order_m"]
    for row, length, ordered in zip(ports["rows"], need.tolist(), order.tolist(), strict=True):
        del row[len(ports["columns"]) - 2:]
        row += [length, None if math.isnan(ordered) else ordered]
