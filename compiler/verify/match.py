"""Compare the cables found with the cables planned, and explain each difference the way
the floor fixes it.

Found links come from `resolve` (both ends as global port ids where the tools named the
port; an end whose port is unknown, e.g. a host that sends no LLDP, is a "wildcard" on
its device). The explanation is the one with the fewest moved plugs:

1. a found link whose ends are a planned cable's ends: that cable is right (a wildcard
   end counts when the device is right: its port is then unchecked);
2. two planned cables found with their far ends exchanged: one `swapped` finding
   naming both (not four unrelated errors);
3. a found link with one end where a planned, not-yet-explained cable should be: that
   cable has its other end in the wrong port of the right device (`wrong-port`) or on
   another device (`wrong-device`); when both ends qualify, the cable whose lower-tier
   (A) end is fixed wins, since cables are pulled from the lower tier up;
4. any other found link: `unplanned`;
5. a planned cable not explained and expected to be seen: `missing`;
6. on cables found right, the link rate: `speed` (another signalling rate) and `width`
   (fewer lanes) where the input reports it;
7. a cable seen from one end only whose far end is the right switch but whose port that
   switch did not say (or said in a spelling the plan does not know): `unverified`, never
   right. A host's far end (a MAC as LLDP port id) is checked by device only, as a note.

Cost: steps 1 and 6 are numpy over all links; 2 to 5 touch only the differences.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.model import NO_LINK, Plan
from .discovery import Discovery
from .resolve import Resolved
from .ibnetdiscover import LANE_GBPS

KINDS = ("swapped", "wrong-port", "wrong-device", "missing", "unplanned", "speed", "width", "name", "unverified")


@dataclass
class Found:
    """One found link that no planned cable explains, with both ends."""

    row: int  # discovery row it was first seen on
    g: tuple[int, int]  # global port of each end, or -1
    dev: tuple[int, int]  # device of each end (<= -2: a node that is no plan device)
    node: tuple[int, int]
    used: bool = False


@dataclass
class Outcome:
    matched: np.ndarray  # per planned cable: found as planned
    port_unchecked: np.ndarray  # per planned cable: found, one end's port not reported
    findings: list[dict]  # kind, cables (link indices), ends (see verify.report), row
    seen_ports: np.ndarray  # per global port: a found link ends there


def compare(plan: Plan, disc: Discovery, res: Resolved, ignore: frozenset[str] = frozenset()) -> Outcome:
    links = plan.links
    n_cables = len(links)
    offsets = plan.port_offsets()
    a_g = offsets[links.a_dev] + links.a_port
    b_g = offsets[links.b_dev] + links.b_port
    lop = plan.memo("link_of_port", lambda p: p.link_of_port())
    n_ports = lop.shape[0]
    port_dev = np.repeat(np.arange(len(plan.devices)), [len(plan.layouts[d.layout]) for d in plan.devices])

    ra_dev, rb_dev = res.node_dev[res.a_node], res.node_dev[res.b_node]
    ra_g, rb_g = res.a_gport, res.b_gport
    rows = np.arange(len(ra_g))

    # --- full rows (both ports known), one per cable however often it was printed
    full = (ra_g >= 0) & (rb_g >= 0)
    lo, hi = np.minimum(ra_g, rb_g)[full], np.maximum(ra_g, rb_g)[full]
    key = lo * n_ports + hi
    _, first = np.unique(key, return_index=True)
    f_rows = rows[full][first]
    f_a, f_b = ra_g[f_rows], rb_g[f_rows]
    ca, cb = lop[f_a], lop[f_b]
    f_ok = (ca == cb) & (ca != NO_LINK)
    matched = np.zeros(n_cables, dtype=bool)
    matched[ca[f_ok]] = True
    seen_ports = np.zeros(n_ports, dtype=bool)
    seen_ports[f_a] = seen_ports[f_b] = True

    # --- partial rows: one port known, the other end only a device (or nothing)
    part = (ra_g >= 0) != (rb_g >= 0)
    p_rows = rows[part]
    p_g = np.where(ra_g[p_rows] >= 0, ra_g[p_rows], rb_g[p_rows])
    p_dev = np.where(ra_g[p_rows] >= 0, rb_dev[p_rows], ra_dev[p_rows])
    keep = ~seen_ports[p_g]  # the same port already seen with both ends named
    p_rows, p_g, p_dev = p_rows[keep], p_g[keep], p_dev[keep]
    _, first = np.unique(p_g * (len(res.keys) + len(plan.devices) + 2) + (p_dev + len(res.keys) + 1), return_index=True)
    p_rows, p_g, p_dev = p_rows[first], p_g[first], p_dev[first]
    pc = lop[p_g]
    far = np.where(pc >= 0, np.where(a_g[np.maximum(pc, 0)] == p_g, b_g[np.maximum(pc, 0)], a_g[np.maximum(pc, 0)]), 0)
    p_right = (pc != NO_LINK) & (port_dev[far] == p_dev) & ~matched[np.maximum(pc, 0)]
    tier = np.array([d.tier for d in plan.devices] or [0], dtype=np.int64)
    p_switch = p_right & (tier[np.maximum(p_dev, 0)] > 0)  # a switch names its ports: not saying is not checking
    p_ok = p_right & ~p_switch
    # a port named twice with different partial peers: the first explains the cable
    port_unchecked = np.zeros(n_cables, dtype=bool)
    ok_cables = np.unique(pc[p_ok])
    port_unchecked[ok_cables] = True
    matched[ok_cables] = True
    p_bad = ~p_right
    seen_ports[p_g] = True

    unexplained: list[Found] = []
    for r in f_rows[~f_ok].tolist():
        unexplained.append(Found(r, (int(ra_g[r]), int(rb_g[r])), (int(ra_dev[r]), int(rb_dev[r])),
                                 (int(res.a_node[r]), int(res.b_node[r]))))
    for r in p_rows[p_bad].tolist():
        unexplained.append(Found(r, (int(ra_g[r]), int(rb_g[r])), (int(ra_dev[r]), int(rb_dev[r])),
                                 (int(res.a_node[r]), int(res.b_node[r]))))
    unexplained.sort(key=lambda f: f.row)

    findings: list[dict] = []
    consumed = np.zeros(n_cables, dtype=bool)

    def other(c: int, g: int) -> int:
        return int(b_g[c]) if int(a_g[c]) == g else int(a_g[c])

    sw_cables, first_sw = np.unique(pc[p_switch], return_index=True)
    for c, r in zip(sw_cables.tolist(), p_rows[np.flatnonzero(p_switch)[first_sw]].tolist(), strict=True):
        if matched[c]:
            continue  # a host's row already placed it
        consumed[c] = True
        known = 0 if ra_g[r] >= 0 else 1
        findings.append({"kind": "unverified", "cables": [c], "rows": [r], "anchor_side": known,
                         "expected": other(c, int(ra_g[r] if known == 0 else rb_g[r])),
                         "found": Found(r, (int(ra_g[r]), int(rb_g[r])), (int(ra_dev[r]), int(rb_dev[r])),
                                        (int(res.a_node[r]), int(res.b_node[r])))})

    def end_matches(g: int, dev: int, planned: int) -> bool:
        return g == planned if g >= 0 else dev == int(port_dev[planned])

    def open_cable(g: int) -> int:
        if g < 0:
            return NO_LINK
        c = int(lop[g])
        return c if c != NO_LINK and not matched[c] and not consumed[c] else NO_LINK

    at_port: dict[int, list[int]] = {}
    wild_at_dev: dict[int, list[int]] = {}
    for i, f in enumerate(unexplained):
        for side in (0, 1):
            if f.g[side] >= 0:
                at_port.setdefault(f.g[side], []).append(i)
            elif f.dev[side] >= 0:
                wild_at_dev.setdefault(f.dev[side], []).append(i)

    # --- swaps
    for i, u in enumerate(unexplained):
        if u.used:
            continue
        for side in (0, 1):
            x1 = u.g[side]
            c1 = open_cable(x1)
            if c1 == NO_LINK:
                continue
            y1 = other(c1, x1)
            f1_g, f1_dev = u.g[1 - side], u.dev[1 - side]
            pair = _find_swap(unexplained, i, c1, y1, f1_g, f1_dev, at_port.get(y1, []) + wild_at_dev.get(int(port_dev[y1]), []),
                              open_cable, other, end_matches, port_dev)
            if pair is not None:
                j, c2 = pair
                u.used = unexplained[j].used = True
                consumed[c1] = consumed[c2] = True
                findings.append({"kind": "swapped", "cables": [c1, c2], "rows": [u.row, unexplained[j].row],
                                 "found": u, "anchor_side": side, "expected": y1})
                break

    # --- one plug in the wrong place, or a cable nobody planned
    for u in unexplained:
        if u.used:
            continue
        options = []
        for side in (0, 1):
            c = open_cable(u.g[side])
            if c != NO_LINK:
                options.append((0 if int(a_g[c]) == u.g[side] else 1, side, c))
        u.used = True
        if not options:
            findings.append({"kind": "unplanned", "cables": [], "rows": [u.row], "found": u})
            continue
        _, side, c = min(options)
        consumed[c] = True
        expected_far = other(c, u.g[side])
        far_dev = u.dev[1 - side]
        kind = "wrong-port" if far_dev == int(port_dev[expected_far]) else "wrong-device"
        findings.append({"kind": kind, "cables": [c], "rows": [u.row], "found": u, "anchor_side": side,
                         "expected": expected_far})

    # --- link rate on cables found right
    if not {"speed", "width"} <= ignore:
        findings += _rates(plan, disc, f_rows[f_ok], ca[f_ok], ignore)

    return Outcome(matched & ~consumed, port_unchecked, findings, seen_ports)


def _find_swap(unexplained, i, c1, y1, f1_g, f1_dev, candidates, open_cable, other, end_matches, port_dev):
    """The found link v that, with u, says cables c1 and c2 had their far ends exchanged:
    v joins c1's planned far end y1 with the near end x2 of an open cable c2 whose
    planned far end is where u's far end was found."""
    for j in candidates:
        if j == i or unexplained[j].used:
            continue
        v = unexplained[j]
        for side in (0, 1):
            if not end_matches(v.g[side], v.dev[side], y1):
                continue
            x2 = v.g[1 - side]
            c2 = open_cable(x2)
            if c2 == -1 or c2 == c1:
                continue
            if end_matches(f1_g, f1_dev, other(c2, x2)):
                return j, c2
    return None


def _rates(plan: Plan, disc: Discovery, rows: np.ndarray, cables: np.ndarray, ignore) -> list[dict]:
    """speed / width findings: a reported rate other than the planned cable's.
    A rate is `lanes x per-lane rate`; the plan gives the total (speed_gbps) and, for
    InfiniBand, 4 lanes where the per-lane rate is a standard one (400G = 4xNDR)."""
    out = []
    lane_rates = set(LANE_GBPS.values())
    for r, c in zip(rows.tolist(), cables.tolist(), strict=True):
        lane, lanes = disc.links[r][4], disc.links[r][5]
        if lane is None:
            continue
        planned = int(plan.links.speed_gbps[c])
        total = lane * (lanes or 1)
        if total == planned:
            continue
        planned_lane = planned / 4 if planned / 4 in lane_rates else None
        kind = "width" if lanes is not None and lane == planned_lane else "speed"
        if kind not in ignore:
            out.append({"kind": kind, "cables": [c], "rows": [r], "lane_gbps": lane, "lanes": lanes,
                        "planned_gbps": planned, "planned_lane_gbps": planned_lane})
    return out
