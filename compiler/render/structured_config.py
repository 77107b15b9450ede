"""What each Ethernet switch needs, decided once for every NOS (AVD's "structured config").

`switch_configs(plan, nos)` yields one `SwitchConfig` per switch: identity, loopback,
ASN, the interfaces in use with their /31s and peers, BGP neighbors and the RoCE
profile. The NOS templates only spell this out; nothing here knows vendor syntax
beyond the port names the plan already carries per NOS, and what differs between NOSes
(port MTU, device type per role) comes from the NOS's descriptor (catalog/data/nos.yaml).

Cost: one vectorised pass over the link table (both ends of every link, sorted by
device and port), then one small record per used switch port.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress
from operator import itemgetter
from types import SimpleNamespace
from typing import NamedTuple
from collections.abc import Iterator, Sequence

import numpy as np

from ..catalog.load import roce_profile_data
from ..catalog.nos import Nos, descriptor
from ..catalog.sonic import PfcWatchdog, SonicBuffers, SonicPorts, buffer_set, buffers, pfc_watchdog, sonic_ports
from ..plan.columns import groups
from ..plan.model import Plan
from ..plan.naming import SWITCH_ROLES
from ..plan.routing import ManagementSubnet, dotted, link_end_addresses
from ..plan.views import nos_port_names, port_table
from .templates import ColumnRows, ColumnTable

# RFC 7938 fabrics are built for wide ECMP; FRR caps the width at its compile-time
# multipath limit (64 in Debian's build), EOS takes "maximum-paths N ecmp N".
MAX_ECMP = 64


@lru_cache(maxsize=1)
def roce_profile() -> SimpleNamespace:
    """The profile as attributes: Jinja resolves `r.roce_tc` by getattr first, and a
    dict would miss there and fall back to item lookup on every use (measurably slower)."""
    data = roce_profile_data()
    # mapping keys are read as written (text); traffic classes are numbers
    data["ets_percent"] = {int(tc): pct for tc, pct in data["ets_percent"].items()}
    return SimpleNamespace(**data)


class RoceProfileMismatch(RuntimeError):
    """The RoCE profile differs from the built-in profile a NOS's files name: the switches
    would run other numbers than the hosts. The catalog's data disagree; no spec causes it."""


def _check_builtin_roce(nos_facts, roce: SimpleNamespace) -> None:
    builtin = nos_facts.builtin_roce
    if not builtin:
        return
    differ = sorted(k for k, v in builtin.items() if getattr(roce, k) != v)
    if differ:
        raise RoceProfileMismatch(
            f"{nos_facts.name} configs name the NOS's own RoCE profile, whose "
            + ", ".join(f"{k} is {builtin[k]}" for k in differ)
            + "; the RoCE profile (catalog/data/roce.yaml) has "
            + ", ".join(f"{k} {getattr(roce, k)}" for k in differ)
            + f": spell the values in the {nos_facts.id} templates before changing the profile")


class LayoutCages(NamedTuple):
    label: list[str]  # per port (panel order): its cage's label
    fanout: list[int]  # per port: how many logical ports its cage is split into


def layout_cages(ports) -> LayoutCages:
    labels = [p.cage for p in ports]
    count: dict[str, int] = {}
    for c in labels:
        count[c] = count.get(c, 0) + 1
    return LayoutCages(labels, [count[c] for c in labels])


class Interface(NamedTuple):
    name: str  # as the NOS spells it
    panel: str  # front-panel name (labels, cabling.csv)
    kind: str  # fabric | server | access (a management leaf's host port, in its access VLAN)
    address: str | None  # local /31 in CIDR form, None when unnumbered
    peer: str  # peer device
    peer_port: str  # peer port as the peer's NOS (or the server's panel) spells it
    peer_address: str | None
    peer_asn: int  # 0 for servers
    speed_gbps: int
    lanes: str  # SerDes lanes, "0,1,2,3"
    # shadows tuple.index, as a NamedTuple field may: the templates read it by this name
    index: int  # type: ignore[assignment]  # 1-based logical port number on the panel
    uplink: bool  # toward a higher tier
    lane_count: int  # SerDes lanes of the port (1 where the plan gives none)
    # how the port is addressed: numbered (a /31), unnumbered (IPv6 link-local only) or access
    # (a member of the management leaf's access VLAN): what a template picks a port's spelling by
    mode: str


_KIND = itemgetter(Interface._fields.index("kind"))


class BgpSession(NamedTuple):
    peer_address: str
    peer_asn: int
    peer: str
    local_address: str  # without its prefix length


class AccessVlan(NamedTuple):
    """A management leaf's subnet: one VLAN whose untagged members are its `access` interfaces
    (BMCs and other switches' management ports), the gateway an interface in it."""

    vlan: int
    gateway: str  # the leaf's address on the subnet, CIDR (10.207.0.1/26): what every host it serves points at
    subnet: str  # CIDR


@dataclass(slots=True)
class SwitchConfig:
    hostname: str
    role: str
    tier: int
    nos: str
    model: str
    device_type: str | None  # the NOS's own type for this role (SONiC DEVICE_METADATA.type), if it has one
    asn: int
    router_id: str
    loopback: str
    management: str
    management_prefix: int  # the management pool is one flat out-of-band network
    peering: str
    interfaces: Sequence[Interface]  # a ColumnRows of the switch ports' table, or a list
    local_prefixes: list[tuple[str, int]]  # (pool, exact length) redistributed into BGP
    maximum_paths: int
    port_mtu_bytes: int | None  # the NOS's port MTU (catalog/data/nos.yaml); None where its files set none
    roce: SimpleNamespace
    cages: LayoutCages  # the switch model's cages, for breakouts (shared by every switch of the model)
    adaptive_routing: bool  # the files turn adaptive routing on (the plan's RoutingPlan.adaptive_routing)
    cable_lengths_m: list[int]  # per interface, for NOSes that size buffers by it (nos.yaml); else empty
    sonic_platform: str | None  # catalog (switches.yaml sonic:), where evidenced
    sonic_hwsku: str | None  # for the one port speed the switch uses, where evidenced; None for mixed speeds
    sonic_ports: SonicPorts  # PORT alias and index (the cage) per port of the model's layout (shared like cages)
    # SONiC's traditional buffer tables for the platform hwsku (catalog/sonic.py), for a NOS that
    # sizes buffers by cable length; None elsewhere or where the catalog has no buffer set
    sonic_buffers: SonicBuffers | None
    pfc_watchdog: PfcWatchdog  # what the NOS's own default watchdog start would set for this many ports
    site: dict  # management_gateway, gateway_is_default, dns/ntp/syslog_servers (plan/routing.py, spec `site`)
    access: AccessVlan | None = None  # a management leaf's subnet; None on every other switch

    @property
    def breakouts(self) -> list[tuple[str, int, int]]:
        """(cage label, ports in the cage, SerDes lanes per port) of every cage whose ports
        the plan uses, in panel order: what a NOS needs to split the cage (NVUE `link
        breakout 2x lanes-per-port 4`) before the split ports exist. Cages of one port too,
        since a NOS may default a cage to another split."""
        seen: dict[str, tuple[str, int, int]] = {}
        label, fanout = self.cages.label, self.cages.fanout
        for i in self.interfaces:
            cage = label[i.index - 1]
            if cage not in seen:
                seen[cage] = (cage, fanout[i.index - 1], len(i.lanes.split(",")) if i.lanes else 0)
        return list(seen.values())

    @property
    def sonic_columns(self) -> dict[str, list]:
        """Per interface (in order), what SONiC's per-port tables read beside it: PORT alias and
        index (`cage`, as the platform's port_config.ini has them), speed in Mb/s, CABLE_LENGTH
        (metres) and the lossless PG profile (None where the lookup has no row; `has_lossless`)."""
        alias, cage = self.sonic_ports
        ifaces = self.interfaces
        lossless = self.sonic_buffers.pg_lossless if self.sonic_buffers else [None] * len(ifaces)
        return {"alias": [alias[i.index - 1] for i in ifaces], "cage": [cage[i.index - 1] for i in ifaces],
                "speed_mbps": [i.speed_gbps * 1000 for i in ifaces], "cable_m": self.cable_lengths_m,
                "pg_lossless": lossless, "has_lossless": [bool(p) for p in lossless]}

    @property
    def neighbors(self) -> Sequence[Interface]:
        ifaces = self.interfaces
        if isinstance(ifaces, ColumnRows):  # the rows of the fabric ports' table (filtered once for every switch)
            return ifaces.where("kind", "fabric")
        # filtered in C (compress, map): 128 ports a switch, thousands of switches
        return list(compress(ifaces, map("fabric".__eq__, map(_KIND, ifaces))))

    @property
    def bgp_sessions(self) -> list[BgpSession]:
        """Numbered fabric sessions (a numbered link addresses both its ends)."""
        return [BgpSession(i.peer_address, i.peer_asn, i.peer, i.address.split("/")[0])
                for i in self.interfaces if i.kind == "fabric" and i.peer_address and i.address is not None]


def switch_configs(plan: Plan, nos: str) -> Iterator[SwitchConfig]:
    r = plan.routing
    assert r is not None, "switch configs need an Ethernet plan"
    assert nos in r.port_names, f"the routing plan names no ports for {nos}"
    devices = plan.devices
    n_dev = len(devices)
    links = plan.links
    is_switch = np.fromiter((d.role in SWITCH_ROLES for d in devices), dtype=bool, count=n_dev)

    # both ends of every link, as (device, port, peer device, peer port, link, upper?)
    dev = np.concatenate([links.a_dev, links.b_dev]).astype(np.int64)
    port = np.concatenate([links.a_port, links.b_port]).astype(np.int64)
    peer = np.concatenate([links.b_dev, links.a_dev]).astype(np.int64)
    peer_port = np.concatenate([links.b_port, links.a_port]).astype(np.int64)
    link = np.concatenate([np.arange(len(links))] * 2)
    upper = np.concatenate([np.zeros(len(links), bool), np.ones(len(links), bool)])
    keep = is_switch[dev]
    dev, port, peer, peer_port, link, upper = (x[keep] for x in (dev, port, peer, peer_port, link, upper))
    order = np.lexsort((port, dev))
    dev, port, peer, peer_port, link, upper = (x[order] for x in (dev, port, peer, peer_port, link, upper))

    # port names: per global port id, the NOS name on switches and the panel name elsewhere
    offsets = plan.port_offsets()
    all_names = nos_port_names(plan, nos)
    panel = plan.memo("port_table", port_table)["name"]
    lanes = {lid: np.array([",".join(map(str, ln)) for ln in lns], dtype=object) for lid, lns in r.port_lanes.items()}

    # each end's own and its peer's address: the upper end holds the even one of the /31
    upper_addr, lower_addr = link_end_addresses(r.link_net)
    upper_addr, lower_addr = upper_addr[link], lower_addr[link]
    numbered = upper_addr != 0
    local_addr = np.where(upper, upper_addr, lower_addr)
    peer_addr_int = np.where(upper, lower_addr, upper_addr)
    # words picked from a two-entry object array: one shared str per port, no per-port text
    kind = np.array(["server", "fabric"], dtype=object)[is_switch[peer].view(np.int8)]
    mode = np.array(["unnumbered", "numbered"], dtype=object)[numbered.view(np.int8)]
    dev_names = np.array([d.name for d in devices], dtype=object)
    speed = links.speed_gbps[link]
    # per port an int shared by every port of that speed (a handful of values), not 655k new int objects
    speeds = _shared_ints(speed)
    gport = offsets[dev] + port

    port_lanes = functools.cache(lambda: _port_lanes(plan, lanes, dev, port))
    # every switch port's Interface fields as columns: rows() fills a template's per-port
    # blocks from slices of them, and no record is made per port unless a template iterates
    # (655,360 tuples cost ~0.1 s and 100 MB at 131,072 GPUs)
    # (the functions: fields FRR prints none of, made where a NOS's template reads them)
    table = ColumnTable(Interface, [
        all_names[gport].tolist(), lambda: panel[gport].tolist(), kind.tolist(),
        _dotted_or_none(local_addr, numbered, "/31"), dev_names[peer].tolist(),
        all_names[offsets[peer] + peer_port].tolist(), _dotted_or_none(peer_addr_int, numbered),
        _shared_ints(r.asn, peer), speeds, lambda: port_lanes()[0], lambda: (port + 1).tolist(),
        lambda: (~upper).tolist(), lambda: port_lanes()[1], mode.tolist()])
    bounds = np.searchsorted(dev, np.arange(n_dev + 1)).tolist()
    fabric_ports = np.bincount(dev[is_switch[peer]], minlength=n_dev).tolist()
    loopbacks = dotted(r.loopback)
    mgmt = dotted(r.management)
    pools = r.pools
    local_prefixes = [(pools["loopbacks"], 32), (pools["server_links"], 31)]
    roce = roce_profile()
    nos_facts = descriptor(nos)
    _check_builtin_roce(nos_facts, roce)
    switch_layouts = {devices[i].layout: devices[i].model for i in np.nonzero(is_switch)[0].tolist()}
    cages = {lid: layout_cages(plan.layouts[lid].ports) for lid in switch_layouts}
    facts = plan.view.facts
    port_ids = {lid: sonic_ports(rec.sonic_port_alias if (rec := facts.model(model)) is not None else None, plan.layouts[lid].ports)
                for lid, model in switch_layouts.items()}
    cable_m = _cable_lengths(plan, nos_facts, link, devices) if nos_facts.cable_length_classes_m else None
    oob_gateway = r.management_gateway
    for i in np.nonzero(is_switch)[0].tolist():
        d = devices[i]
        lo, hi = bounds[i], bounds[i + 1]
        # a management port the OOB network serves: its subnet's prefix and gateway (on the management leaf)
        gateway = oob_gateway[i] if oob_gateway is not None else 0
        served = bool(gateway)
        site = {**r.site, "management_gateway": r.ip(gateway), "gateway_is_default": False} if served else r.site
        ifaces: Sequence[Interface] = table.rows(lo, hi)
        if_speeds = speeds[lo:hi]
        if_cable_m = cable_m[lo:hi] if cable_m is not None else None
        subnet = r.management_subnets.get(i)
        access = prefixes = None
        if subnet is not None:
            own_names = all_names[offsets[i]:offsets[i] + len(plan.layouts[d.layout])]
            base = list(ifaces)
            ifaces, cords = _access_ports(base, subnet, own_names, plan.layouts[d.layout].ports,
                                          lanes.get(d.layout))
            if_speeds = [x.speed_gbps for x in ifaces]
            if if_cable_m is not None:
                default_m = float(nos_facts.default_cable_length_m.get("leaf", 0))
                cord_m = _round_lengths(nos_facts, [default_m if m is None else m for _, _, m in subnet.cords])
                by_index = {x.index: m for x, m in zip(base, if_cable_m, strict=True)}
                by_index.update(zip((c.index for c in cords), cord_m, strict=True))
                if_cable_m = [by_index[x.index] for x in ifaces]
            net = f"{r.ip(subnet.network)}/{subnet.prefix}"
            access = AccessVlan(subnet.vlan, f"{r.ip(subnet.gateway)}/{subnet.prefix}", net)
            prefixes = [*local_prefixes, (net, subnet.prefix)]  # the subnet, redistributed to the spines
        sonic = rec.sonic if (rec := facts.model(d.model)) is not None else None
        used_speeds = set(if_speeds)
        sku = sonic.hwsku_for(used_speeds) if sonic else None
        bset = buffer_set(sonic.platform, sku) if sonic and cable_m is not None else None
        device_type = nos_facts.role_types.get(d.role)
        if served:
            assert r.management_prefix is not None  # set with management_gateway (plan/fabrics.py)
            management_prefix = r.management_prefix
        else:
            management_prefix = int(pools["management"].split("/")[1])
        yield SwitchConfig(
            hostname=d.name, role=d.role, tier=d.tier, nos=nos, model=d.model,
            device_type=device_type, asn=int(r.asn[i]),
            router_id=loopbacks[i], loopback=loopbacks[i], management=mgmt[i],
            management_prefix=management_prefix,
            peering=r.peering,
            interfaces=ifaces, local_prefixes=prefixes or local_prefixes,
            maximum_paths=min(MAX_ECMP, max(1, fabric_ports[i])),
            port_mtu_bytes=nos_facts.port_mtu_bytes, roce=roce, cages=cages[d.layout],
            # the plan's fact, where this NOS's files can spell it (the twin's FRR cannot)
            adaptive_routing=r.adaptive_routing and nos_facts.capabilities.adaptive_routing,
            cable_lengths_m=if_cable_m if if_cable_m is not None else [],
            site=site,
            sonic_platform=sonic.platform if sonic else None,
            sonic_hwsku=sku,
            sonic_ports=port_ids[d.layout],
            sonic_buffers=buffers(bset, device_type, [x * 1000 for x in if_speeds], if_cable_m,
                                  roce.pfc_priorities) if bset and if_cable_m is not None else None,
            pfc_watchdog=pfc_watchdog(len(ifaces)),
            access=access,
        )


def _port_lanes(plan: Plan, lanes: dict[str, np.ndarray], dev: np.ndarray, port: np.ndarray
                ) -> tuple[list[str], list[int]]:
    """Per (device, port) row: its SerDes lanes as text ("" where the routing plan gives its
    layout none) and how many; one table of the few switch layouts, indexed at once."""
    used = sorted({plan.devices[i].layout for i in np.unique(dev).tolist()})
    if not used:
        return [], []
    tables = [lanes[lid] if lid in lanes else np.full(len(plan.layouts[lid]), "", dtype=object) for lid in used]
    start = dict(zip(used, np.cumsum([0] + [len(t) for t in tables]).tolist(), strict=False))
    layout_start = np.array([start.get(d.layout, 0) for d in plan.devices], dtype=np.int64)
    text = np.concatenate(tables)
    count = np.array([t.count(",") + 1 for t in text.tolist()], dtype=np.int64)
    pick = layout_start[dev] + port
    return text[pick].tolist(), count[pick].tolist()


def _shared_ints(values: np.ndarray, pick: np.ndarray | None = None) -> list[int]:
    """values[pick] (values, without pick) as Python ints, one int object per distinct value:
    a list of a few hundred thousand ports of a handful of speeds (or a few thousand ASNs)
    allocates no int per port (memory the compile faults in and frees)."""
    if pick is None:
        distinct, _, pick = groups(values)
    else:
        distinct = values
    return np.array(distinct.tolist(), dtype=object)[pick].tolist()


def _dotted_or_none(addresses: np.ndarray, numbered: np.ndarray, suffix: str = "") -> list[str | None]:
    """Each address as text (with `suffix`), None where the link is unnumbered."""
    if numbered.all():
        return list(dotted(addresses, suffix))
    text = iter(dotted(addresses[numbered], suffix))
    return [next(text) if n else None for n in numbered.tolist()]


def _access_ports(ifaces: list[Interface], subnet: ManagementSubnet, names: np.ndarray, ports,
                  lanes: np.ndarray | None) -> tuple[list[Interface], list[Interface]]:
    """A management leaf's interfaces with every host port it serves in its access VLAN: its
    BMC links (kind server -> access) and, merged in panel order, the cords from other
    switches' management ports (no links of the plan: ManagementSubnet.cords); and those cords."""
    cords = []
    for p, served, _ in subnet.cords:
        switch, port = served.split(":", 1)
        cords.append(Interface(str(names[p]), ports[p].name, "access", None, switch, port, None, 0, ports[p].speed_gbps,
                               str(lanes[p]) if lanes is not None else "", p + 1, False,
                                str(lanes[p]).count(",") + 1 if lanes is not None else 1, "access"))
    own = [x._replace(kind="access", mode="access") if x.kind == "server" else x for x in ifaces]
    return sorted(own + cords, key=lambda x: x.index), cords


def _cable_lengths(plan: Plan, nos_facts, link: np.ndarray, devices) -> list[int]:
    """Per switch-port row: its cable's orderable length (spec layout), else the NOS's default
    for the cable's upper role, rounded up to the next length the NOS's lookup table lists."""
    classes = np.array(sorted(nos_facts.cable_length_classes_m), dtype=np.float64)
    phys = plan.physical
    upper_role = [devices[b].role for b in plan.links.b_dev.tolist()]
    default = np.array([nos_facts.default_cable_length_m.get(r, classes[-1]) for r in upper_role], dtype=np.float64)
    length = default[link]
    if phys is not None and phys.order_m is not None:
        measured = phys.order_m[link]
        length = np.where(np.isnan(measured), length, measured)
    return _round_lengths(nos_facts, length)


def _round_lengths(nos_facts: Nos, length: np.ndarray | list[float]) -> list[int]:
    """Cable lengths (metres) rounded up to the next length the NOS's lookup table lists."""
    classes = np.array(sorted(nos_facts.cable_length_classes_m), dtype=np.float64)
    length = np.asarray(length, dtype=np.float64)
    pick = np.searchsorted(classes, length, side="left")
    # Longer than every row: the whole metres, not the longest row (that would under-size the
    # headroom silently; an unlisted length makes buffermgrd log that it has no profile).
    beyond = pick == len(classes)
    rounded = np.where(beyond, np.ceil(length), classes[np.minimum(pick, len(classes) - 1)])
    return rounded.astype(np.int64).tolist()
