"""Switch hops between GPUs: how many switches a packet crosses between two servers,
over pairs of servers in different SUs/pods (BFS on the switch graph)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from .context import CheckContext
from .families import family_of
from .figures import Figures, omitted_if_none
from .findings import Finding

MAX_SOURCES = 64


@dataclass(frozen=True)
class HopsFigures(Figures):
    """Every figure is absent where no GPU attaches to the graph."""

    method: str | None = omitted_if_none()
    unit: str | None = omitted_if_none()  # direct networks: what a hop is (chip-to-chip links); else switches
    max_switches: int | None = omitted_if_none()  # switchless: 0, what requirements.max_hops limits
    across_groups_max: int | None = omitted_if_none()  # between different SUs/pods, where there are several
    across_groups_mean: float | None = omitted_if_none()
    max: int | None = omitted_if_none()
    apart_by_design_pairs: int | None = omitted_if_none()  # rail-only / multi-plane: pairs the network never joins


def check_hops(ctx: CheckContext) -> tuple[HopsFigures, list[Finding]]:
    plan, g = ctx.plan, ctx.graph
    gpu = g.at_is_gpu_server
    # GPUs per switch (weights) and the group (pod, else SU) of each attached switch.
    weight = np.bincount(g.at_switch[gpu], minlength=g.n).astype(np.float64)
    edge = np.nonzero(weight)[0]
    if edge.size == 0:
        return HopsFigures(), []
    dev = [plan.devices[int(g.device_of[s])] for s in edge]
    group = np.array([(d.pod if d.pod is not None else (d.su or 0)) for d in dev])
    direct = bool(plan.view.design.direct)
    node = plan.view.design.node_role  # a direct network's nodes: chips, or switchless servers
    what = f"{node}s" if direct else "edge switches"
    if edge.size > MAX_SOURCES:  # evenly spaced sources: tiers are symmetric, the mean is stable
        sources = edge[np.linspace(0, edge.size - 1, MAX_SOURCES).round().astype(int)]
        method = f"BFS from {MAX_SOURCES} of {edge.size} {what}"
    else:
        sources, method = edge, f"BFS from all {edge.size} {what}"
    dist = g.hops_from(sources, edge)
    src_group = group[np.searchsorted(edge, sources)]
    across = src_group[:, None] != group[None, :]
    # Switches on the path = switch-to-switch edges + 1; a direct network counts node-to-node
    # links (the GPUs or their servers are the nodes, so there is no switch to count).
    hops = dist if direct else dist + 1
    unit = f"{node}-to-{node} links" if direct else None
    max_switches = 0 if direct and node == "server" else None
    w = weight[edge][None, :] * np.ones((sources.size, 1))
    across_max = across_mean = None
    if across.any():
        finite = across & np.isfinite(hops)
        across_max = int(hops[finite].max())
        across_mean = round(float((hops[finite] * w[finite]).sum() / w[finite].sum()), 3)
    longest = int(hops[np.isfinite(hops)].max())
    unreachable_pairs = ~np.isfinite(hops)
    apart = plan.view.design.never_meet  # rail-only / multi-plane: rails or planes the network never joins
    apart_pairs = None
    if apart:
        label = np.array([getattr(d, apart) or 0 for d in dev])
        by_design = label[np.searchsorted(edge, sources)][:, None] != label[None, :]
        apart_pairs = int((unreachable_pairs & by_design).sum())
        unreachable_pairs &= ~by_design
    figures = HopsFigures(method=method, unit=unit, max_switches=max_switches, across_groups_max=across_max,
                          across_groups_mean=across_mean, max=longest, apart_by_design_pairs=apart_pairs)
    unreachable = int(unreachable_pairs.sum())
    findings = [Finding("HOPS", "info", f"max {longest} {unit or 'switches'} between GPUs"
                        + (f"; across SUs/pods max {across_max}, mean {across_mean}"
                           if across_max is not None else ""), "fabric")]
    closed = family_of(plan).max_hops(plan, int(edge.size))
    if closed is not None and closed != longest:
        # Two methods, one answer expected: a difference is a builder or closed-form bug.
        findings.append(Finding("HOPS_METHODS_DISAGREE", "warning",
                                f"the structure gives at most {closed} {unit or 'switches'} between GPUs but BFS finds "
                                f"{longest}; trust the BFS figure", "fabric"))
    if unreachable:
        findings.append(Finding("FABRIC_PARTITIONED", "error", f"{unreachable} edge-switch pairs cannot reach each other", "fabric"))
    return figures, findings
