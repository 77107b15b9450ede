"""A torus or mesh overview as a grid: the nodes (torus routers, or the chips of a direct
torus) in blocks of neighbouring coordinates, each z-range of blocks a panel of x
(across) by y (down). Neighbouring blocks in a panel are joined by a line; a link that
wraps around (or is twisted) ends in a short stub at the grid's edge; links along z
join the same block in the next panel and are counted in a caption. A 16 x 16 x 16
pod is 4 x 4 x 4 blocks of 64 chips: four panels of 16 boxes.

Node k of the plan's routers (or chips) is at coordinate unravel(k, dims): the
builders lay them out in row-major order (expand/torus.py).
"""

from __future__ import annotations

import math

import numpy as np

from ...plan.columns import distinct
from ...plan.model import Plan
from ...topology import TorusRecord
from .drawing import Box, Drawing, Edge, Panel, Text, px
from .groups import counted
from .layered import bandwidth
from .style import (BOX_STROKE, EDGE_COLOUR, LINE_PX, MARGIN_PX, ROLE_FILL, SMALL_PX, TITLE_PX, edge_width,
                    text_px)

BLOCKS_PER_AXIS = {1: 8, 2: 8, 3: 4}  # by the number of dimensions: at most 8, 64 or 64 boxes, one screen
BOX_W, BOX_H, GAP = 124, 3 * LINE_PX + 8, 40
STUB_PX = 14
HEADER_PX = 64
AXES = "xyz"


def torus_overview(plan: Plan) -> Drawing:
    devs = plan.devices
    design = plan.view.design
    assert isinstance(design, TorusRecord), design.topology
    direct = design.direct
    node_role = "chip" if direct else "router"
    dims = list(design.dims or ())
    wrap = list(design.wrap or [True] * len(dims))
    n_dims = len(dims)
    dims3, wrap3 = dims + [1] * (3 - n_dims), wrap + [False] * (3 - n_dims)
    limit = BLOCKS_PER_AXIS[n_dims]
    size = [math.ceil(k / limit) for k in dims3]  # coordinates per block along each axis
    nblk = [math.ceil(k / s) for k, s in zip(dims3, size, strict=True)]

    nodes = np.array([i for i, d in enumerate(devs) if d.role == node_role], dtype=np.int64)
    linear = np.fromiter((devs[i].index - 1 for i in nodes.tolist()), dtype=np.int64, count=len(nodes))
    coords = np.unravel_index(linear, dims3)
    bc = [c // s for c, s in zip(coords, size, strict=True)]
    block = np.full(len(devs), -1, dtype=np.int64)
    block[nodes] = np.ravel_multi_index(bc, nblk)
    links = plan.links
    # servers (switched form) join their router's block; hosts of a direct torus are counted by their chips
    attach = np.nonzero((block[links.a_dev] < 0) & (block[links.b_dev] >= 0))[0]
    served = np.zeros(int(np.prod(nblk)), dtype=np.int64)
    if len(attach):
        lower, first = np.unique(links.a_dev[attach], return_index=True)
        served = np.bincount(block[links.b_dev[attach[first]]], minlength=len(served))
    if direct:
        hosts = np.fromiter((devs[i].group or 0 for i in nodes.tolist()), dtype=np.int64, count=len(nodes))
        served = np.bincount(distinct(block[nodes] * (hosts.max() + 1) + hosts) // (hosts.max() + 1), minlength=len(served))
    per_block = np.bincount(block[nodes], minlength=len(served))

    between = (block[links.a_dev] >= 0) & (block[links.b_dev] >= 0)
    ba, bb = block[links.a_dev[between]], block[links.b_dev[between]]
    gbps = links.speed_gbps[between].astype(np.float64)
    n = len(served)
    lo, hi = np.minimum(ba, bb), np.maximum(ba, bb)
    pairs, inverse, counts = np.unique(lo * n + hi, return_inverse=True, return_counts=True)
    bw = np.bincount(inverse, weights=gbps, minlength=len(pairs))

    # panels: one per z block, as near square an arrangement as fits
    cols = math.ceil(math.sqrt(nblk[2]))
    panel_w = nblk[0] * (BOX_W + GAP) - GAP + 2 * (GAP // 2 + STUB_PX)
    panel_h = nblk[1] * (BOX_H + GAP) - GAP + 2 * (GAP // 2 + STUB_PX) + 18
    title = f"{plan.name} · fabric"
    width = max(cols * (panel_w + GAP) - GAP + 2 * MARGIN_PX, text_px(title, TITLE_PX) + 2 * MARGIN_PX, 640)
    rows = math.ceil(nblk[2] / cols)
    d = Drawing(name=f"{plan.name} fabric", title=title, width=width, height=HEADER_PX + rows * (panel_h + GAP) + 40)
    shape = " x ".join(str(k) for k in dims)
    kind = f"{design.topology} of {'chips (direct)' if direct else 'routers (switched)'}"
    twist = design.twist
    d.texts.append(Text(MARGIN_PX, 24, title, TITLE_PX, bold=True))
    d.texts.append(Text(MARGIN_PX, 42, f"{design.gpus:,} GPUs · {shape} {kind} · "
                        f"{counted(node_role, len(nodes))} · {len(links):,} links · one box per block of "
                        f"{' x '.join(str(s) for s in size[:n_dims])} {node_role}s", SMALL_PX, colour="#555555"))
    origin = {}
    for z in range(nblk[2]):
        px0 = MARGIN_PX + (z % cols) * (panel_w + GAP)
        py0 = HEADER_PX + (z // cols) * (panel_h + GAP)
        d.panels.append(Panel(px0, py0, panel_w, panel_h, "#f5f7fa"))
        if n_dims == 3:
            d.texts.append(Text(px0 + 8, py0 + 14, f"z {_span(z, size[2], dims3[2])}", SMALL_PX, bold=True))
        origin[z] = (px0 + GAP // 2 + STUB_PX, py0 + GAP // 2 + STUB_PX + 18)
    fill = ROLE_FILL["chip" if direct else "router"]
    served_word = "host" if direct else "server"
    for k in range(n):
        bx, by, bz = np.unravel_index(k, nblk)
        ox, oy = origin[int(bz)]
        name = _block_name(int(bx), int(by), size, dims3, n_dims)  # z: the panel's
        if int(per_block[k]) == 1:
            name = devs[int(nodes[np.nonzero(block[nodes] == k)[0][0]])].name
        lines = (name, counted(node_role, int(per_block[k])), counted(served_word, int(served[k])))
        bid = f"block-{k + 1:03d}"
        d.boxes.append(Box(bid, ox + int(bx) * (BOX_W + GAP), oy + int(by) * (BOX_H + GAP), BOX_W, BOX_H, lines, fill,
                           BOX_STROKE, f"{lines[0]}: {lines[1]}, {lines[2]}"))
    per_axis: dict[str, set[int]] = {}
    inside = {}
    for p, c, g in zip(pairs.tolist(), counts.tolist(), bw.tolist(), strict=True):
        a, b = divmod(p, n)
        if a == b:
            inside[a] = c
            continue
        ca, cb = np.unravel_index(a, nblk), np.unravel_index(b, nblk)
        diff = [abs(int(u) - int(v)) for u, v in zip(ca, cb, strict=True)]
        axis = max(range(3), key=lambda i: diff[i])
        per_axis.setdefault(AXES[axis], set()).add(c)
        p_box, r_box = d.boxes[a], d.boxes[b]
        title_e = f"{p_box.title.split(':')[0]} — {r_box.title.split(':')[0]}: {c:,} links, {bandwidth(g)}"
        if axis == 2 or sum(1 for v in diff if v) > 1:
            continue  # along z (between panels) or twisted: counted in the caption
        if diff[axis] == 1:  # neighbours in the panel
            fx1, fy1, fx2, fy2 = _facing(p_box, r_box)
            d.edges.append(Edge(p_box.id, r_box.id, c, px(fx1), px(fy1), px(fx2), px(fy2), EDGE_COLOUR, edge_width(c), title_e))
        else:  # wraps around: a stub out of each end
            for box, sign in ((p_box, -1), (r_box, 1)):
                x1, y1, x2, y2 = _stub(box, axis, sign)
                d.edges.append(Edge(box.id, box.id, c, px(x1), px(y1), px(x2), px(y2), EDGE_COLOUR, edge_width(c),
                                    title_e + " (wraps)"))
    caption = []
    for axis_name in AXES[:n_dims]:
        if axis_name in per_axis:
            axis_counts = sorted(per_axis[axis_name])
            c_text = f"{axis_counts[0]:,}" if len(axis_counts) == 1 else f"{axis_counts[0]:,}–{axis_counts[-1]:,}"
            where = "between panels (same box)" if axis_name == "z" else "per line"
            w = "wraps around (stubs at the edges)" if wrap3[AXES.index(axis_name)] else "open (a mesh)"
            caption.append(f"{axis_name}: {c_text} link{'s' if axis_counts[-1] > 1 else ''} {where}, {w}")
    if twist:
        caption.append(f"twist: wrap links along {AXES[twist[0]]} shift {twist[2]} along {AXES[twist[1]]}")
    if inside:
        c = sorted(set(inside.values()))
        caption.append(f"inside each box: {c[0]:,}{'' if len(c) == 1 else f'–{c[-1]:,}'} links")
    for i, text in enumerate(caption):
        d.texts.append(Text(MARGIN_PX, d.height - 16 - 12 * (len(caption) - 1 - i), text, SMALL_PX, colour="#555555"))
    return d


def _span(b: int, size: int, k: int) -> str:
    lo, hi = b * size, min(k, (b + 1) * size) - 1
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _block_name(x: int, y: int, size: list[int], dims: list[int], n_dims: int) -> str:
    parts = [f"{a}{_span(v, s, k)}" for a, v, s, k in zip(AXES, (x, y), size, dims, strict=False)]  # the panel is x by y: z is not named
    return " ".join(parts[:min(n_dims, 2)])


def _facing(a: Box, b: Box) -> tuple[float, float, float, float]:
    """The line between the facing sides of two boxes in one row or column."""
    if a.y == b.y:
        left, right = (a, b) if a.x < b.x else (b, a)
        return left.x + left.w, left.cy, right.x, right.cy
    top, bottom = (a, b) if a.y < b.y else (b, a)
    return top.cx, top.y + top.h, bottom.cx, bottom.y


def _stub(box: Box, axis: int, sign: int) -> tuple[float, float, float, float]:
    """A short line out of the box's side: left/right along x, up/down along y."""
    if axis == 0:
        x = box.x if sign < 0 else box.x + box.w
        return x, box.cy, x + sign * STUB_PX, box.cy
    y = box.y if sign < 0 else box.y + box.h
    return box.cx, y, box.cx, y + sign * STUB_PX
