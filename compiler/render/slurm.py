"""Slurm topology: topology.conf (tree plugin), topology.yaml (25.05+), and for
scale-up domains that span servers (GB200 NVL72 racks) topology-block.conf.

Tree (Slurm's topology.conf(5), topology/tree): one *logical* leaf per leaf group, never a node under several
leaves. A rail-optimized server reaches every rail leaf of its SU, so the SU is the
leaf; a fat-tree server sits on one leaf. Leaf groups hang under their pod (three
tiers) and pods or groups under one root, so every node is reachable from one switch.

Block (Slurm 23.11+, topology/block): one block per scale-up domain, in server (network-locality)
order; BlockSizes = base x 2^k (k = 0..15), up to the node count.
"""

from __future__ import annotations

from ..check import CheckResults
from ..plan import naming
from ..plan.hosts import HostTable, host_table
from ..topology import topology
from ..plan.model import Plan
from .hostlist import compress
from .templates import render_template
from .writer import OutputDir

MAX_BLOCK_DOUBLINGS = 15  # Slurm: each later BlockSizes value is base x 2^k, 1 <= k <= 15


def tree_switches(plan: Plan, hosts: HostTable) -> list[dict]:
    groups: dict[str, list[str]] = {}
    group_pod: dict[str, int | None] = {}
    for name, group, pod in zip(hosts.names, hosts.group, hosts.pod, strict=True):
        groups.setdefault(group, []).append(name)
        group_pod[group] = pod
    switches = [{"name": g, "nodes": compress(names), "switches": ""} for g, names in groups.items()]
    tiers = plan.view.design.tiers
    if tiers == 3:
        pods: dict[int, list[str]] = {}
        for g, pod in group_pod.items():
            assert pod is not None  # three tiers: every server is in a pod
            pods.setdefault(pod, []).append(g)
        for pod, members in pods.items():
            switches.append({"name": naming.pod_group(pod), "nodes": "", "switches": compress(members)})
        top = [naming.pod_group(p) for p in pods]
    else:
        top = list(groups)
    switches.append({"name": naming.tree_root(tiers), "nodes": "", "switches": compress(top)})
    return switches


def blocks(hosts: HostTable, base: int) -> tuple[list[dict], list[int]]:
    members: dict[int, list[str]] = {}
    for name, domain in zip(hosts.names, hosts.domain, strict=True):
        if domain is not None:
            members.setdefault(domain, []).append(name)
    out = [{"name": naming.nvlink_domain(d), "nodes": compress(names)} for d, names in members.items()]
    sizes = [base << k for k in range(MAX_BLOCK_DOUBLINGS + 1) if base << k <= len(hosts.names)] or [base]
    return out, sizes


def _description(plan: Plan, hosts: HostTable) -> str:
    d = plan.view.design
    leaf = "one logical leaf per scalable unit (all its rail leaves)" if hosts.group_kind == "su" else "one leaf per leaf switch"
    upper = "pods under the core layer" if d.tiers == 3 else "the spine layer as root"
    return f"{d.topology}, {d.tiers} tiers: {leaf}, {upper}."


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if not topology(plan.view.design.topology).tree:  # a note at validation says why (expand/hosts.py)
        return
    hosts = plan.memo("hosts", host_table)
    switches = tree_switches(plan, hosts)
    base = plan.scale_up.servers_per_domain if plan.scale_up is not None and plan.scale_up.spans_servers else 1
    block_list, sizes = blocks(hosts, base) if base > 1 else ([], [])
    context = {"name": plan.name, "description": _description(plan, hosts), "switches": switches,
               "blocks": block_list, "block_sizes": sizes, "base": base}
    out.write_text("slurm/topology.conf", render_template("slurm/topology.conf.j2", **context))
    out.write_text("slurm/topology.yaml", render_template("slurm/topology.yaml.j2", **context))
    if block_list:
        out.write_text("slurm/topology-block.conf", render_template("slurm/topology-block.conf.j2", **context))
