"""Dragonfly and dragonfly+: closed-form bisection between two halves of the groups
(convention: one direction, Gb/s, the cut halves the GPUs). Its group cut is the generic
"pods" cut (check/cuts.py): a group is a pod."""

from __future__ import annotations

import numpy as np

from ...plan.graph import FabricGraph
from ...plan.model import Plan
from ...topology import DragonflyRecord
from ..cuts import Cut, by_server
from .injection import half_injection_gbps


def bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    """Dragonfly / dragonfly+ cut between two halves of the groups: (g/2)^2 group pairs x m
    global links each; inside a dragonfly+ group also the leaves' uplinks (as for a Clos leaf).
    bisection = 1/2 * min(GPU injection, sum over leaves of min(down, up) [dragonfly+],
    2 * (g/2)^2 * m * link speed). Defined for an even number of fully populated groups."""
    d = plan.view.design
    assert isinstance(d, DragonflyRecord), d.topology  # the dragonfly family's own record
    groups, m, speed = d.groups, d.global_links_per_group_pair, d.speed_gbps
    if d.endpoint_ports != groups * d.endpoint_ports_per_group:
        return None, "no closed form: the last group is partly populated (max-flow only)"
    inj = 2 * half_injection_gbps(g)  # doubled: the bounds below are halved at the end
    bounds = [inj]
    formula = "1/2 * min(GPU injection"
    if d.intra_group == "fat-tree":
        bounds.append(groups * (d.switches_per_group // 2) * min(d.endpoints_per_switch, d.switches_per_group // 2) * speed)
        formula += ", sum over leaves of min(endpoint ports, uplinks)"
    if groups == 1:
        if d.intra_group == "all-to-all":
            a = d.switches_per_group
            if a % 2:
                return None, "no closed form: one group of an odd number of routers"
            bounds.append(2 * (a // 2) ** 2 * speed)
            formula += ", 2 * (a/2)^2 local links"
    elif groups % 2:
        return None, "no closed form: an odd number of groups (max-flow only)"
    else:
        bounds.append(2 * (groups // 2) ** 2 * m * speed)
        formula += f", 2 * (g/2)^2 * m global links = 2 * {(groups // 2) ** 2:,} * {m} * {speed} Gb/s"
    return int(min(bounds) // 2), formula + "), Gb/s"


SPLIT_EVERY_GROUP_UP_TO = 16  # groups; each split is one more max-flow


def cuts(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray) -> list[Cut]:
    """An odd number of groups: a balanced cut must split a group. Split the last group M in
    two along its global links: side A is the (g-1)/2 groups that M's first switches reach
    (in switch order), then M's switches by how many global links lead into A (most first),
    then the rest; halved. At the balanced maximum (g = a*h + 1) M's first a/2 switches reach
    exactly the A groups, so the split adds only M's local links: (g-1)^2/4 global + (a/2)^2
    local links, where the generic pods cut (first groups in order) adds M's global links."""
    d = plan.view.design
    assert isinstance(d, DragonflyRecord), d.topology  # the dragonfly family's own record
    groups = d.groups
    if groups < 3 or groups % 2 == 0:
        return []
    pod = np.array([plan.devices[int(x)].pod or 0 for x in g.device_of], dtype=np.int64)
    a, b = np.concatenate([g.a, g.b]), np.concatenate([g.b, g.a])
    node = g.at_switch[g.at_is_gpu_server][first_at]
    # Which group to split matters once the fabric is damaged (the worst cut then splits the
    # group that lost a local link) and under arrangements where groups differ: every group
    # takes its turn while there are few, the last alone beyond that.
    splits = range(1, groups + 1) if groups <= SPLIT_EVERY_GROUP_UP_TO else [int(pod.max())]
    out = []
    for last in splits:
        out_of_last = (pod[a] == last) & (pod[b] != last)
        targets = pod[b[out_of_last][np.lexsort((pod[b[out_of_last]], a[out_of_last]))]]
        chosen = list(dict.fromkeys(targets.tolist()))[: groups // 2]
        side_a = np.isin(pod, chosen)
        into_a = np.zeros(g.n, dtype=np.int64)
        np.add.at(into_a, a[out_of_last], np.where(side_a[b[out_of_last]], 1, -1))
        rank = np.where(side_a[node], 0, np.where(pod[node] == last, 1, 2))
        order = servers[np.lexsort((np.arange(servers.size), node, -into_a[node], rank))]
        out.append(by_server(g, order, "groups-and-a-half" if last == int(pod.max()) else f"groups-and-a-half-{last}",
                             f"the {len(chosen)} groups group {last}'s first switches reach, then group {last}'s switches "
                             f"by global links into them, halved"))
    return out


def exhaustive(plan: Plan, g: FabricGraph) -> bool:
    return False  # its cuts are a search, not every balanced split


def max_hops(plan: Plan, edge_switches: int) -> int | None:
    return None  # no closed form here yet: the BFS figure stands alone
