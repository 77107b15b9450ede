"""Routes over a Clos (fat-tree, rail-optimized, rail-only and multi-plane sub-fabrics,
up to three tiers): static ECMP and adaptive routing (an even split at every hop).

Which next hops are equal cost: valley-free (up*, then down*), as eBGP computes in an
RFC 7938 fabric and as InfiniBand up/down routing allows. A switch x reaches an edge
switch e *downward* when a chain of live down links joins them (`down[x, e]`); it reaches
e *valley-free* when it reaches it downward or one of its live up links leads to a switch
that does (`reach[x, e]`). A flow at x bound for e takes, if x reaches e downward, the
live down links whose far end does; otherwise the live up links whose far end reaches e.
After a failure this is the set BGP converges to (a spine that lost its link to a leaf
stops advertising it, and AS-path loop detection keeps routes from bouncing back down),
not only shortest paths.

ECMP hash (documented, deterministic, seeded): each sub-flow (one queue pair of a
connection: NCCL_IB_QPS_PER_CONNECTION gives each QP its own UDP source port in RoCE,
hence its own hash) has a 64-bit key splitmix64(splitmix64(seed) ^ (src << 32 | dst << 8 | qp));
a switch picks next hop number (splitmix64(key ^ (device * 0x9E3779B97F4A7C15)) >> 33) mod
(live equal-cost next hops, in port order). The switch term gives every switch its own
hash, as switches' per-device hash seeds do, so choices do not polarise tier to tier.

Adaptive routing is modelled as its ideal: every switch spreads a flow evenly over the
same equal-cost next hops (packet spraying; what Spectrum-X and InfiniBand AR aim for).
The split is computed per (source edge, destination edge) pair and kept factorised
(fairness.Term) so a 3-tier fabric needs no per-path enumeration: above the leaves, the
mass a pair puts on spine y is keyed by (y, destination leaf) for the hop down to the leaf
and by (y, the spine of the destination pod in y's plane) for the spine-core-spine part,
which is where 3-tier Clos planes meet (core group j joins spine j of every pod).

Cost: reach matrices O(switches x classes of twin edge switches) bits (20,480 x 128 at 524,288 GPUs); ECMP
O(sub-flows x hops x radix); the spray O(pairs x radix + spines x pods x radix).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..plan.columns import distinct, equal_rows, present, ranges
from .fabric import TrafficFabric
from .fairness import Term, flows_on_links

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_CHUNK = 4_000_000  # candidate entries examined at once (bounds memory on 100k+ GPU fabrics)
# Grouping the down links (_down_groups) costs about this many candidate scans per down link:
# below that many scanned candidates, the hops down from the top tier are scanned instead
_SCAN_PER_GROUPED = 4


class NotClos(ValueError):
    """The fabric is not a layered Clos (a switch links to one of its own tier)."""


def splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea, Flood 2014), elementwise on uint64."""
    with np.errstate(over="ignore"):
        x = np.asarray(x, dtype=np.uint64)
        x = x ^ (x >> np.uint64(30))
        x = x * _M1
        x = x ^ (x >> np.uint64(27))
        x = x * _M2
        return x ^ (x >> np.uint64(31))


def flow_keys(src: np.ndarray, dst: np.ndarray, qp: np.ndarray, seed: int) -> np.ndarray:
    packed = (np.asarray(src, np.uint64) << np.uint64(32)) | (np.asarray(dst, np.uint64) << np.uint64(8)) | np.asarray(qp, np.uint64)
    return splitmix64(splitmix64(np.asarray(seed, dtype=np.uint64)) ^ packed)


def switch_choice(keys: np.ndarray, device: np.ndarray, count: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = splitmix64(keys ^ (np.asarray(device, np.uint64) * _GOLDEN))
    return ((h >> np.uint64(33)) % np.maximum(count, 1).astype(np.uint64)).astype(np.int64)


def _by_major(major: np.ndarray, n: int) -> np.ndarray:
    """major[_order(major, minor)] (major's values, non-negative and below n, in ascending
    order) by counting: a pass in order, where the gather by the permutation misses the
    cache on nearly every entry of a million links."""
    return np.repeat(np.arange(n, dtype=major.dtype), np.bincount(major, minlength=n))


def _order(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """np.lexsort((minor, major)) (by major, then minor, stable) through one combined key
    where it fits in 63 bits: no sort where the keys are in order already; where each key
    is one link's and they are few per link (a switch's port numbers), each link written at
    its key and read back in key order (linear: a stable argsort of a million links took
    twice as long); otherwise a stable argsort of the key (a fifth of lexsort's time)."""
    if not major.size:
        return np.zeros(0, dtype=np.int64)
    low = int(minor.min())
    span = int(minor.max()) - low + 1
    if int(major.min()) < 0 or (int(major.max()) + 1) * span >= 1 << 62:
        return np.lexsort((minor, major))
    key = np.asarray(major, dtype=np.int64) * span  # one fresh array, added into in place
    key += minor
    if low:
        key -= low
    # in order already (links by their lower end, in port order); a look at the first keys
    # spares the pass over all of them where they are not
    head = min(key.size, 1024)
    if bool(np.all(key[1:head] >= key[:head - 1])) and bool(np.all(key[1:] >= key[:-1])):
        return np.arange(key.size)
    size = (int(major.max()) + 1) * span
    if size <= 4 * key.size < 2**31:  # keys below a few per link: each link put at its key, read back in key order
        at = np.full(size, -1, dtype=np.int32)  # half the bytes of int64 in the pass that misses the cache
        at[key] = np.arange(key.size, dtype=np.int32)
        order = at[at >= 0]
        if order.size == key.size:  # every key once: the one order there is, argsort's
            return order
    return np.argsort(key, kind="stable")


def _stable_sorted(code: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """code and the columns (one value per code) in the stable order of code; as they are,
    with no sort and no gather, where code is in order already (the usual case)."""
    if code.size < 2 or bool(np.all(code[1:] >= code[:-1])):
        return (code, *columns)
    order = np.argsort(code, kind="stable")
    return (code[order], *(c[order] for c in columns))


_DIRECT_OR_WORDS = 4  # or_rows: rows of at most this many words are ORed without grouping equal sets


class BitRows:
    """A rows x cols boolean matrix packed 64 columns to a word. Reachability of every switch
    to every edge switch is switches x leaves: 168 million booleans at 524,288 GPUs, where a
    dense matrix and the float copy a sparse product needs cost gigabytes and seconds."""

    def __init__(self, rows: int, cols: int):
        self.cols = cols
        self.words = np.zeros((rows, max(1, (cols + 63) // 64)), dtype=np.uint64)

    @classmethod
    def of_words(cls, words: np.ndarray, cols: int) -> BitRows:
        """Rows already packed (a copy or a selection of another BitRows' words), held as they are."""
        out = cls(0, cols)
        out.words = words
        return out

    def copy(self) -> BitRows:
        return BitRows.of_words(self.words.copy(), self.cols)

    def set(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        bits = np.left_shift(np.uint64(1), (cols & 63).astype(np.uint64))
        np.bitwise_or.at(self.words, (rows, cols >> 6), np.where(values, bits, np.uint64(0)))

    def __getitem__(self, key: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        rows, cols = key
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols)
        # through the flat index a column past the last would read the next row's word, and a
        # negative row the last rows': refuse both
        if cols.size and (int(cols.min()) < 0 or int(cols.max()) >= self.cols):
            raise IndexError(f"BitRows column out of range 0..{self.cols - 1}")
        if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= self.words.shape[0]):
            raise IndexError(f"BitRows row out of range 0..{self.words.shape[0] - 1}")
        w = self.words.shape[1]  # a flat take: several times faster than a 2-d fancy index
        word = np.take(self.words.reshape(-1), rows * w + (cols >> 6))
        return ((word >> (cols & 63).astype(np.uint64)) & np.uint64(1)).astype(bool)

    def dense(self) -> np.ndarray:
        """The rows x cols booleans unpacked (rows x cols bytes)."""
        as_bytes = self.words.astype("<u8").view(np.uint8)  # word w's bit k: byte 8w + k // 8, bit k % 8
        return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :self.cols].astype(bool)

    def all_columns(self) -> np.ndarray:
        """Per row: every column set."""
        full = np.full(self.words.shape[1], np.iinfo(np.uint64).max, dtype=np.uint64)
        if self.cols % 64:
            full[-1] = np.uint64((1 << (self.cols % 64)) - 1)
        if self.cols == 0:
            full[:] = 0
        return np.all((self.words & full) == full, axis=1)

    def or_rows(self, target: np.ndarray, source: np.ndarray, chunk: int = 1 << 16, grouped: bool = False) -> None:
        """Row target[i] |= row source[i] for every i. No row may be both a target and a
        source (each call joins one tier to the next), so the order does not matter.
        Targets with the same set of sources (a core group's cores, a pod's leaves, the
        spines under one core group) get the same OR: it is computed once per set
        (columns.equal_rows), which at 524,288 GPUs is a few thousand rows of ~1M. Rows of a
        few words (the edge classes of EdgeBits) are ORed per target directly: finding the
        equal sets costs more passes over the pairs than the OR of a few words saves; there
        `grouped` (each target's pairs already together, as in a port order) skips the sort.
        A repeated pair (parallel links) ORs the same row twice."""
        direct = self.words.shape[1] <= _DIRECT_OR_WORDS
        if not (direct and grouped):
            cols = int(source.max(initial=0)) + 1
            target, source = np.divmod(distinct(target.astype(np.int64) * cols + source), cols)  # pairs once
        if not target.size:
            return
        first = np.flatnonzero(np.r_[True, target[1:] != target[:-1]])
        indptr = np.r_[first, target.size]
        if direct:  # every target its own class
            same = rep = np.arange(first.size)
            count, rep_sources = np.diff(indptr), source
        else:
            same = equal_rows(indptr, source)
            rep = np.unique(same, return_index=True)[1]  # per class, its first target
            count = np.diff(indptr)[rep]
            rep_sources = source[np.repeat(indptr[rep], count) + ranges(count)]
        starts = np.cumsum(count) - count
        result = np.empty((rep.size, self.words.shape[1]), dtype=self.words.dtype)
        lo = 0
        while lo < rep.size:  # about `chunk` source rows gathered at a time
            hi = max(lo + 1, int(np.searchsorted(starts, starts[lo] + chunk, side="right")))
            a, b = int(starts[lo]), int(starts[hi - 1] + count[hi - 1])
            result[lo:hi] = np.bitwise_or.reduceat(np.take(self.words, rep_sources[a:b], axis=0), starts[lo:hi] - a, axis=0)
            lo = hi
        self.words[target[first]] |= result[same]


class EdgeBits:
    """A switches x edge switches boolean matrix (down, reach) held as switches x edge classes:
    edge switches that are alive, in one pod, with the same live up neighbours (a pod's
    leaves of one rail group) are reached from every other switch alike, so they share one
    column (128 instead of 8,192 at 524,288 GPUs). Each edge's own bit (an edge reaches
    itself, where alive) is held apart: its row in `bits` says only what it reaches through
    other switches. x[rows, edges] reads like a dense matrix."""

    def __init__(self, bits: BitRows, edge_class: np.ndarray, edges: np.ndarray, own: np.ndarray):
        self.bits = bits  # switches x classes
        self.edge_class = edge_class  # per edge (index into edges): its column
        self.edges = edges
        self.own = own  # per edge: it reaches itself

    def copy(self) -> EdgeBits:
        return EdgeBits(self.bits.copy(), self.edge_class, self.edges, self.own)

    def __getitem__(self, key: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        rows, cols = key
        cols = np.asarray(cols)
        if cols.size and (int(cols.min()) < 0 or int(cols.max()) >= self.edges.size):  # -1 would read the last edge's
            raise IndexError(f"edge index out of range 0..{self.edges.size - 1}")
        return self.bits[rows, self.edge_class[cols]] | ((rows == self.edges[cols]) & self.own[cols])

    def dense(self) -> np.ndarray:
        """The switches x edges booleans unpacked."""
        out = self.bits.dense()[:, self.edge_class]
        out[self.edges, np.arange(self.edges.size)] |= self.own
        return out

    def all_columns(self) -> np.ndarray:
        """Per row: every edge set."""
        out = self.bits.all_columns()
        sizes = np.bincount(self.edge_class, minlength=self.bits.cols)
        alone = self.own & (sizes[self.edge_class] == 1)  # its own bit fills its column
        if alone.any():
            rows = BitRows.of_words(self.bits.words[self.edges[alone]], self.bits.cols)  # a selection: a copy
            rows.set(np.arange(int(alone.sum())), self.edge_class[alone], np.ones(int(alone.sum()), dtype=bool))
            out[self.edges[alone]] = rows.all_columns()
        return out

    def counts(self, rows: np.ndarray, in_pod: np.ndarray, pods: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row: how many edges it holds, and how many of those are in pod in_pod[i]
        (pods: per edge). Each byte of a row's words is looked up in a table of the edges its
        set bits stand for (a column is a class of edges): 8 bytes a word, no row unpacked."""
        sizes = np.bincount(self.edge_class, minlength=self.bits.cols).astype(np.int64)
        class_pod = np.full(self.bits.cols, -1, dtype=np.int64)
        class_pod[self.edge_class] = pods
        words = self.bits.words[rows]
        n_bytes = words.shape[1] * 8
        col = np.arange(n_bytes * 8).reshape(n_bytes, 8)  # byte b, bit k: column 8b + k
        weight = np.zeros((n_bytes, 8), dtype=np.int64)
        inside = col < self.bits.cols
        weight[inside] = sizes[col[inside]]
        bits = (np.arange(256)[:, None] >> np.arange(8)) & 1  # value v: its bits, low first
        table = bits @ weight.T  # per byte value and byte position: the edges its set bits stand for
        as_bytes = words.astype("<u8").view(np.uint8)  # word w's bit k: byte 8w + k // 8, bit k % 8
        every = np.zeros(rows.size, dtype=np.int64)
        for b in range(n_bytes):
            every += table[as_bytes[:, b], b]
        # of those, the pod's: the same tables over each pod's columns, read through a mask of the row's pod
        pod_cols = np.zeros((max(int(class_pod.max(initial=0)), int(in_pod.max(initial=0))) + 1, n_bytes * 8), dtype=bool)
        known = class_pod >= 0
        pod_cols[class_pod[known], np.flatnonzero(known)] = True
        mask = np.packbits(pod_cols, axis=1, bitorder="little")[in_pod] if in_pod.size else np.zeros((0, n_bytes), np.uint8)
        in_own = np.zeros(rows.size, dtype=np.int64)
        for b in range(n_bytes):
            in_own += table[as_bytes[:, b] & mask[:, b], b]
        own_row = np.zeros(self.bits.words.shape[0], dtype=np.int64)
        own_row[self.edges] = self.own  # an edge's own bit is in its own pod
        return every + own_row[rows], in_own + own_row[rows]


class ClosRoutes:
    def __init__(self, fabric: TrafficFabric):
        self.f = fabric
        g = fabric.graph
        tier = fabric.tier
        tier_a, tier_b = tier[g.a], tier[g.b]  # gathered once for both tests
        if np.any(tier_a == tier_b):
            raise NotClos("links between switches of one tier (a dragonfly or torus): not a Clos")
        if np.any(tier_a > tier_b):
            raise AssertionError("plan links must run from the lower tier (end a) to the upper (end b)")
        self.lo, self.hi = g.a, g.b  # per switch-to-switch link
        self.alive = fabric.switch_links_alive()
        self.alive.flags.writeable = False  # read in place by the tables (_alive_in): nobody writes it
        self.top = int(tier.max()) if tier.size else 1
        if self.top > 3:
            raise NotClos("more than three switch tiers")
        self.edges = present(fabric.ep_switch, g.n)
        self.edge_of = np.full(g.n, -1, dtype=np.int64)
        self.edge_of[self.edges] = np.arange(self.edges.size)

    # candidate next hops per switch in port order: up links by their lower end, down by the
    # upper (sorted on first use: a check that only asks whether a fabric routes, or how large
    # a headline it takes, never needs them)
    @cached_property
    def up_order(self) -> np.ndarray:
        return _order(self.lo, self.f.plan.links.a_port[self.f.graph.link])

    @cached_property
    def up_ptr(self) -> np.ndarray:
        return np.searchsorted(self._up_ends[0], np.arange(self.f.graph.n + 1))  # lo in up_order, gathered once

    @cached_property
    def dn_order(self) -> np.ndarray:
        return _order(self.hi, self.f.plan.links.b_port[self.f.graph.link])

    @cached_property
    def dn_ptr(self) -> np.ndarray:
        return np.searchsorted(self._dn_ends[0], np.arange(self.f.graph.n + 1))

    @cached_property
    def _up_ends(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per switch link in up_order: its lower and upper switch and whether it is live."""
        link = self.up_order
        return _by_major(self.lo, self.f.graph.n), self.hi[link], self._alive_in(link)

    @cached_property
    def _dn_ends(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per switch link in dn_order: its upper and lower switch and whether it is live,
        gathered once for the tables built in that order (a gather by a permutation of a
        million links misses the cache on every entry)."""
        link = self.dn_order
        return _by_major(self.hi, self.f.graph.n), self.lo[link], self._alive_in(link)

    @cached_property
    def _intact(self) -> bool:
        """Every switch link is live (no failure reaches the switches' cables)."""
        return bool(self.alive.all())

    def _alive_in(self, order: np.ndarray) -> np.ndarray:
        """alive[order] (read-only): alive itself where every link is live, no gather."""
        return self.alive if self._intact else self.alive[order]

    @cached_property
    def _tiers_in_slices(self) -> bool:
        """Every link live and switches numbered tier by tier (as plans list them): a tier's
        links are one run of each order sorted by switch."""
        tier = self.f.tier
        return self._intact and bool(np.all(tier[1:] >= tier[:-1]))

    def _tier_rows(self, major: np.ndarray, live: np.ndarray, t: int) -> slice | np.ndarray:
        """The rows of links in one order (major: each row's switch, ascending) that are live
        and whose switch is of tier t: one slice where _tiers_in_slices, else a mask."""
        tier = self.f.tier
        if self._tiers_in_slices:
            first, end = np.searchsorted(tier, [t, t + 1])  # tier t's switches: first .. end - 1
            lo_row, hi_row = np.searchsorted(major, [first, end])
            return slice(int(lo_row), int(hi_row))
        return live & (tier[major] == t)

    # --- reachability ----------------------------------------------------------------
    @cached_property
    def _edge_classes(self) -> tuple[np.ndarray, bool]:
        """Per edge switch its column in down and reach, and whether twins share one. Edges
        share a column when alive, in one pod and with the same live up neighbours: a switch
        other than them reaches all of them or none. Only where every edge switch is at the
        lowest tier (no down links of its own); otherwise every edge is its own column."""
        f, n_edges = self.f, self.edges.size
        if not n_edges or np.any(f.tier[self.edges] != 1):
            return np.arange(n_edges), False
        sel = self.alive & (self.edge_of[self.lo] >= 0)
        pair = distinct(self.edge_of[self.lo[sel]] * f.graph.n + self.hi[sel])  # (edge, up neighbour), sorted
        edge, up = np.divmod(pair, f.graph.n)
        indptr = np.searchsorted(edge, np.arange(n_edges + 1))
        same = equal_rows(indptr, up)
        pod = self._pods[self.edges] if self.top >= 3 else np.zeros(n_edges, dtype=np.int64)  # pods: 3 tiers only
        key = (same * (int(pod.max(initial=0)) + 1) + pod) * 2 + f.switch_alive[self.edges]
        return np.unique(key, return_inverse=True)[1].reshape(-1), True

    @cached_property
    def down(self) -> EdgeBits:
        """down[x, e]: switch x reaches edge switch e over live down links only."""
        f, g = self.f, self.f.graph
        cls, merged = self._edge_classes
        d = BitRows(g.n, int(cls.max(initial=-1)) + 1)
        d.set(self.edges, cls, f.switch_alive[self.edges])
        hi, lo, live = self._dn_ends  # by upper switch
        for t in range(2, self.top + 1):
            sel = self._tier_rows(hi, live, t)
            d.or_rows(hi[sel], lo[sel], grouped=True)
        if not merged:
            return EdgeBits(d, cls, self.edges, np.zeros(self.edges.size, dtype=bool))
        d.words[self.edges] = 0  # an edge's own bit is held apart (its twins share the column)
        return EdgeBits(d, cls, self.edges, f.switch_alive[self.edges].copy())

    @cached_property
    def reach(self) -> EdgeBits:
        """reach[x, e]: x reaches e valley-free (up*, then down*) over live links."""
        r = self.down.copy()
        lo, hi, live = self._up_ends  # by lower switch
        for t in range(self.top - 1, 0, -1):
            sel = self._tier_rows(lo, live, t)
            r.bits.or_rows(lo[sel], hi[sel], grouped=True)
        return r

    def routable(self, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
        """Per flow: both NICs alive, and its source's switch reaches its destination's
        valley-free (read only for the flows that leave their switch)."""
        f = self.f
        a, b = f.ep_switch[src], f.ep_switch[dst]
        ok = f.ep_alive[src] & f.ep_alive[dst]
        cross = np.flatnonzero(ok & (a != b))
        if cross.size:
            ok[cross] = self.reach[a[cross], self.edge_of[b[cross]]]
        return ok

    # --- next hops ---------------------------------------------------------------------
    def _candidates(self, cur: np.ndarray, e: np.ndarray, going_down: np.ndarray):
        """Every candidate next hop of each (switch, destination edge): (row, switch link,
        valid) with row indexing the inputs, in port order."""
        ptr = np.where(going_down, self.dn_ptr[cur], self.up_ptr[cur])
        end = np.where(going_down, self.dn_ptr[cur + 1], self.up_ptr[cur + 1])
        deg = end - ptr
        row = np.repeat(np.arange(cur.size), deg)
        pos = np.repeat(ptr, deg) + ranges(deg)
        down_row = going_down[row]
        if down_row.all() or not down_row.any():  # one direction (the adaptive terms): look up one side only
            down = bool(down_row.size) and bool(down_row[0])
            order = self.dn_order if down else self.up_order
            link = order[np.minimum(pos, order.size - 1)]
            head = (self.lo if down else self.hi)[link]
            matrix_ok = (self.down if down else self.reach)[head, e[row]]
            return row, link, self.alive[link] & matrix_ok, down_row
        link = np.where(down_row, self.dn_order[np.minimum(pos, self.dn_order.size - 1)],
                        self.up_order[np.minimum(pos, self.up_order.size - 1)])
        head = np.where(down_row, self.lo[link], self.hi[link])
        matrix_ok = np.where(down_row, self.down[head, e[row]], self.reach[head, e[row]])
        return row, link, self.alive[link] & matrix_ok, down_row

    @cached_property
    def _whole_up(self) -> np.ndarray:
        """Per switch: every up cable is live and leads to a switch that reaches every edge,
        so its equal-cost up set toward any destination is all of them (the intact case)."""
        n = self.f.graph.n
        # every up cable live: where every switch link is (then the live ones are the degree)
        whole = np.ones(n, dtype=bool) if self._intact else \
            np.diff(self.up_ptr) == np.bincount(self.lo[self.alive], minlength=n)
        head_all = self.reach.all_columns()
        if not head_all.all():  # some switch does not reach every edge: the switches that lead to one
            whole &= np.bincount(self.lo[~head_all[self.hi]], minlength=n) == 0
        return whole

    @cached_property
    def _parallel(self):
        """Live cables by (upper, lower) switch, in the upper switch's port order: for the
        last hop down, where the only equal-cost next hops are the cables to the leaf."""
        n = self.f.graph.n
        hi, lo, live = self._dn_ends
        k = self.dn_order  # by upper switch, then its port
        if not live.all():  # every link live (the intact fabric): no copies of the three
            k, hi, lo = k[live], hi[live], lo[live]
        code = hi * n + lo
        return _stable_sorted(code, k)  # nearly sorted already; ties keep the port order

    @cached_property
    def _down_groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Down links grouped by (upper switch, pod of the lower), in port order: (sorted group
        codes, first link of each group, links per group, the links), keeping only the groups
        whose equal-cost set toward any edge of that pod is the whole group: every link live
        and every switch below reaching every edge of its own pod and none of another's (the
        intact case; a group that fails it goes through the candidate scan)."""
        pods = self._pods
        n_pods = int(pods.max()) + 1 if pods.size else 1
        edge_pod = pods[self.edges]
        per_pod = np.bincount(edge_pod, minlength=n_pods)
        every = np.arange(pods.size)
        # per switch: the edges it reaches downward, and of those the ones in its own pod
        reached, in_own = self.down.counts(every, pods, edge_pod)
        ok_below = (in_own == per_pod[pods]) & (reached == per_pod[pods])
        hi, lo, live = self._dn_ends
        link = self.dn_order
        if self._tiers_in_slices:
            # only a top-tier switch goes down toward an edge it is not directly above (a tier-2
            # switch above its edge takes its cables to it; a group of a lower switch would
            # give the candidate scan's choice anyway): the top tier's rows, one slice
            rows = self._tier_rows(hi, live, self.top)
            hi, lo, link = hi[rows], lo[rows], link[rows]
        code = np.multiply(hi, n_pods, dtype=np.int64)
        code += pods[lo]  # in place: one array per link, not two
        good = ok_below[lo]
        if not self._intact:
            good &= live
        code, link, good = _stable_sorted(code, link, good)  # port order kept within a group
        first = np.zeros(0, dtype=np.int64)
        if code.size:
            starts = np.empty(code.size, dtype=bool)  # a group starts where the code changes
            starts[0] = True
            np.not_equal(code[1:], code[:-1], out=starts[1:])
            first = np.flatnonzero(starts)
        count = np.diff(np.r_[first, code.size])
        whole = np.logical_and.reduceat(good, first) if first.size else np.zeros(0, dtype=bool)
        return code[first][whole], first[whole], count[whole], link

    def _down_group_of(self, x: np.ndarray, e: np.ndarray, going_down: np.ndarray) -> np.ndarray | None:
        """Per hop going down from a switch not directly above its destination edge: its whole
        group toward the edge's pod (index into _down_groups), -1 where none; None on a fabric
        of one switch tier above the edges (no such hop), or where these hops are too few to
        pay for grouping every down link: the candidate scan then takes them, and picks the
        same link (a whole group is exactly the valid candidates, in the same port order, so
        the hash picks the same one of as many)."""
        if self.top < 3 or not going_down.any():
            return None
        if "_down_groups" not in self.__dict__:  # not grouped yet: worth it for many hops only
            radix = int(np.diff(self.dn_ptr).max(initial=1))
            if int(np.count_nonzero(going_down)) * radix * _SCAN_PER_GROUPED < self.dn_order.size:
                return None
        codes = self._down_groups[0]
        pods = self._pods
        n_pods = int(pods.max()) + 1 if pods.size else 1
        want = x * n_pods + pods[self.edges[e]]
        i = np.minimum(np.searchsorted(codes, want), max(0, codes.size - 1))
        found = going_down & (codes.size > 0) & (codes[i] == want) if codes.size else np.zeros(x.size, dtype=bool)
        return np.where(found, i, -1)

    def _next_hops(self, m, x, e, target, keys, device):
        """One hop of the ECMP walk for flows m at switches x: (chosen switch link, downward)."""
        chosen = np.full(m.size, -1, dtype=np.int64)
        down = self.down[x, e]
        fast_up = ~down & self._whole_up[x]
        if fast_up.any():
            deg = (self.up_ptr[x + 1] - self.up_ptr[x])[fast_up]
            pick = switch_choice(keys[fast_up], device[x[fast_up]], deg)
            chosen[fast_up] = self.up_order[self.up_ptr[x[fast_up]] + pick]
        codes, par = self._parallel
        want = x * self.f.graph.n + target
        lo_i, hi_i = np.searchsorted(codes, want), np.searchsorted(codes, want, side="right")
        fast_down = down & (hi_i > lo_i)  # the destination leaf hangs off this switch: its cables
        if fast_down.any():
            cnt = (hi_i - lo_i)[fast_down]
            pick = switch_choice(keys[fast_down], device[x[fast_down]], cnt)
            chosen[fast_down] = par[lo_i[fast_down] + pick]
        fast_pod = np.zeros(m.size, dtype=bool)
        group = self._down_group_of(x, e, down & ~fast_down)
        if group is not None:
            fast_pod = group >= 0  # a core toward a leaf of another pod: every link into that pod
            if fast_pod.any():
                start, count, links = self._down_groups[1:]
                g = group[fast_pod]
                pick = switch_choice(keys[fast_pod], device[x[fast_pod]], count[g])
                chosen[fast_pod] = links[start[g] + pick]
        rest = np.flatnonzero(~fast_up & ~fast_down & ~fast_pod)
        if rest.size:
            row, link, valid, _ = self._candidates(x[rest], e[rest], down[rest])
            count = np.bincount(row, weights=valid, minlength=rest.size).astype(np.int64)
            if np.any(count == 0):
                raise AssertionError("a routable flow found no next hop")
            choice = switch_choice(keys[rest], device[x[rest]], count)
            rank = np.cumsum(valid) - 1
            seg_start = np.searchsorted(row, np.arange(rest.size))
            rank = rank - (rank[seg_start] - valid[seg_start].astype(np.int64) + 1)[row]
            pick = valid & (rank == choice[row])
            chosen[rest[row[pick]]] = link[pick]
        return chosen, down

    def ecmp_paths(self, src: np.ndarray, dst: np.ndarray, qp: np.ndarray, seed: int):
        """Per sub-flow, the directed links of its hashed path: (flow, directed link)
        pairs, and which sub-flows have a route."""
        f = self.f
        ok = self.routable(src, dst)
        keys = flow_keys(src, dst, qp, seed)
        flows = [np.flatnonzero(ok), np.flatnonzero(ok)]
        links = [f.attach_out(src[ok]), f.attach_in(dst[ok])]
        cur = f.ep_switch[src].copy()
        target = f.ep_switch[dst]
        e = self.edge_of[target]
        moving = np.flatnonzero(ok & (cur != target))
        device = f.graph.device_of
        budget = max(1, _CHUNK // max(1, int(np.diff(self.up_ptr).max(initial=1)), int(np.diff(self.dn_ptr).max(initial=1))))
        for _ in range(2 * self.top):
            if moving.size == 0:
                break
            next_moving = []
            for lo_i in range(0, moving.size, budget):
                m = moving[lo_i:lo_i + budget]
                chosen, down = self._next_hops(m, cur[m], e[m], target[m], keys[m], device)
                flows.append(m)
                links.append(2 * f.graph.link[chosen] + down)
                cur[m] = np.where(down, self.lo[chosen], self.hi[chosen])
                next_moving.append(m[cur[m] != target[m]])
            moving = np.concatenate(next_moving)
        if moving.size:
            raise AssertionError("ECMP walk did not reach every destination")
        # int32 where every index fits (as scipy's sparse matrices hold them): half the bytes
        # of the largest arrays of the walk, and no copy when the incidence is built from them
        index = np.int32 if max(src.size, f.n_links) < 2**31 else np.int64
        return np.concatenate(flows, dtype=index), np.concatenate(links, dtype=index), ok

    # --- adaptive: even split at every hop ---------------------------------------------
    @cached_property
    def _pods(self) -> np.ndarray:
        devs = self.f.plan.devices
        device_of = self.f.graph.device_of
        # one attribute read per switch, over Python ints (tolist), straight into the array
        pods = (devs[d].pod for d in device_of.tolist())
        return np.fromiter((0 if p is None else p for p in pods), dtype=np.int64, count=device_of.size)

    @cached_property
    def _planemate_table(self) -> tuple[np.ndarray, np.ndarray, int]:
        """(spine, pod) -> the spine of that pod that shares spine's cores (its plane), as
        sorted keys spine * pods + pod and their spines. Vectorised: a Python dict over
        spine x core x spine took 0.5 s at 16,384 GPUs."""
        n, tier = self.f.graph.n, self.f.tier
        sc = tier[self.lo] == 2  # spine -> core links (intact structure; liveness applies later)
        pairs = distinct(self.lo[sc] * n + self.hi[sc])  # (spine, core), parallel cables once
        spine, core = np.divmod(pairs, n)
        by_core = np.lexsort((spine, core))
        cs, ss = core[by_core], spine[by_core]
        ptr = np.searchsorted(cs, np.arange(n + 1))
        cnt = ptr[core + 1] - ptr[core]
        s = np.repeat(spine, cnt)
        z = ss[np.repeat(ptr[core], cnt) + ranges(cnt)]
        pods = self._pods
        n_pods = int(pods.max()) + 1 if pods.size else 1
        code = distinct((s * n_pods + pods[z]) * n + z)
        key, mate = np.divmod(code, n)
        if np.any(key[1:] == key[:-1]):
            raise NotClos("a spine's cores lead to two spines of one pod: not a 3-tier Clos of planes")
        return key, mate, n_pods

    def planemate(self, spine: np.ndarray, pod: np.ndarray) -> np.ndarray:
        """Per (spine, pod): the spine of that pod in spine's plane, -1 where none."""
        key, mate, n_pods = self._planemate_table
        q = np.asarray(spine, dtype=np.int64) * n_pods + np.asarray(pod, dtype=np.int64)
        i = np.minimum(np.searchsorted(key, q), max(0, key.size - 1))
        found = (key.size > 0) & (key[i] == q) if key.size else np.zeros(q.size, dtype=bool)
        return np.where(found, mate[i] if key.size else -1, -1)

    def spray_terms(self, src: np.ndarray, dst: np.ndarray) -> tuple[list[Term], np.ndarray]:
        """Incidence terms of the even split, and which flows have a route."""
        f = self.f
        n_links = f.n_links
        ok = self.routable(src, dst)
        terms = [Term([flows_on_links(n_links, np.concatenate([np.flatnonzero(ok)] * 2),
                                      np.concatenate([f.attach_out(src[ok]), f.attach_in(dst[ok])]),
                                      n_flows=src.size)])]
        a, b = f.ep_switch[src], f.ep_switch[dst]
        cross = ok & (a != b)
        if not cross.any():
            return terms, ok
        codes = a[cross] * f.graph.n + b[cross]
        pair_code, inv = np.unique(codes, return_inverse=True)
        n_pairs = pair_code.size
        cls = np.full(src.size, n_pairs, dtype=np.int64)  # extra class: no fabric hop
        cls[cross] = inv.reshape(-1)
        pa, pb = np.divmod(pair_code, f.graph.n)
        eb = self.edge_of[pb]
        # leaf stage: every pair leaves its edge switch up (edges are tier 1)
        row, link, valid, _ = self._candidates(pa, eb, np.zeros(n_pairs, dtype=bool))
        row, link = row[valid], link[valid]
        share = 1.0 / np.bincount(row, minlength=n_pairs)[row]
        terms.append(Term([flows_on_links(n_links, row, 2 * f.graph.link[link], share, n_flows=n_pairs + 1)], cls))
        y = self.hi[link]
        turn = self.down[y, eb[row]]
        # mass reaching the tier-2 switch z above the destination leaf, keyed (z, leaf): its hop down
        z = y.copy()
        if not turn.all():
            z[~turn] = self.planemate(y[~turn], self._pods[pb[row[~turn]]])
            if np.any(z[~turn] < 0):
                raise NotClos("a spine's plane has no spine in the destination's pod")
            terms.append(self._core_term(row[~turn], y[~turn], z[~turn], share[~turn], n_pairs, cls))
        terms.append(self._last_hop_term(row, z, pb[row], share, n_pairs, cls))
        return terms, ok

    def _last_hop_term(self, pair, z, leaf, share, n_pairs, cls) -> Term:
        f = self.f
        key_code, kinv = np.unique(z * f.graph.n + leaf, return_inverse=True)
        kz, kleaf = np.divmod(key_code, f.graph.n)
        m = flows_on_links(key_code.size, pair, kinv.reshape(-1), share, n_flows=n_pairs + 1)  # keys x pairs
        row, link, valid, _ = self._candidates(kz, self.edge_of[kleaf], np.ones(kz.size, dtype=bool))
        row, link = row[valid], link[valid]
        if np.any(self.lo[link] != kleaf[row]):
            raise NotClos("a tier-2 switch reaches a leaf through another switch")
        w = 1.0 / np.bincount(row, minlength=kz.size)[row]
        return Term([m, flows_on_links(f.n_links, row, 2 * f.graph.link[link] + 1, w, n_flows=kz.size)], cls)

    def _core_term(self, pair, y, z, share, n_pairs, cls) -> Term:
        """Spine y up to the cores that still reach spine z (z's pod, y's plane), and down to z."""
        f = self.f
        n = f.graph.n
        key_code, kinv = np.unique(y * n + z, return_inverse=True)
        ky, kz = np.divmod(key_code, n)
        m = flows_on_links(key_code.size, pair, kinv.reshape(-1), share, n_flows=n_pairs + 1)
        # live core links into each z, as (core, z) -> count of parallel live links
        cz = self.alive & (f.tier[self.lo] == 2)
        cz_code = self.hi[cz] * n + self.lo[cz]
        cz_link = np.flatnonzero(cz)
        order = np.argsort(cz_code, kind="stable")
        cz_code, cz_link = cz_code[order], cz_link[order]
        row, link, valid, _ = self._candidates(ky, np.zeros(ky.size, dtype=np.int64), np.zeros(ky.size, dtype=bool))
        core = self.hi[link]
        want = core * n + kz[row]
        lo_i, hi_i = np.searchsorted(cz_code, want), np.searchsorted(cz_code, want, side="right")
        valid = self.alive[link] & (hi_i > lo_i)
        row, link, lo_i, hi_i = row[valid], link[valid], lo_i[valid], hi_i[valid]
        up_share = 1.0 / np.bincount(row, minlength=ky.size)[row]
        par = hi_i - lo_i
        drow = np.repeat(row, par)
        dlink = cz_link[np.repeat(lo_i, par) + ranges(par)]
        dshare = np.repeat(up_share / par, par)
        w = flows_on_links(f.n_links, np.concatenate([row, drow]),
                           np.concatenate([2 * f.graph.link[link], 2 * f.graph.link[dlink] + 1]),
                           np.concatenate([up_share, dshare]), n_flows=ky.size)
        return Term([m, w], cls)
