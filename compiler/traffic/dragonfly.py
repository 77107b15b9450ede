"""Routes over a dragonfly (Kim, Dally, Scott, Abts, ISCA 2008) and a Dragonfly+ (groups
that are leaf/spine): minimal, Valiant and UGAL-style.

- minimal: inside a group, the shortest local paths; between groups, one global hop: the
  flow is spread evenly over the live global cables joining its two groups, reaching the
  cable's router by the shortest local path and leaving the far end the same way.
- valiant: every flow between groups detours through an intermediate group (any group but
  its own two that has live cables from the source group and to the destination group),
  spread evenly over them (the ideal of Valiant's random choice): two global hops, but any
  group-to-group pattern is spread over every global cable.
- ugal: UGAL-G (Kim et al. 2008, section 4.2) with global knowledge of the offered loads
  under minimal routing: a flow takes Valiant when its minimal global cables are loaded
  more than twice the Valiant ones (the hop-count weighting H_min = 1, H_valiant = 2 global
  hops), decided once for all flows, else minimal.

Shortest local paths are split evenly at every hop (all-to-all groups: the direct cable;
Dragonfly+ groups: leaf to leaf over every spine, spine to spine over every leaf). A
flow's load is kept factorised by what it depends on: the source router and destination
group, the group pair, the destination router and source group, and for Valiant the three
groups of the detour (fairness.Term), so no path is enumerated per flow.

Cost: Python over routers x groups and group triples that flows use; fine for the
thousands of endpoints this is checked on (dragonfly-2k), slow for 100k+ endpoint
dragonflies with hundreds of groups (not benchmarked).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..plan.sparse import csr_matrix
from .fabric import TrafficFabric
from .fairness import Term, flows_on_links

UGAL_HOPS_RATIO = 2.0  # Valiant crosses two global cables where minimal crosses one


class DragonflyRoutes:
    def __init__(self, fabric: TrafficFabric):
        self.f = fabric
        g = fabric.graph
        plan = fabric.plan
        devs = plan.devices
        self.group = np.array([(devs[int(d)].pod or 1) - 1 for d in g.device_of], dtype=np.int64)
        self.groups = int(self.group.max()) + 1 if self.group.size else 0
        kind = np.array(plan.link_kinds, dtype=object)[plan.links.kind[g.link]]
        alive = fabric.switch_links_alive()
        self.local_nbr: dict[int, list[tuple[int, int]]] = defaultdict(list)  # switch -> (neighbour, directed link)
        loc = np.flatnonzero((kind == "local") & alive)
        for a, b, link in zip(g.a[loc].tolist(), g.b[loc].tolist(), g.link[loc].tolist(), strict=True):
            self.local_nbr[a].append((b, 2 * link))
            self.local_nbr[b].append((a, 2 * link + 1))
        glob = np.flatnonzero((kind == "global") & alive)
        # global cables per ordered group pair, both directions: (tail switch, head switch, directed link)
        self.global_links: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
        for a, b, link in zip(g.a[glob].tolist(), g.b[glob].tolist(), g.link[glob].tolist(), strict=True):
            ga, gb = int(self.group[a]), int(self.group[b])
            self.global_links[(ga, gb)].append((a, b, 2 * link))
            self.global_links[(gb, ga)].append((b, a, 2 * link + 1))
        self._intra: dict[tuple[int, int], dict[int, float] | None] = {}
        self._dist: dict[int, dict[int, int]] = {}

    # --- inside a group -----------------------------------------------------------------
    def _dist_to(self, v: int) -> dict[int, int]:
        if v not in self._dist:
            dist = {v: 0}
            frontier = [v]
            while frontier:
                nxt = []
                for w in frontier:
                    for y, _ in self.local_nbr[w]:
                        if y not in dist:
                            dist[y] = dist[w] + 1
                            nxt.append(y)
                frontier = nxt
            self._dist[v] = dist
        return self._dist[v]

    def intra(self, u: int, v: int) -> dict[int, float] | None:
        """Directed link -> share of a unit flow from switch u to switch v of one group,
        split evenly at every hop over the shortest local paths; None if v is cut off."""
        key = (u, v)
        if key not in self._intra:
            dist = self._dist_to(v)
            if u not in dist:
                self._intra[key] = None
                return None
            load: dict[int, float] = defaultdict(float)
            mass = {u: 1.0}
            while mass:
                nxt: dict[int, float] = defaultdict(float)
                for w, m in mass.items():
                    if w == v:
                        continue
                    hops = [(y, l) for y, l in self.local_nbr[w] if dist.get(y, -1) == dist[w] - 1]
                    for y, l in hops:
                        load[l] += m / len(hops)
                        nxt[y] += m / len(hops)
                mass = nxt
            self._intra[key] = dict(load)
        return self._intra[key]

    # --- parts of a route, each a column of link shares ------------------------------------
    def _ends(self, gs: int, gd: int) -> tuple[dict[int, float], dict[int, float], list[int]]:
        """Global cables from group gs to gd: share of a flow leaving from each tail
        switch, arriving at each head switch, and the directed links."""
        cables = self.global_links.get((gs, gd), [])
        tails: dict[int, float] = defaultdict(float)
        heads: dict[int, float] = defaultdict(float)
        for t, h, _ in cables:
            tails[t] += 1 / len(cables)
            heads[h] += 1 / len(cables)
        return tails, heads, [l for _, _, l in cables]

    def _mix(self, pairs: dict[tuple[int, int], float]) -> dict[int, float] | None:
        out: dict[int, float] = defaultdict(float)
        for (u, v), w in pairs.items():
            part = self.intra(u, v)
            if part is None:
                return None
            for l, s in part.items():
                out[l] += w * s
        return out

    def _part(self, kind: str, key: tuple) -> dict[int, float] | None:
        if kind == "local":  # (router u, router v) in one group
            return self.intra(*key)
        if kind == "src":  # (source router, destination group): to the tails of the cables
            r, gd = key
            tails = self._ends(int(self.group[r]), gd)[0]
            return self._mix({(r, t): w for t, w in tails.items()})
        if kind == "dst":  # (source group, destination router): from the heads of the cables
            gs, r = key
            heads = self._ends(gs, int(self.group[r]))[1]
            return self._mix({(h, r): w for h, w in heads.items()})
        if kind == "global":  # (group, group)
            links = self._ends(*key)[2]
            return {l: 1 / len(links) for l in links}
        # transit (gs, gi, gd): across the intermediate group, from heads of gs->gi to tails of gi->gd
        gs, gi, gd = key
        heads = self._ends(gs, gi)[1]
        tails = self._ends(gi, gd)[0]
        return self._mix({(h, t): wh * wt for h, wh in heads.items() for t, wt in tails.items()})

    def _term(self, kind: str, flow: list[int], keys: list[tuple], weight: list[float], n_flows: int) -> Term | None:
        if not flow:
            return None
        uniq = sorted(set(keys))
        index = {k: i for i, k in enumerate(uniq)}
        m = flows_on_links(len(uniq), np.asarray(flow, dtype=np.int64), np.array([index[k] for k in keys], dtype=np.int64),
                           np.asarray(weight, dtype=np.float64), n_flows=n_flows)
        rows, cols, vals = [], [], []
        for i, k in enumerate(uniq):
            part = self._part(kind, k) or {}
            rows += list(part)
            cols += [i] * len(part)
            vals += list(part.values())
        w = csr_matrix((np.asarray(vals, dtype=np.float64), (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
                       shape=(self.f.n_links, len(uniq)))
        return Term([m, w])

    # --- routings ---------------------------------------------------------------------------
    def _valiant_groups(self, gs: int, gd: int) -> list[int]:
        return [gi for gi in range(self.groups) if gi not in (gs, gd)
                and self.global_links.get((gs, gi)) and self.global_links.get((gi, gd))]

    def terms(self, routing: str, src: np.ndarray, dst: np.ndarray):
        f = self.f
        n = src.size
        rs, rd = f.ep_switch[src], f.ep_switch[dst]
        gs, gd = self.group[rs], self.group[rd]
        ok = f.ep_alive[src] & f.ep_alive[dst]
        valiant = np.zeros(n, dtype=bool)
        if routing in ("valiant", "ugal"):
            valiant = ok & (gs != gd)
        counts: dict[str, int] = {}
        if routing == "ugal":
            valiant &= self._ugal_picks(rs, rd, gs, gd, ok, f.ep_gbps[src])
            counts = {"ugal_valiant": int(valiant.sum()), "between_groups": int((ok & (gs != gd)).sum())}
        parts: dict[str, tuple[list, list, list]] = defaultdict(lambda: ([], [], []))

        def add(kind, i, key, w=1.0):
            fl, ks, ws = parts[kind]
            fl.append(i)
            ks.append(key)
            ws.append(w)

        for i in np.flatnonzero(ok).tolist():
            a, b, ga, gb = int(rs[i]), int(rd[i]), int(gs[i]), int(gd[i])
            if a == b:
                continue
            if ga == gb:
                if self.intra(a, b) is None:
                    ok[i] = False
                    continue
                add("local", i, (a, b))
            elif not valiant[i]:
                if not self.global_links.get((ga, gb)):
                    ok[i] = False
                    continue
                add("src", i, (a, gb))
                add("global", i, (ga, gb))
                add("dst", i, (ga, b))
            else:
                via = self._valiant_groups(ga, gb)
                if not via:
                    ok[i] = False
                    continue
                w = 1 / len(via)
                for gi in via:
                    add("src", i, (a, gi), w)
                    add("global", i, (ga, gi), w)
                    add("transit", i, (ga, gi, gb), w)
                    add("global", i, (gi, gb), w)
                    add("dst", i, (gi, b), w)
        attach = flows_on_links(f.n_links, np.concatenate([np.flatnonzero(ok)] * 2),
                                np.concatenate([f.attach_out(src[ok]), f.attach_in(dst[ok])]), n_flows=n)
        terms = [Term([attach])]
        for kind, (fl, ks, ws) in parts.items():
            t = self._term(kind, fl, ks, ws, n)
            if t is not None:
                terms.append(t)
        return terms, ok, counts

    def _ugal_picks(self, rs, rd, gs, gd, ok, gbps) -> np.ndarray:
        """Per flow: True where UGAL-G sends it through Valiant."""
        load: dict[tuple[int, int], float] = defaultdict(float)  # offered Gb/s per group pair under minimal
        cross = ok & (gs != gd)
        for a, b, w in zip(gs[cross].tolist(), gd[cross].tolist(), gbps[cross].tolist(), strict=True):
            load[(a, b)] += w
        cap = {k: sum(self.f.cap_gbps[l] for _, _, l in v) for k, v in self.global_links.items()}

        def q(pair):
            c = cap.get(pair, 0.0)
            return load.get(pair, 0.0) / c if c else float("inf")

        pick = np.zeros(rs.size, dtype=bool)
        memo: dict[tuple[int, int], bool] = {}
        for i in np.flatnonzero(cross).tolist():
            pair = (int(gs[i]), int(gd[i]))
            if pair not in memo:
                via = self._valiant_groups(*pair)
                q_val = np.mean([max(q((pair[0], gi)), q((gi, pair[1]))) for gi in via]) if via else float("inf")
                memo[pair] = q(pair) > UGAL_HOPS_RATIO * q_val
            pick[i] = memo[pair]
        return pick
