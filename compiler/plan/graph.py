"""Graph views of a plan for analysis: the switch fabric as integer-capacity arrays
ready for scipy's compiled max-flow and BFS.

Servers are not graph nodes: each server port becomes an attachment (server, switch,
capacity). That is exact for flows (a server's source edge carries the sum of its
ports, so it never binds) and keeps a 131,072-GPU plan's graph at ~5k nodes.

Direct networks (a torus of accelerators linked chip to chip, `design.direct`) have no
switches to attach to: there every chip is a node, its links are node-to-node links, and
each chip gets one attachment to itself whose capacity is the sum of its links (the most
it can inject, so it never binds either). Checks then read "switch" as "node". Switchless
rings and meshes of servers (`design.node_role: server`) are direct networks of servers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .columns import distinct, equal_rows, groups
from .model import Plan
from .sparse import connected_components, csr_matrix, shortest_path


@dataclass(frozen=True)
class FabricGraph:
    n: int  # switches
    device_of: np.ndarray  # switch index -> device index
    switch_of: np.ndarray  # device index -> switch index, or -1 (servers, endpoints)
    # switch-switch links, one entry per plan link
    a: np.ndarray
    b: np.ndarray
    cap_gbps: np.ndarray
    link: np.ndarray  # plan link index
    # attachments: one per server/endpoint port link
    at_device: np.ndarray
    at_switch: np.ndarray
    at_cap_gbps: np.ndarray
    at_port: np.ndarray  # port index on the server (rail - 1 for rail-ordered NICs)
    at_is_gpu_server: np.ndarray  # bool: a GPU server (not an extra endpoint)
    at_link: np.ndarray

    @cached_property
    def _pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The symmetric adjacency's structure, sorted once: (indptr, indices, and per link the
        positions of its a->b and b->a entries). Every adjacency shares it and only sums its
        links' weights into those positions, which costs O(links) and no sort."""
        n, m = self.n, self.a.size
        keys = np.concatenate([self.a, self.b]).astype(np.int64) * n + np.concatenate([self.b, self.a])
        uniq, _, inverse = groups(keys)
        indices = (uniq % max(n, 1)).astype(np.int64)
        indptr = np.searchsorted(uniq // max(n, 1), np.arange(n + 1)).astype(np.int64)
        for arr in (indices, indptr):
            arr.flags.writeable = False  # shared by every adjacency built from it
        return indptr, indices, inverse[:m], inverse[m:]

    @property
    def degree(self) -> np.ndarray:
        """Per switch, its distinct neighbours (the adjacency's row lengths)."""
        return np.diff(self._pairs[0])

    def adjacency(self, weights: np.ndarray | None = None, keep: np.ndarray | None = None) -> csr_matrix:
        """Symmetric switch adjacency with summed capacities (or `weights`), optionally only `keep` links.
        A pair of switches is an entry where at least one of its links is kept."""
        indptr, indices, fwd, back = self._pairs
        w = (self.cap_gbps if weights is None else weights).astype(np.int64)
        size = indices.size
        if keep is not None:
            w = np.where(keep, w, 0)
        # integer sums through float64 bincount: exact below 2**53 (Gb/s over a few links)
        data = (np.bincount(fwd, weights=w, minlength=size) + np.bincount(back, weights=w, minlength=size)).astype(np.int64)
        if keep is None:
            return csr_matrix((data, indices, indptr), shape=(self.n, self.n))
        present = (np.bincount(fwd, weights=keep, minlength=size) + np.bincount(back, weights=keep, minlength=size)) > 0
        row_kept = np.concatenate([[0], np.cumsum(present)])[indptr]
        return csr_matrix((data[present], indices[present], row_kept), shape=(self.n, self.n))

    @cached_property
    def _twins(self) -> tuple[np.ndarray, csr_matrix]:
        """Switches with the same neighbours (false twins: a Clos pod's leaves, a core
        group's cores) merged: (class per switch, the unit adjacency between classes).
        Twins are never adjacent and all members of two classes are joined to each other,
        so a path between classes lifts to one of the same length between any members:
        hop counts from the quotient are exact."""
        indptr, indices, _, _ = self._pairs
        cls = twin_classes(indptr, indices, None)
        k = int(cls.max(initial=-1)) + 1
        row = np.repeat(np.arange(self.n), np.diff(indptr))
        keys = distinct(cls[row] * k + cls[indices])
        q = csr_matrix((np.ones(keys.size, dtype=np.int64), keys % max(k, 1),
                        np.searchsorted(keys // max(k, 1), np.arange(k + 1))), shape=(k, k))
        return cls, q

    def hops_from(self, sources: np.ndarray, targets: np.ndarray | None = None) -> np.ndarray:
        """Unweighted shortest-path lengths (links) from each of `sources` to every switch (or
        to each of `targets`), inf where unreachable: BFS on the twin quotient (_twins,
        quotient_hops), expanded. Equal to BFS on the switch graph itself, at a cost of the
        quotient's size (a 524,288-GPU Clos: 8,384 classes instead of ~1M switch pairs)."""
        cls, q = self._twins
        sources = np.asarray(sources, dtype=np.int64)
        to = np.arange(self.n) if targets is None else np.asarray(targets, dtype=np.int64)
        dist = quotient_hops(q, cls[sources])[:, cls[to]]
        # a twin of the source: two links away through any shared neighbour; the source itself: 0
        dist[cls[sources][:, None] == cls[to][None, :]] = 2.0
        dist[sources[:, None] == to[None, :]] = 0.0
        return dist

    def pieces(self, keep: np.ndarray | None = None) -> np.ndarray:
        """Per switch, its connected piece of the graph over the `keep` links (scipy's
        connected_components labels, numbered in order of each piece's lowest switch),
        found on the twin quotient (_twins): the switches at a lost link stand alone, the
        rest of a class is one node, joined to each linked class and by the kept links of
        the lone ones. Members of a class share every neighbour and none of their links is
        lost, so they lie in one piece (a switch without links is a class of its own). Costs the
        quotient and the lost links (a few hundred classes at 524,288 GPUs), not ~1M pairs.
        A lost switch is one whose every link is lost: a piece of its own."""
        cls, q = self._twins
        n, k = self.n, q.shape[0]
        alone = np.zeros(n, dtype=bool)
        if keep is not None:
            alone[self.a[~keep]] = True
            alone[self.b[~keep]] = True
        node = np.where(alone, k + np.arange(n), cls)  # quotient node per switch
        merged = np.zeros(k, dtype=bool)
        merged[cls[~alone]] = True  # classes with a member not alone
        c_row = np.repeat(np.arange(k), np.diff(q.indptr))
        both = merged[c_row] & merged[q.indices]
        lone = alone[self.a] | alone[self.b]
        if keep is not None:
            lone &= keep
        rows = np.concatenate([c_row[both], node[self.a[lone]]])
        cols = np.concatenate([q.indices[both], node[self.b[lone]]])
        m = csr_matrix((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(k + n, k + n))
        label = connected_components(m, directed=False)[1][node]
        _, first, inverse = groups(label)
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        return rank[inverse]

    @cached_property
    def components(self) -> np.ndarray:
        """Per switch, its connected part of the intact graph (scipy's labels)."""
        return connected_components(self.adjacency(np.ones(self.a.size, dtype=np.int64)), directed=False)[1]


# Levels quotient_hops steps through together before it leaves a deeper graph (a long ring
# or torus) to scipy: a Clos is at most 6 links across.
FRONTIER_MAX_LEVELS = 32


def quotient_hops(q: csr_matrix, sources: np.ndarray) -> np.ndarray:
    """Unweighted shortest-path lengths from each of `sources` to every node of the symmetric
    graph `q` (sources x nodes, inf where unreachable): every source's BFS in step, a level
    being one sparse product of the graph with the frontiers, O(links x sources) per level.
    scipy's shortest_path takes each source alone (64 sources on the 524,288-GPU quotient:
    0.05 s, this 0.005); on graphs deeper than FRONTIER_MAX_LEVELS it answers instead."""
    k = q.shape[0]
    dist = np.full((sources.size, k), np.inf)
    seen = np.zeros((k, sources.size), dtype=bool)
    seen[sources, np.arange(sources.size)] = True
    dist[np.arange(sources.size), sources] = 0.0
    step = q.astype(np.float32)
    front = seen.astype(np.float32)
    for level in range(1, FRONTIER_MAX_LEVELS + 1):
        reached = (step @ front > 0) & ~seen
        if not reached.any():
            return dist
        seen |= reached
        dist.T[reached] = float(level)
        front = reached.astype(np.float32)
    return shortest_path(q, unweighted=True, indices=sources)


def fabric_graph(plan: Plan) -> FabricGraph:
    if plan.view.design.direct:
        return _direct_graph(plan)
    tiers = np.fromiter((d.tier for d in plan.devices), dtype=np.int64, count=len(plan.devices))
    is_switch = tiers > 0
    device_of = np.nonzero(is_switch)[0]
    switch_of = np.full(len(plan.devices), -1, dtype=np.int64)
    switch_of[device_of] = np.arange(device_of.size)
    L = plan.links
    a_sw, b_sw = switch_of[L.a_dev], switch_of[L.b_dev]
    inner = (a_sw >= 0) & (b_sw >= 0)
    attach = (a_sw < 0) & (b_sw >= 0)
    if ((a_sw < 0) & (b_sw < 0)).any():
        raise ValueError("direct endpoint-to-endpoint links are not modelled in the switch graph")
    ids = np.arange(len(L))
    gpu_server = np.fromiter((d.role == "server" for d in plan.devices), dtype=bool, count=len(plan.devices))
    return FabricGraph(
        n=int(device_of.size), device_of=device_of, switch_of=switch_of,
        a=a_sw[inner], b=b_sw[inner], cap_gbps=L.speed_gbps[inner].astype(np.int64), link=ids[inner],
        at_device=L.a_dev[attach].astype(np.int64), at_switch=b_sw[attach], at_cap_gbps=L.speed_gbps[attach].astype(np.int64),
        at_port=L.a_port[attach].astype(np.int64), at_is_gpu_server=gpu_server[L.a_dev[attach]], at_link=ids[attach],
    )


def _direct_graph(plan: Plan) -> FabricGraph:
    """Every device of the node role (chips; servers of a switchless ring or mesh) is a
    node; one self-attachment per node."""
    L = plan.links
    role = plan.view.design.node_role
    chip = np.fromiter((d.role == role for d in plan.devices), dtype=bool, count=len(plan.devices))
    device_of = np.nonzero(chip)[0]
    node_of = np.full(len(plan.devices), -1, dtype=np.int64)
    node_of[device_of] = np.arange(device_of.size)
    a, b = node_of[L.a_dev], node_of[L.b_dev]
    if (a < 0).any() or (b < 0).any():
        raise ValueError(f"a direct network links {role}s only")
    cap = L.speed_gbps.astype(np.int64)
    inject = np.bincount(np.concatenate([a, b]), weights=np.concatenate([cap, cap]), minlength=device_of.size).astype(np.int64)
    nodes = np.arange(device_of.size, dtype=np.int64)
    return FabricGraph(
        n=int(device_of.size), device_of=device_of, switch_of=node_of,
        a=a, b=b, cap_gbps=cap, link=np.arange(len(L)),
        at_device=device_of.astype(np.int64), at_switch=nodes, at_cap_gbps=inject,
        at_port=np.zeros(device_of.size, dtype=np.int64), at_is_gpu_server=np.ones(device_of.size, dtype=bool),
        at_link=np.full(device_of.size, -1, dtype=np.int64),
    )


def twin_classes(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray | None) -> np.ndarray:
    """Per node of a symmetric CSR graph (sorted indices, no duplicate entries), a class
    numbered in order of its lowest node: nodes with the same neighbours at the same weights
    (`data`; None: unweighted) share one (columns.equal_rows). Swapping two such twins maps
    the graph onto itself, so any figure between other nodes is the same for either twin.
    A node with a link to itself or no neighbour stays alone."""
    n = indptr.size - 1
    deg = np.diff(indptr)
    row = np.repeat(np.arange(n), deg)
    alone = deg == 0
    alone[row[indices == row]] = True
    return equal_rows(indptr, indices, data, alone)
