"""Servers as schedulers see them: one row per server with the groups it sits in.

Shared by the Slurm, Kubernetes and inventory outputs so that they agree: a server's
leaf group (its SU for rail-optimized fabrics, where every server reaches all rail
leaves of its SU; its leaf for fat-trees), its pod (three tiers), its rail leaves in
rail order, and its scale-up (NVLink) domain. Built with numpy from the link table:
O(servers x rails).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..topology import topology
from . import naming  # the one place that names groups
from .columns import concat, present
from .model import Plan


@dataclass(frozen=True)
class HostTable:
    names: list[str]  # plan order
    su: list[int | None]
    pod: list[int | None]  # None for two tiers
    group: list[str]  # leaf group name (Slurm logical leaf): su<S> or the leaf's device name
    domain: list[int | None]  # scale-up domain index (1-based), None when a domain is one server
    group_kind: str  # the topology's host_group trait: "su", "leaf" or "none" (compiler/topology/)
    leaf_of: np.ndarray = field(compare=False, repr=False)  # per server and rail, its leaf's device index; -1: none
    leaf_names: dict[int, str] = field(compare=False, repr=False)  # per leaf device index, its name

    @cached_property
    def rail_leaves(self) -> list[str]:
        """Per server, its leaf names in rail order, `;`-separated: joined when a writer reads
        them (the host list, not Slurm: 0.13 s of string joins at 524,288 GPUs)."""
        return _rail_leaves(self.leaf_of, self.leaf_names)


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
    leaf_names = {i: devices[i].name for i in present(leaf_of[leaf_of >= 0], len(devices)).tolist()}
    kind_of_group = topology(plan.view.design.topology).host_group
    sus = [devices[i].su for i in servers.tolist()]
    first_leaf = leaf_of[:, 0].tolist()
    pod_of = {f: devices[f].pod for f in set(first_leaf) if f >= 0}  # per leaf: servers share a few hundred
    pods = [pod_of[f] if f >= 0 else None for f in first_leaf]
    if kind_of_group == "su":
        su_names = {s: naming.su_group(s) for s in set(sus)}
        group = list(map(su_names.__getitem__, sus))
    else:
        group = [leaf_names.get(f, "") for f in first_leaf]
    up = plan.scale_up
    if up is not None and up.spans_servers:
        domain: list[int | None] = [up.domain_of(n) + 1 for n in range(servers.size)]
    else:
        domain = [None] * servers.size
    return HostTable([devices[i].name for i in servers.tolist()], sus, pods, group, domain, kind_of_group, leaf_of, leaf_names)


def _rail_leaves(leaf_of: np.ndarray, leaf_names: dict[int, str]) -> list[str]:
    """Per server (a row of leaf_of: per rail its leaf's device index, -1 where none) its leaves'
    names in rail order, `;`-separated: a column-wise join where every rail has a leaf, not a
    list per server (65,536 servers' lists kept the garbage collector busy)."""
    if leaf_of.size and (leaf_of >= 0).all():
        leaves = np.array(list(leaf_names), dtype=np.int64)
        name_of = np.empty(int(leaves.max()) + 1, dtype=object)
        name_of[leaves] = list(leaf_names.values())
        # the servers of a leaf group share their rail leaves and come one after another:
        # each run of equal rows is joined once (a join per server and rail grew 9x for 4x
        # the servers, 0.09 s at 524,288 GPUs), then repeated over its run
        new = np.ones(leaf_of.shape[0], dtype=bool)
        new[1:] = (leaf_of[1:] != leaf_of[:-1]).any(axis=1)
        runs = leaf_of[new]
        texts = concat([p for j in range(runs.shape[1]) for p in ([";"] if j else []) + [name_of[runs[:, j]]]])
        return texts[np.cumsum(new) - 1].tolist()
    return [";".join(leaf_names[x] for x in row if x >= 0) for row in leaf_of.tolist()]
