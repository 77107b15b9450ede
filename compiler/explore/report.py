"""What `clusterc explore` prints: a table of the best candidates (text or Markdown), the
winner and why the runners-up lose, what was rejected and why, and the caveats."""

from __future__ import annotations

from . import Exploration
from .evaluate import Evaluated
from .front import METRICS

COLUMNS = ("rank", "name", "choices", "switches", "cables", "transceivers", "power kW", "cost", "bisection Gb/s",
           "all-reduce s", "worst single failure", "front")


def _choices(ev: Evaluated) -> str:
    return ", ".join(f"{k.split('.')[-1]}={v}" for k, v in ev.candidate.choices.items()) or "-"


def _row(rank: int, ev: Evaluated, front: set[int]) -> list[str]:
    w = ev.worst_single_failure
    return [str(rank), ev.candidate.name, _choices(ev), f"{ev.switches_total:,}", f"{ev.cables:,}", f"{ev.transceivers:,}",
            f"{ev.power_w / 1000:,.1f}" + (" +?" if ev.power_unknown_for else ""),
            "-" if ev.cost is None else f"{ev.cost:,.0f} {ev.currency}" + (" +?" if ev.cost_unpriced else ""),
            f"{ev.bisection_gbps:,}", "-" if ev.collective_time_s is None else f"{ev.collective_time_s:.4g}",
            "-" if w is None else f"{w['what']} -{w['bisection_lost_percent']}%",
            "yes" if ev.candidate.index in front else ""]


def _shown(x: Exploration, top: int) -> list[Evaluated]:
    """The best `top`, then any front member below them (the front is always shown)."""
    shown = x.ranking[:top]
    return shown + [e for e in x.ranking[top:] if e in x.front]


def _headline(x: Exploration) -> list[str]:
    lines = [f"{len(x.evaluated):,} candidates compiled and checked"
             + (f" ({x.duplicates} duplicate combinations skipped)" if x.duplicates else "")
             + f", {len(x.feasible):,} feasible, {len(x.front):,} on the Pareto front of "
             + ", ".join(METRICS[m][0] for m in x.front_metrics) + f"; objective: {x.objective}"]
    best = x.best
    if best is not None:
        lines.append(f"best: {best.candidate.name} ({_choices(best)}): {best.switches_total:,} switches "
                     f"({', '.join(f'{n} {r}' for r, n in best.switches.items())}), {best.cables:,} cables, "
                     f"bisection {best.bisection_gbps:,} Gb/s")
    return lines


def text(x: Exploration, top: int) -> str:
    front = {e.candidate.index for e in x.front}
    rows = [list(COLUMNS)] + [_row(i, e, front) for i, e in enumerate(_shown(x, top), start=1)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(COLUMNS))]
    out = _headline(x) + [""]
    out += ["  ".join(c.ljust(w) if i in (1, 2, 10) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]
    out += _explanations(x, top, bullet="  ")
    return "\n".join(out) + "\n"


def markdown(x: Exploration, top: int) -> str:
    front = {e.candidate.index for e in x.front}
    out = [f"# clusterc explore: {x.file}", ""] + [f"{line}  " for line in _headline(x)] + [""]
    out.append("| " + " | ".join(COLUMNS) + " |")
    out.append("|" + "|".join("---" if i in (1, 2, 10) else "---:" for i in range(len(COLUMNS))) + "|")
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in _row(i, e, front)) + " |"
            for i, e in enumerate(_shown(x, top), start=1)]
    out += _explanations(x, top, bullet="- ")
    return "\n".join(out) + "\n"


def _explanations(x: Exploration, top: int, bullet: str) -> list[str]:
    out = []
    runners = [e for e in _shown(x, top) if e is not x.best]
    if runners:
        out += ["", "why the others lose to the best:"]
        out += [f"{bullet}{e.candidate.name}: {x.why(e)}" for e in runners]
    grown = [e for e in _shown(x, top) if e.final is not None]
    if grown:
        out += ["", "growth: day one, then built out to the growth target (ranking uses day one):"]
        for e in grown:
            f = e.final

            def money(v):
                return "" if v is None else f", cost {v:,.0f} {e.currency}"
            out.append(f"{bullet}{e.candidate.name}: day one {e.gpus:,} GPUs, {e.switches_total:,} switches, {e.cables:,} cables"
                       f"{money(e.cost)}; at {f.gpus:,} GPUs {f.switches_total:,} switches, {f.cables:,} cables{money(f.cost)}"
                       f" (+{f.switches_total - e.switches_total:,} switches"
                       + ("" if e.cost is None else f", +{f.cost - e.cost:,.0f} {e.currency}") + ")")
    rejected = [e for e in x.evaluated if e.rejected]
    if rejected:
        out += ["", f"rejected ({len(rejected)}):"]
        out += [f"{bullet}{e.candidate.name} ({_choices(e)}): {e.rejected}" for e in rejected]
    left = sorted({k for e in x.evaluated for k in e.candidate.left_out})
    if left:
        out += ["", "left out where the topology does not take them: " + ", ".join(left)]
    caveats = x.caveats()
    if caveats:
        out += ["", "caveats:"] + [f"{bullet}{c}" for c in caveats]
    return out
