"""Kubernetes topology labels and the matching Kueue Topology and ResourceFlavor.

Levels from coarse to fine (as Kueue's Topology requires): pod (three tiers), scalable unit, leaf
(fat-trees; in a rail-optimized fabric the SU is the leaf group), scale-up domain
(GB200 NVL72 rack, only when it nests inside an SU), then kubernetes.io/hostname,
which Kueue allows only as the last level. Every key and value is checked against
Kubernetes' label syntax; a failure is a compiler bug (names are checked at validation).
"""

from __future__ import annotations

from ..check import CheckResults
from ..plan import naming
from ..plan.hosts import HostTable, host_table
from ..plan.model import Plan
from .k8s_labels import key_problem, value_problem
from .templates import render_template
from .writer import OutputDir

KUEUE_API = "kueue.x-k8s.io/v1beta2"
HOSTNAME_LEVEL = "kubernetes.io/hostname"


def node_labels(plan: Plan, hosts: HostTable) -> tuple[list[str], list[tuple[str, list[tuple[str, str]]]]]:
    """(topology level keys coarse to fine, without hostname; [(node, [(key, value)])])."""
    d = plan.view.design
    assert d.hosts is not None  # every family records its hosts
    p = d.hosts.label_prefix
    columns: list[tuple[str, list[str]]] = []
    if d.tiers == 3:  # a three-tier Clos: every leaf, so every server, is in a pod
        columns.append((f"{p}/pod", [naming.pod_group(_given(x)) for x in hosts.pod]))
    if any(s is not None for s in hosts.su):  # a fabric of SUs: every server is in one
        columns.append((f"{p}/su", [naming.su_group(_given(s)) for s in hosts.su]))
    if hosts.group_kind == "leaf":
        columns.append((f"{p}/leaf", hosts.group))
    if plan.scale_up is not None and plan.scale_up.spans_servers:  # whole domains per SU (validated)
        columns.append((f"{p}/nvlink-domain", [naming.nvlink_domain(_given(x)) for x in hosts.domain]))
    levels = [key for key, _ in columns]
    fixed = [(f"{p}/cluster", plan.name), (f"{p}/server-type", d.server)]
    rows = []
    for i, node in enumerate(hosts.names):
        rows.append((node, fixed + [(key, values[i]) for key, values in columns]))
    _check([key for key, _ in fixed] + levels + [HOSTNAME_LEVEL], rows)
    return levels, rows


def _given(value: int | None) -> int:
    """A host's pod, SU or domain where the fabric gives every host one."""
    assert value is not None
    return value


def _check(keys: list[str], rows) -> None:
    problems = [key_problem(k) for k in keys]
    values = {v for node, labels in rows for _, v in labels} | {node for node, _ in rows}
    problems += [value_problem(v) for v in sorted(values)]
    found = [x for x in problems if x]
    if found:
        raise AssertionError("Kubernetes label syntax: " + "; ".join(found[:5]))


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    hosts = plan.memo("hosts", host_table)
    levels, rows = node_labels(plan, hosts)
    assert plan.view.design.hosts is not None  # every family records its hosts
    prefix = plan.view.design.hosts.label_prefix
    context = {"name": plan.name, "api": KUEUE_API, "levels": levels + [HOSTNAME_LEVEL], "rows": rows,
               "flavor_labels": rows[0][1][:2] if rows else [], "server": plan.view.design.server, "prefix": prefix}
    out.write_text("k8s/node-labels.yaml", render_template("k8s/node-labels.yaml.j2", **context))
    out.write_text("k8s/label-nodes.sh", render_template("k8s/label-nodes.sh.j2", **context))
    out.write_text("k8s/kueue-topology.yaml", render_template("k8s/kueue-topology.yaml.j2", **context))
