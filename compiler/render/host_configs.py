"""host-configs/: the servers' side of a RoCE compute fabric, from the same RoCE profile
as the switch configs (catalog/data/roce.yaml via structured_config.roce_profile), so the
two sides cannot disagree.

- `netplan/<server>.yaml` (per server; install as /etc/netplan/60-clusterc-fabric.yaml):
  every fabric NIC with the odd address of its cable's /31 (plan/routing.py: the leaf,
  the upper end, holds the even one and is the gateway), the host MTU, and one routing
  table per NIC (100 + rail) with a policy rule `from <NIC address>`, so traffic sourced
  from rail k's address leaves on rail k's NIC whatever the destination. The main table
  reaches the fabric pools over rail 1, for traffic that picks no source (bootstrap).
- `<server-type>/roce-qos.sh` (per server type: every server of a type has the same NICs):
  ConnectX QoS with mlnx_qos (trust DSCP, DSCP->priority, PFC on the lossless
  priorities, ETS/strict per traffic class), DCQCN ECN enable per priority (sysfs), and
  the RoCE ToS of RDMA-CM and verbs traffic (cma_roce_tos, sysfs traffic_class).
- `<server-type>/nccl.conf` (per server type; /etc/nccl.conf or the job's environment):
  NCCL_IB_HCA in rail order, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX and NCCL_IB_TC. Beside an
  InfiniBand compute fabric (whose hosts get host-configs/ for their storage or in-band NICs) it
  holds NCCL_IB_HCA alone: those NICs are RDMA devices too, and NCCL uses every one it finds
  unless told; GID index and traffic class are RoCE's, and the plan addresses no IPoIB netdev.

Interface names are the server's port names as the plan calls them (cabling.csv); where
the host topology gives the NICs' PCI bus ids, `<server-type>/systemd-link/*.link` names
the netdevs so (systemd.link, Match Path=pci-<busid>), otherwise the README says to.
RDMA device names (mlx5_N) in rail order come from the host topology (catalog/data/
host_topology/): NIC k is the one nearest GPU k-1, as servers.yaml lists the compute
ports by GPU; without one, from servers.yaml's compute ports where each names its device
(DGX B200, H200: names and GPU pairing evidenced, bus ids not). Where neither says,
nccl.conf leaves NCCL_IB_HCA out (NCCL then uses every RDMA device it finds) and says how
to read them off a server.

Storage and in-band fabrics (spec `fabrics:` of kind storage or inband, Ethernet, so with a
routing plan) add their NICs to each server's netplan file: the odd address of each cable's
/31 from that fabric's server_links pool, and routes to that fabric's pools via its leaf on
that fabric's NICs only, so storage traffic never leaves on a compute NIC (the fabrics' pools
are disjoint: expand/extra_fabrics.check_pools). A fabric of several NICs per server gets a table
per NIC (100 x (fabric's place in the plan + 1) + k) and a `from` rule, as the compute rails;
one NIC needs neither. Their NICs get the RoCE QoS too where the fabric is RoCE: its switch
configs set the RoCE profile (the NOS's `roce_qos` capability, catalog/data/nos.yaml). The
out-of-band fabric is left out: its port is the BMC's, not the host's.

Writes nothing unless the compute fabric is Ethernet with a routing plan or a storage or
in-band fabric is (an InfiniBand-only plan models no other NIC NCCL could take).
Cost: O(servers x NICs), vectorised over the link tables; one small template per server.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from functools import partial
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from .. import cyclic_gc
from ..catalog.nics import nic_devices
from ..catalog.nos import descriptor
from ..check import CheckResults
from ..plan.columns import distinct
from ..plan.fabrics import fabric_names, fabric_plan
from ..plan.facts import HostNicFacts, HostTopologyFacts
from ..plan.model import Plan
from ..plan.routing import dotted, link_end_addresses
from .structured_config import roce_profile
from .templates import environment, row_format
from .writer import OutputDir

FOLDER = "host-configs"
FIRST_TABLE = 100  # rail k's routing table is 100 + k: clear of main (254), local (255), default (253)
# Extra fabrics whose NICs the server's own OS runs; not oob, whose port is the BMC's.
HOST_FABRIC_KINDS = ("storage", "inband")


class HostNic(NamedTuple):
    rail: int  # 1-based: the NIC's place in its fabric's NIC group (the rail, for compute)
    ifname: str  # the server's port name (plan, cabling.csv)
    address: str  # the odd end of the cable's /31
    gateway: str  # the leaf's end
    table: int


def nic_tos(roce) -> int:
    """The IP ToS byte RoCE data carries: DSCP in the upper six bits, ECN in the lower two."""
    return roce.roce_dscp << 2 | roce.roce_ecn_bits


def rail_nics(host_topology: HostTopologyFacts | None, rails: int) -> list[HostNicFacts] | None:
    """The host topology's NICs in rail order (rail k: the NIC nearest GPU k-1), or None
    when it does not give one NIC per rail (no topology, or a different NIC count)."""
    if not host_topology:
        return None
    nics = [n for n in host_topology.nics if n.near_gpus]
    if len(nics) != rails:
        return None
    return sorted(nics, key=lambda n: min(n.near_gpus))


class NicColumns(NamedTuple):
    """Every server's numbered NICs on one fabric as columns, rows in server order and in each
    server in port order: server i's are rows bounds[i] to bounds[i + 1]."""
    rail: np.ndarray  # int64, as HostNic
    ifname: np.ndarray  # object (str)
    address: np.ndarray  # object (str)
    gateway: np.ndarray  # object (str)
    table: np.ndarray  # int64
    bounds: np.ndarray  # int64, one more than the servers


def nic_columns(plan: Plan, server_ports: tuple[int, int] | None = None, first_table: int = FIRST_TABLE
                ) -> tuple[list[str], NicColumns, list[str]]:
    """Server names, their numbered fabric NICs as columns (rail order in each server), and
    the port names of the fabric's NIC group (rail order). `plan` is one fabric's plan;
    `server_ports` the [first, end) of its NIC group in the server's ports (None: all of
    them, as the compute fabric's plan holds only its own)."""
    r = plan.routing
    devices = plan.devices
    n = sum(1 for d in devices if d.role == "server")
    links = plan.links
    assert r is not None  # host configs are written only for an addressed (Ethernet) fabric
    upper, lower = link_end_addresses(r.link_net)  # the leaf is the gateway, the NIC the lower end
    sel = np.nonzero((links.a_dev < n) & (lower != 0))[0]
    sel = sel[np.lexsort((links.a_port[sel], links.a_dev[sel]))]
    dev = links.a_dev[sel].astype(np.int64)
    port = links.a_port[sel].astype(np.int64)
    first, end = server_ports or (0, None)
    # port names from one table of the servers' few layouts, picked for every NIC at once
    layouts = [d.layout for d in devices[:n]]
    used = sorted(set(layouts))
    names = np.array([p.name for lid in used for p in plan.layouts[lid].ports], dtype=object)
    start = dict(zip(used, np.cumsum([0] + [len(plan.layouts[lid].ports) for lid in used]).tolist(), strict=False))
    layout_start = np.array([start[lid] for lid in layouts], dtype=np.int64)
    rail = port - first + 1
    address, gateway = (np.array(dotted(a[sel]), dtype=object) for a in (lower, upper))
    columns = NicColumns(rail, names[layout_start[dev] + port], address, gateway, rail + first_table,
                         np.searchsorted(dev, np.arange(n + 1)))
    group = [p.name for p in plan.layouts[devices[0].layout].ports][first:end] if n else []
    return [d.name for d in devices[:n]], columns, group


def server_nics(plan: Plan, server_ports: tuple[int, int] | None = None, first_table: int = FIRST_TABLE
                ) -> tuple[list[str], list[list[HostNic]], list[str]]:
    """nic_columns with each server's NICs as records, in rail order."""
    names, c, group = nic_columns(plan, server_ports, first_table)
    # one C-level pass builds every record (a NamedTuple's __new__ is a Python frame per NIC)
    nics = list(map(partial(tuple.__new__, HostNic), zip(
        c.rail.tolist(), c.ifname.tolist(), c.address.tolist(), c.gateway.tolist(), c.table.tolist(), strict=True)))
    bounds = c.bounds.tolist()
    return names, [nics[bounds[i]:bounds[i + 1]] for i in range(len(names))], group


class HostFabric(NamedTuple):
    """A storage or in-band fabric's side on the servers."""
    name: str
    pools: list[str]  # its server_links and loopbacks pools: what its NICs route to
    per_server: list[list[HostNic]]  # each server's NICs on it, in NIC-group order
    ports: list[str]  # its NIC group's port names
    roce: bool  # its switch configs set the RoCE profile, so its NICs get the same QoS
    first_table: int  # NIC k's routing table is first_table + k (several NICs per server)


def host_fabrics(plan: Plan) -> list[HostFabric]:
    """The plan's Ethernet storage and in-band fabrics, in plan order."""
    out = []
    for i, name in enumerate(fabric_names(plan)):
        record = plan.fabrics.get(name) if plan.fabrics else None
        if record is None or record.kind not in HOST_FABRIC_KINDS or record.routing is None:
            continue
        view = fabric_plan(plan, name)
        r = record.routing
        first_table = FIRST_TABLE * (i + 1)  # compute rail k is table 100 + k; the i-th fabric's NIC k 100 (i + 1) + k
        _, per_server, ports = server_nics(view, record.server_ports, first_table)
        roce = r.nos is not None and descriptor(r.nos).capabilities.roce_qos
        out.append(HostFabric(name, [r.pools["server_links"], r.pools["loopbacks"]], per_server, ports, roce, first_table))
    return out


NETPLAN = "hosts/netplan.yaml.j2"
_MARK = "\x00{}\x00"  # a HostNic field's place while a NIC's block is put together


def _nic_format(pools: list[str], mtu_bytes: int, per_nic_tables: bool, first: bool) -> tuple[str, tuple[str, ...]]:
    """One NIC's netplan block as a %-format and the HostNic fields that fill it, in order:
    with per_nic_tables (several NICs on one fabric) its table of routes to the pools and a
    rule for its address, so what it sends leaves on it; the fabric's first NIC also carries
    the main table's routes. One NIC needs only those. The block is the template's macros
    (netplan.yaml.j2) joined, with what every NIC of the fabric shares (pools, MTU) in place."""
    nic, table_route, main_route, rule = (row_format(NETPLAN, m, n).replace("%%", "\x01") for m, n in (
        ("nic", 3), ("table_route", 3), ("main_route", 2), ("rule", 3)))
    ifname, address, gateway, table = (_MARK.format(f) for f in ("ifname", "address", "gateway", "table"))
    parts = [nic % (ifname, mtu_bytes, address)]
    if per_nic_tables:
        parts += [table_route % (pool, gateway, table) for pool in pools]
    if first:
        parts += [main_route % (pool, gateway) for pool in pools]
    if per_nic_tables:
        parts.append(rule % (address, table, table))
    text = "".join(parts).replace("%", "%%").replace("\x01", "%%")
    fields = tuple(re.findall("\x00(\\w+)\x00", text))
    return re.sub("\x00\\w+\x00", "%s", text), fields


def _nic_blocks(nics: list[HostNic], pools: list[str], mtu_bytes: int, per_nic_tables: bool, first: bool) -> list[str]:
    """Every NIC's block (_nic_format), filled at C speed: one %-format per NIC, not one per line."""
    fmt, fields = _nic_format(pools, mtu_bytes, per_nic_tables, first)
    return list(map(fmt.__mod__, map(attrgetter(*fields), nics)))


def netplan_texts(hosts: list[str], nics: NicColumns | None, pools: list[str], mtu_bytes: int,
                  others: Sequence[HostFabric] = ()) -> Iterator[str]:
    """Each server's netplan file: every compute NIC with its table's routes to the fabric pools
    and its rule, rail 1 also carrying the main table's routes (traffic that picks no source);
    then each storage / in-band fabric's NICs with routes to that fabric's pools only."""
    compute = _compute_texts(hosts, nics, pools, mtu_bytes)
    if not others:
        yield from compute
        return
    fabric_head = row_format(NETPLAN, "fabric_header", 2)
    extra = [(fabric_head % (f.name, ", ".join(f.pools)), _fabric_blocks(f, mtu_bytes)) for f in others]
    for s, text in enumerate(compute):
        parts = [text]
        for fabric_text, blocks in extra:
            if blocks[s]:
                parts.append(fabric_text)
                parts += blocks[s]
        yield "".join(parts)


def _compute_texts(hosts: list[str], nics: NicColumns | None, pools: list[str], mtu_bytes: int) -> Iterator[str]:
    """Each server's compute part of its netplan file. The servers with k NICs share one
    %-format of the whole part (header, first NIC's block, k - 1 others), filled per server
    from a matrix of their values, a row per server: no string or format per NIC. A few
    thousand servers at a time, so that matrix and texts stay a few MB, their memory reused."""
    head, plain_head = (row_format(NETPLAN, m, 1) for m in ("header", "plain_header"))
    if nics is None:
        yield from (plain_head % (host,) for host in hosts)
        return
    first_fmt, fields = _nic_format(pools, mtu_bytes, True, True)
    rest_fmt, rest_fields = _nic_format(pools, mtu_bytes, True, False)
    column = nics._asdict()
    # tables as text, once per number of their range (100 + rail: a few dozen; a %s of an
    # int formats it per use), picked per NIC by offset: no sort of every NIC's table
    low = int(nics.table.min()) if nics.table.size else 0
    high = int(nics.table.max()) if nics.table.size else -1
    column["table"] = np.array([str(t) for t in range(low, high + 1)], dtype=object)[nics.table - low]
    count = np.diff(nics.bounds)
    host = np.array(hosts, dtype=object)
    for lo in range(0, len(hosts), SERVERS_AT_ONCE):
        texts: list[str] = [""] * min(SERVERS_AT_ONCE, len(hosts) - lo)
        for k in distinct(count[lo:lo + len(texts)]).tolist():
            servers = lo + np.nonzero(count[lo:lo + len(texts)] == k)[0]
            if not k:
                for i in servers.tolist():
                    texts[i - lo] = plain_head % (hosts[i],)
                continue
            fmt = head + first_fmt + rest_fmt * (k - 1)
            per_nic = [fields] + [rest_fields] * (k - 1)
            matrix = np.empty((len(servers), 1 + sum(map(len, per_nic))), dtype=object)
            matrix[:, 0] = host[servers]
            at = 1
            for place, nic_fields in enumerate(per_nic):
                row = nics.bounds[servers] + place
                for f in nic_fields:
                    matrix[:, at] = column[f][row]
                    at += 1
            for i, values in zip(servers.tolist(), matrix.tolist(), strict=True):
                texts[i - lo] = fmt % tuple(values)
        yield from texts


# Servers whose netplan texts _compute_texts fills at a time: 4,096 servers of 8 NICs are a
# 2 MB matrix of references and 11 MB of text.
SERVERS_AT_ONCE = 1 << 12


def _fabric_blocks(fabric: HostFabric, mtu_bytes: int) -> list[list[str]]:
    """A storage / in-band fabric's NIC blocks, per server (empty where a server has none)."""
    per_nic_tables = len(fabric.ports) > 1
    firsts = iter(_nic_blocks([n[0] for n in fabric.per_server if n], fabric.pools, mtu_bytes, per_nic_tables, True))
    rest = iter(_nic_blocks([x for n in fabric.per_server for x in n[1:]], fabric.pools, mtu_bytes, per_nic_tables, False))
    return [[next(firsts), *itertools.islice(rest, len(n) - 1)] if n else [] for n in fabric.per_server]


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    # a record and a few strings per NIC, none cyclic: each collection they set off would scan
    # every object of the process, the plan's too (at 524,288 GPUs its NIC records took 2.3x the time)
    with cyclic_gc.paused():
        _render(plan, out)


def _render(plan: Plan, out: OutputDir) -> None:
    compute = fabric_plan(plan)
    if not any(d.role == "server" for d in compute.devices):
        return
    r = compute.routing
    others = host_fabrics(plan)
    if r is None and not others:
        return
    env = environment()
    roce = roce_profile()
    # InfiniBand compute beside these fabrics: nccl.conf must keep NCCL off their RDMA NICs
    ib = r is None and compute.view.protocol == "infiniband"
    names, nics, ports = nic_columns(compute) if r is not None else ([d.name for d in compute.devices if d.role == "server"],
                                                                     None, _compute_ports(compute) if ib else [])
    pools = [r.pools["server_links"], r.pools["loopbacks"]] if r is not None else []
    out.write_texts(f"{FOLDER}/netplan", zip([f"{name}.yaml" for name in names],
                                             netplan_texts(names, nics, pools, roce.host_mtu_bytes, others), strict=True))

    view = plan.view
    server_type = view.design.server
    topo = view.facts.host_topology.get(server_type)
    topo_nics = rail_nics(topo, len(ports))
    hcas = [n.name for n in topo_nics] if topo_nics else None
    busids = [n.busid for n in topo_nics] if topo_nics else None
    named = nic_devices(compute.devices[0].layout) if ports else []
    hcas_from_ports = hcas is None and len(named) == len(ports) > 0 and all(named)
    if hcas_from_ports:  # no host topology (bus ids), but servers.yaml names each compute port's RDMA device
        hcas = named
    # rails are small positive numbers: a count per rail, not a sort of every NIC's
    used = np.flatnonzero(np.bincount(nics.rail)).tolist() if nics is not None else _used_rails(compute) if ib else []
    rails = [(k, ports[k - 1], hcas[k - 1] if hcas else None) for k in used]
    roce_rails = [] if ib else rails  # mlnx_qos, netplan and .link files are for Ethernet NICs
    # the RoCE fabrics' NICs besides compute: (fabric, port), every port of the group any server uses
    extra_qos = [(f.name, f.ports[k - 1]) for f in others if f.roce
                 for k in sorted({nic.rail for host_nics in f.per_server for nic in host_nics})]
    ctx = dict(server_type=server_type, rails=roce_rails, extra_qos=extra_qos, roce=roce, tos=nic_tos(roce),
               hcas_known=hcas is not None, hcas_from_ports=hcas_from_ports, tc_priorities=_tc_priorities(roce), tsa=_tsa(roce), tcbw=_tcbw(roce),
               pfc=",".join("1" if p in roce.pfc_priorities else "0" for p in range(8)))
    if roce_rails or extra_qos:
        out.write_text(f"{FOLDER}/{server_type}/roce-qos.sh", env.get_template("hosts/roce-qos.sh.j2").render(**ctx))
    if rails:
        out.write_text(f"{FOLDER}/{server_type}/nccl.conf", env.get_template("hosts/nccl.conf.j2").render(
            **{**ctx, "rails": rails}, ib=ib, others=[f.name for f in others]))
    if busids and roce_rails:
        assert hcas is not None  # both from the host topology's rail NICs
        link = env.get_template("hosts/fabric-nic.link.j2")
        for k, port, _ in roce_rails:
            out.write_text(f"{FOLDER}/{server_type}/systemd-link/10-clusterc-rail{k}.link",
                           link.render(ifname=port, busid=busids[k - 1], rail=k, hca=hcas[k - 1], mtu=roce.host_mtu_bytes))
    out.write_text(f"{FOLDER}/README.md", env.get_template("hosts/README.md.j2").render(
        server_type=server_type, rails=roce_rails, links_written=busids is not None and bool(roce_rails), hcas_known=hcas is not None,
        first_table=FIRST_TABLE, roce=roce, tos=nic_tos(roce), others=others, extra_qos=extra_qos, ib_rails=rails if ib else []))


def _compute_ports(compute: Plan) -> list[str]:
    """The servers' compute NIC group, port names in rail order (the compute fabric's plan holds
    only that group's ports)."""
    first = next(d for d in compute.devices if d.role == "server")
    return [p.name for p in compute.layouts[first.layout].ports]


def _used_rails(compute: Plan) -> list[int]:
    """1-based places in the compute NIC group of every port some server cables (servers come
    first in the device table, as server_nics reads them)."""
    n = sum(1 for d in compute.devices if d.role == "server")
    links = compute.links
    return sorted({p + 1 for p in np.unique(links.a_port[links.a_dev < n]).tolist()})


def _tc_priorities(roce) -> str:
    """mlnx_qos --prio_tc: priority p -> traffic class, identity except where the profile maps."""
    tc = list(range(8))
    tc[roce.roce_priority] = roce.roce_tc
    tc[roce.cnp_priority] = roce.cnp_tc
    return ",".join(map(str, tc))


def _tsa(roce) -> str:
    """ETS for the classes the profile shares out, strict for CNP (as the switches schedule it)."""
    return ",".join("strict" if tc == roce.cnp_tc else "ets" for tc in range(8))


def _tcbw(roce) -> str:
    return ",".join(str(0 if tc == roce.cnp_tc else roce.ets_percent.get(tc, 0)) for tc in range(8))
