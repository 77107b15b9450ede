"""Servers as schedulers see them: one row per server with the groups it sits in.

Shared by the Slurm, Kubernetes and inventory outputs so that they agree: a server's
leaf group (its SU for rail-optimized fabrics, where every server reaches all rail
leaves of its SU; its leaf for fat-trees), its pod (three tiers), its rail leaves in
rail order, and its scale-up (NVLink) domain. Built with numpy from the link table:
O(servers x rails).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..topology import topology
from . import naming  # the one place that names groups
from .model import Plan


@dataclass(frozen=True)
class HostTable:
    names: list[str]  # plan order
    su: list[int | None]
    pod: list[int | None]  # None for two tiers
    group: list[str]  # leaf group name (Slurm logical leaf): su<S> or the leaf's device name
    rail_leaves: list[list[str]]  # leaf names in rail order
    domain: list[int | None]  # scale-up domain index (1-based), None when a domain is one server
    group_kind: str  # the topology's host_group trait: "su", "leaf" or "none" (compiler/topology/)


def host_table(plan: Plan) -> HostTable:
    devices = plan.devices
    servers = np.array([i for i, d in enumerate(devices) if d.role == "server"], dtype=np.int64)
    pos = np.full(len(devices), -1, dtype=np.int64)
    pos[servers] = np.arange(servers.size)
    # NIC ports per server (its layout), whatever the topology records as rails.
    rails = max([len(plan.layouts[devices[int(i)].layout]) for i in servers[:1]] + [1])
    kind = plan.link_kinds.index("server-leaf") if "server-leaf" in plan.link_kinds else -1
    sel = np.nonzero(plan.links.kind == kind)[0]
    leaf_of = np.full((servers.size, rails), -1, dtype=np.int64)
    leaf_of[pos[plan.links.a_dev[sel]], plan.links.a_port[sel]] = plan.links.b_dev[sel]
    leaf_names = {int(i): devices[int(i)].name for i in np.unique(leaf_of[leaf_of >= 0])}
    rail_leaves = [[leaf_names[int(x)] for x in row if x >= 0] for row in leaf_of.tolist()]
    kind_of_group = topology(plan.view.design.topology).host_group
    sus = [devices[i].su for i in servers.tolist()]
    first_leaf = leaf_of[:, 0].tolist()
    pods = [devices[f].pod if f >= 0 else None for f in first_leaf]
    if kind_of_group == "su":
        group = [naming.su_group(s) for s in sus]
    else:
        group = [leaf_names.get(f, "") for f in first_leaf]
    up = plan.scale_up
    if up is not None and up.spans_servers:
        domain: list[int | None] = [up.domain_of(n) + 1 for n in range(servers.size)]
    else:
        domain = [None] * servers.size
    return HostTable([devices[i].name for i in servers.tolist()], sus, pods, group, rail_leaves, domain, kind_of_group)
