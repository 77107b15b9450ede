"""ECMP width the design promises between leaves of an eBGP Clos, with or without failures.

RFC 7938 routing is valley-free: a route climbs from the destination leaf to spines
(and cores), then descends. Spines of a pod share an ASN (all spines do in two tiers),
so AS-path loop detection stops a route from bouncing back into the pod it came
from. Hence a leaf A reaches leaf B over each live uplink A->s where
- s is in B's pod (every spine, two tiers): s has a live link to B;
- otherwise: s has a live link to a core that has a live link to a spine of B's pod
  that has a live link to B.
Each live link is its own BGP session, so parallel links count as separate next hops.
The count is capped by `maximum_paths`.

Cost: O(links + leaves^2) for the pairs asked; meant for the digital twin's small
fabrics and for failure analysis of one pair at a time at scale.
"""

from __future__ import annotations

from collections import defaultdict

from ..plan.model import Plan


def expected_ecmp(plan: Plan, maximum_paths: int, failed_links: frozenset[int] = frozenset(),
                  failed_devices: frozenset[int] = frozenset(), pairs: list[tuple[int, int]] | None = None
                  ) -> dict[tuple[int, int], int]:
    devices = plan.devices
    links = plan.links
    a_dev, b_dev = links.a_dev.tolist(), links.b_dev.tolist()
    uplinks: dict[int, list[int]] = defaultdict(list)  # leaf -> spine per live uplink
    spine_down: dict[int, set[int]] = defaultdict(set)  # spine -> leaves
    spine_up: dict[int, set[int]] = defaultdict(set)  # spine -> cores
    core_down: dict[int, set[int]] = defaultdict(set)  # core -> spines
    for i, (a, b) in enumerate(zip(a_dev, b_dev, strict=True)):
        if i in failed_links or a in failed_devices or b in failed_devices:
            continue
        ra, rb = devices[a].role, devices[b].role
        if ra == "leaf" and rb == "spine":
            uplinks[a].append(b)
            spine_down[b].add(a)
        elif ra == "spine" and rb == "core":
            spine_up[a].add(b)
            core_down[b].add(a)
    leaves = [i for i, d in enumerate(devices) if d.role == "leaf"]
    if pairs is None:
        pairs = [(x, y) for x in leaves for y in leaves if x != y]

    def reaches(s: int, dst: int) -> bool:
        if devices[s].pod == devices[dst].pod:
            return dst in spine_down[s]
        return any(dst in spine_down[s2] and devices[s2].pod == devices[dst].pod
                   for c in spine_up[s] for s2 in core_down[c])

    out = {}
    for src, dst in pairs:
        if src in failed_devices or dst in failed_devices:
            out[(src, dst)] = 0
            continue
        memo: dict[int, bool] = {}
        for s in uplinks[src]:
            if s not in memo:
                memo[s] = reaches(s, dst)
        n = sum(1 for s in uplinks[src] if memo[s])
        out[(src, dst)] = min(n, maximum_paths)
    return out
