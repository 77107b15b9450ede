"""Switch hops between GPUs: how many switches a packet crosses between two servers,
over pairs of servers in different SUs/pods (BFS on the switch graph)."""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import shortest_path

from .context import CheckContext
from .findings import Finding

MAX_SOURCES = 64


def check_hops(ctx: CheckContext) -> tuple[dict, list[Finding]]:
    plan, g = ctx.plan, ctx.graph
    gpu = g.at_is_gpu_server
    # GPUs per switch (weights) and the group (pod, else SU) of each attached switch.
    weight = np.bincount(g.at_switch[gpu], minlength=g.n).astype(np.float64)
    edge = np.nonzero(weight)[0]
    if edge.size == 0:
        return {}, []
    dev = [plan.devices[int(g.device_of[s])] for s in edge]
    group = np.array([(d.pod if d.pod is not None else (d.su or 0)) for d in dev])
    direct = bool(plan.design.get("direct"))
    node = plan.design.get("node_role", "chip")  # a direct network's nodes: chips, or switchless servers
    what = f"{node}s" if direct else "edge switches"
    if edge.size > MAX_SOURCES:  # evenly spaced sources: tiers are symmetric, the mean is stable
        sources = edge[np.linspace(0, edge.size - 1, MAX_SOURCES).round().astype(int)]
        method = f"BFS from {MAX_SOURCES} of {edge.size} {what}"
    else:
        sources, method = edge, f"BFS from all {edge.size} {what}"
    unit = g.adjacency(np.ones(g.a.size, dtype=np.int64))
    dist = shortest_path(unit, unweighted=True, indices=sources)[:, edge]
    src_group = group[np.searchsorted(edge, sources)]
    across = src_group[:, None] != group[None, :]
    # Switches on the path = switch-to-switch edges + 1; a direct network counts node-to-node
    # links (the GPUs or their servers are the nodes, so there is no switch to count).
    hops = dist if direct else dist + 1
    figures = {"method": method, **({"unit": f"{node}-to-{node} links"} if direct else {})}
    if direct and node == "server":
        figures["max_switches"] = 0  # switchless: what requirements.max_hops limits
    w = weight[edge][None, :] * np.ones((sources.size, 1))
    if across.any():
        finite = across & np.isfinite(hops)
        figures["across_groups_max"] = int(hops[finite].max())
        figures["across_groups_mean"] = round(float((hops[finite] * w[finite]).sum() / w[finite].sum()), 3)
    figures["max"] = int(hops[np.isfinite(hops)].max())
    unreachable_pairs = ~np.isfinite(hops)
    apart = plan.design.get("never_meet")  # rail-only / multi-plane: rails or planes the network never joins
    if apart:
        label = np.array([getattr(d, apart) or 0 for d in dev])
        by_design = label[np.searchsorted(edge, sources)][:, None] != label[None, :]
        figures["apart_by_design_pairs"] = int((unreachable_pairs & by_design).sum())
        unreachable_pairs &= ~by_design
    unreachable = int(unreachable_pairs.sum())
    findings = [Finding("HOPS", "info", f"max {figures['max']} {figures.get('unit', 'switches')} between GPUs"
                        + (f"; across SUs/pods max {figures['across_groups_max']}, mean {figures['across_groups_mean']}"
                           if "across_groups_max" in figures else ""), "fabric")]
    if unreachable:
        findings.append(Finding("FABRIC_PARTITIONED", "error", f"{unreachable} edge-switch pairs cannot reach each other", "fabric"))
    return figures, findings
