"""The routes OpenSM's fat-tree engine (`routing_engine ftree`) computes, in closed form.

Read from opensm/osm_ucast_ftree.c (linux-rdma/opensm; the Debian package here is 3.3.23)
and checked port for port against the LFTs OpenSM writes into the ibsim twin
(tests/test_traffic_ftree.py). ftree routes every compute node (CN) in turn: leaves in
index order, each leaf's CN ports in port order, then "dummy" CNs up to the largest CN
count of any leaf (so partly filled leaves weigh like full ones). For the k-th of those
entries of leaf A:

- main path up: A's up port groups (one per upper switch, by index) are taken round robin
  (the least `counter_down`, ties by index), group k mod G; inside the group its ports
  round robin, port (k div G) mod m. The upper switch s* routes the CN down that cable.
- three tiers: s* takes its up groups (cores) round robin the same way over the entries
  it carries, so each CN has one core c*; c* routes down the chosen s* cable.
- every other switch reaches the CN through s* (two tiers: every leaf goes up to s*) or
  through c* (three tiers: a leaf B goes up to the spine of its pod in c*'s plane, that
  spine up to c*). Which of the parallel cables: the upper switch keeps a `counter_up`
  per cable toward each lower switch and hands out the least used, so B's cable is number
  (entries before this one routed through that upper switch toward B, not B's own) mod m.

So ftree is destination-routed: all traffic to a CN funnels through one spine (two tiers)
or one core (three), spread over spines/cores by the CN's position on its leaf, which is
why shift permutations in CN order run contention free on a full fat tree. Queue pairs do
not spread (routing is by destination LID). After a failure OpenSM recomputes on the
degraded fabric: the model applies the same rules to the live cables; a leaf that lost
every cable to the spine a CN goes through is routed by ftree's secondary paths, modelled
as the next upper switch in OpenSM's order (noted as approximate in the result).

Cost O(CNs + switches x radix); no per-destination tables (a 131,072-CN fabric would need
a billion LFT entries).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..plan.columns import ranges
from .clos import ClosRoutes, NotClos
from ..plan.guids import device_guids
from ..topology import is_tree


def _cumcount(keys: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same key."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    start = np.r_[0, np.flatnonzero(sk[1:] != sk[:-1]) + 1]
    counts = np.diff(np.r_[start, sk.size])
    out = np.empty(keys.size, dtype=np.int64)
    out[order] = ranges(counts)
    return out


def _count_before(entry_keys: np.ndarray, keys: np.ndarray, positions: np.ndarray, n: int) -> np.ndarray:
    """For each query (key, position): how many entries before that position have that key."""
    code = np.sort(entry_keys.astype(np.int64) * n + np.arange(entry_keys.size))
    q = keys.astype(np.int64) * n
    return np.searchsorted(code, q + positions) - np.searchsorted(code, q)


class FtreeRoutes:
    def __init__(self, clos: ClosRoutes):
        self.c = clos
        f = clos.f
        if not is_tree(f.plan.view.design.topology):
            raise NotClos("ftree routes are modelled for fat-tree and rail-optimized Clos fabrics")
        self.tiers = clos.top
        g = f.graph
        # CN entries in ftree's processing order; extra endpoints (UFM) are CAs, not CNs
        leaf_of_at = g.at_switch
        cn = g.at_is_gpu_server & f.link_alive[g.at_link] & f.switch_alive[leaf_of_at]
        port = f.plan.links.b_port[g.at_link]
        has_cn = np.zeros(g.n, dtype=bool)
        has_cn[leaf_of_at[cn]] = True
        no_up = has_cn & (np.bincount(clos.lo[clos.alive], minlength=g.n) == 0)
        if self.tiers > 1 and no_up.any():
            name = f.plan.devices[int(g.device_of[np.flatnonzero(no_up)[0]])].name
            raise NotClos(f"{name} has compute nodes but no live uplink: OpenSM's ftree cannot build its tables "
                          "(it falls back to updn)")
        self.index = self._indexing(has_cn)
        leaves = self._leaf_order(has_cn)
        stranded = np.flatnonzero(has_cn & (self.index >= g.n))
        if stranded.size:
            name = f.plan.devices[int(g.device_of[stranded[0]])].name
            raise NotClos(f"{name} has compute nodes but no live path up to the other leaves: OpenSM's ftree "
                          "cannot build its tables (it falls back to updn)")
        self.leaves = leaves
        pos = np.full(g.n, -1, dtype=np.int64)
        pos[leaves] = np.arange(leaves.size)
        per_leaf = np.bincount(pos[leaf_of_at[cn]], minlength=leaves.size)
        max_cn = int(per_leaf.max()) if per_leaf.size else 0
        order = np.lexsort((port[cn], pos[leaf_of_at[cn]]))
        cn_link = g.at_link[cn][order]
        ep_of_link = np.full(len(f.plan.links), -1, dtype=np.int64)
        ep_of_link[f.ep_link] = np.arange(f.ep_link.size)
        # entries: every leaf gets max_cn slots; real CNs first, then dummies
        self.e_leaf = np.repeat(leaves, max_cn)
        self.e_k = np.tile(np.arange(max_cn), leaves.size)
        e_ep = np.full(self.e_leaf.size, -1, dtype=np.int64)
        slot = np.repeat(np.arange(leaves.size) * max_cn, per_leaf) + ranges(per_leaf)
        e_ep[slot] = ep_of_link[cn_link]
        self.e_ep = e_ep
        self.entry_of_ep = np.full(f.ep_link.size, -1, dtype=np.int64)
        real = e_ep >= 0
        self.entry_of_ep[e_ep[real]] = np.flatnonzero(real)
        self.max_cn = max_cn
        self._main_paths()

    # --- OpenSM's switch indexing ----------------------------------------------------------
    def _rank(self) -> np.ndarray:
        """ftree's rank: hops from the roots (the top tier, root.guids): top tier - tier."""
        return self.tiers - self.c.f.tier

    def _indexing(self, has_cn: np.ndarray) -> np.ndarray:
        """Every switch's position in ftree's index order (fabric_make_indexing): a BFS from
        the first leaf in OpenSM's switch table (keyed by node GUID as stored, i.e. in
        network byte order read as a little-endian integer), giving each newly seen switch
        the smallest free tuple one rank up or down, visiting port groups in port order.
        Switches are then ordered by tuple."""

        c, f = self.c, self.c.f
        g = f.graph
        rank = self._rank()
        leaf_rank = self.tiers - 1
        key = f.plan.memo("ib_device_guids", device_guids)[g.device_of].astype(np.uint64).byteswap()
        leaves = np.flatnonzero(has_cn & f.switch_alive)
        if leaves.size == 0:
            raise NotClos("no leaf switch with compute nodes")
        first = int(leaves[np.argmin(key[leaves])])
        L = f.plan.links
        # port groups per switch in port order: the remote switch of each live cable, first seen first
        k = np.flatnonzero(c.alive)
        ends = [(c.lo[k], c.hi[k], L.a_port[g.link[k]]), (c.hi[k], c.lo[k], L.b_port[g.link[k]])]
        sw = np.concatenate([e[0] for e in ends])
        remote = np.concatenate([e[1] for e in ends])
        port = np.concatenate([e[2] for e in ends])
        order = np.lexsort((port, sw))
        sw, remote = sw[order], remote[order]
        # each switch's remote switches, first seen first (in port order)
        first_seen = np.sort(np.unique(sw * g.n + remote, return_index=True)[1])
        gs, gr = sw[first_seen], remote[first_seen]
        bounds = np.searchsorted(gs, np.arange(g.n + 1))
        groups = {int(x): gr[bounds[x]:bounds[x + 1]].tolist() for x in np.unique(gs).tolist()}
        tuples: dict[int, tuple[int, ...]] = {}
        taken: set[tuple[int, ...]] = set()
        # per tuple with its varying digit left out: every digit below this one is taken
        # (tuples are only ever added), so the search resumes there instead of at 0
        next_free: dict[tuple, int] = {}
        width = 8  # FTREE_TUPLE_LEN

        def assign(switch: int, t: tuple[int, ...]) -> None:
            tuples[switch] = t
            taken.add(t)

        def new_tuple(frm: tuple[int, ...], down: bool) -> tuple[int, ...]:
            t = list(frm)
            var = frm[0] + 1 if down else frm[0]
            t[0] = frm[0] + 1 if down else frm[0] - 1
            hint = (var, *t[:var], *t[var + 1:])
            for i in range(next_free.get(hint, 0), 255):
                t[var] = i
                if tuple(t) not in taken:
                    next_free[hint] = i + 1
                    return tuple(t)
            raise NotClos("more than 255 ports in one direction: ftree cannot index the fabric")

        assign(first, tuple([leaf_rank] + [0] * leaf_rank + [255] * (width - 1 - leaf_rank)))
        queue = [first]
        head = 0
        while head < len(queue):
            x = queue[head]
            head += 1
            for r in groups.get(x, []):
                down = rank[r] > rank[x]
                if down and rank[x] >= leaf_rank:
                    continue
                if not down and rank[x] == 0:
                    continue
                if r not in tuples:
                    assign(r, new_tuple(tuples[x], down))
                    queue.append(r)
        index = np.full(g.n, g.n, dtype=np.int64)  # unindexed switches last
        ordered = sorted(tuples, key=tuples.__getitem__)
        index[ordered] = np.arange(len(ordered))
        return index

    def _leaf_order(self, has_cn: np.ndarray) -> np.ndarray:
        """ftree's leaf array: switches of leaf rank in index order, from the first to the
        last that has CNs (one without CNs in between routes only dummies)."""
        rank = self._rank()
        cand = np.flatnonzero((rank == self.tiers - 1) & self.c.f.switch_alive & (self.index < self.c.f.graph.n))
        cand = cand[np.argsort(self.index[cand], kind="stable")]
        real = np.flatnonzero(has_cn[cand])
        return cand[real[0]:real[-1] + 1] if real.size else cand[:0]

    # --- groups of cables from a lower switch to each upper switch, in OpenSM's order ----
    def _up_groups(self, lower: np.ndarray):
        """For each lower switch: its live up cables grouped by upper switch (by index),
        ports in port order. Returns per lower: group count, and a lookup
        (lower, group number, port number) -> switch link."""
        c = self.c
        L = c.f.plan.links
        sel = c.alive & np.isin(c.lo, lower)
        k = np.flatnonzero(sel)
        k = k[np.lexsort((L.a_port[c.f.graph.link[k]], self.index[c.hi[k]], c.lo[k]))]
        lo, hi = c.lo[k], c.hi[k]
        new_group = np.r_[True, (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])] if k.size else np.zeros(0, dtype=bool)
        gid = np.cumsum(new_group) - 1  # global group id
        g_lo, g_hi = lo[new_group], hi[new_group]
        g_first = np.flatnonzero(new_group)
        g_size = np.diff(np.r_[g_first, k.size])
        g_rank = _cumcount(g_lo)  # group number within its lower switch
        n_groups = np.bincount(g_lo, minlength=c.f.graph.n)
        return {"links": k, "gid": gid, "g_lo": g_lo, "g_hi": g_hi, "g_first": g_first, "g_size": g_size,
                "g_rank": g_rank, "n_groups": n_groups}

    def _pick(self, groups, lower: np.ndarray, k: np.ndarray):
        """Round robin: entry number k at `lower` -> (upper switch, switch link)."""
        G = groups["n_groups"][lower]
        if np.any(G == 0):
            raise NotClos("a leaf or spine with CNs below it has no live uplink: ftree refuses such a fabric")
        # group ids of `lower` are contiguous and ordered by upper index
        base = np.searchsorted(groups["g_lo"], lower)
        gid = base + k % G
        port = (k // G) % groups["g_size"][gid]
        return groups["g_hi"][gid], groups["links"][groups["g_first"][gid] + port]

    def _main_paths(self) -> None:
        leaf_groups = self._up_groups(self.leaves)
        self.s_star, self.leaf_link = self._pick(leaf_groups, self.e_leaf, self.e_k)
        if self.tiers == 3:
            spines = np.unique(self.s_star)
            sg = self._up_groups(spines)
            r = _cumcount(self.s_star)  # entries before this one carried by the same spine
            self.c_star, self.spine_link = self._pick(sg, self.s_star, r)
        # plane of an upper switch: the spine itself (two tiers) or the cores it reaches (three)
        self.plane = self._plane_of(self.s_star)

    @cached_property
    def _spine_plane(self) -> np.ndarray:
        c = self.c
        n = c.f.graph.n
        plane = np.arange(n)
        if self.tiers == 3:
            sc = c.f.tier[c.lo] == 2
            first_core = np.full(n, n, dtype=np.int64)
            np.minimum.at(first_core, c.lo[sc], c.hi[sc])
            plane = np.where(first_core < n, first_core, plane)
        return plane

    def _plane_of(self, spine: np.ndarray) -> np.ndarray:
        return self._spine_plane[spine]

    # --- paths -------------------------------------------------------------------------
    def routable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Per flow: it has a route (valley-free reach, and its destination is one of ftree's entries)."""
        return self.c.routable(src, dst) & (self.entry_of_ep[dst] >= 0)

    def paths(self, src: np.ndarray, dst: np.ndarray):
        """(flow, directed link) pairs of every flow's route, which flows are routed, and
        how many took a modelled secondary path."""
        c, f = self.c, self.c.f
        g = f.graph
        ok = self.routable(src, dst)
        flows = [np.flatnonzero(ok)] * 2
        links = [f.attach_out(src[ok]), f.attach_in(dst[ok])]
        B = f.ep_switch[src]
        x = self.entry_of_ep[dst]
        cross = np.flatnonzero(ok & (B != f.ep_switch[dst]))
        secondary = 0
        if cross.size:
            e = x[cross]
            b = B[cross]
            A = self.e_leaf[e]
            s_star = self.s_star[e]
            pods = c._pods
            if self.tiers == 3:
                same_pod = pods[b] == pods[A]
                z = s_star.copy()
                z[~same_pod] = c.planemate(s_star[~same_pod], pods[b[~same_pod]])
            else:
                same_pod = np.ones(cross.size, dtype=bool)
                z = s_star.copy()
            # B's cable up to z: (entries before e through z's plane toward B, not B's own) mod m
            plane = self.plane
            n_ent = self.e_leaf.size
            before = _cumcount(plane)[e]
            count_b = before - _count_before(self.e_leaf * (f.graph.n + 1) + plane, b * (f.graph.n + 1) + plane[e], e, n_ent)
            up_link, missing = self._cable(z, b, count_b)
            secondary += int(missing.sum())
            down_link = self.leaf_link[e]
            if missing.any() and self.tiers == 2:
                # leaves that lost every cable to some spine: ftree's secondary paths, and the
                # counters of their spines' cables, which the secondary routes share
                for leaf in np.unique(b[missing]).tolist():
                    sel = np.flatnonzero(b == leaf)
                    route, dlink = self._secondary_routes(leaf)
                    key = np.where(self.e_leaf == leaf, -1, route)
                    cnt = _count_before(key + 1, route[e[sel]] + 1, e[sel], n_ent)
                    z[sel] = route[e[sel]]
                    up_link[sel], _ = self._cable(z[sel], b[sel], cnt)
                    down_link = down_link.copy()
                    down_link[sel] = dlink[e[sel]]
            elif missing.any():
                # three tiers: secondary paths through other planes are not modelled; such flows
                # take a valley-free path (the first hashed one) and are counted as approximate
                fb = cross[missing]
                ff, fl, _ = c.ecmp_paths(src[fb], dst[fb], np.zeros(fb.size, dtype=np.int64), 0)
                flows_fb, links_fb = fb[ff], fl
                sel = ~missing
                cross, e, b, A, s_star, z, same_pod, up_link, down_link = (
                    v[sel] for v in (cross, e, b, A, s_star, z, same_pod, up_link, down_link))
                # their attachment hops come from the fallback walk
                drop = np.isin(flows[0], fb)
                flows = [flows[0][~drop], flows[1][~drop], flows_fb]
                links = [links[0][~drop], links[1][~drop], links_fb]
            hops_f = [cross, cross]
            hops_l = [2 * g.link[up_link], 2 * g.link[down_link] + 1]
            direct = same_pod & (z == s_star)
            other = np.flatnonzero(~direct)
            if other.size and self.tiers == 3:  # cross-pod: up to c*, down its cable to s*
                ee = e[other]
                cstar = self.c_star[ee]
                before_c = _cumcount(self.c_star)[ee]
                e_pod = pods[self.e_leaf] * (f.graph.n + 1) + self.c_star
                count_c = before_c - _count_before(e_pod, pods[b[other]] * (f.graph.n + 1) + cstar, ee, n_ent)
                cz, miss_c = self._cable(cstar, z[other], count_c)
                if miss_c.any():
                    raise NotClos("a core lost its cables to a spine ftree routes through; not modelled")
                hops_f += [cross[other], cross[other]]
                hops_l += [2 * g.link[cz], 2 * g.link[self.spine_link[ee]] + 1]
            flows += hops_f
            links += hops_l
        return np.concatenate(flows), np.concatenate(links), ok, secondary

    def _cable(self, upper: np.ndarray, lower: np.ndarray, count: np.ndarray):
        """The live cable number `count mod m` between upper and lower, in the upper
        switch's port order; and which pairs have none."""
        c = self.c
        L = c.f.plan.links
        n = c.f.graph.n
        sel = np.flatnonzero(c.alive)
        code = c.hi[sel] * n + c.lo[sel]
        order = np.lexsort((L.b_port[c.f.graph.link[sel]], code))
        code, sel = code[order], sel[order]
        want = np.where(upper >= 0, upper * n + lower, -1)
        lo_i, hi_i = np.searchsorted(code, want), np.searchsorted(code, want, side="right")
        m = hi_i - lo_i
        missing = m == 0
        idx = np.where(missing, 0, lo_i + count % np.maximum(m, 1))
        return np.where(missing, -1, sel[np.minimum(idx, sel.size - 1)]), missing

    def _secondary_routes(self, leaf: int) -> tuple[np.ndarray, np.ndarray]:
        """Two tiers, a leaf without cables to some spines: per entry, the spine the leaf
        goes up through (s*, or where it has no cable to s*, the CN leaf's next up group in
        its order after s* that reaches the leaf: ftree's secondary loop) and the cable that
        spine takes down to the CN's leaf (the secondary loop picks the CN leaf's least
        used port of that group: round robin like the main path)."""
        c = self.c
        n = c.f.graph.n
        linked = np.zeros(n, dtype=bool)
        up = c.alive & (c.lo == leaf)
        linked[c.hi[up]] = True
        route = self.s_star.copy()
        dlink = self.leaf_link.copy()
        need = np.flatnonzero(~linked[self.s_star] & (self.e_leaf != leaf))
        if need.size == 0:
            return route, dlink
        groups = self._up_groups(np.unique(self.e_leaf[need]))
        for ei in need.tolist():
            a, s_ = int(self.e_leaf[ei]), int(self.s_star[ei])
            base = int(np.searchsorted(groups["g_lo"], a))
            G = int(groups["n_groups"][a])
            uppers = groups["g_hi"][base:base + G].tolist()
            start = uppers.index(s_)
            for step in range(1, G):
                pos = (start + step) % G
                if linked[uppers[pos]]:
                    k = int(self.e_k[ei])
                    used = max(0, (k - pos + G - 1) // G)  # entries of this leaf before k on group pos
                    gid = base + pos
                    route[ei] = uppers[pos]
                    dlink[ei] = groups["links"][groups["g_first"][gid] + used % groups["g_size"][gid]]
                    break
            else:
                raise NotClos("a leaf shares no spine with a CN's leaf: ftree cannot route it")
        return route, dlink

