"""Graphs with no layers, drawn on an ellipse: the servers of a switchless ring or full
mesh, the groups of a dragonfly or dragonfly+. Boxes go clockwise from the top in
index order; every pair of boxes with links between them gets one chord, its link
count in a caption where all chords carry the same, on the chord otherwise. O(boxes +
edges), no layout engine.
"""

from __future__ import annotations

import math

import numpy as np

from ...plan.model import Plan
from .drawing import Box, Drawing, Edge, Text, px
from .groups import counted, runs
from .layered import bandwidth
from .style import (BOX_PAD_PX, BOX_STROKE, EDGE_COLOUR, LINE_PX, MARGIN_PX, MAX_WIDTH_PX, ROLE_FILL, SMALL_PX,
                    TITLE_PX, edge_width, text_px)

MAX_GROUPS = 32  # boxes on the ellipse; more groups are drawn as runs of groups
HEADER_PX = 60


def circle(name: str, title: str, subtitle: str, labels: list[tuple[str, tuple[str, ...], str]],
           group: np.ndarray, links_a: np.ndarray, links_b: np.ndarray, gbps: np.ndarray, fill: str,
           note: str = "") -> Drawing:
    """`labels[k]` = (id, lines, tooltip) of box k; `group[i]` the box of device i (-1: not
    drawn); links as device columns. Links inside one box are counted in its label."""
    n = len(labels)
    ga, gb = group[links_a], group[links_b]
    keep = (ga >= 0) & (gb >= 0)
    ga, gb, gbps = ga[keep], gb[keep], gbps[keep]
    lo, hi = np.minimum(ga, gb), np.maximum(ga, gb)
    pairs, inverse, counts = np.unique(lo * n + hi, return_inverse=True, return_counts=True)
    bw = np.bincount(inverse, weights=gbps.astype(np.float64), minlength=len(pairs))
    inside = {a: c for p, c in zip(pairs.tolist(), counts.tolist(), strict=True) for a, b in [divmod(p, n)] if a == b}
    lines = [ls + ((f"{inside[k]:,} links inside",) if k in inside else ()) for k, (_, ls, _) in enumerate(labels)]
    w = max(max((text_px(t) for ls in lines for t in ls), default=40) + 2 * BOX_PAD_PX, 48)
    h = BOX_PAD_PX + LINE_PX * max(len(ls) for ls in lines)
    # the ellipse: wide rather than tall, so 32 groups fit a 1600 x 1000 screen
    perimeter = n * (w + 24)
    rx = max(160.0, min((MAX_WIDTH_PX - 2 * MARGIN_PX - w) / 2, perimeter / (2 * math.pi) * 1.4))
    ry = max(110.0, min(420.0, rx * 0.72))
    width = max(2 * rx + w + 2 * MARGIN_PX, text_px(title, TITLE_PX) + 2 * MARGIN_PX, 640)
    cx, cy = width / 2, HEADER_PX + ry + h / 2 + 10
    d = Drawing(name=name, title=title, width=width, height=cy + ry + h / 2 + 2 * MARGIN_PX + 20)
    d.texts.append(Text(MARGIN_PX, 24, title, TITLE_PX, bold=True))
    d.texts.append(Text(MARGIN_PX, 42, subtitle, SMALL_PX, colour="#555555"))
    for k, ((bid, _, tip), ls) in enumerate(zip(labels, lines, strict=True)):
        angle = -math.pi / 2 + 2 * math.pi * k / max(n, 1)
        x, y = cx + rx * math.cos(angle), cy + ry * math.sin(angle)
        d.boxes.append(Box(bid, x - w / 2, y - h / 2, w, h, ls, fill, BOX_STROKE, tip))
    chords = [(divmod(p, n), c, g) for p, c, g in zip(pairs.tolist(), counts.tolist(), bw.tolist(), strict=True)
              if divmod(p, n)[0] != divmod(p, n)[1]]
    uniform = len({c for _, c, _ in chords}) == 1
    thin = len(chords) > 48
    for (a, b), c, g in chords:
        p, r = d.boxes[a], d.boxes[b]
        label = "" if uniform or c == 1 else f"x{c:,}"
        d.edges.append(Edge(p.id, r.id, c, p.cx, p.cy, r.cx, r.cy, EDGE_COLOUR, 1.2 if thin else edge_width(c),
                            f"{p.id} — {r.id}: {c:,} link{'s' if c > 1 else ''}, {bandwidth(g)}", label,
                            px((p.cx + r.cx) / 2), px((p.cy + r.cy) / 2 + 3)))
    caption = ([f"each line = {chords[0][1]:,} link{'s' if chords[0][1] > 1 else ''}"] if uniform and chords else [])
    for i, text in enumerate(([note] if note else []) + caption):
        d.texts.append(Text(MARGIN_PX, d.height - MARGIN_PX - 12 * (len(caption) + bool(note) - 1 - i), text, SMALL_PX,
                            colour="#555555"))
    return d


def switchless(plan: Plan, scope: str = "servers") -> Drawing:
    """A ring or full mesh of servers: every server on the ellipse, chords by link count."""
    devs = plan.devices
    labels: list[tuple[str, tuple[str, ...], str]] = [(d.name, (d.name,), f"{d.name} ({d.model})") for d in devs]
    group = np.arange(len(devs), dtype=np.int64)
    links = plan.links
    topology = plan.view.design.topology
    subtitle = f"{plan.view.design.gpus:,} GPUs · {counted('server', len(devs))} · {topology} · {len(links):,} links, no switch"
    title = f"{plan.name} · {scope}"
    return circle(f"{plan.name} {scope}", title, subtitle, labels, group, links.a_dev, links.b_dev, links.speed_gbps,
                  ROLE_FILL["server"])


def groups_overview(plan: Plan) -> Drawing:
    """A dragonfly or dragonfly+: one box per group (or run of groups past MAX_GROUPS) with
    its servers and switches, chords for the global links between groups."""
    devs = plan.devices
    links = plan.links
    pods = np.fromiter((d.pod or 0 for d in devs), dtype=np.int64, count=len(devs))
    n_groups = int(pods.max())
    group_runs = runs(list(range(1, n_groups + 1)), MAX_GROUPS)
    run_of_pod = np.full(n_groups + 1, -1, dtype=np.int64)
    for k, (s, e) in enumerate(group_runs):
        run_of_pod[s + 1:e + 1] = k
    box = run_of_pod[pods]
    # servers and endpoints join the group of the switch their first link reaches
    loose = np.nonzero((box[links.a_dev] < 0) & (box[links.b_dev] >= 0))[0]
    lower, first = np.unique(links.a_dev[loose], return_index=True)
    box[lower] = box[links.b_dev[loose[first]]]
    labels = []
    for k, (s, e) in enumerate(group_runs):
        mine = np.nonzero(box == k)[0].tolist()
        roles: dict[str, int] = {}
        for i in mine:
            roles[devs[i].role] = roles.get(devs[i].role, 0) + 1
        name = f"g{s + 1}" if e - s == 1 else f"g{s + 1}–g{e}"
        labels.append((name, (name,) + tuple(counted(r, c) for r, c in roles.items()),
                       f"group {name}: " + ", ".join(counted(r, c) for r, c in roles.items())))
    kinds = plan.link_kinds
    note = ""
    if "global" in kinds:
        g = kinds.index("global")
        note = (f"chords: the {int((links.kind == g).sum()):,} global links; each box counts the links inside it "
                "(servers, local, and global ones within a run of groups)")
    counts = plan.count_by_role()
    design = plan.view.design
    subtitle = (f"{design.gpus:,} GPUs · " + " · ".join(counted(r, c) for r, c in counts.items())
                + f" · {design.topology} of {n_groups} groups · {len(links):,} links")
    fabric = plan.view.fabric
    title = f"{plan.name}{f' · {fabric} fabric' if fabric else ''} · fabric"
    return circle(f"{plan.name} fabric", title, subtitle, labels, box, links.a_dev, links.b_dev, links.speed_gbps,
                  ROLE_FILL["unit"], note)
