"""What `clusterc explore` shows: the best candidates as a table, the winner and why the
runners-up lose, each shown design at day one and at its growth target, what was rejected
and why, requirements that could not be judged, and the caveats.

`page(x, top)` decides all of it once, as plain strings; the text format lays it out here
(console columns), Markdown and HTML are spelled by templates/explore/.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..render.templates import render_template
from . import Exploration
from .evaluate import Evaluated
from ..plan.order import DEFAULT_SCOPE
from .front import METRICS, at_step
from ..traffic.text import seconds_text

COLUMNS = ("rank", "name", "choices", "GPUs", "switches", "cables", "transceivers", f"{DEFAULT_SCOPE} power kW",
           f"{DEFAULT_SCOPE} cost", "bisection Gb/s", "all-reduce s", "worst single failure", "front")
TEXT_COLUMNS = {1, 2, 11}  # left-aligned; the rest are numbers or short flags
GROWTH_COLUMNS = ("name", "step", "GPUs", "switches", "cables", "transceivers", f"{DEFAULT_SCOPE} power kW",
                  f"{DEFAULT_SCOPE} cost", "bisection Gb/s")


@dataclass(frozen=True)
class Page:
    title: str
    headline: list[str]
    ranked_at: str  # a sentence: which step the table and the ranking use ("" without growth)
    rows: list[list[str]]  # COLUMNS, best first
    why: list[tuple[str, str]]  # runner-up, why it loses to the best
    growth: list[list[str]]  # GROWTH_COLUMNS: day one, the target and what growth adds, per shown candidate
    rejected: list[tuple[str, str, str]]  # name, choices, reason
    unconfirmed: list[tuple[str, str]]  # name, a requirement that could not be judged
    left_out: list[str]
    caveats: list[str]


def _choices(ev: Evaluated) -> str:
    return ", ".join(f"{k.split('.')[-1]}={v}" for k, v in ev.candidate.choices.items()) or "-"


def _money(e: Evaluated) -> str:
    if e.currency is None:
        return "-"
    if e.cost is None:  # unknown: a part is unpriced (never shown as a price)
        return f"unknown ({len(e.cost_unpriced)} unpriced)"
    return f"{e.cost:,.0f} {e.currency}"


def _power(e: Evaluated) -> str:
    return "-" if e.power_w is None else f"{e.power_w / 1000:,.1f}" + (" +?" if e.power_unknown_for else "")


def _row(rank: int, ev: Evaluated, x: Exploration) -> list[str]:
    e = at_step(ev, x.ranked_at)
    w = e.worst_single_failure
    return [str(rank), ev.candidate.name, _choices(ev), f"{e.gpus:,}", f"{e.switches_total:,}", f"{e.cables:,}",
            f"{e.transceivers:,}", _power(e), _money(e), f"{e.bisection_gbps:,}",
            seconds_text(e.collective_time_s),
            "-" if w is None else f"{w['what']} -{w['bisection_lost_percent']}%",
            "yes" if ev in x.front else ""]


def _shown(x: Exploration, top: int) -> list[Evaluated]:
    """The best `top`, then any front member below them (the front is always shown)."""
    shown = x.ranking[:top]
    return shown + [e for e in x.ranking[top:] if e in x.front]


def _headline(x: Exploration) -> list[str]:
    lines = [f"{len(x.evaluated):,} candidates compiled and checked"
             + (f" ({x.duplicates} duplicate combinations skipped)" if x.duplicates else "")
             + f", {len(x.feasible):,} feasible, {len(x.front):,} on the Pareto front of "
             + ", ".join(METRICS[m][0] for m in x.front_metrics) + f"; objective: {x.objective}"]
    if x.failures is not None:
        f = x.failures
        lines.append(f"under failures: {f.samples:,} sampled states per candidate, seed {f.seed}, rates "
                     f"{f.rates_file or 'built in'} (clusterc resilience); delivery = share of GPUs reached x bisection "
                     "fraction, p99 = the 1-in-100 state")
    best = x.best
    if best is not None:
        e = at_step(best, x.ranked_at)
        lines.append(f"best: {best.candidate.name} ({_choices(best)}): {e.switches_total:,} switches "
                     f"({', '.join(f'{n} {r}' for r, n in e.switches.items())}), {e.cables:,} cables, "
                     f"bisection {e.bisection_gbps:,} Gb/s" + (" at the growth target" if x.ranked_at == "target" else ""))
    return lines


def _ranked_at(x: Exploration) -> str:
    if x.ranked_at == "target":
        return ("Ranked at the growth target: the table, the front and the reasons use each design built out to its "
                "target (--at day-one ranks on day one); the growth table has both steps.")
    if x.grows:
        return "Ranked at day one (--at day-one); the growth table has both steps."
    return ""  # no growth: day one is the whole design, nothing to say


def _growth_rows(shown: list[Evaluated]) -> list[list[str]]:
    rows = []
    for ev in shown:
        f = ev.final
        if f is None:
            continue
        for step, e in (("day one", ev), ("target", f)):
            rows.append([ev.candidate.name, step, f"{e.gpus:,}", f"{e.switches_total:,}", f"{e.cables:,}", f"{e.transceivers:,}",
                         _power(e), _money(e), f"{e.bisection_gbps:,}"])

        def more(a, b, fmt):
            return "-" if a is None or b is None else fmt(b - a)
        rows.append([ev.candidate.name, "added by growth", more(ev.gpus, f.gpus, lambda d: f"+{d:,}"),
                     more(ev.switches_total, f.switches_total, lambda d: f"+{d:,}"),
                     more(ev.cables, f.cables, lambda d: f"+{d:,}"), more(ev.transceivers, f.transceivers, lambda d: f"+{d:,}"),
                     more(ev.power_w, f.power_w, lambda d: f"+{d / 1000:,.1f}" + (" +?" if f.power_unknown_for else "")),  # noqa: B023
                     more(ev.cost, f.cost, lambda d: f"+{d:,.0f} {ev.currency}"),  # noqa: B023 (more() calls it at once)
                     more(ev.bisection_gbps, f.bisection_gbps, lambda d: f"{d:+,}")])
    return rows


def page(x: Exploration, top: int) -> Page:
    shown = _shown(x, top)
    return Page(
        title=f"clusterc explore: {x.file}",
        headline=_headline(x),
        ranked_at=_ranked_at(x),
        rows=[_row(i, e, x) for i, e in enumerate(shown, start=1)],
        why=[(e.candidate.name, w) for e in shown if e is not x.best and (w := x.why(e)) is not None],  # None: never, ranked are feasible
        growth=_growth_rows(shown),
        rejected=[(e.candidate.name, _choices(e), e.rejected) for e in x.evaluated if e.rejected],
        unconfirmed=[(e.candidate.name, m) for e in shown for m in e.unconfirmed],
        left_out=sorted({k for e in x.evaluated for k in e.candidate.left_out}),
        caveats=x.caveats(),
    )


def _columns(rows: list[list[str]], header: tuple[str, ...], left: set[int]) -> list[str]:
    table = [list(header)] + rows
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return ["  ".join(c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in table]


def text(x: Exploration, top: int) -> str:
    p = page(x, top)
    out = p.headline + ([p.ranked_at] if p.ranked_at else []) + [""] + _columns(p.rows, COLUMNS, TEXT_COLUMNS)
    if p.why:
        out += ["", "why the others lose to the best:"] + [f"  {name}: {why}" for name, why in p.why]
    if p.growth:
        out += ["", "day one and the growth target:"] + ["  " + line for line in _columns(p.growth, GROWTH_COLUMNS, {0, 1})]
    if p.unconfirmed:
        out += ["", "requirements not confirmed:"] + [f"  {name}: {m}" for name, m in p.unconfirmed]
    if p.rejected:
        out += ["", f"rejected ({len(p.rejected)}):"] + [f"  {name} ({choices}): {why}" for name, choices, why in p.rejected]
    if p.left_out:
        out += ["", "left out where the topology does not take them: " + ", ".join(p.left_out)]
    if p.caveats:
        out += ["", "caveats:"] + [f"  {c}" for c in p.caveats]
    return "\n".join(out) + "\n"


def markdown(x: Exploration, top: int) -> str:
    return render_template("explore/explore.md.j2", page=page(x, top), columns=COLUMNS, left=TEXT_COLUMNS,
                           growth_columns=GROWTH_COLUMNS)
