"""hosts.csv: the server inventory every other output names servers from.

One row per server in plan order: hostname, server type, SU, pod, leaf group (the
Slurm logical leaf / Kubernetes level), rail leaves in rail order (';'-separated),
scale-up domain, and where the plan knows them: rack and lowest U (spec `layout`),
BMC address and management address. A column is empty only where the plan has no
value (no layout; no Ethernet addressing; no out-of-band fabric).

- mgmt_address: the server's address from the compute fabric's `management` pool
  (plan.json `addressing.devices`).
- bmc_address: the BMC port is the server's `oob` NIC group ("the OOB port is used
  for BMC access", NVIDIA DGX BasePOD); on an `oob` fabric (spec `fabrics:`) its cable
  has a /31 like every server link, and the server, the lower end, takes the odd
  address (plan/routing.py; plan.json `fabric_addressing.<fabric>.links`).

Renders from the whole plan (extra fabrics included), since the BMC sits on one.
Cost: O(servers x rails + links of the oob fabric), vectorised with numpy.
"""

from __future__ import annotations

import numpy as np

from ..check import CheckResults
from ..plan import naming
from ..plan.fabrics import COMPUTE, fabric_plan
from ..plan.columns import Piece, text_chunks
from ..plan.hosts import host_table
from ..plan.model import Plan
from ..plan.routing import dotted, link_end_addresses
from .csvtext import csv_column, csv_field, csv_text
from .writer import OutputDir

HEADER = ["hostname", "server_type", "su", "pod", "leaf_group", "rail_leaves", "nvlink_domain", "rack", "ru",
          "bmc_address", "mgmt_address"]
BMC_NIC_GROUP = "oob"


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    compute = fabric_plan(plan)
    hosts = compute.memo("hosts", host_table)
    n = len(hosts.names)
    # Servers come first in the plan and in every fabric view, so a server's device index is its row.
    assert all(d.role == "server" for d in plan.devices[:n]), "servers are not the first devices of the plan"
    server = plan.view.design.server
    rack, ru = _rack_ru(plan, n)
    mgmt = _addresses(compute.routing.management[:n]) if compute.routing is not None else [""] * n
    bmc = _bmc_addresses(plan, n)
    domains = {v: "" if v is None else naming.nvlink_domain(v) for v in set(hosts.domain)}
    # the rows as columns of csv.writer's fields joined by text_chunks: csv.writer's row loop
    # over 65,536 servers grew 4.6x for 4x the servers (0.27 s at 524,288 GPUs)
    columns: list[Piece] = [csv_column(hosts.names), csv_field(server), _fields(hosts.su), _fields(hosts.pod), csv_column(hosts.group),
               csv_column(hosts.rail_leaves), csv_column(list(map(domains.__getitem__, hosts.domain))), csv_column(rack),
               _fields(ru), csv_column(bmc), csv_column(mgmt)]
    pieces: list[Piece] = [p for k, column in enumerate(columns) for p in ([","] if k else []) + [column]] + ["\n"]
    out.write_chunks("hosts.csv", [csv_text(HEADER, []), *text_chunks(pieces, n)])


def _fields(values: list) -> list[str]:
    """Numbers (or text) as csv.writer writes them, None as empty: each distinct value once."""
    spelled = {v: "" if v is None else csv_field(v) for v in set(values)}
    return list(map(spelled.__getitem__, values))


def _rack_ru(plan: Plan, n: int) -> tuple[list[str], list[int | str]]:
    phys = plan.physical
    if phys is None:
        return [""] * n, [""] * n
    names = [r.name for r in phys.racks]
    return [names[r] for r in phys.dev_rack[:n].tolist()], phys.dev_u[:n].tolist()


def _addresses(values: np.ndarray) -> list[str]:
    """uint32 addresses as dotted quads; 0 (none) as empty."""
    return [a if v else "" for a, v in zip(dotted(values), values.tolist(), strict=True)]


def _bmc_addresses(plan: Plan, n: int) -> list[str]:
    names = [name for name, f in plan.fabrics.items() if name != COMPUTE and f.nic_group == BMC_NIC_GROUP
             and f.routing is not None]
    bmc = np.zeros(n, dtype=np.uint32)
    if not names:
        return [""] * n
    network = plan.fabrics[names[0]].management_network
    if network is not None:  # the management network: a BMC is a host on its leaf's subnet (expand/management.py)
        index = {d.name: k for k, d in enumerate(plan.devices[:n])}
        out = [""] * n
        for server, _port, _leaf, address in network["bmc"]["rows"]:
            if not out[index[server]]:
                out[index[server]] = address
        return out
    view = fabric_plan(plan, names[0])
    first, end = plan.fabrics[names[0]].server_ports
    assert view.routing is not None  # a fabric that carries BMC rows is addressed (Ethernet)
    links = view.links
    _, lower = link_end_addresses(view.routing.link_net)
    # The server's first cabled BMC port, where its cable has a /31 (the server is the lower end).
    sel = np.nonzero((links.a_dev < n) & (links.a_port >= first) & (links.a_port < end) & (lower != 0))[0]
    sel = sel[np.lexsort((links.a_port[sel], links.a_dev[sel]))]
    dev, pick = np.unique(links.a_dev[sel], return_index=True)
    bmc[dev] = lower[sel[pick]]
    return _addresses(bmc)
