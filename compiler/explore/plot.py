"""The front as a picture and a page: cost (or power, without a price file) against
bisection per GPU, every feasible candidate a dot, the Pareto front joined, the winner
marked; and explore.html, one self-contained page in report.html's style.

Python decides the geometry (scales, ticks, which dot gets a label); the SVG and HTML are
spelled by templates/explore/ (front.svg.j2, explore.html.j2).
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass

from ..render.axis import nice_ticks, tick_text
from ..render.report import report_css
from ..render.templates import render_template
from . import Exploration
from .evaluate import Evaluated
from .front import at_step
from .report import COLUMNS, GROWTH_COLUMNS, TEXT_COLUMNS, page

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 720, 420, 110, 30, 20, 56
WINNER, FRONT, BEATEN = "#b71c1c", "#3a6fd0", "#9e9e9e"
LABELLED_FRONT = 12  # more front members than this: only the winner is labelled (hover shows the rest)


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    r: int
    colour: str
    tip: str
    label: str | None  # text beside the dot, or None
    label_left: bool  # near the right edge: the label goes left of the dot
    label_y: float  # the label's baseline, clear of the labels placed before it


@dataclass(frozen=True)
class Tick:
    at: float  # pixel position along its axis
    text: str


def _y_axis(x: Exploration) -> tuple[str, str, str]:
    """(figure, axis label, caveat): cost where every feasible candidate has one, else
    network power; the caveat (a floor) goes in the caption, too long for the axis."""
    steps = [at_step(e, x.ranked_at) for e in x.feasible]
    if steps and all(e.cost is not None for e in steps):
        floor = "a floor: some parts are unpriced" if any(e.cost_unpriced for e in steps) else ""
        return "cost", f"{steps[0].scope} cost, {steps[0].currency}", floor
    floor = ("a floor: no published power for " + ", ".join(sorted({p for e in steps for p in e.power_unknown_for}))
             if any(e.power_unknown_for for e in steps) else "")
    return "power_w", f"{steps[0].scope if steps else 'network'} power, kW", floor


def _tip(e: Evaluated) -> str:
    return (f"{e.candidate.name}: " + ", ".join(f"{k.split('.')[-1]}={v}" for k, v in e.candidate.choices.items())
            + f"; {e.switches_total:,} switches, {e.cables:,} cables")


def front_plot(x: Exploration) -> dict:
    """Everything front.svg.j2 draws, in pixels."""
    key, label, floor = _y_axis(x)
    where = " at the growth target" if x.ranked_at == "target" else ""
    title = f"{label}{where} against bisection per GPU: {len(x.feasible)} feasible designs, Pareto front joined"
    plot: dict[str, Any] = {"width": WIDTH, "height": HEIGHT, "left": LEFT, "right": WIDTH - RIGHT, "top": TOP, "bottom": HEIGHT - BOTTOM,
            "title": title, "y_label": label, "x_label": "bisection per GPU, Gb/s (worst balanced cut)",
            "caption": f"{label}{where} ({floor})" if floor else f"{label}{where}",
            "dots": [], "line": "", "x_ticks": [], "y_ticks": []}
    steps = [(at_step(e, x.ranked_at), e) for e in x.feasible]
    pts = [(s.bisection_per_gpu_gbps or 0.0, float(getattr(s, key)) / (1000 if key == "power_w" else 1), e) for s, e in steps]
    if not pts:
        return plot
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    (x_lo, x_hi), (y_lo, y_hi) = _padded(xs), _padded(ys)
    sx = _scale(x_lo, x_hi, LEFT, WIDTH - RIGHT)
    sy = _scale(y_lo, y_hi, HEIGHT - BOTTOM, TOP)
    tx, x_step = nice_ticks(x_lo, x_hi)
    ty, y_step = nice_ticks(y_lo, y_hi)
    plot["x_ticks"] = [Tick(round(sx(v), 1), tick_text(v, x_step)) for v in tx]
    plot["y_ticks"] = [Tick(round(sy(v), 1), tick_text(v, y_step)) for v in ty]
    front = sorted((p for p in pts if p[2] in x.front), key=lambda p: (p[0], p[1]))
    if len(front) > 1:
        plot["line"] = " ".join(f"{sx(a):.1f},{sy(b):.1f}" for a, b, _ in front)
    same: dict[tuple, list[str]] = {}  # designs with identical figures share one dot and one label
    for a, b, e in pts:
        same.setdefault((a, b), []).append(e.candidate.name)
    labelled: set[tuple] = set()
    placed: list[tuple[float, float, float]] = []  # labels so far: left, right, baseline (px)
    # the winner first, so its label gets the best place; drawn last (on top) by the template
    for a, b, e in sorted(pts, key=lambda p: p[2] is not x.best):
        on_front, best = e in x.front, e is x.best
        px, py = sx(a), sy(b)
        text, left, y = None, False, py
        if (best or (on_front and len(x.front) <= LABELLED_FRONT)) and ((a, b) not in labelled or best):
            labelled.add((a, b))
            text = " = ".join(same[(a, b)]) + (" (best)" if best else "")
            left = px > WIDTH - RIGHT - len(text) * LABEL_CHAR_PX - 8
            y = _free_line(placed, px, py, text, left)
        plot["dots"].append(Dot(round(px, 1), round(py, 1), 6 if best else (4 if on_front else 3),
                                WINNER if best else (FRONT if on_front else BEATEN), _tip(e), text, left,
                                round(y, 1)))
    plot["dots"].reverse()  # the winner last: on top
    return plot


LABEL_CHAR_PX = 6.2  # an 11 px Helvetica character, on average: enough to keep labels apart
LABEL_LINE_PX = 13


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def _padded(values: list[float]) -> tuple[float, float]:
    """The data range with 6% room each side, so no dot sits on an axis."""
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.06 or abs(hi) * 0.06 or 1.0
    return lo - pad, hi + pad


def _free_line(placed: list[tuple[float, float, float]], px: float, py: float, text: str, left: bool) -> float:
    """A baseline for the label of the dot at (px, py) that overlaps no label placed before:
    just above the dot, else just below, else a line further out each way, in turn."""
    width = len(text) * LABEL_CHAR_PX
    x0, x1 = (px - 8 - width, px - 8) if left else (px + 8, px + 8 + width)
    y = py - 7
    for k in range(12):
        y = py - 7 - (k // 2) * LABEL_LINE_PX if k % 2 == 0 else py + 16 + (k // 2) * LABEL_LINE_PX
        if not any(x0 < r and lo < x1 and abs(base - y) < LABEL_LINE_PX for lo, r, base in placed):
            break
    placed.append((x0, x1, y))
    return y


def front_svg(x: Exploration) -> str:
    return render_template("explore/front.svg.j2", plot=front_plot(x))


def html(x: Exploration, top: int) -> str:
    return render_template("explore/explore.html.j2", page=page(x, top), columns=COLUMNS, left=TEXT_COLUMNS,
                           growth_columns=GROWTH_COLUMNS, plot=front_plot(x), css=report_css(),
                           colours={"winner": WINNER, "front": FRONT, "beaten": BEATEN})
