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

from .clos import ClosRoutes, NotClos, _ranges


def _cumcount(keys: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same key."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    start = np.r_[0, np.flatnonzero(sk[1:] != sk[:-1]) + 1]
    counts = np.diff(np.r_[start, sk.size])
    out = np.empty(keys.size, dtype=np.int64)
    out[order] = _ranges(counts)
    return out


class FtreeRoutes:
    def __init__(self, clos: ClosRoutes):
        self.c = clos
        f = clos.f
        if f.plan.design.get("topology") not in ("fat-tree", "rail-optimized"):
            raise NotClos("ftree routes are modelled for fat-tree and rail-optimized Clos fabrics")
        self.tiers = clos.top
        g = f.graph
        # CN entries in ftree's processing order; extra endpoints (UFM) are CAs, not CNs
        leaf_of_at = g.at_switch
        cn = g.at_is_gpu_server & f.link_alive[g.at_link] & f.switch_alive[leaf_of_at]
        port = f.plan.links.b_port[g.at_link]
        leaves = np.unique(leaf_of_at[cn])
        self.leaves = leaves
        per_leaf = np.bincount(np.searchsorted(leaves, leaf_of_at[cn]), minlength=leaves.size)
        max_cn = int(per_leaf.max()) if per_leaf.size else 0
        order = np.lexsort((port[cn], leaf_of_at[cn]))
        cn_link = g.at_link[cn][order]
        ep_of_link = np.full(len(f.plan.links), -1, dtype=np.int64)
        ep_of_link[f.ep_link] = np.arange(f.ep_link.size)
        # entries: every leaf gets max_cn slots; real CNs first, then dummies
        self.e_leaf = np.repeat(leaves, max_cn)
        self.e_k = np.tile(np.arange(max_cn), leaves.size)
        e_ep = np.full(self.e_leaf.size, -1, dtype=np.int64)
        slot = np.repeat(np.arange(leaves.size) * max_cn, per_leaf) + _ranges(per_leaf)
        e_ep[slot] = ep_of_link[cn_link]
        self.e_ep = e_ep
        self.entry_of_ep = np.full(f.ep_link.size, -1, dtype=np.int64)
        real = e_ep >= 0
        self.entry_of_ep[e_ep[real]] = np.flatnonzero(real)
        self.max_cn = max_cn
        self._main_paths()

    # --- groups of cables from a lower switch to each upper switch, in OpenSM's order ----
    def _up_groups(self, lower: np.ndarray):
        """For each lower switch: its live up cables grouped by upper switch (by index),
        ports in port order. Returns per lower: group count, and a lookup
        (lower, group number, port number) -> switch link."""
        c = self.c
        L = c.f.plan.links
        sel = c.alive & np.isin(c.lo, lower)
        k = np.flatnonzero(sel)
        k = k[np.lexsort((L.a_port[c.f.graph.link[k]], c.hi[k], c.lo[k]))]
        lo, hi = c.lo[k], c.hi[k]
        new_group = np.r_[True, (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])]
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
        c = self.c
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
    def paths(self, src: np.ndarray, dst: np.ndarray):
        """(flow, directed link) pairs of every flow's route, which flows are routed, and
        how many took a modelled secondary path."""
        c, f = self.c, self.c.f
        g = f.graph
        ok = c.routable(src, dst) & (self.entry_of_ep[dst] >= 0)
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
                mate = c._planemate
                z[~same_pod] = [mate.get((s, int(p)), -1) for s, p in zip(s_star[~same_pod].tolist(), pods[b[~same_pod]].tolist())]
            else:
                same_pod = np.ones(cross.size, dtype=bool)
                z = s_star
            # B's cable up to z: (entries before e through z's plane toward B, not B's own) mod m
            plane = self.plane
            before = _cumcount(plane)[e]
            leaf_rank = np.searchsorted(self.leaves, b)
            a_rank = np.searchsorted(self.leaves, A)
            n_on_b = self._count_by_leaf_plane(leaf_rank, plane[e])
            count_b = before - np.where(leaf_rank < a_rank, n_on_b, 0)
            up_link, missing = self._cable(z, b, count_b)
            secondary += int(missing.sum())
            if missing.any():  # ftree's secondary path: the next upper switch of the CN's leaf in cyclic order
                up_link[missing], z[missing] = self._secondary(b[missing], A[missing], s_star[missing], e[missing])
                same_pod[missing] = True  # the secondary upper switch routes straight down to the CN's leaf
            hops_f = [cross, cross]
            hops_l = [2 * g.link[up_link], 2 * g.link[self.leaf_link[e]] + 1]
            direct = same_pod & (z == s_star)
            other = np.flatnonzero(~direct)
            if other.size:
                if self.tiers != 3:
                    # a secondary spine (two tiers): it reaches A over its own cable
                    sl = self._down_cable(z[other], A[other])
                    hops_l[1] = hops_l[1].copy()
                    hops_l[1][other] = 2 * g.link[sl] + 1
                else:
                    ee = e[other]
                    cstar = self.c_star[ee]
                    before_c = _cumcount(self.c_star)[ee]
                    pod_rank_b = pods[b[other]]
                    n_in_pod = self._count_by_pod_core(pod_rank_b, cstar)
                    count_c = before_c - np.where(pods[b[other]] < pods[A[other]], n_in_pod, 0)
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

    def _down_cable(self, upper, lower):
        link, missing = self._cable(upper, lower, np.zeros(upper.size, dtype=np.int64))
        if missing.any():
            raise NotClos("ftree secondary spine has no cable to the CN's leaf")
        return link

    def _secondary(self, b, A, s_star, e):
        """Leaf b has no cable to the CN's spine: OpenSM's secondary loop visits the CN
        leaf's other up groups in order after s*; the first with a cable to b routes it."""
        c = self.c
        groups = self._up_groups(np.unique(A))
        ups, links = [], []
        for bi, ai, si in zip(b.tolist(), A.tolist(), s_star.tolist()):
            base = np.searchsorted(groups["g_lo"], ai)
            uppers = groups["g_hi"][base:base + groups["n_groups"][ai]].tolist()
            start = uppers.index(si)
            for u in uppers[start + 1:] + uppers[:start]:
                link, miss = self._cable(np.array([u]), np.array([bi]), np.zeros(1, dtype=np.int64))
                if not miss[0]:
                    ups.append(u)
                    links.append(int(link[0]))
                    break
            else:
                raise NotClos("a leaf shares no spine with the CN's leaf: ftree cannot route it")
        return np.asarray(links, dtype=np.int64), np.asarray(ups, dtype=np.int64)

    def _count_by_leaf_plane(self, leaf_rank: np.ndarray, plane: np.ndarray) -> np.ndarray:
        """Entries of the leaf (by rank) whose spine is in `plane`."""
        n = self.c.f.graph.n
        key = np.repeat(np.arange(self.leaves.size), self.max_cn) * (n + 1) + self.plane
        uk, cnt = np.unique(key, return_counts=True)
        want = leaf_rank * (n + 1) + plane
        i = np.searchsorted(uk, want)
        i = np.minimum(i, uk.size - 1)
        return np.where(uk[i] == want, cnt[i], 0)

    def _count_by_pod_core(self, pod: np.ndarray, core: np.ndarray) -> np.ndarray:
        n = self.c.f.graph.n
        key = self.c._pods[self.e_leaf] * (n + 1) + self.c_star
        uk, cnt = np.unique(key, return_counts=True)
        want = pod * (n + 1) + core
        i = np.minimum(np.searchsorted(uk, want), uk.size - 1)
        return np.where(uk[i] == want, cnt[i], 0)
