"""Switchless ring and full mesh (servers cabled to each other, expand/direct.py):
closed-form bisection and the cuts a few whole servers allow (convention: one direction,
Gb/s, the cut halves the GPUs)."""

from __future__ import annotations

import itertools

import numpy as np

from ...plan.graph import FabricGraph
from ...plan.model import Plan
from ...topology import DirectRecord
from ..cuts import Cut, by_server


def bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    if plan.view.design.topology == "ring":
        return ring_bisection_gbps(plan, g)
    return full_mesh_bisection_gbps(plan, g)


def heavy_round_crossings(n: int, e: int) -> int:
    """Fewest links of the first e circle-method rounds (expand/direct.mesh_rounds, round 0 =
    (0,1), (2,3), ...) that a split of floor(n/2) servers vs the rest must cut. Found by
    trying every split and checked that way for every n <= 20 and every e (tests to 12): n odd
    floor(e^2/4); n even, n/2 even: sum over j <= e of 2 * floor((j+2)/4); n/2 odd: sum
    over j <= e of 2 * floor(j/4) + 1."""
    if n % 2:
        return e * e // 4
    if (n // 2) % 2 == 0:
        return sum(2 * ((j + 2) // 4) for j in range(1, e + 1))
    return sum(2 * (j // 4) + 1 for j in range(1, e + 1))


FULL_MESH_CLOSED_FORM_SERVERS = 20  # heavy_round_crossings (e >= 2) is checked exhaustively up to here


def full_mesh_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    """Switchless full mesh of n servers (expand/direct.py): every pair meets in exactly one
    of R round-robin rounds, round k carrying t_k rails, t_k = m + 1 for the first
    e = P mod R rounds and m = floor(P/R) for the rest. A split of h = floor(n/2) servers
    vs the other n - h is crossed by m * h(n-h) links (every pair once, m times) plus the
    heavy rounds' crossings x(n, e) (heavy_round_crossings). Uniform (e = 0), n even:
    (n/2)^2 * m * s. Whole servers on each side, so with n odd the halves hold h and
    h + 1 servers."""
    d = plan.view.design
    assert isinstance(d, DirectRecord), d.topology  # the direct family's own record
    assert d.links_per_pair is not None and d.rails_per_round is not None  # expand/direct.py records both
    n, m, s = d.servers, d.links_per_pair.min, d.speed_gbps
    h = n // 2
    e = sum(1 for t in d.rails_per_round if t > m)
    if e >= 2 and n > FULL_MESH_CLOSED_FORM_SERVERS:  # e <= 1 holds for any n (a matching)
        return None, (f"no closed form above {FULL_MESH_CLOSED_FORM_SERVERS} servers with uneven links per pair "
                      f"(between {m * h * (n - h):,} and {(m + 1) * h * (n - h):,} links cross); max-flow only")
    x = heavy_round_crossings(n, e)
    formula = (f"(m * h * (n - h) + x) * s: m = {m} link(s) per pair, h = {h} of n = {n} servers, "
               f"x = {x} crossing(s) of the {e} round(s) with an extra rail, s = {s} Gb/s")
    return (m * h * (n - h) + x) * s, formula


def ring_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int, str]:
    """Switchless ring: halves are two arcs, cut at two ring edges. Ring edges are in round 0
    (from an even server), 1 (from an odd one) or, n odd, 2 (the closing edge), with
    w_0 >= w_1 >= w_2 links. n odd: w_1 + w_2 (the closing edge and an odd edge half a ring
    away); n even: the two cut edges are n/2 apart, same round when n/2 is even (2 * w_1),
    one of each when odd (w_0 + w_1). Uniform w links per edge: 2 * w * s."""
    d = plan.view.design
    assert isinstance(d, DirectRecord), d.topology  # the direct family's own record
    assert d.rails_per_round is not None  # expand/direct.py records it
    n, w, s = d.servers, d.rails_per_round, d.speed_gbps
    if n % 2:
        links, how = w[1] + w[2], "w_1 + w_2"
    elif (n // 2) % 2 == 0:
        links, how = 2 * w[1], "2 * w_1"
    else:
        links, how = w[0] + w[1], "w_0 + w_1"
    return links * s, f"{how} = {links} links x {s} Gb/s (w = {w} links per ring edge by round)"


EXHAUSTIVE_SERVERS = 20  # C(20, 10) = 184,756 splits: about half a second in numpy
_SPLITS_PER_CHUNK = 16_384


def cuts(plan: Plan, g: FabricGraph, servers: np.ndarray, first_at: np.ndarray) -> list[Cut]:
    """Switchless rings and meshes (whole servers are the nodes): the last half of the
    servers (with n odd not the same split as the first half: for a ring the other arc
    through the closing edge), and for n <= 20 the split that the fewest links cross,
    found by trying every split of floor(n/2) servers against the rest."""
    n = servers.size
    out = []
    if n % 2:
        out.append(by_server(g, servers[::-1], "halves-reversed", "last half of the servers in plan order vs the rest"))
    if 2 <= n <= EXHAUSTIVE_SERVERS:
        half = n // 2
        combos = np.array(list(itertools.combinations(range(n), half)), dtype=np.int64)
        best, best_gbps = 0, None
        for start in range(0, combos.shape[0], _SPLITS_PER_CHUNK):
            chunk = combos[start:start + _SPLITS_PER_CHUNK]
            side = np.zeros((chunk.shape[0], g.n), dtype=bool)
            side[np.arange(chunk.shape[0])[:, None], chunk] = True
            crossing = ((side[:, g.a] != side[:, g.b]) * g.cap_gbps).sum(axis=1)
            i = int(np.argmin(crossing))  # first minimum: deterministic
            if best_gbps is None or crossing[i] < best_gbps:
                best, best_gbps = start + i, int(crossing[i])
        order = np.concatenate([servers[combos[best]], np.delete(servers, combos[best])])
        out.append(by_server(g, order, "lightest",
                              f"the split of {half} servers vs the rest that the fewest links cross (all {combos.shape[0]:,} tried)"))
    return out


def exhaustive(plan: Plan, g: FabricGraph) -> bool:
    """Every split of the servers is tried (cuts: `lightest`): up to EXHAUSTIVE_SERVERS, with
    an even count (an odd one splits a server's ports, one way of many)."""
    n = plan.view.design.servers
    return 2 <= n <= EXHAUSTIVE_SERVERS and n % 2 == 0


def max_hops(plan: Plan, edge_switches: int) -> int | None:
    """Server-to-server links between two servers: a ring's diameter floor(n/2), a full
    mesh's 1; only when every round carries a link (else a pair may not be cabled)."""
    d = plan.view.design
    assert isinstance(d, DirectRecord), d.topology  # the direct family's own record
    assert d.rails_per_round is not None  # expand/direct.py records it
    if min(d.rails_per_round) < 1:
        return None
    return d.servers // 2 if d.topology == "ring" else 1
