"""Which detailed diagram each device belongs to: one per scalable unit (or pod, or run
of LEAVES_PER_SCOPE leaves in a fat tree without either), one of all servers for a
switchless ring or mesh. Vectorised: O(links log links)."""

from __future__ import annotations

import numpy as np

from ...plan.model import Plan

LEAVES_PER_SCOPE = 8


def scope_index(plan: Plan) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Scope names, the scope of each device (-1: none; leaves by SU/pod, servers and
    endpoints by the first leaf they reach) and of each link (the scope of an end inside
    one; -1 for links above the leaves' uplinks, e.g. spine-core, dragonfly+ global)."""
    names: list[str] = []
    index: dict[str, int] = {}
    dev_scope = np.full(len(plan.devices), -1, dtype=np.int64)
    if plan.view.design.node_role == "server":  # ring / full mesh (a few servers): one diagram of them all
        dev_scope[:] = 0
        return ["servers"], dev_scope, np.zeros(len(plan.links), dtype=np.int64)
    for i, d in enumerate(plan.devices):
        if d.role == "leaf":
            if d.su is not None:
                key = f"su{d.su}"
            elif d.pod is not None:
                key = f"pod{d.pod}"
            else:  # a fat tree without SUs: runs of LEAVES_PER_SCOPE leaves keep each diagram legible
                lo = (d.index - 1) // LEAVES_PER_SCOPE * LEAVES_PER_SCOPE + 1
                key = f"leaves-{lo:03d}-{lo + LEAVES_PER_SCOPE - 1:03d}"
            dev_scope[i] = index.setdefault(key, len(names))
            if dev_scope[i] == len(names):
                names.append(key)
    links = plan.links
    to_leaf = np.nonzero((dev_scope[links.b_dev] >= 0) & (dev_scope[links.a_dev] < 0))[0]
    lower, first = np.unique(links.a_dev[to_leaf], return_index=True)
    dev_scope[lower] = dev_scope[links.b_dev[to_leaf[first]]]
    link_scope = np.where(dev_scope[links.a_dev] >= 0, dev_scope[links.a_dev], dev_scope[links.b_dev])
    return names, dev_scope, link_scope


def scopes(plan: Plan) -> dict[str, list[int]]:
    """Scope -> its servers, endpoints and leaves (device indices, plan order)."""
    names, dev_scope, _ = plan.memo("diagram_scopes", scope_index)
    order = np.argsort(dev_scope, kind="stable")
    bounds = np.searchsorted(dev_scope[order], np.arange(len(names) + 1))
    return {name: order[bounds[k]:bounds[k + 1]].tolist() for k, name in enumerate(names)}


def scope_names(plan: Plan) -> list[str]:
    """The scopes' names in order (as scopes(plan)'s keys), without listing their devices."""
    return plan.memo("diagram_scopes", scope_index)[0]
