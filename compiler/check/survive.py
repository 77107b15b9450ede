"""The failure scenarios a `requirements.survive` is judged on: where k lost switches of a
role, and k lost links, hurt most.

Switches of a role: k from the group (pod, SU, core group) of the busiest one, the busiest
first (a clustered loss takes one group's paths), and the first k in plan order. Links:
all links of the device with the fewest (when k reaches that count its servers are cut
off: the adversarial placement), k of the largest bundle of parallel links (a torus or
ring neighbour bundle, a dragonfly global bundle: the cut through it loses the most), and
k links of the first device that carries GPUs. Several roles and links fail together: each
switch placement with each link placement. The requirement takes the worst (most servers
cut off, then the least bisection on every balanced cut, those through the damage included).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.naming import cable_id
from ..topology import switch_roles
from .context import CheckContext

SHOWN_ELEMENTS = 8


@dataclass(frozen=True)
class SurviveScenario:
    what: str  # "1 router, 4 link(s)"
    placement: str  # where the elements sit, in words
    elements: tuple[str, ...]  # switch names and cable ids (the first SHOWN_ELEMENTS, then a count)
    keep_link: np.ndarray | None
    keep_switch: np.ndarray | None
    near: tuple[int, ...]  # graph nodes at the damage (cuts through it are searched)


def _switch_placements(ctx: CheckContext, role: str, k: int) -> list[tuple[str, np.ndarray]]:
    g, plan = ctx.graph, ctx.plan
    idx = np.nonzero((ctx.switch_role == role) & ~ctx.management)[0]
    if idx.size == 0:
        return []
    k = min(k, idx.size)
    load = np.bincount(np.concatenate([g.a, g.b, g.at_switch]),
                       weights=np.concatenate([g.cap_gbps, g.cap_gbps, g.at_cap_gbps]), minlength=g.n)

    def group(s):
        d = plan.devices[int(g.device_of[s])]
        return (d.pod, d.su, d.group)

    busiest = int(idx[np.argmax(load[idx])])
    mates = np.array([s for s in idx if group(s) == group(busiest)], dtype=np.int64)
    pool = mates if mates.size >= k else idx
    chosen = pool[np.argsort(-load[pool], kind="stable")[:k]]
    out = [(f"{k} {role}(s) of the busiest one's group, busiest first", np.sort(chosen))]
    first = idx[:k]
    if not np.array_equal(np.sort(chosen), first):
        out.append((f"the first {k} {role}(s) in plan order", first))
    return out


def _link_placements(ctx: CheckContext, k: int, kind: str | None) -> list[tuple[str, np.ndarray]]:
    g, plan = ctx.graph, ctx.plan
    pool = np.ones(g.a.size, dtype=bool)
    if kind is not None:
        pool = plan.links.kind[g.link] == plan.link_kinds.index(kind)
    if not pool.any():
        return []
    noun = f"{kind} links" if kind else "links"
    ids = np.nonzero(pool)[0]
    deg = np.bincount(np.concatenate([g.a[ids], g.b[ids]]), minlength=g.n)
    gpu_nodes = np.unique(g.at_switch[g.at_is_gpu_server])
    gpu_nodes = gpu_nodes[deg[gpu_nodes] > 0] if gpu_nodes.size else gpu_nodes
    out: list[tuple[str, np.ndarray]] = []

    def of_node(s: int) -> np.ndarray:
        return ids[(g.a[ids] == s) | (g.b[ids] == s)]

    if gpu_nodes.size:
        weakest = int(gpu_nodes[np.argmin(deg[gpu_nodes])])
        mine = of_node(weakest)
        name = _node(ctx, weakest)
        text = (f"all {mine.size} {noun} of {name}, the device with GPUs and the fewest" if k >= mine.size
                else f"{k} of the {mine.size} {noun} of {name}, the device with GPUs and the fewest")
        out.append((text, mine[:k]))
    lo, hi = np.minimum(g.a[ids], g.b[ids]), np.maximum(g.a[ids], g.b[ids])
    pair = lo.astype(np.int64) * g.n + hi
    uniq, inverse, counts = np.unique(pair, return_inverse=True, return_counts=True)
    big = int(np.argmax(counts))
    bundle = ids[inverse == big]
    ends = f"{_node(ctx, int(uniq[big] // g.n))} and {_node(ctx, int(uniq[big] % g.n))}"
    out.append((f"{min(k, bundle.size)} of the {bundle.size} parallel {noun} between {ends}, the largest bundle", bundle[:k]))
    if gpu_nodes.size:
        first = of_node(int(gpu_nodes[0]))[:k]
        out.append((f"{first.size} {noun} of {_node(ctx, int(gpu_nodes[0]))}, the first device with GPUs", first))
    seen, unique = set(), []
    for text, links in out:
        key = tuple(sorted(links.tolist()))
        if key not in seen:
            seen.add(key)
            unique.append((text, links))
    return unique


def _node(ctx: CheckContext, s: int) -> str:
    return ctx.plan.devices[int(ctx.graph.device_of[s])].name


def _cable(ctx: CheckContext, link: int) -> str:
    plan, li = ctx.plan, int(ctx.graph.link[link])
    return cable_id(plan.devices[int(plan.links.a_dev[li])].name, int(plan.links.a_port[li]) + 1)


def survive_scenarios(ctx: CheckContext, survive: dict) -> list[SurviveScenario]:
    g = ctx.graph
    roles = [(r, int(survive.get(r, 0))) for r in switch_roles() if survive.get(r, 0)]
    per_role = [_switch_placements(ctx, r, k) for r, k in roles]
    per_role = [p for p in per_role if p]
    k_links = int(survive.get("link", 0))
    links = _link_placements(ctx, k_links, survive.get("link_kind")) if k_links else []
    what = [f"{k} {r}" for r, k in roles] + ([f"{k_links} {survive.get('link_kind') or ''} link(s)".replace("  ", " ")]
                                             if k_links else [])
    # each role's i-th placement together, with each link placement
    width = max((len(p) for p in per_role), default=1)
    switch_sets = []
    for i in range(width):
        texts, nodes = [], []
        for p in per_role:
            text, chosen = p[min(i, len(p) - 1)]
            texts.append(text)
            nodes.append(chosen)
        switch_sets.append(("; ".join(texts), np.concatenate(nodes) if nodes else np.zeros(0, dtype=np.int64)))
    out = []
    for s_text, s_nodes in switch_sets:
        for l_text, l_ids in (links or [("", np.zeros(0, dtype=np.int64))]):
            keep_switch = None
            if s_nodes.size:
                keep_switch = np.ones(g.n, dtype=bool)
                keep_switch[s_nodes] = False
            keep_link = None
            if l_ids.size:
                keep_link = np.ones(g.a.size, dtype=bool)
                keep_link[l_ids] = False
            names = [_node(ctx, int(s)) for s in s_nodes] + [_cable(ctx, int(x)) for x in l_ids]
            shown = tuple(names[:SHOWN_ELEMENTS]) + ((f"... and {len(names) - SHOWN_ELEMENTS} more",)
                                                      if len(names) > SHOWN_ELEMENTS else ())
            near = (int(g.a[l_ids[0]]), int(g.b[l_ids[0]])) if l_ids.size else (int(s_nodes[0]),) if s_nodes.size else ()
            out.append(SurviveScenario(", ".join(what), "; ".join(t for t in (s_text, l_text) if t), shown,
                                       keep_link, keep_switch, near))
    return out
