"""Max-flow across a cut of GPUs, on scipy's compiled Dinic.

The network's sparse structure (switch links both ways, a super source and sink
wired to every switch with GPUs) is built once; each cut or failure only rewrites
capacities in place. One flow on the 131,072-GPU plan's ~5k-switch, ~260k-link
graph then costs ~25 ms, so dozens of cuts and failure samples stay within seconds.
"""

from __future__ import annotations

import hashlib
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_flow

from ..plan.graph import FabricGraph

_INT32_MAX = 2**31 - 1


class FlowNetwork:
    def __init__(self, g: FabricGraph):
        self.g = g
        n = g.n
        self.src, self.snk = n, n + 1
        edge_sw = np.unique(g.at_switch)
        rows = np.concatenate([g.a, g.b, np.full(edge_sw.size, self.src), edge_sw])
        cols = np.concatenate([g.b, g.a, edge_sw, np.full(edge_sw.size, self.snk)])
        keys = rows * (n + 2) + cols
        uniq, inverse = np.unique(keys, return_inverse=True)
        self.shape = (n + 2, n + 2)
        self.indices = (uniq % (n + 2)).astype(np.int32)
        self.indptr = np.searchsorted(uniq // (n + 2), np.arange(n + 3)).astype(np.int32)
        m = g.a.size
        self.pos_fwd, self.pos_back = inverse[:m], inverse[m:2 * m]
        self.pos_src = inverse[2 * m:2 * m + edge_sw.size]
        self.pos_snk = inverse[2 * m + edge_sw.size:]
        self.edge_sw = edge_sw
        self.size = uniq.size
        self._answers: dict[bytes, int] = {}

    def _links_data(self, caps: np.ndarray, keep_link: np.ndarray | None) -> np.ndarray:
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

    def _flow(self, side_a: np.ndarray, side_b: np.ndarray, keep_link: np.ndarray | None,
              keep_switch: np.ndarray | None) -> int:
        g = self.g
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
