"""The Pareto front of the feasible candidates, the winner for an objective, and why each
runner-up loses to it. Pure functions over Evaluated records; O(n^2) in the feasible
candidates for the front (n is at most --max-candidates, 1,000 by default: well under a second).

Each takes the step ranked at: `at="day-one"` reads a candidate's own figures, `at="target"`
those of the same design built out to its growth target (Evaluated.final; without growth
the two are the same design).
"""

from __future__ import annotations

from decimal import Decimal

from .evaluate import Evaluated
from ..traffic.text import seconds_text

# figure -> (label, unit, sense): -1 smaller is better, +1 larger is better
METRICS = {
    "cost": ("cost", "", -1),
    "power_w": ("power", "W", -1),
    "switches": ("switches", "", -1),
    "cables": ("cables", "", -1),
    "bisection_gbps": ("bisection", "Gb/s", +1),
    "collective_time_s": ("all-reduce time", "s", -1),
    # under sampled failures (--objective resilience): per state the share of GPUs still reached
    # times the bisection fraction, at the 1-in-100 state; its mean breaks a tie
    "delivery_p99": ("delivery p99 under failures", "", +1),
}
OBJECTIVES = {"cost": "cost", "power": "power_w", "switches": "switches", "cables": "cables",
              "collective_time": "collective_time_s", "resilience": "delivery_p99"}
RESILIENCE = {"delivery_p99", "delivery_mean"}  # read from Evaluated.resilience


AT = ("target", "day-one")


def at_step(ev: Evaluated, at: str) -> Evaluated:
    """The figures ranked: the candidate's own (day one) or at its growth target."""
    return ev.final if at == "target" and ev.final is not None else ev


def value(ev: Evaluated, metric: str):
    if metric in RESILIENCE:
        return None if ev.resilience is None else ev.resilience[metric]
    return ev.switches_total if metric == "switches" else getattr(ev, metric)


def _front_metrics(feasible: list[Evaluated], at: str) -> list[str]:
    """The metrics every feasible candidate has (cost only with a price file)."""
    return [m for m in METRICS if feasible and all(value(at_step(e, at), m) is not None for e in feasible)]


def _dominates(a: Evaluated, b: Evaluated, metrics: list[str]) -> bool:
    """a (figures at the ranked step) at least as good as b on every metric, better on one."""
    better = False
    for m in metrics:
        sense = METRICS[m][2]
        va, vb = sense * value(a, m), sense * value(b, m)
        if va < vb:
            return False
        better |= va > vb
    return better


def pareto_front(feasible: list[Evaluated], at: str = "day-one") -> tuple[list[Evaluated], list[str]]:
    """Candidates no other candidate beats on every metric (ties kept), and the metrics used."""
    metrics = _front_metrics(feasible, at)
    step = {id(e): at_step(e, at) for e in feasible}
    front = [a for a in feasible
             if not any(_dominates(step[id(b)], step[id(a)], metrics) for b in feasible if b is not a)]
    return front, metrics


def ranked(feasible: list[Evaluated], objective: str, at: str = "day-one") -> list[Evaluated]:
    """Best first for the objective; ties broken (the resilience objective: first by the mean
    delivery under failures) by switches, cables, power, then the order the choices were
    written (so a user's first-listed preference wins a tie). A figure that is unknown (no
    estimate; a cost with an unpriced part) ranks after every known one."""
    key = OBJECTIVES[objective]

    def order(candidate: Evaluated):
        e = at_step(candidate, at)
        v = value(e, key)  # None (no estimate) sorts last
        mean = value(e, "delivery_mean") if key == "delivery_p99" else None
        return (v is None, 0 if v is None else METRICS[key][2] * -v, -(mean or 0.0), e.switches_total, e.cables,
                e.power_w or 0.0, -(e.bisection_gbps or 0), e.candidate.index)
    return sorted(feasible, key=order)


def _fmt(metric: str, v) -> str:
    unit = METRICS[metric][1]
    if metric == "collective_time_s":
        return seconds_text(v)
    if metric in RESILIENCE:  # a fraction of the intact fabric
        return f"{v:.4f}"
    if isinstance(v, Decimal):  # money: to the unit, exact
        return f"{v:,.0f}"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.1f}{' ' + unit if unit else ''}"
    return f"{int(v):,}{' ' + unit if unit else ''}"


def why_loses(ev: Evaluated, best: Evaluated, objective: str, metrics: list[str], at: str = "day-one") -> str:
    """One line: how a runner-up compares with the winner, worse first, then what it gains."""
    ev, best = at_step(ev, at), at_step(best, at)
    worse: list[str] = []
    gains: list[str] = []
    ties: list[str] = []
    for m in metrics:
        a, b = value(ev, m), value(best, m)
        if a == b:
            ties.append(METRICS[m][0])
            continue
        sense = METRICS[m][2]
        delta = a - b
        pct = f" ({delta / b * 100:+.0f}%)" if b else ""
        text = f"{METRICS[m][0]} {_fmt(m, a)} vs {_fmt(m, b)}{pct}"
        (gains if sense * delta > 0 else worse).append(text)
    key = OBJECTIVES[objective]
    parts = []
    if key == "cost" and ev.cost is None and ev.currency is not None:  # unknown cost never wins on cost
        parts.append(f"cost unknown, ranked after every priced design: the price file lacks {', '.join(ev.cost_unpriced)}")
    if worse:
        parts.append("worse: " + "; ".join(worse))
    if gains:
        parts.append("better: " + "; ".join(gains))
    if value(ev, key) == value(best, key) and value(ev, key) is not None:
        parts.insert(0, f"ties on {METRICS[key][0]}; loses the tie-break (switches, cables, power, then listed order)")
    return ". ".join(parts) if parts else "identical figures; listed later"
