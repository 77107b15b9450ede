"""The layered layout: rows of boxes (top row the highest tier), bundled edges between
them, every coordinate computed here. This is how the reference architectures draw a
Clos fabric (servers in a row, rail leaves above them in rail order, spines on top),
and it costs O(boxes + edges): no crossing minimisation, because the order of every row
is known from the plan (index order, rail order).

Each edge leaves its lower box at a point spread along the box's top, ordered by where
its other end lies (and arrives likewise), so the edges of one box fan out without
crossing near it. Where every edge between two rows carries the same number of links,
one caption in the gap says so instead of a label on each edge.
"""

from __future__ import annotations

import functools
from functools import partial
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...plan.columns import distinct

from .drawing import Box, Drawing, Edge, Swatch, Text
from .style import (BOX_GAP_PX, BOX_PAD_PX, BOX_STROKE, FONT_PX, LINE_PX, MARGIN_PX, MAX_WIDTH_PX, ROW_GAP_PX,
                    ROW_LABEL_PX, SMALL_PX, TITLE_PX, edge_width, rail_colour, text_px)

HEADER_PX = 74  # title, subtitle and legend above the first row
MIN_WIDTH_PX = 720
MIN_BOX_PX = 26
MIN_FONT_PX = 8
MAX_LABELLED_EDGES = 32  # a gap with more lines than this gets a caption, not a label per line


@dataclass(slots=True)
class Cell:
    """A box before layout: one device or a run of devices."""

    id: str
    lines: tuple[str, ...]
    short: tuple[str, ...]  # used when the row is too tight for `lines`
    fill: str
    stroke: str = BOX_STROKE
    title: str = ""
    members: str = ""  # a run's device names, space-separated
    rail: int | None = None
    bold: bool = False
    size: int = 1  # devices in the box (0: not a run of like devices, e.g. an SU's servers and leaves)


@dataclass(slots=True)
class Row:
    label: str  # the role, e.g. "spines"
    sublabel: str  # what the short labels leave out, e.g. "su1-leaf-…"
    cells: list[Cell]


@dataclass
class Bundles:
    """Links between cells, one entry per pair of cells (indices over all rows, top row
    first): how many links, their bandwidth, the colour of the line. Columns, as a
    diagram of a large fabric has hundreds of them."""

    a: np.ndarray
    b: np.ndarray
    count: np.ndarray
    gbps: np.ndarray
    colour: list[str]

    def __len__(self) -> int:
        return len(self.a)


@functools.cache
def bandwidth(gbps: float) -> str:
    return f"{gbps / 1000:,.4g} Tb/s" if gbps >= 1000 else f"{gbps:,.4g} Gb/s"


def layered(name: str, title: str, subtitle: str, rows: list[Row], bundles: Bundles,
            rails: Sequence[int] = (), gap_notes: dict[int, str] | None = None, footnote: str = "") -> Drawing:
    """Lay rows out top to bottom. `gap_notes[k]` names the links between row k and k+1;
    the footnote goes under the last row."""
    avail = MAX_WIDTH_PX - ROW_LABEL_PX - 2 * MARGIN_PX
    sizes = []  # per row: box width, box height, lines chosen per cell, whether short labels are in use
    for row in rows:
        n = max(len(row.cells), 1)
        slot = (avail + BOX_GAP_PX) / n - BOX_GAP_PX
        full = max((_lines_px(c.lines, c.bold) for c in row.cells), default=0) + 2 * BOX_PAD_PX
        use_full = full <= slot
        texts = [c.lines if use_full else c.short for c in row.cells]
        natural = max((_lines_px(ts, c.bold) for c, ts in zip(row.cells, texts, strict=True)), default=0) + 2 * BOX_PAD_PX
        w = max(MIN_BOX_PX, min(natural, slot))
        # text still wider than its box: a smaller font for this row, down to MIN_FONT_PX
        font = max(MIN_FONT_PX, min(FONT_PX, FONT_PX * (w - 2 * BOX_PAD_PX) / max(natural - 2 * BOX_PAD_PX, 1)))
        h = BOX_PAD_PX + LINE_PX * max((len(ts) for ts in texts), default=1)
        sizes.append((w, h, texts, not use_full and any(c.lines != c.short for c in row.cells), round(font, 1)))
    # every row spreads over the widest row's span (boxes centred in equal slots), so a
    # row of 4 units under 16 spines spans the same width as the spines
    span = max((len(r.cells) * (w + BOX_GAP_PX) - BOX_GAP_PX for r, (w, *_) in zip(rows, sizes, strict=True)), default=0)
    width = max(MIN_WIDTH_PX, ROW_LABEL_PX + 2 * MARGIN_PX + span, text_px(title, TITLE_PX) + 2 * MARGIN_PX,
                text_px(subtitle, SMALL_PX) + 2 * MARGIN_PX, text_px(footnote, SMALL_PX) + 2 * MARGIN_PX)
    left, right = ROW_LABEL_PX + MARGIN_PX, width - MARGIN_PX
    span = right - left

    d = Drawing(name=name, title=title, width=width, height=0)
    d.texts.append(Text(MARGIN_PX, 24, title, TITLE_PX, bold=True))
    d.texts.append(Text(MARGIN_PX, 42, subtitle, SMALL_PX, colour="#555555"))
    x = MARGIN_PX
    for rail in rails:
        d.legend.append(Swatch(x, 62, rail_colour(rail), f"rail {rail}"))
        x += 64
    y = HEADER_PX
    row_of: list[int] = []
    row_y: list[tuple[float, float]] = []
    for r, (row, (w, h, texts, short, font)) in enumerate(zip(rows, sizes, strict=True)):
        n = len(row.cells)
        slot = span / max(n, 1)
        for k, (cell, ts) in enumerate(zip(row.cells, texts, strict=True)):
            d.boxes.append(Box(cell.id, left + slot * (k + 0.5) - w / 2, y, w, h, ts, cell.fill, cell.stroke,
                               cell.title or cell.id, cell.members, cell.bold, font))
            row_of.append(r)
        d.texts.append(Text(MARGIN_PX, y + h / 2 - 1, row.label, FONT_PX, bold=True))
        if short and row.sublabel:
            d.texts.append(Text(MARGIN_PX, y + h / 2 + 12, row.sublabel, SMALL_PX, colour="#555555"))
        row_y.append((y, h))
        y += h + ROW_GAP_PX
    d.height = y - ROW_GAP_PX + 2 * MARGIN_PX
    if footnote:
        d.texts.append(Text(MARGIN_PX, d.height + 4, footnote, SMALL_PX, colour="#555555"))
        d.height += 18
    _edges(d, bundles, row_of, gap_notes or {}, row_y, [c.size for r in rows for c in r.cells])
    return d


def _lines_px(lines: tuple[str, ...], bold: bool) -> float:
    """The widest line of a box (a bold first line is about a tenth wider)."""
    if not lines:
        return 0
    # the longest line is the widest (text_px grows with the length): one width per box, not per line
    if bold:
        first = text_px(lines[0]) * 1.1
        return max(first, text_px(max(lines[1:], key=len))) if len(lines) > 1 else first
    return text_px(max(lines, key=len))


def _edges(d: Drawing, bundles: Bundles, row_list: list[int], gap_notes: dict[int, str],
           row_y: list[tuple[float, float]], sizes: list[int]) -> None:
    """Edges with their attachment points and labels, and the captions of each gap.
    Vectorised over the bundles: O(edges log edges)."""
    boxes = d.boxes
    a, b, count = bundles.a, bundles.b, bundles.count
    geometry = _edge_geometry(a, b, count, row_list, sizes, boxes, len(row_y))
    cols, widths, labelled, uniform, arcs = geometry
    ids = [box.id for box in boxes]
    a_l, b_l, count_l = a.tolist(), b.tolist(), count.tolist()
    titles = [f"{ids[ea]} — {ids[eb]}{tail}" for ea, eb, tail in
              zip(a_l, b_l, map(_count_text, count_l, bundles.gbps.tolist()), strict=True)]
    labels = [_label(c) if lab else "" for c, lab in zip(count_l, labelled, strict=True)]
    zeros = [0.0] * len(a_l)  # bend, mx, my: straight lines (arcs are patched in below)
    # tuple.__new__ over each row: neither the keyword layer of Edge(...) nor a frame of Edge._make per edge
    d.edges += map(partial(tuple.__new__, Edge), zip(
        map(ids.__getitem__, a_l), map(ids.__getitem__, b_l), count_l, *cols[:4],
        bundles.colour, widths, titles, labels, *cols[4:], zeros, zeros, zeros, strict=True))
    first = len(d.edges) - len(a_l)
    for e in arcs:  # inside one row: an arc above it
        p, r = boxes[a_l[e]], boxes[b_l[e]]
        bend = 24 + 0.12 * abs(r.cx - p.cx)
        d.edges[first + e] = Edge(p.id, r.id, count_l[e], p.cx, p.y, r.cx, r.y, bundles.colour[e], widths[e], titles[e],
                                  labels[e], round((p.cx + r.cx) / 2, 1), round(min(p.y, r.y) - bend / 2, 1),
                                  round(bend, 1), round((p.cx + r.cx) / 2, 1), round(min(p.y, r.y) - bend, 1))
    for k in range(len(row_y) - 1):
        lines = [gap_notes[k]] if k in gap_notes else []
        if k in uniform:
            lines += _wrap(uniform[k], 24)
        y_top, h_top = row_y[k]
        y_mid = (y_top + h_top + row_y[k + 1][0]) / 2
        for i, line in enumerate(lines):
            d.texts.append(Text(MARGIN_PX, y_mid + 12 * i - 6 * (len(lines) - 1) + 3, line, SMALL_PX, colour="#555555"))


# scope diagrams of one fabric share their shape (boxes, bundles, counts) up to names: the
# edges' geometry is computed once per shape (a few shapes per fabric, so a small table)
_GEOMETRY: dict[tuple, tuple] = {}


def _edge_geometry(a: np.ndarray, b: np.ndarray, count: np.ndarray, row_list: list[int], sizes: list[int],
                   boxes: list[Box], n_rows: int) -> tuple:
    """Per edge (bundle): x1, y1, x2, y2, label x and y (rounded), the line width, whether it
    has a label of its own; the gaps' captions ({gap: text}); the edges inside one row.
    Depends only on the boxes' places and the bundles, never on names."""
    key = (a.dtype.str, b.dtype.str, count.dtype.str, a.tobytes(), b.tobytes(), count.tobytes(), tuple(row_list), tuple(sizes), n_rows,
           tuple((box.x, box.y, box.w, box.h) for box in boxes))
    found = _GEOMETRY.get(key)
    if found is None:
        if len(_GEOMETRY) >= 64:
            _GEOMETRY.clear()
        found = _GEOMETRY[key] = _edge_geometry_of(a, b, count, row_list, sizes, boxes, n_rows)
    return found


def _edge_geometry_of(a: np.ndarray, b: np.ndarray, count: np.ndarray, row_list: list[int], sizes: list[int],
                      boxes: list[Box], n_rows: int) -> tuple:
    row_of = np.asarray(row_list, dtype=np.int64)
    size = np.asarray(sizes, dtype=np.float64)
    ra, rb = row_of[a], row_of[b]
    upper = np.minimum(ra, rb)
    adjacent = np.abs(ra - rb) == 1
    # a gap whose lines all carry the same count (or the same count per pair of devices
    # joined, where boxes are runs) gets one caption instead of a label per line
    uniform: dict[int, str] = {}
    for k in distinct(upper[adjacent]).tolist():
        sel = adjacent & (upper == k)
        c = count[sel]
        per_pair = c / np.maximum(size[a[sel]] * size[b[sel]], 1)
        if (c == c[0]).all():
            uniform[k] = f"each line = {int(c[0]):,} link{'s' if c[0] > 1 else ''}"
        elif (size[a[sel]] > 0).all() and (size[b[sel]] > 0).all() and (per_pair == per_pair[0]).all() \
                and float(per_pair[0]).is_integer():
            p = int(per_pair[0])
            uniform[k] = f"each line = {p} link{'s' if p > 1 else ''} per pair of devices it joins"
        elif sel.sum() > MAX_LABELLED_EDGES:  # too many lines for a label each: the range, and hover
            uniform[k] = f"each line = {int(c.min()):,} to {int(c.max()):,} links (hover a line for its count)"
    labelled = ~(adjacent & np.isin(upper, list(uniform))) & (count > 1)
    crowded = np.bincount(upper[adjacent], minlength=n_rows) > 48  # thin lines where a gap is dense
    bx = np.array([box.x for box in boxes])
    by = np.array([box.y for box in boxes])
    bw = np.array([box.w for box in boxes])
    bh = np.array([box.h for box in boxes])
    bcx = bx + bw / 2
    lo = np.where(ra > rb, a, b)
    hi = np.where(ra > rb, b, a)
    # attachment points: an edge leaves its lower box's top and enters its upper box's
    # bottom, spread along the side in the order of the other ends (arcs within a row
    # leave from the box's centre and take no place)
    across = ra != rb
    x_lo, step_lo = _spread(lo, hi, bx, bw, bcx, across)
    x_hi, step_hi = _spread(hi, lo, bx, bw, bcx, across)
    y_lo, y_hi = by[lo], by[hi] + bh[hi]
    a_is_lo = lo == a
    x1, y1 = np.where(a_is_lo, x_lo, x_hi), np.where(a_is_lo, y_lo, y_hi)
    x2, y2 = np.where(a_is_lo, x_hi, x_lo), np.where(a_is_lo, y_hi, y_lo)
    # a label sits near the end whose attachments are farther apart, where labels do not collide
    t = np.where(np.where(a_is_lo, step_lo >= step_hi, step_hi >= step_lo), 0.2, 0.8)
    lx, ly = x1 + (x2 - x1) * t, y1 + (y2 - y1) * t + 3
    cols = [np.round(v, 1).tolist() for v in (x1, y1, x2, y2, lx, ly)]
    widths = [1.2 if crowded[u] and adj else edge_width(c)
              for u, adj, c in zip(upper.tolist(), adjacent.tolist(), count.tolist(), strict=True)]
    return cols, widths, labelled.tolist(), uniform, np.nonzero(ra == rb)[0].tolist()


@functools.cache
def _count_text(count: int, gbps: int) -> str:
    """An edge's tooltip after its ends: ': 8 links, 3.2 Tb/s'."""
    return f": {count:,} link{'s' if count > 1 else ''}, {bandwidth(gbps)}"


@functools.cache
def _label(count: int) -> str:
    return f"x{count:,}"


def _spread(at: np.ndarray, other: np.ndarray, bx: np.ndarray, bw: np.ndarray, bcx: np.ndarray,
            use: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x of each edge's end on box `at`, the box's edges (where `use`) spread evenly along
    its side in the order of their other ends' x; and the spacing between neighbouring ends."""
    n = len(at)
    x, step = np.zeros(n), np.ones(n)
    if not use.any():
        return x, step
    kept = np.nonzero(use)[0]
    order = kept[np.lexsort((other[kept], bcx[other[kept]], at[kept]))]  # edge ids by box, then other end's x
    n = len(order)
    box = at[order]
    first = np.r_[True, box[1:] != box[:-1]]
    start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    rank = np.arange(n) - start
    k = np.bincount(box, minlength=len(bx))[box]
    inset = np.minimum(6.0, bw[box] / 4)
    st = (bw[box] - 2 * inset) / k
    x[order] = bx[box] + inset + st * (rank + 0.5)
    step[order] = st
    return x, step


def _wrap(text: str, width: int) -> list[str]:
    """Words into lines of at most `width` characters (captions in the left column)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines
