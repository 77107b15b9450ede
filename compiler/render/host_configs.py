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
  NCCL_IB_HCA in rail order, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX and NCCL_IB_TC.

Interface names are the server's port names as the plan calls them (cabling.csv); where
the host topology gives the NICs' PCI bus ids, `<server-type>/systemd-link/*.link` names
the netdevs so (systemd.link, Match Path=pci-<busid>), otherwise the README says to.
RDMA device names (mlx5_N) in rail order come from the host topology (catalog/data/
host_topology/): NIC k is the one nearest GPU k-1, as servers.yaml lists the compute
ports by GPU. Without a host topology nccl.conf leaves NCCL_IB_HCA out (NCCL then uses
every RDMA device it finds) and says so.

Writes nothing unless the compute fabric is Ethernet with a routing plan.
Cost: O(servers x rails), vectorised over the link table; one small template per server.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..check import CheckResults
from ..plan.fabrics import fabric_plan
from ..plan.model import Plan
from ..plan.routing import dotted
from .structured_config import roce_profile
from .templates import environment, row_format
from .writer import OutputDir

FOLDER = "host-configs"
FIRST_TABLE = 100  # rail k's routing table is 100 + k: clear of main (254), local (255), default (253)


class HostNic(NamedTuple):
    rail: int  # 1-based
    ifname: str  # the server's port name (plan, cabling.csv)
    address: str  # the odd end of the cable's /31
    gateway: str  # the leaf's end
    table: int


def nic_tos(roce) -> int:
    """The IP ToS byte RoCE data carries: DSCP in the upper six bits, ECN in the lower two."""
    return roce.roce_dscp << 2 | roce.roce_ecn_bits


def rail_nics(host_topology: dict | None, rails: int) -> list[dict] | None:
    """The host topology's NICs in rail order (rail k: the NIC nearest GPU k-1), or None
    when it does not give one NIC per rail (no topology, or a different NIC count)."""
    if not host_topology:
        return None
    nics = [n for n in host_topology["nics"] if n.get("near_gpus")]
    if len(nics) != rails:
        return None
    return sorted(nics, key=lambda n: min(n["near_gpus"]))


def server_nics(plan: Plan) -> tuple[list[str], list[list[HostNic]], list[str]]:
    """Server names, each server's numbered fabric NICs in rail order, and the port names
    of the server layout (rail order)."""
    r = plan.routing
    devices = plan.devices
    n = sum(1 for d in devices if d.role == "server")
    links = plan.links
    net = r.link_net
    sel = np.nonzero((links.a_dev < n) & (net != 0))[0]
    sel = sel[np.lexsort((links.a_port[sel], links.a_dev[sel]))]
    dev = links.a_dev[sel].tolist()
    port = links.a_port[sel].tolist()
    base = net[sel].astype(np.int64)
    gw = dotted(base)
    addr = dotted(base + 1)
    port_names = {lid: [p.name for p in lay.ports] for lid, lay in plan.layouts.items()}
    per_server: list[list[HostNic]] = [[] for _ in range(n)]
    for d, p, a, g in zip(dev, port, addr, gw):
        per_server[d].append(HostNic(p + 1, port_names[devices[d].layout][p], a, g, FIRST_TABLE + p + 1))
    first_layout = port_names[devices[0].layout] if n else []
    return [d.name for d in devices[:n]], per_server, first_layout


NETPLAN = "hosts/netplan.yaml.j2"


def netplan_text(host: str, nics: list[HostNic], pools: list[str], mtu_bytes: int) -> str:
    """One server's netplan file: every NIC with its table's routes to the fabric pools and its
    rule; rail 1 also carries the main table's routes (traffic that picks no source)."""
    head, nic, table_route, main_route, rule = (row_format(NETPLAN, m, n) for m, n in (
        ("header", 1), ("nic", 3), ("table_route", 3), ("main_route", 2), ("rule", 3)))
    parts = [head % (host,)]
    for k, n in enumerate(nics):
        parts.append(nic % (n.ifname, mtu_bytes, n.address))
        parts += [table_route % (pool, n.gateway, n.table) for pool in pools]
        if k == 0:
            parts += [main_route % (pool, n.gateway) for pool in pools]
        parts.append(rule % (n.address, n.table, n.table))
    return "".join(parts)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    compute = fabric_plan(plan)
    r = compute.routing
    if r is None or not any(d.role == "server" for d in compute.devices):
        return
    env = environment()
    roce = roce_profile()
    names, nics, ports = server_nics(compute)
    pools = [r.pools["server_links"], r.pools["loopbacks"]]
    for name, host_nics in zip(names, nics):
        out.write_text(f"{FOLDER}/netplan/{name}.yaml", netplan_text(name, host_nics, pools, roce.host_mtu_bytes))

    server_type = plan.design["server"]
    topo = plan.facts.get("host_topology", {}).get(server_type)
    topo_nics = rail_nics(topo, len(ports))
    hcas = [n["name"] for n in topo_nics] if topo_nics else None
    busids = [n["busid"] for n in topo_nics] if topo_nics else None
    used = sorted({nic.rail for host_nics in nics for nic in host_nics})
    rails = [(k, ports[k - 1], hcas[k - 1] if hcas else None) for k in used]
    ctx = dict(server_type=server_type, rails=rails, roce=roce, tos=nic_tos(roce), hcas_known=hcas is not None,
               tc_priorities=_tc_priorities(roce), tsa=_tsa(roce), tcbw=_tcbw(roce),
               pfc=",".join("1" if p in roce.pfc_priorities else "0" for p in range(8)))
    out.write_text(f"{FOLDER}/{server_type}/roce-qos.sh", env.get_template("hosts/roce-qos.sh.j2").render(**ctx))
    out.write_text(f"{FOLDER}/{server_type}/nccl.conf", env.get_template("hosts/nccl.conf.j2").render(**ctx))
    if busids:
        link = env.get_template("hosts/fabric-nic.link.j2")
        for k, port, _ in rails:
            out.write_text(f"{FOLDER}/{server_type}/systemd-link/10-clusterc-rail{k}.link",
                           link.render(ifname=port, busid=busids[k - 1], rail=k, hca=hcas[k - 1], mtu=roce.host_mtu_bytes))
    out.write_text(f"{FOLDER}/README.md", env.get_template("hosts/README.md.j2").render(
        server_type=server_type, rails=rails, links_written=busids is not None, hcas_known=hcas is not None,
        first_table=FIRST_TABLE, roce=roce, tos=nic_tos(roce)))


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
