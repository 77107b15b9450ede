"""Bisection from the structure (closed forms), per topology family.

Convention everywhere: one direction, Gb/s, the cut halves the GPUs.
"""

from __future__ import annotations

import math

import numpy as np

from ..plan.graph import FabricGraph
from ..plan.model import Plan


def _tier(plan: Plan, g: FabricGraph) -> np.ndarray:
    return np.fromiter((plan.devices[int(d)].tier for d in g.device_of), dtype=np.int64, count=g.n)


def clos_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int, str]:
    """Fat tree / rail-optimized Clos: half of the tightest tier.

    bisection = ½ · min( GPU injection,
                         Σ_leaves min(leaf GPU downlinks, leaf uplinks),
                         Σ_pods  min(pod's leaf-level figure, pod spine uplinks) )   [3 tiers]
    Exact for symmetric fabrics whose upper tiers are at least as wide as the leaf tier.
    """
    tier = _tier(plan, g)
    gpu = g.at_is_gpu_server
    down = np.bincount(g.at_switch[gpu], weights=g.at_cap_gbps[gpu], minlength=g.n)
    up = np.zeros(g.n)
    lower = np.where(tier[g.a] < tier[g.b], g.a, g.b)
    np.add.at(up, lower, g.cap_gbps)
    leaf = tier == 1
    per_leaf = np.minimum(down, up) * leaf
    bounds = [float(down.sum()), float(per_leaf.sum())]
    formula = "1/2 * min(GPU injection, sum over leaves of min(GPU downlinks, uplinks)"
    if plan.design.get("tiers") == 3 and plan.design.get("pods", 1) >= 2:
        pod_of_switch = np.array([plan.devices[int(d)].pod or 0 for d in g.device_of])
        spine = tier == 2
        pods = np.unique(pod_of_switch[leaf])
        leaf_fig = np.bincount(pod_of_switch[leaf], weights=per_leaf[leaf], minlength=int(pods.max()) + 1)
        spine_up = np.bincount(pod_of_switch[spine], weights=up[spine], minlength=int(pods.max()) + 1)
        bounds.append(float(np.minimum(leaf_fig, spine_up)[pods].sum()))
        formula += ", sum over pods of min(pod leaf figure, pod spine uplinks)"
    return int(min(bounds) // 2), formula + ")"


def _gpu_injection_gbps(g: FabricGraph) -> float:
    gpu = g.at_is_gpu_server
    return float(g.at_cap_gbps[gpu].sum())


def torus_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    """k-ary n-cube (Dally & Towles): a plane cut across dimension d crosses N/k_d node
    pairs, twice when the dimension wraps: 2·k^(n-1) links for a torus, k^(n-1) for a mesh.
    The narrowest even dimension's cut, times links per neighbour and link speed, capped by
    half the GPU injection (switched form). Twisted tori and all-odd shapes have no closed form here."""
    d = plan.design
    if d.get("twist"):
        return None, "no closed form for a twisted torus (max-flow only)"
    dims, wrap = d["dims"], d["wrap"]
    nodes = math.prod(dims)
    crossings = [nodes // k * (2 if w else 1) for k, w in zip(dims, wrap) if k >= 2 and k % 2 == 0]
    if not crossings:
        return None, "no closed form: no dimension of even size"
    links = min(crossings) * d["links_per_neighbor"]
    value = links * d["speed_gbps"]
    formula = (f"min over even dimensions of (N/k_d x (2 if wrapped else 1)) = {min(crossings):,} node pairs x "
               f"{d['links_per_neighbor']} link(s) x {d['speed_gbps']} Gb/s")
    if not d.get("direct"):
        value = min(value, _gpu_injection_gbps(g) / 2)
        formula = "min(1/2 GPU injection, " + formula + ")"
    return int(value), formula


def dragonfly_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int | None, str]:
    """Dragonfly / dragonfly+ cut between two halves of the groups: (g/2)^2 group pairs x m
    global links each; inside a dragonfly+ group also the leaves' uplinks (as for a Clos leaf).
    bisection = 1/2 * min(GPU injection, sum over leaves of min(down, up) [dragonfly+],
    2 * (g/2)^2 * m * link speed). Defined for an even number of fully populated groups."""
    d = plan.design
    groups, m, speed = d["groups"], d["global_links_per_group_pair"], d["speed_gbps"]
    if d["endpoint_ports"] != groups * d["endpoint_ports_per_group"]:
        return None, "no closed form: the last group is partly populated (max-flow only)"
    inj = _gpu_injection_gbps(g)
    bounds = [inj]
    formula = "1/2 * min(GPU injection"
    if d["intra_group"] == "fat-tree":
        bounds.append(groups * (d["switches_per_group"] // 2) * min(d["endpoints_per_switch"], d["switches_per_group"] // 2) * speed)
        formula += ", sum over leaves of min(endpoint ports, uplinks)"
    if groups == 1:
        if d["intra_group"] == "all-to-all":
            a = d["switches_per_group"]
            if a % 2:
                return None, "no closed form: one group of an odd number of routers"
            bounds.append(2 * (a // 2) ** 2 * speed)
            formula += ", 2 * (a/2)^2 local links"
    elif groups % 2:
        return None, "no closed form: an odd number of groups (max-flow only)"
    else:
        bounds.append(2 * (groups // 2) ** 2 * m * speed)
        formula += f", 2 * (g/2)^2 * m global links = 2 * {(groups // 2) ** 2:,} * {m} * {speed} Gb/s"
    return int(min(bounds) // 2), formula + "), Gb/s"


def rail_only_bisection_gbps(plan: Plan, g: FabricGraph) -> tuple[int, str]:
    """Rail-only: no switch joins two rails, so a cut that puts rails 1..R/2 of every server on
    one side is crossed by no network link: 0. Traffic between rails crosses the servers'
    scale-up domain (NVLink), which the plan does not model as links. With one rail the
    network is one switch: half the GPU injection."""
    if plan.design["rails"] >= 2:
        domain = f": {plan.scale_up.phrase()}" if plan.scale_up else ""
        return 0, (f"0: no network link joins two rails (cross-rail traffic uses the scale-up domain{domain}); "
                   f"per rail 1/2 * servers * link speed = {plan.design['per_rail_bisection_gbps']:,} Gb/s")
    return int(_gpu_injection_gbps(g) // 2), "1/2 * GPU injection (one rail, one switch)"


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
    d = plan.design
    n, m, s = d["servers"], d["links_per_pair"]["min"], d["speed_gbps"]
    h = n // 2
    e = sum(1 for t in d["rails_per_round"] if t > m)
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
    d = plan.design
    n, w, s = d["servers"], d["rails_per_round"], d["speed_gbps"]
    if n % 2:
        links, how = w[1] + w[2], "w_1 + w_2"
    elif (n // 2) % 2 == 0:
        links, how = 2 * w[1], "2 * w_1"
    else:
        links, how = w[0] + w[1], "w_0 + w_1"
    return links * s, f"{how} = {links} links x {s} Gb/s (w = {w} links per ring edge by round)"


# topology kind -> closed form.
ANALYTIC = {
    "fat-tree": clos_bisection_gbps,
    "rail-optimized": clos_bisection_gbps,
    "torus": torus_bisection_gbps,
    "mesh": torus_bisection_gbps,
    "dragonfly": dragonfly_bisection_gbps,
    "dragonfly+": dragonfly_bisection_gbps,
    "rail-only": rail_only_bisection_gbps,
    # Two tiers, every ToR reaches every aggregation switch of its plane: the Clos form holds.
    "multi-plane": clos_bisection_gbps,
    "full-mesh": full_mesh_bisection_gbps,
    "ring": ring_bisection_gbps,
}
