"""Kubernetes topology labels and the matching Kueue Topology and ResourceFlavor.

Levels from coarse to fine (as Kueue's Topology requires): pod (three tiers), scalable unit, leaf
(fat-trees; in a rail-optimized fabric the SU is the leaf group), scale-up domain
(GB200 NVL72 rack, only when it nests inside an SU), then kubernetes.io/hostname,
which Kueue allows only as the last level. Every key and value is checked against
Kubernetes' label syntax; a failure is a compiler bug (names are checked at validation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..check import CheckResults
from ..plan import naming
from ..plan.columns import Piece, text_chunks
from ..plan.hosts import HostTable, host_table
from ..plan.model import Plan
from .k8s_labels import key_problem, value_problem
from .templates import environment, format_pieces, marked_format, render_template, row_marks
from .writer import OutputDir

KUEUE_API = "kueue.x-k8s.io/v1beta2"
HOSTNAME_LEVEL = "kubernetes.io/hostname"
NODE_MACROS = "k8s/nodes.j2"  # a node's part of each file
_NODES = "\x00nodes\x00"  # where the nodes go in a rendered file


def node_labels(plan: Plan, hosts: HostTable) -> tuple[list[str], list[tuple[str, str | list[str]]]]:
    """(topology level keys coarse to fine, without hostname; every node's labels in order as
    (key, value): one value every node shares, or one per node in host order)."""
    d = plan.view.design
    assert d.hosts is not None  # every family records its hosts
    p = d.hosts.label_prefix
    columns: list[tuple[str, str | list[str]]] = []
    if d.tiers == 3:  # a three-tier Clos: every leaf, so every server, is in a pod
        columns.append((f"{p}/pod", _spelled(naming.pod_group, hosts.pod)))
    if any(s is not None for s in hosts.su):  # a fabric of SUs: every server is in one
        columns.append((f"{p}/su", _spelled(naming.su_group, hosts.su)))
    if hosts.group_kind == "leaf":
        columns.append((f"{p}/leaf", hosts.group))
    if plan.scale_up is not None and plan.scale_up.spans_servers:  # whole domains per SU (validated)
        columns.append((f"{p}/nvlink-domain", _spelled(naming.nvlink_domain, hosts.domain)))
    levels = [key for key, _ in columns]
    labels: list[tuple[str, str | list[str]]] = [(f"{p}/cluster", plan.name), (f"{p}/server-type", d.server), *columns]
    _check([key for key, _ in labels] + [HOSTNAME_LEVEL], hosts.names, labels)
    return levels, labels


def _spelled(name: Callable[[int], str], values: list[int | None]) -> list[str]:
    """Each host's pod, SU or domain (every host has one here) as `name` spells it: each
    distinct value once, then looked up per host at C speed."""
    text = {v: name(_given(v)) for v in set(values)}
    return list(map(text.__getitem__, values))


def _given(value: int | None) -> int:
    """A host's pod, SU or domain where the fabric gives every host one."""
    assert value is not None
    return value


def _check(keys: list[str], nodes: list[str], labels: list[tuple[str, str | list[str]]]) -> None:
    problems = [key_problem(k) for k in keys]
    values = set(nodes)
    for _, value in labels:
        values.update([value] if isinstance(value, str) else value)
    # sorted only where a value fails (a sort of every node's name grew n log n)
    problems += [value_problem(v) for v in sorted(v for v in values if value_problem(v))]
    found = [x for x in problems if x]
    if found:
        raise AssertionError("Kubernetes label syntax: " + "; ".join(found[:5]))


def _node_pieces(macro: str, nodes: list[str], labels: list[tuple[str, str | list[str]]]) -> list[Piece]:
    """Every node's text as macro `macro` of k8s/nodes.j2 spells it, as pieces (columns.text_chunks):
    the macro renders once with a mark per value, and each node's values fill it in (a Jinja
    loop over 16,384 nodes' labels cost ~0.1 s of CPU)."""
    marks = row_marks(len(labels) + 1)
    module: Any = environment().get_template(NODE_MACROS).module  # its macros are attributes made at run time
    text = str(getattr(module, macro)(marks[0], [(key, mark) for (key, _), mark in zip(labels, marks[1:], strict=True)]))
    return format_pieces(marked_format(text, marks, f"{NODE_MACROS} {macro}()"), [nodes, *(v for _, v in labels)])


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    hosts = plan.memo("hosts", host_table)
    levels, labels = node_labels(plan, hosts)
    assert plan.view.design.hosts is not None  # every family records its hosts
    prefix = plan.view.design.hosts.label_prefix
    context = {"name": plan.name, "api": KUEUE_API, "levels": levels + [HOSTNAME_LEVEL],
               "flavor_labels": labels[:2] if hosts.names else [], "server": plan.view.design.server, "prefix": prefix}
    for name, macro in (("node-labels.yaml", "node_object"), ("label-nodes.sh", "label_command")):
        # the file around its nodes, then the nodes in chunks: the nodes were one string of
        # 16 MB at 524,288 GPUs, copied into the rendered file and again into its bytes
        head, tail = render_template(f"k8s/{name}.j2", nodes=_NODES, **context).split(_NODES)
        out.write_chunks(f"k8s/{name}", [head, *text_chunks(_node_pieces(macro, hosts.names, labels), len(hosts.names)), tail])
    out.write_text("k8s/kueue-topology.yaml", render_template("k8s/kueue-topology.yaml.j2", **context))
