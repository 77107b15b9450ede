"""Max-flow across a cut of GPUs, on scipy's compiled Dinic.

The network's sparse structure (switch links both ways, a super source and sink
wired to every switch with GPUs) is built once; each cut or failure only rewrites
capacities in place. One flow on the 131,072-GPU plan's ~5k-switch, ~260k-link
graph then costs ~16 ms; above QUOTIENT_MIN_LINKS links, twins merged (_quotient_flow),
~4 ms, so dozens of cuts and failure samples stay within seconds.
"""

from __future__ import annotations

import hashlib
from functools import cached_property

import numpy as np
from ..plan.columns import groups, ranges, row_groups
from ..plan.graph import FabricGraph, twin_classes
from ..plan.sparse import csr_matrix, maximum_flow

_INT32_MAX = 2**31 - 1
# From this many switch links, flows run on the twin quotient (_quotient_flow): below, its
# ~0.5 ms of numpy per flow costs more than Dinic saves (131,072 GPUs: 4 ms instead of 16).
QUOTIENT_MIN_LINKS = 20_000


class FlowNetwork:
    def __init__(self, g: FabricGraph):
        self.g = g
        self._answers: dict[bytes, int] = {}

    def _build(self) -> None:
        """The whole network's structure, built on first use: flows on the twin quotient
        (large Clos fabrics) never need it, and it costs a sort of every link."""
        if hasattr(self, "size"):
            return
        g = self.g
        n = g.n
        self.src, self.snk = n, n + 1
        edge_sw = np.unique(g.at_switch)
        rows = np.concatenate([g.a, g.b, np.full(edge_sw.size, self.src), edge_sw])
        cols = np.concatenate([g.b, g.a, edge_sw, np.full(edge_sw.size, self.snk)])
        keys = rows * (n + 2) + cols
        uniq, _, inverse = groups(keys)
        self.shape = (n + 2, n + 2)
        self.indices = (uniq % (n + 2)).astype(np.int32)
        self.indptr = np.searchsorted(uniq // (n + 2), np.arange(n + 3)).astype(np.int32)
        m = g.a.size
        self.pos_fwd, self.pos_back = inverse[:m], inverse[m:2 * m]
        self.pos_src = inverse[2 * m:2 * m + edge_sw.size]
        self.pos_snk = inverse[2 * m + edge_sw.size:]
        self.edge_sw = edge_sw
        self.size = uniq.size  # set last: the structure is built

    def _links_data(self, caps: np.ndarray, keep_link: np.ndarray | None) -> np.ndarray:
        self._build()
        c = caps if keep_link is None else np.where(keep_link, caps, 0)
        # integer sums through float64 bincount: exact below 2**53, and O(links) where
        # np.add.at is several times slower
        return (np.bincount(self.pos_fwd, weights=c, minlength=self.size)
                + np.bincount(self.pos_back, weights=c, minlength=self.size)).astype(np.int64)

    @cached_property
    def base_data(self) -> np.ndarray:
        return self._links_data(self.g.cap_gbps, None)

    def flow(self, side_a: np.ndarray, side_b: np.ndarray, keep_link: np.ndarray | None = None,
             keep_switch: np.ndarray | None = None) -> int:
        """The max-flow from side A's GPU ports to side B's over the kept links and switches.
        The same question is asked more than once (a cut through a lost leaf and through its
        first uplink are one cut; the intact fabric's tightest cuts again under Monte Carlo):
        19 of the 44 flows of a 131,072-GPU check are repeats, so answers are kept by a digest
        of the inputs."""
        key = _digest(side_a, side_b, keep_link, keep_switch)
        if key not in self._answers:
            self._answers[key] = self._flow(side_a, side_b, keep_link, keep_switch)
        return self._answers[key]

    @cached_property
    def twins(self) -> Twins:
        """The intact switch graph's twin classes over link capacities (_twin_pairs). Where
        every link has one capacity, a pair's capacity is that times its links: the classes
        of unit_twins, their capacities scaled (a pass over every switch pair saved)."""
        caps = self.g.cap_gbps
        if caps.size and int(caps.min()) == int(caps.max()):
            cls, c_a, c_b, links = self.unit_twins
            return cls, c_a, c_b, links * int(caps[0])
        return _twin_pairs(self.g.adjacency())

    @cached_property
    def unit_twins(self) -> Twins:
        """The same over link counts: the twins of the unit-capacity graph paths are counted on.
        Where every linked pair has as many links, those are the switch graph's own twins
        (FabricGraph._twins, which hop counts and cut-off pieces read too): a pass over every
        switch pair saved (a 524,288-GPU Clos has one cable per pair)."""
        adj = self.g.adjacency(np.ones(self.g.a.size, dtype=np.int64))
        if adj.data.size and int(adj.data.min()) == int(adj.data.max()):
            cls, q = self.g._twins
            c_a = np.repeat(np.arange(q.shape[0]), np.diff(q.indptr))
            return cls, c_a, q.indices.astype(np.int64), np.full(q.indices.size, int(adj.data[0]), dtype=np.int64)
        return _twin_pairs(adj)

    def pair_paths(self, s: int, t: int, keep_link: np.ndarray | None = None) -> int:
        """Edge-disjoint paths between switches s and t over the kept links: Dinic on the
        unit-capacity graph (`unit_graph`), or above QUOTIENT_MIN_LINKS on its twin quotient
        (_merged_flow with s and t each alone), whose size follows the distinct roles rather
        than the switch pairs (524,288 GPUs: ~8k classes instead of ~1M pairs)."""
        g = self.g
        if g.a.size < QUOTIENT_MIN_LINKS or int(self.unit_twins[0].max()) + 1 == g.n:
            return pair_paths(unit_graph(g, keep_link), s, t)
        if s == t:
            return 0
        # a source and sink edge no flow can fill: at most every link leaves s
        w_s, w_t = np.zeros(g.n, dtype=np.int64), np.zeros(g.n, dtype=np.int64)
        w_s[s] = w_t[t] = max(g.a.size, 1)
        return _merged_flow(g, self.unit_twins, np.ones(g.a.size, dtype=np.int64), w_s, w_t, keep_link, None)

    def _flow(self, side_a: np.ndarray, side_b: np.ndarray, keep_link: np.ndarray | None,
              keep_switch: np.ndarray | None) -> int:
        g = self.g
        if g.a.size >= QUOTIENT_MIN_LINKS and int(self.twins[0].max()) + 1 < g.n:
            return self._quotient_flow(side_a, side_b, keep_link, keep_switch)
        self._build()
        link_ok = keep_link
        at_ok = np.ones(g.at_switch.size, dtype=bool)
        if keep_switch is not None:
            alive = keep_switch[g.a] & keep_switch[g.b]
            link_ok = alive if link_ok is None else (link_ok & alive)
            at_ok = keep_switch[g.at_switch]
        data = self.base_data.copy() if link_ok is None else self._links_data(g.cap_gbps, link_ok)
        w_a = np.bincount(g.at_switch[side_a & at_ok], weights=g.at_cap_gbps[side_a & at_ok], minlength=g.n)
        w_b = np.bincount(g.at_switch[side_b & at_ok], weights=g.at_cap_gbps[side_b & at_ok], minlength=g.n)
        data[self.pos_src] = w_a[self.edge_sw]
        data[self.pos_snk] = w_b[self.edge_sw]
        if not w_a.any() or not w_b.any():
            return 0
        if data.max() > _INT32_MAX:
            raise OverflowError("capacity above 2^31 Gb/s in one edge")
        m = csr_matrix((data.astype(np.int32), self.indices, self.indptr), shape=self.shape)
        return int(maximum_flow(m, self.src, self.snk, method="dinic").flow_value)  # type: ignore[arg-type]  # SciPy takes csr_matrix too; its stubs name only csr_array

    def _quotient_flow(self, side_a: np.ndarray, side_b: np.ndarray, keep_link: np.ndarray | None,
                       keep_switch: np.ndarray | None) -> int:
        """_flow on the network with twins merged (_merged_flow over self.twins), the GPU
        capacity of each side summed per switch."""
        g = self.g
        at_ok = np.ones(g.at_switch.size, dtype=bool) if keep_switch is None else keep_switch[g.at_switch]
        w_a = np.bincount(g.at_switch[side_a & at_ok], weights=g.at_cap_gbps[side_a & at_ok], minlength=g.n).astype(np.int64)
        w_b = np.bincount(g.at_switch[side_b & at_ok], weights=g.at_cap_gbps[side_b & at_ok], minlength=g.n).astype(np.int64)
        if not w_a.any() or not w_b.any():
            return 0
        return _merged_flow(g, self.twins, g.cap_gbps, w_a, w_b, keep_link, keep_switch)


# A graph's twin classes for _merged_flow: (class per switch, and per linked pair of classes
# its two classes and the capacity between any one member of each).
Twins = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _twin_pairs(adj: csr_matrix) -> Twins:
    """A symmetric weighted switch adjacency's twin classes (plan/graph.py twin_classes: same
    neighbours over the same weight) and the pairs of classes it links: twins link every
    member of a linked class alike, so one entry per pair of classes says it all."""
    n = adj.shape[0]
    cls = twin_classes(adj.indptr, adj.indices, adj.data)
    k = int(cls.max(initial=-1)) + 1
    # the rows of each class's lowest member say it all (its twins' rows are the same)
    lowest = np.full(k, n)
    np.minimum.at(lowest, cls, np.arange(n))
    is_rep = lowest[cls] == np.arange(n)
    deg = np.diff(adj.indptr)
    at = np.nonzero(np.repeat(is_rep, deg))[0]
    row = np.repeat(np.nonzero(is_rep)[0], deg[is_rep])
    _, first = np.unique(cls[row] * k + cls[adj.indices[at]], return_index=True)
    return cls, cls[row[first]], cls[adj.indices[at[first]]], adj.data[at[first]].astype(np.int64)


def _merged_flow(g: FabricGraph, twins: Twins, link_cap: np.ndarray, w_a: np.ndarray, w_b: np.ndarray,
                 keep_link: np.ndarray | None, keep_switch: np.ndarray | None) -> int:
    """The max-flow from a super source wired to each switch with capacity w_a (per switch)
    to a super sink wired with w_b, over the kept links (capacity `link_cap`, the weights
    `twins` was computed on) and switches, with twins merged: switches of one twin class
    with as much on side A and on side B are one node, its capacities the sums of its
    members'. The switches at a lost link, and lost switches, stand alone.
    Any flow averaged over the swaps of twins is still a flow of the same value and
    splits evenly over a class's members, so the merged network's max-flow is the same
    number: on a regular Clos, pods' leaves and core groups collapse and a 524,288-GPU
    flow runs over a few thousand nodes instead of ~1M switch pairs."""
    cls, c_a, c_b, c_gbps = twins
    alone = np.zeros(g.n, dtype=bool) if keep_switch is None else ~keep_switch
    lost = np.zeros(0, dtype=np.int64) if keep_link is None else np.nonzero(~keep_link)[0]
    alone[g.a[lost]] = True
    alone[g.b[lost]] = True
    first, sub = row_groups(cls, w_a, w_b, np.where(alone, np.arange(g.n), -1))
    size = np.bincount(sub)
    sub_cls = cls[first]
    dead = np.zeros(first.size, dtype=bool) if keep_switch is None else ~keep_switch[first]
    # every pair of sub-classes under a linked pair of classes: |C'| |D'| x the capacity
    by_cls = np.argsort(sub_cls, kind="stable")
    start = np.searchsorted(sub_cls[by_cls], np.arange(int(cls.max()) + 1))
    count = np.bincount(sub_cls, minlength=start.size)
    n_c, n_d = count[c_a], count[c_b]
    pairs = n_c * n_d
    edge = np.repeat(np.arange(c_a.size), pairs)
    offset = ranges(pairs)
    s_c = by_cls[start[c_a[edge]] + offset // n_d[edge]]
    s_d = by_cls[start[c_b[edge]] + offset % n_d[edge]]
    cap = size[s_c] * size[s_d] * c_gbps[edge] * ~(dead[s_c] | dead[s_d])
    ok = s_c != s_d
    rows, cols, caps = [s_c[ok]], [s_d[ok]], [cap[ok]]
    if lost.size:  # the lost links' capacity off their (lone) ends, both ways
        keep_ends = ~(dead[sub[g.a[lost]]] | dead[sub[g.b[lost]]])
        la, lb, lc = sub[g.a[lost]][keep_ends], sub[g.b[lost]][keep_ends], link_cap[lost][keep_ends]
        rows += [la, lb]
        cols += [lb, la]
        caps += [-lc, -lc]
    k = first.size
    src, snk = k, k + 1
    s_w = np.bincount(sub, weights=w_a, minlength=k).astype(np.int64)
    t_w = np.bincount(sub, weights=w_b, minlength=k).astype(np.int64)
    rows += [np.full(k, src), np.arange(k)]
    cols += [np.arange(k), np.full(k, snk)]
    caps += [s_w, t_w]
    r, c, d = np.concatenate(rows), np.concatenate(cols), np.concatenate(caps)
    m = csr_matrix((d, (r, c)), shape=(k + 2, k + 2))  # sums the duplicates (a lost link's pair)
    m.sum_duplicates()
    m.eliminate_zeros()
    if m.data.size and (m.data.max() > _INT32_MAX or m.data.min() < 0):
        raise OverflowError("capacity above 2^31 Gb/s between twin classes")
    m = csr_matrix((m.data.astype(np.int32), m.indices, m.indptr), shape=m.shape)
    return int(maximum_flow(m, src, snk, method="dinic").flow_value)  # type: ignore[arg-type]  # as _flow


def _digest(*masks: np.ndarray | None) -> bytes:
    """A 256-bit digest of the masks, their dtypes and shapes (None apart from every array):
    equal digests, equal inputs."""
    h = hashlib.blake2b(digest_size=32)
    for m in masks:
        h.update(b"-|" if m is None else f"+{m.dtype.str}{m.shape}|".encode())
        if m is not None:
            h.update(np.ascontiguousarray(m).tobytes())
    return h.digest()


def unit_graph(g: FabricGraph, keep_link: np.ndarray | None = None) -> csr_matrix:
    """The switch graph with capacity 1 per link, for counting edge-disjoint paths."""
    m = g.adjacency(np.ones(g.a.size, dtype=np.int64), keep_link)
    return csr_matrix((m.data.astype(np.int32), m.indices, m.indptr), shape=m.shape)


def pair_paths(unit: csr_matrix, s: int, t: int) -> int:
    """Edge-disjoint paths between two switches of a `unit_graph`."""
    return int(maximum_flow(unit, s, t, method="dinic").flow_value)  # type: ignore[arg-type]  # SciPy takes csr_matrix too; its stubs name only csr_array
