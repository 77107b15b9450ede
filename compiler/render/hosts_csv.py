"""hosts.csv: the server inventory every other output names servers from.

One row per server in plan order: hostname, server type, SU, pod, leaf group (the
Slurm logical leaf / Kubernetes level), rail leaves in rail order (';'-separated),
scale-up domain, and rack, BMC and management addresses, empty until the plan has a
physical layout and addressing.
"""

from __future__ import annotations

from ..check import CheckResults
from ..plan import naming
from ..plan.hosts import host_table
from ..plan.model import Plan
from .csvtext import csv_text
from .writer import OutputDir

HEADER = ["hostname", "server_type", "su", "pod", "leaf_group", "rail_leaves", "nvlink_domain", "rack",
          "bmc_address", "mgmt_address"]


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    hosts = plan.memo("hosts", host_table)
    server = plan.design["server"]
    rows = ((name, server, "" if su is None else su, "" if pod is None else pod, group, ";".join(leaves),
             "" if dom is None else naming.nvlink_domain(dom), "", "", "")
            for name, su, pod, group, leaves, dom in zip(hosts.names, hosts.su, hosts.pod, hosts.group,
                                                        hosts.rail_leaves, hosts.domain))
    out.write_text("hosts.csv", csv_text(HEADER, rows))
