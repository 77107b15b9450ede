"""The front as a picture and a page: cost (or power, without a price file) against
bisection per GPU, every feasible candidate a dot, the Pareto front joined, the winner
marked; and explore.html, one self-contained page in report.html's style."""

from __future__ import annotations

from html import escape

from ..render.report import report_css
from . import Exploration
from .evaluate import Evaluated
from .report import COLUMNS, _explanations, _headline, _row, _shown

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 680, 400, 100, 30, 20, 50


def _y_axis(x: Exploration) -> tuple[str, str]:
    """(figure, label): cost where every feasible candidate has one, else network power."""
    if x.feasible and all(e.cost is not None for e in x.feasible):
        cur = x.feasible[0].currency
        floor = " (floor: some parts unpriced)" if any(e.cost_unpriced for e in x.feasible) else ""
        return "cost", f"network cost, {cur}{floor}"
    floor = " (floor: " + ", ".join(sorted({p for e in x.feasible for p in e.power_unknown_for})) + " unpublished)" \
        if any(e.power_unknown_for for e in x.feasible) else ""
    return "power_w", f"network power, kW{floor}"


def _scale(lo: float, hi: float, a: float, b: float):
    span = (hi - lo) or 1.0
    return lambda v: a + (v - lo) / span * (b - a)


def front_svg(x: Exploration) -> str:
    key, label = _y_axis(x)
    pts = [(e.bisection_per_gpu_gbps or 0.0, getattr(e, key) / (1000 if key == "power_w" else 1), e) for e in x.feasible]
    title = f"{label} against bisection per GPU: {len(pts)} feasible designs, Pareto front joined"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" role="img" '
           f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
           f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>']
    if not pts:
        out.append(f'<text x="{WIDTH / 2}" y="{HEIGHT / 2}" text-anchor="middle" font-size="13">no feasible design</text></svg>')
        return "".join(out)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    pad_x, pad_y = (max(xs) - min(xs)) * 0.08 or 1.0, (max(ys) - min(ys)) * 0.08 or 1.0
    sx = _scale(min(xs) - pad_x, max(xs) + pad_x, LEFT, WIDTH - RIGHT)
    sy = _scale(min(ys) - pad_y, max(ys) + pad_y, HEIGHT - BOTTOM, TOP)
    axis = "#555"
    out.append(f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}" stroke="{axis}"/>'
               f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" stroke="{axis}"/>')
    for i in range(5):  # ticks: five on each axis, values at the ends included
        vx = min(xs) - pad_x + (max(xs) - min(xs) + 2 * pad_x) * i / 4
        vy = min(ys) - pad_y + (max(ys) - min(ys) + 2 * pad_y) * i / 4
        out.append(f'<text x="{sx(vx):.1f}" y="{HEIGHT - BOTTOM + 16}" font-size="11" text-anchor="middle">{vx:,.0f}</text>'
                   f'<text x="{LEFT - 6}" y="{sy(vy) + 4:.1f}" font-size="11" text-anchor="end">{_tick(vy)}</text>')
    out.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 10}" font-size="12" text-anchor="middle">'
               f'bisection per GPU, Gb/s (worst balanced cut)</text>'
               f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2})">{escape(label)}</text>')
    front = sorted((p for p in pts if p[2] in x.front), key=lambda p: (p[0], p[1]))
    if len(front) > 1:
        path = " ".join(f"{sx(a):.1f},{sy(b):.1f}" for a, b, _ in front)
        out.append(f'<polyline points="{path}" fill="none" stroke="#5c85d6" stroke-width="1.5"/>')
    same: dict[tuple, list[str]] = {}  # designs with identical figures share one dot and one label
    for a, b, e in pts:
        same.setdefault((a, b), []).append(e.candidate.name)
    labelled: set[tuple] = set()
    for a, b, e in sorted(pts, key=lambda p: p[2] is x.best):  # the winner drawn last, on top
        on_front, best = e in x.front, e is x.best
        colour = "#b71c1c" if best else ("#5c85d6" if on_front else "#bbb")
        r = 6 if best else (4 if on_front else 3)
        out.append(f'<circle cx="{sx(a):.1f}" cy="{sy(b):.1f}" r="{r}" fill="{colour}"><title>{escape(_tip(e))}</title></circle>')
        if (best or (on_front and len(x.front) <= 12)) and ((a, b) not in labelled or best):
            labelled.add((a, b))
            right = sx(a) > WIDTH - 150  # near the right edge: label to the left of the dot
            anchor = "end" if right else "start"
            out.append(f'<text x="{sx(a) + (-7 if right else 7):.1f}" y="{sy(b) - 6:.1f}" font-size="10" fill="{colour}" '
                       f'text-anchor="{anchor}">'
                       f'{escape(" = ".join(same[(a, b)]))}{" (best)" if best else ""}</text>')
    out.append("</svg>")
    return "".join(out)


def _tick(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.3g}"


def _tip(e: Evaluated) -> str:
    return (f"{e.candidate.name}: " + ", ".join(f"{k.split('.')[-1]}={v}" for k, v in e.candidate.choices.items())
            + f"; {e.switches_total:,} switches, {e.cables:,} cables")


def html(x: Exploration, top: int) -> str:
    front = {e.candidate.index for e in x.front}
    rows = "".join("<tr>" + "".join(f'<td class="n">{escape(c)}</td>' if i not in (1, 2, 10) else f"<td>{escape(c)}</td>"
                                    for i, c in enumerate(_row(k, e, front))) + "</tr>"
                   for k, e in enumerate(_shown(x, top), start=1))
    notes = "<br>".join(escape(line) for line in _explanations(x, top, bullet="- ") if line)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>clusterc explore: {escape(x.file)}</title><style>{report_css()}</style></head><body>"
            f"<h1>clusterc explore</h1><p>{'<br>'.join(escape(h) for h in _headline(x))}</p>"
            f"<h2>Pareto front</h2><figure>{front_svg(x)}<figcaption>{escape(_y_axis(x)[1])} against bisection per GPU; "
            "blue: the Pareto front, red: the winner, grey: feasible but beaten</figcaption></figure>"
            f"<h2>Candidates</h2><table><tr>{''.join(f'<th>{escape(c)}</th>' for c in COLUMNS)}</tr>{rows}</table>"
            f"<h2>Why, what was rejected, caveats</h2><p>{notes}</p></body></html>\n")
