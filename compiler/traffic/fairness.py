"""Flow rates: max-min fair by progressive filling (Bertsekas & Gallager, Data Networks,
6.5.2), then calibrated to what transports give a flow that crosses several full links
(transport_rates, at the end of this file).

Every unfrozen flow's rate rises at the same pace until a link fills; the flows crossing
a full link freeze at their current rate; repeat until every flow is frozen. A flow that
is split over several paths (adaptive routing, Valiant) crosses a link with a weight
below 1, and a link fills when the sum of weight x rate reaches its capacity.

The flows x links incidence is held factorised, as a sum of terms, so that split routes
need not list every (flow, link) pair: term t maps flows to `classes` (flows that share a
route distribution, e.g. the same source and destination leaf) and then to links through
a chain of sparse non-negative matrices, load = W_k @ ... @ W_1 @ (per-class rate sums).
A per-flow route is the term with identity classes and one matrix.

Cost per round: two products through every term (the load of the rising flows, and which
flows cross the links that filled), O(nnz). Rounds = distinct bottleneck levels, usually
a few dozen; capped by MAX_ROUNDS as a guard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..plan.sparse import block_diag, csr_matrix
MAX_ROUNDS = 10_000
_REL_TOL = 1e-9  # a link within this fraction of its capacity is full
_SHRINK = 0.8  # shrink the problem once this fraction of the rising flows (or loaded links) is left


@dataclass
class Term:
    """load = chain[-1] @ ... @ chain[0] @ bincount(classes, flow rates)."""

    chain: list[csr_matrix]
    classes: np.ndarray | None = None  # per flow: its class (row of chain[0]'s columns); None = the flow itself

    def load(self, x: np.ndarray) -> np.ndarray:
        v = x if self.classes is None else np.bincount(self.classes, weights=x, minlength=self.chain[0].shape[1])
        for m in self.chain:
            v = m @ v
        return v

    def touches(self, links: np.ndarray) -> np.ndarray:
        """Per flow: the weight with which it crosses the marked links (> 0: it crosses one)."""
        v = links.astype(np.float64)
        for m in reversed(self.chain):
            v = m.T @ v
        return v if self.classes is None else v[self.classes]

    def restrict(self, flows: np.ndarray, links: np.ndarray) -> Term:
        """The same term over a subset of flows (sorted indices) and links (indices); every
        flow (as many as there are) keeps the columns as they are."""
        last = _rows(self.chain[-1], links)
        if self.classes is None:
            first = last if len(self.chain) == 1 else self.chain[0]
            if flows.size != first.shape[1]:
                first = first[:, flows]
            chain = [first] if len(self.chain) == 1 else [first, *self.chain[1:-1], last]
            return Term([c.tocsr() for c in chain])
        return Term([*self.chain[:-1], last.tocsr()], self.classes[flows])


def _rows(m: csr_matrix, rows: np.ndarray) -> csr_matrix:
    """m[rows]. Where the rows hold every entry of m, in order (the links a routed flow
    crosses, when every flow is routed), the entries are shared, not copied: the result
    differs from m only in its row pointers."""
    if rows.size and m.nnz:
        start, end = m.indptr[rows], m.indptr[1:][rows]  # the view: no rows + 1 array
        if start[0] == 0 and end[-1] == m.nnz and np.array_equal(end[:-1], start[1:]):
            return csr_matrix((m.data, m.indices, np.r_[start, m.nnz]), shape=(rows.size, m.shape[1]))
    return m[rows]


@dataclass
class Incidence:
    n_flows: int
    n_links: int
    terms: list[Term] = field(default_factory=list)

    def load(self, x: np.ndarray) -> np.ndarray:
        if not self.terms:
            return np.zeros(self.n_links)
        out = np.asarray(self.terms[0].load(x), dtype=np.float64)  # a product: added into, no zeros first
        if out is x:  # a term of no matrix hands x back: never add into the caller's array
            out = out.copy()
        for t in self.terms[1:]:
            out += t.load(x)
        return out

    def touches(self, links: np.ndarray) -> np.ndarray:
        out = np.zeros(self.n_flows)
        for t in self.terms:
            out += t.touches(links)
        return out

    def restrict(self, flows: np.ndarray, links: np.ndarray) -> Incidence:
        return Incidence(flows.size, links.size, [t.restrict(flows, links) for t in self.terms])

    def on_links_crossed(self) -> tuple[Incidence, np.ndarray]:
        """The same incidence over only the links a route crosses (rows with entries, in
        order) and those links: the rates of a filling are the same (it never reads the other
        links), and a problem of a few thousand flows on a fabric of millions of links costs
        no pass over every link."""
        used = np.zeros(self.n_links, dtype=bool)
        for t in self.terms:
            if getattr(t.chain[-1], "format", None) != "csr" or t.chain[-1].shape[0] != self.n_links:
                raise TypeError("a term's last matrix must be links x columns in CSR")  # its indptr is read per link
            ptr = t.chain[-1].indptr
            used |= ptr[1:] != ptr[:-1]
        links = np.flatnonzero(used)
        return self.restrict(np.arange(self.n_flows), links), links


def flows_on_links(n_links: int, flow: np.ndarray, link: np.ndarray, weight: np.ndarray | None = None,
                   n_flows: int | None = None) -> csr_matrix:
    """A links x flows matrix from (flow, link, weight) triples; repeated pairs add up."""
    n_flows = int(flow.max()) + 1 if n_flows is None else n_flows
    w = np.ones(flow.size) if weight is None else weight
    m = csr_matrix((w, (link, flow)), shape=(n_links, n_flows))
    m.sum_duplicates()
    return m


def _crossing(inc: Incidence, links: np.ndarray, entry_link: np.ndarray | None = None) -> np.ndarray:
    """Per flow: does it cross one of the marked links (inc.touches(links) > 0). Where every
    flow has one route (one links x flows matrix) the flows are read off the marked rows
    alone: a filling round marks a few links, and a product would visit every entry. A round
    that marks many links reads every entry's link instead (`entry_link`: entry_links)."""
    if not single_path(inc):
        return inc.touches(links) > 1e-12
    m = inc.terms[0].chain[0]
    out = np.zeros(inc.n_flows, dtype=bool)
    rows = np.flatnonzero(links)
    if entry_link is not None and rows.size * 4 > links.size:
        out[m.indices[links[entry_link]]] = True
        return out
    pos = _row_entries(m, rows)
    out[m.indices[pos[m.data[pos] > 1e-12]]] = True
    return out


def _row_entries(m: csr_matrix, rows: np.ndarray) -> np.ndarray:
    """Positions of the entries of the given rows, row after row, each row's in order."""
    start, count = m.indptr[rows], np.diff(m.indptr)[rows]
    return np.repeat(start - np.cumsum(count) + count, count) + np.arange(int(count.sum()))


def entry_links(inc: Incidence) -> np.ndarray | None:
    """Per entry of a single-path incidence's matrix: its row (link), for _crossing's
    many-links read; None where that read does not apply (split routes, or an entry whose
    weight is too small to count as crossing)."""
    if not single_path(inc):
        return None
    m = inc.terms[0].chain[0]
    if np.any(m.data <= 1e-12):
        return None
    return np.repeat(np.arange(m.shape[0], dtype=m.indices.dtype), np.diff(m.indptr))


def max_min_rates(inc: Incidence, cap: np.ndarray, active: np.ndarray | None = None,
                  weight: np.ndarray | None = None, level_tol: float = 0.0,
                  groups: Groups | None = None) -> np.ndarray:
    """Max-min fair rate of every flow (same unit as `cap`); flows not `active` (no route)
    get 0 and take nothing. `weight`: weighted max-min, a rising flow's rate grows at its
    weight's pace (default 1 for all). `level_tol`: links that would fill within this
    fraction above the round's level fill in that round (their flows freeze up to that
    fraction low): weights spread the fill levels over thousands of distinct values, and
    grouping them keeps the rounds to a few hundred. As flows freeze, the problem is shrunk
    to the rising flows and the links that are not full (each time a fifth of the flows have
    frozen), so late rounds, which settle few flows, cost little.
    `groups`: independent problems in one incidence (the phases of a pattern, stacked by
    stack_incidences): each round every group steps to its own next bottleneck, so each
    gets the rates it would get alone, in as many rounds as its slowest group needs
    rather than the sum of all of theirs."""
    part = routed_part(inc, active)
    return _fill(inc, np.asarray(cap, dtype=np.float64)[part.links], part, weight, level_tol, groups)


@dataclass(frozen=True)
class RoutedPart:
    """What a filling runs on: the routed flows, the links they cross, the incidence
    restricted to those, and per link of the whole incidence how many routed flows cross it."""

    flows: np.ndarray
    links: np.ndarray
    sub: Incidence
    crossing: np.ndarray

    @cached_property
    def least_entry(self) -> float:
        """Where every flow has one route: the least weight with which a routed flow crosses
        a link; 0 where some routed flow crosses none, or routes are split."""
        if not single_path(self.sub):
            return 0.0
        m = self.sub.terms[0].chain[0]
        if not m.nnz or np.bincount(m.indices, minlength=m.shape[1]).min(initial=1) == 0:
            return 0.0
        return float(m.data.min())

    @cached_property
    def entry_link(self) -> np.ndarray | None:
        """entry_links of sub, built once for every filling that starts from this part."""
        return entry_links(self.sub)


def routed_part(inc: Incidence, active: np.ndarray | None) -> RoutedPart:
    """Only the links some routed flow crosses can fill: the rest (most of a large fabric's
    links in one phase) would cost every round a pass over them for nothing. Computed once
    for the fillings of transport_rates that run on the same flows."""
    flows = np.arange(inc.n_flows) if active is None else np.flatnonzero(active)
    # one per routed flow (every flow: the ones themselves, without counting into int64)
    each = np.ones(inc.n_flows) if flows.size == inc.n_flows else \
        np.bincount(flows, minlength=inc.n_flows).astype(np.float64)
    crossing = inc.load(each)
    links = np.flatnonzero(crossing > 0)
    return RoutedPart(flows, links, inc.restrict(flows, links), crossing)


def _fill(inc: Incidence, cap_links: np.ndarray, part: RoutedPart, weight: np.ndarray | None, level_tol: float,
          groups: Groups | None) -> np.ndarray:
    """max_min_rates on the routed part of the incidence (cap_links: the capacity of each
    of its links, as float64; not written to). With one group its per-group
    figures (step, level) are one-element arrays that broadcast over the links and flows:
    the same values as gathering them by group, without a pass over every link to do so."""
    rate = np.zeros(inc.n_flows)
    one = groups is None or groups.count == 1
    count = 1 if groups is None else groups.count
    flows, links, sub = part.flows, part.links, part.sub
    w = np.ones(flows.size) if weight is None else np.asarray(weight, dtype=np.float64)
    if w.size != flows.size:  # every flow routed: its weights as they are (w is never written)
        w = w[flows]
    # per flow and link: its group (none with one group, whose figures broadcast)
    flow_group = link_group = np.zeros(0, dtype=np.int64)
    if not one:
        assert groups is not None
        flow_group, link_group = groups.flow[flows], groups.link[links]
    room = cap_links.copy()
    rising = np.ones(flows.size, dtype=bool)
    n_rising = flows.size
    level = np.zeros(count)  # per group: how far its filling has risen (rate of a weight-1 flow still rising)
    cap_tol = room * _REL_TOL
    ratio = np.empty(room.size)
    full_buf = np.empty(room.size, dtype=bool)
    starts: np.ndarray | None = None  # where each group's links begin
    entry: np.ndarray | None = None  # per entry of sub's matrix, its link (_crossing's many-links read)
    # > 1e-12: every rising flow adds at least this much to the pace of each link it crosses
    # (entry weight x flow weight, a sum of non-negative terms), so each crosses a moving link
    floor = part.least_entry * float(w.min()) if w.size and part.least_entry > 1e-12 else 0.0
    for _ in range(MAX_ROUNDS):
        if not n_rising:
            return rate
        every = n_rising == rising.size
        pace = sub.load(w if every else np.where(rising, w, 0.0))  # load added per unit of step
        moving = pace > 1e-12
        n_moving = int(np.count_nonzero(moving))
        if n_moving < moving.size:  # the links that do not move never bound the step
            ratio.fill(np.inf)
            np.divide(room, pace, out=ratio, where=moving)
        else:
            np.divide(room, pace, out=ratio)
        step = np.full(count, np.inf)
        if starts is None:  # links stay in group order (stacked so, and every subset keeps it)
            if one:
                starts = np.zeros(min(1, links.size), dtype=np.int64)
            else:
                starts = np.flatnonzero(np.r_[True, link_group[1:] != link_group[:-1]]) if link_group.size \
                    else link_group
        if starts.size:
            least = np.minimum.reduceat(ratio, starts)
            if one:
                step[:] = least
            else:
                step[link_group[starts]] = least
        bounded = np.isfinite(step)
        if not (bounded[0] if one else np.all(bounded[flow_group[rising]])):
            raise AssertionError("a routed flow crosses no capacitated link")  # unbounded, which a route never is
        step = np.maximum(0.0, np.where(bounded, step, 0.0))
        if flows.size == rate.size and one:  # every flow, in order: no gather and scatter
            np.add(rate, step * w, out=rate, where=True if every else rising)
        elif every:
            rate[flows] += (step if one else step[flow_group]) * w
        else:
            rate[flows[rising]] += (step if one else step[flow_group[rising]]) * w[rising]
        # ratio (read above) is the scratch for the products: no new array per link per round
        np.multiply(step if one else step[link_group], pace, out=ratio)
        room -= ratio
        level += step
        tol = cap_tol
        if level_tol:  # cap_tol + pace * level * level_tol, in that order
            tol = np.multiply(pace, level if one else level[link_group], out=ratio)
            tol *= level_tol
            tol += cap_tol
        full = np.less_equal(room, tol, out=full_buf[:room.size])
        full &= moving
        if floor > 1e-12 and np.count_nonzero(full) == n_moving:
            return rate  # every moving link is full: every rising flow crosses one and freezes
        if entry is None and np.count_nonzero(full) * 4 > full.size:
            entry = part.entry_link if sub is part.sub else entry_links(sub)
        rising &= ~_crossing(sub, full, entry)
        n_rising = int(np.count_nonzero(rising))
        if n_rising and (n_rising < _SHRINK * rising.size or n_moving < _SHRINK * moving.size):
            # shrink to the rising flows and the links they load (none of them full)
            keep_links = np.flatnonzero(moving & ~full)
            keep_flows = np.flatnonzero(rising)
            sub = sub.restrict(keep_flows, keep_links)
            flows, links, w = flows[keep_flows], links[keep_links], w[keep_flows]
            starts, entry = None, None
            if not one:
                flow_group, link_group = flow_group[keep_flows], link_group[keep_links]
            room, cap_tol, ratio = room[keep_links], cap_tol[keep_links], ratio[:keep_links.size]
            rising = np.ones(flows.size, dtype=bool)
    raise AssertionError("progressive filling did not converge")


@dataclass(frozen=True)
class Groups:
    """Independent max-min problems held in one incidence: the group of each flow and of
    each link (a flow crosses only links of its own group)."""

    flow: np.ndarray
    link: np.ndarray
    count: int


def _shape(inc: Incidence) -> tuple:
    return tuple((len(t.chain), t.classes is None) for t in inc.terms)


def stack_incidences(incs: list[Incidence]) -> tuple[Incidence, Groups] | None:
    """One incidence holding several per-flow (single-path) incidences, each its own copy of
    the links, flows numbered on, and which group every flow and link belongs to; None for
    split routes or terms of different shapes (then solve them one by one). Block-diagonal, so a link's row
    keeps its flows in the same order and its load sums in the same order."""
    if not incs or any(_shape(i) != _shape(incs[0]) for i in incs[1:]):
        return None
    if not all(single_path(i) for i in incs):  # split routes: few rounds, and phases may share their chains
        return None
    terms = []
    for t in range(len(incs[0].terms)):
        parts = [inc.terms[t] for inc in incs]
        chain = [csr_matrix(block_diag([p.chain[k] for p in parts], format="csr")) for k in range(len(parts[0].chain))]
        classes = None
        if parts[0].classes is not None:
            offsets = np.cumsum([0] + [p.chain[0].shape[1] for p in parts[:-1]])
            classes = np.concatenate([p.classes + off for p, off in zip(parts, offsets, strict=True)])
        terms.append(Term(chain, classes))
    n_flows = np.array([inc.n_flows for inc in incs])
    n_links = np.array([inc.n_links for inc in incs])
    ids = np.arange(len(incs))
    groups = Groups(np.repeat(ids, n_flows), np.repeat(ids, n_links), len(incs))
    return Incidence(int(n_flows.sum()), int(n_links.sum()), terms), groups


# A flow pinned to one path that crosses several shared, full links gets less than its
# max-min share: at each full queue it loses packets (NDP trims them; loss- and ECN-based
# transports back off) in proportion to its rate, so it is held back at every such link,
# not only at its tightest one, and competes there as a weaker flow. Measured with
# csg-htsim's NDP (841d9e7) on the fabrics and routes of tests/data/htsim (README
# "Traffic analysis"): the slowest ECMP flow was 2-18 % below its max-min share.
EXTRA_BOTTLENECK_WEIGHT = 0.85  # per full shared link beyond the first
WEIGHTED_LEVEL_TOL = 0.01  # the weighted filling groups fill levels within 1 % (rates up to 1 % low)


def single_path(inc: Incidence) -> bool:
    """Every flow has one route (ECMP, ftree): one term, flows as its own classes, one matrix."""
    return len(inc.terms) == 1 and inc.terms[0].classes is None and len(inc.terms[0].chain) == 1


def transport_rates(inc: Incidence, cap: np.ndarray, active: np.ndarray | None = None,
                    extra_weight: float = EXTRA_BOTTLENECK_WEIGHT, groups: Groups | None = None) -> np.ndarray:
    """What transports give each flow (same unit as `cap`): weighted max-min, where a
    single-path flow that crosses k full links it shares (at the max-min rates) competes
    with weight extra_weight^(k - 1). Flows alike in that respect still split a link evenly,
    and every link that max-min fills stays full. Split routes (adaptive spraying, Valiant)
    keep max-min: the simulator runs behind the calibration pinned every flow to one path.
    `groups`: independent problems stacked in one incidence (max_min_rates), each weighted
    only where it has such a flow, as it would be alone.
    Cost: two progressive fillings and two products through the incidence."""
    part = routed_part(inc, active)
    cap_links = np.asarray(cap, dtype=np.float64)[part.links]  # gathered once for both fillings
    rate = _fill(inc, cap_links, part, None, 0.0, groups)
    if not single_path(inc) or extra_weight >= 1:
        return rate
    live = np.ones(inc.n_flows, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    # on the routed part only: a link no routed flow crosses is not shared, and a flow
    # outside it is not live (its weight is never read)
    every = part.flows.size == inc.n_flows  # every flow routed, in order: no gather and scatter
    full = part.sub.load(rate if every else rate[part.flows]) >= cap_links * (1 - 1e-6)
    shared = (part.crossing > 1 + 1e-9)[part.links]  # the live flows' load: the same product
    # sub.touches(full & shared) read off the few marked rows: the same sums in the same
    # (link) order, without a product through every entry
    m = part.sub.terms[0].chain[0]
    pos = _row_entries(m, np.flatnonzero(full & shared))
    sums: np.ndarray = np.bincount(m.indices[pos], weights=m.data[pos], minlength=part.flows.size)
    crossed = sums
    if not every:
        crossed = np.zeros(inc.n_flows)
        crossed[part.flows] = sums
    held = live & (crossed > 1.5)
    if not np.any(held):
        return rate
    if groups is not None:  # only the groups with such a flow are weighted; the others keep max-min
        again = np.isin(groups.flow, np.unique(groups.flow[held]))
        weighted = max_min_rates(inc, cap, live & again, weight=extra_weight ** np.maximum(crossed - 1, 0),
                                 level_tol=WEIGHTED_LEVEL_TOL, groups=groups)
        return np.where(again, weighted, rate)
    # extra_weight ** max(crossed - 1, 0), raised only where crossed > 1 (x ** 0 is exactly 1)
    weight = np.ones(inc.n_flows)
    beyond = np.flatnonzero(crossed > 1)
    weight[beyond] = extra_weight ** (crossed[beyond] - 1)
    return _fill(inc, cap_links, part, weight, WEIGHTED_LEVEL_TOL, None)
