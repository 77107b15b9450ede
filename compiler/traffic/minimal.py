"""Minimal routes on a network without tiers: tori, meshes, rings and full meshes, switched
(servers on routers) or direct (the servers' or chips' own links, every node relaying).

- minimal: every flow takes the shortest paths between its two nodes, split evenly at every
  hop over the live links that bring it one hop closer (the ideal of minimal adaptive
  routing). On a torus the wraparound links count like any other, so a flow goes the short
  way round; on a full mesh it is the direct cable (or cables); on a ring the shorter arc,
  both arcs equally at n/2.
- dimension-order (torus and mesh only): the deterministic route of torus routers and TPU
  ICI: correct x first, then y, then z, each dimension the short way round (the positive
  direction on a tie), spread evenly over parallel cables.

A flow between two endpoints of one node (two servers on one router) crosses only their
attachment links. A direct network's endpoints have no attachment link: a node's own
links bound what it injects.

Cost: minimal: BFS per destination node (scipy, in chunks) and one pass per hop over the
(flow pair, node) fronts: O(pairs x nodes on their shortest paths); dimension-order:
O(flows x diameter).
"""

from __future__ import annotations


import numpy as np

from ..plan.columns import ranges
from ..plan.sparse import csr_matrix, dijkstra
from ..topology import TorusRecord
from .fabric import TrafficFabric
from .fairness import Term, flows_on_links

_DEST_CHUNK = 256  # destinations per BFS batch: nodes x chunk distances in memory


class MinimalRoutes:
    def __init__(self, fabric: TrafficFabric):
        self.f = fabric
        g = fabric.graph
        alive = fabric.switch_links_alive()
        k = np.flatnonzero(alive)
        # directed live links: a -> b is 2 * plan link, b -> a is 2 * plan link + 1
        tail = np.concatenate([g.a[k], g.b[k]])
        head = np.concatenate([g.b[k], g.a[k]])
        dlink = np.concatenate([2 * g.link[k], 2 * g.link[k] + 1])
        order = np.lexsort((dlink, tail))
        self.tail, self.head, self.dlink = tail[order], head[order], dlink[order]
        self.ptr = np.searchsorted(self.tail, np.arange(g.n + 1))
        self.adj = csr_matrix((np.ones(self.tail.size), (self.tail, self.head)), shape=(g.n, g.n))

    def _attach_terms(self, src: np.ndarray, dst: np.ndarray, ok: np.ndarray) -> list[Term]:
        f = self.f
        has = ok & (f.ep_link[src] >= 0) & (f.ep_link[dst] >= 0)
        if not has.any():
            return []
        idx = np.flatnonzero(has)
        return [Term([flows_on_links(f.n_links, np.concatenate([idx, idx]),
                                     np.concatenate([f.attach_out(src[idx]), f.attach_in(dst[idx])]), n_flows=src.size)])]

    def terms(self, src: np.ndarray, dst: np.ndarray) -> tuple[list[Term], np.ndarray]:
        """Incidence terms of the even split over shortest paths, and which flows have a route."""
        f = self.f
        sn, dn = f.ep_switch[src], f.ep_switch[dst]
        ok = f.ep_alive[src] & f.ep_alive[dst]
        cross = ok & (sn != dn)
        codes = sn[cross] * f.graph.n + dn[cross]
        pair_code, inv = np.unique(codes, return_inverse=True)
        ps, pd = np.divmod(pair_code, f.graph.n)
        rows, links, shares = [], [], []
        reached = np.ones(pair_code.size, dtype=bool)
        dests = np.unique(pd)
        for lo in range(0, dests.size, _DEST_CHUNK):
            chunk = dests[lo:lo + _DEST_CHUNK]
            col = np.searchsorted(chunk, pd)
            mine = np.flatnonzero(np.isin(pd, chunk))
            dist = self._distances(chunk, ps[mine], col[mine])
            r, l_, s_, ok_p = self._spread(mine, ps[mine], col, dist)
            rows.append(r)
            links.append(l_)
            shares.append(s_)
            reached[mine] = ok_p
        cls = np.full(src.size, pair_code.size, dtype=np.int64)  # extra class: no fabric hop
        cls[cross] = inv.reshape(-1)
        routed = ok & ~(cross & ~np.append(reached, True)[cls])
        terms = self._attach_terms(src, dst, routed)
        if pair_code.size:
            w = flows_on_links(f.n_links, np.concatenate(rows), np.concatenate(links), np.concatenate(shares),
                               n_flows=pair_code.size + 1)
            terms.append(Term([w], cls))
        return terms, routed

    def _distances(self, dests: np.ndarray, starts: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Hops from every node to each of `dests` (node x dest), searched no farther than
        the pairs need: a ring's neighbours are a hop or two apart, and a full search from
        4,096 destinations took seconds. Cables are alive in both directions together, so
        the distance from d equals the distance to d."""
        limit = 2
        dist = dijkstra(self.adj, directed=True, unweighted=True, indices=dests, limit=limit).T
        while limit < self.f.graph.n:
            short = np.unique(cols[~np.isfinite(dist[starts, cols])])  # destinations searched too near
            if not short.size:
                break
            limit *= 4
            dist[:, short] = dijkstra(self.adj, directed=True, unweighted=True, indices=dests[short], limit=limit).T
        return dist

    def _spread(self, pair: np.ndarray, start: np.ndarray, col: np.ndarray, dist: np.ndarray):
        """Push a unit of each pair from its start node toward its destination (column
        col[pair] of dist), evenly over the links one hop closer: (pair, directed link,
        share) triples and which pairs arrive."""
        arrive = np.isfinite(dist[start, col[pair]])
        mass: np.ndarray  # float shares; numpy's stubs type a weighted bincount as integers
        p, node, mass = pair[arrive], start[arrive], np.ones(int(arrive.sum()))
        c = col[p]
        out_p, out_l, out_s = [], [], []
        while p.size:
            deg = self.ptr[node + 1] - self.ptr[node]
            row = np.repeat(np.arange(p.size), deg)
            pos = np.repeat(self.ptr[node], deg) + ranges(deg)
            closer = dist[self.head[pos], c[row]] == dist[node[row], c[row]] - 1
            row, pos = row[closer], pos[closer]
            share = mass[row] / np.bincount(row, minlength=p.size)[row]
            out_p.append(p[row])
            out_l.append(self.dlink[pos])
            out_s.append(share)
            nxt = self.head[pos]
            going = dist[nxt, c[row]] > 0
            # merge the mass of a pair arriving at one node over several links
            key, inv = np.unique(p[row][going] * self.f.graph.n + nxt[going], return_inverse=True)
            mass = np.bincount(inv.reshape(-1), weights=share[going], minlength=key.size)
            p, node = np.divmod(key, self.f.graph.n)
            c = col[p]
        return (np.concatenate(out_p) if out_p else np.zeros(0, dtype=np.int64),
                np.concatenate(out_l) if out_l else np.zeros(0, dtype=np.int64),
                np.concatenate(out_s) if out_s else np.zeros(0), arrive)


class DimensionOrderRoutes:
    """Dimension-order routes on a torus or mesh without a twist: x first, then y, then z,
    each wrapped dimension the short way round (positive on a tie), spread evenly over the
    parallel cables between two neighbours. Nodes (routers, or chips of a direct torus) are
    in row-major order of `dims` (expand/torus.py)."""

    def __init__(self, minimal: MinimalRoutes):
        self.m = minimal
        f = minimal.f
        d = f.plan.view.design
        assert isinstance(d, TorusRecord), d.topology  # dimension order is a torus routing
        assert d.dims is not None and d.wrap is not None  # a torus's design always records both
        self.dims = tuple(int(k) for k in d.dims)
        self.wrap = tuple(bool(w) for w in d.wrap)
        n = f.graph.n
        if int(np.prod(self.dims)) != n:
            raise ValueError("the torus's nodes are not its switch graph's nodes")
        code = minimal.tail * n + minimal.head  # sorted by tail, then directed link
        order = np.argsort(code, kind="stable")
        self.code, self.code_link = code[order], minimal.dlink[order]

    def _hop(self, flow: np.ndarray, u: np.ndarray, v: np.ndarray):
        n = self.m.f.graph.n
        want = u * n + v
        lo, hi = np.searchsorted(self.code, want), np.searchsorted(self.code, want, side="right")
        cnt = hi - lo
        ok = cnt > 0
        rows = np.repeat(flow, cnt)
        links = self.code_link[np.repeat(lo, cnt) + ranges(cnt)]
        return rows, links, np.repeat(1.0 / np.maximum(cnt, 1), cnt), ok

    def terms(self, src: np.ndarray, dst: np.ndarray) -> tuple[list[Term], np.ndarray]:
        f = self.m.f
        sn, dn = f.ep_switch[src], f.ep_switch[dst]
        ok = f.ep_alive[src] & f.ep_alive[dst]
        moving = np.flatnonzero(ok & (sn != dn))
        cur = np.array(np.unravel_index(sn[moving], self.dims))  # axis x flows
        goal = np.array(np.unravel_index(dn[moving], self.dims))
        rows, links, shares = [], [], []
        broken = np.zeros(moving.size, dtype=bool)
        for axis, (k, wrap) in enumerate(zip(self.dims, self.wrap, strict=True)):
            delta = (goal[axis] - cur[axis]) % k if wrap else goal[axis] - cur[axis]
            step = np.where(delta > 0, 1, -1)
            count = np.abs(delta)
            if wrap:
                back = delta > k // 2  # shorter the negative way; a tie at k/2 goes positive
                step = np.where(back, -1, 1)
                count = np.where(back, k - delta, delta)
            for _ in range(int(count.max(initial=0))):
                go = count > 0
                u = np.ravel_multi_index(tuple(cur[:, go]), self.dims)
                cur[axis, go] = (cur[axis, go] + step[go]) % k
                v = np.ravel_multi_index(tuple(cur[:, go]), self.dims)
                r, l_, s_, hop_ok = self._hop(moving[go], u, v)
                broken[np.flatnonzero(go)[~hop_ok]] = True
                rows.append(r)
                links.append(l_)
                shares.append(s_)
                count = count - go
        routed = ok.copy()
        routed[moving[broken]] = False  # a dead cable on its only route: dimension order has no detour
        terms = self.m._attach_terms(src, dst, routed)
        if rows:
            r, l_, s_ = np.concatenate(rows), np.concatenate(links), np.concatenate(shares)
            keep = routed[r]
            if keep.any():
                terms.append(Term([flows_on_links(f.n_links, r[keep], l_[keep], s_[keep], n_flows=src.size)]))
        return terms, routed
