"""One candidate: compiled to a plan (expand, no rendering), checked, measured.

The scan runs every check of `clusterc compile` that can reject a design or that a figure
needs, with two swapped for cheaper ones that give the same answer to what explore asks:
- `redundancy` (edge-disjoint paths, Monte Carlo: 0.2 s at 16,384 GPUs) for its worst
  single failure only (check_worst_failure: the same elements on the same cuts, skipping
  those that provably cannot be worse), so every candidate gets one;
- `traffic` for the spec's traffic requirements only (the all-to-all headline takes
  seconds at 16,384 GPUs and decides nothing here).
"""

from __future__ import annotations

import copy
import time
from decimal import Decimal
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..check import CHECKS, Check, CheckResults, run_checks
from ..check.bisection import BisectionFigures
from ..check.collectives import CollectivesFigures, headline as collective_headline
from ..check.hops import HopsFigures
from ..check.oversubscription import OversubscriptionFigures
from ..check.redundancy import WorstFailureFigures, check_worst_failure
from ..check.traffic import TrafficFigures, check_traffic_required
from ..diagnostics import SpecInvalid
from ..pipeline import plan_from_source
from ..plan.order import DEFAULT_SCOPE, in_scope, order_lines, order_totals
from ..plan.model import Plan
from ..plan.power import secondary_power_models
from ..render.summary import cables_by_kind
from ..resilience.report import failure_figures
from ..topology import ClosRecord, PlanesRecord
from ..yaml12 import Source
from .choices import Candidate

SCAN_CHECKS = {name: c for name, c in CHECKS.items() if name != "redundancy"} | {
    "traffic": Check(check_traffic_required, TrafficFigures),
    "worst_failure": Check(check_worst_failure, WorstFailureFigures, needs=("bisection",)),
}


@dataclass(frozen=True)
class Failures:
    """How to weigh a candidate under failures (`--objective resilience`): sampled states of
    its compute fabric under the rates file (None: the defaults), seeded alike for every
    candidate."""

    samples: int
    seed: int
    rates_file: str | None = None


@dataclass(eq=False)  # identity: one record per candidate
class Evaluated:
    """A candidate's figures (None where it was rejected before they existed)."""

    candidate: Candidate
    rejected: str | None = None
    switches: dict[str, int] = field(default_factory=dict)  # by role
    switch_models: dict[str, str] = field(default_factory=dict)  # by role
    tiers: int | None = None
    cables: int | None = None
    transceivers: int | None = None
    # cost and power in one named scope (plan/order.py: `network` by default, as compare's)
    scope: str = DEFAULT_SCOPE
    power_w: float | None = None  # the scope's known parts
    power_unknown_for: list[str] = field(default_factory=list)  # parts without a published power
    cost: Decimal | None = None  # None: no price file, or unknown (a part unpriced: cost_unpriced names it)
    priced_cost: Decimal | None = None  # the priced parts' sum (a floor where some are unpriced)
    currency: str | None = None  # None: no price file
    power_secondary_for: list[str] = field(default_factory=list)  # switch models whose power is secondary (plan/power.py)
    cost_unpriced: list[str] = field(default_factory=list)
    bisection_gbps: int | None = None
    bisection_per_gpu_gbps: float | None = None
    oversubscription: dict[str, str] = field(default_factory=dict)
    max_hops: int | None = None
    collective_time_s: float | None = None  # all-reduce of the largest message size: the check's (routed ring)
    collective_bytes: int | None = None
    worst_single_failure: dict | None = None  # None: no element to lose (or rejected)
    # under sampled failures (resilience.report.failure_figures); None unless asked (Failures)
    resilience: dict | None = None
    unconfirmed: list[str] = field(default_factory=list)  # requirements that could not be judged (unknown power)
    # with `growth:`: the same design compiled at the growth target (final_size), the figures
    # above being day one's
    final: Evaluated | None = None
    gpus: int | None = None
    seconds: float = 0.0
    invalid: tuple = ()  # the spec diagnostics of a candidate that does not compile

    @property
    def switches_total(self) -> int | None:
        return sum(self.switches.values()) if self.switches or self.rejected is None else None


# warnings that leave a requirement neither met nor failed: shown with the candidate
UNCONFIRMED = ("RACK_POWER_UNKNOWN_AGAINST_LIMIT",)


def candidate_source(candidate: Candidate, requirements_file: str | Path, where: Source | None = None) -> Source:
    """The candidate as a loaded document. Its file is the requirements file, so a relative
    catalog: or bom.prices resolves as written, and with `where` (the requirements file as
    loaded) a problem points at the line that caused it (a varied key: at its list)."""
    if where is None:
        return Source(str(requirements_file), candidate.spec, positions={(): (0, 0)})
    return Source(str(requirements_file), candidate.spec, positions=where.positions, key_positions=where.key_positions)


def evaluate(candidate: Candidate, requirements_file: str | Path, where: Source | None = None,
             failures: Failures | None = None) -> Evaluated:
    t0 = time.perf_counter()
    try:
        _loaded, plan = plan_from_source(candidate_source(candidate, requirements_file, where))
    except SpecInvalid as exc:
        d = exc.diagnostics[0]
        more = f" (+{len(exc.diagnostics) - 1} more)" if len(exc.diagnostics) > 1 else ""
        return Evaluated(candidate, rejected=f"invalid: {d.message}{more}", seconds=time.perf_counter() - t0,
                         invalid=tuple(exc.diagnostics))
    checks = run_checks(plan, checks=SCAN_CHECKS)
    ev = measure(candidate, plan, checks)
    if failures is not None and ev.rejected is None:
        ev.resilience = failure_figures(plan, failures.samples, failures.seed, failures.rates_file)
    if candidate.spec.get("growth") and ev.rejected is None:
        ev.final = final_size(candidate, plan, requirements_file, failures)
        target = f"at the growth target ({_clos(plan).built_for_servers:,} servers)"
        if ev.final.rejected:
            ev.rejected = f"{target}: {ev.final.rejected}"
        ev.unconfirmed += [f"{target}: {m}" for m in ev.final.unconfirmed]
    ev.seconds = time.perf_counter() - t0
    return ev


def evaluate_one(shared: tuple[str, Source, Failures | None], candidate: Candidate) -> Evaluated:
    """One candidate, as an executor runs it: `shared` is (requirements file, the file as
    loaded, how to weigh failures), sent to each worker once."""
    path, where, failures = shared
    return evaluate(candidate, path, where, failures)


def measure(candidate: Candidate, plan: Plan, checks: CheckResults) -> Evaluated:
    view = plan.view
    roles = list(dict.fromkeys(d.role for d in plan.devices if d.tier > 0))
    counts = plan.count_by_role()
    lines = [line for _, line in order_lines(plan) if in_scope(line, DEFAULT_SCOPE)]
    total = order_totals(plan, DEFAULT_SCOPE)
    largest = collective_headline(checks.of(CollectivesFigures))  # what check, compare and summary show
    errors = [f for f in checks.findings if f.severity == "error"]
    hops = checks.of(HopsFigures)
    models = {role: view.model_id(role) for role in roles}
    return Evaluated(
        candidate,
        rejected=(f"{errors[0].code}: {errors[0].message}" + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""))
        if errors else None,
        switches={role: counts[role] for role in roles}, switch_models={r: m for r, m in models.items() if m},
        tiers=view.design.tiers,
        cables=sum(cables_by_kind(plan).values()),
        transceivers=sum(line.quantity for line in lines if line.category == "transceiver"),
        power_w=round(total.power_w, 1), power_unknown_for=list(total.power_unknown_for),
        cost=total.cost, priced_cost=total.priced, currency=total.currency, cost_unpriced=list(total.unpriced),
        power_secondary_for=list(secondary_power_models(plan)),
        bisection_gbps=checks.of(BisectionFigures).worst_cut_gbps,
        bisection_per_gpu_gbps=checks.of(BisectionFigures).per_gpu_gbps,
        oversubscription={t: str(f.max) for t, f in checks.of(OversubscriptionFigures).tiers.items()},
        max_hops=hops.max_switches if hops.max_switches is not None else getattr(hops, "max", None),
        collective_time_s=largest["seconds"] if largest else None,
        collective_bytes=largest["message_bytes"] if largest else None,
        worst_single_failure=_worst_failure(checks.of(WorstFailureFigures)),
        unconfirmed=[f.message for f in checks.findings if f.code in UNCONFIRMED],
        gpus=view.design.gpus,
    )


def _worst_failure(w: WorstFailureFigures) -> dict | None:
    if w.impact is None or w.what is None:  # both set together, by the worst failure found
        return None
    return {"what": w.what.replace("link:", "link "), "element": w.impact.switch or w.impact.link,
            "bisection_lost_percent": w.impact.bisection_lost_percent, "servers_cut_off": w.impact.servers_cut_off}


def final_size(candidate: Candidate, plan: Plan, requirements_file: str | Path,
               failures: Failures | None = None) -> Evaluated:
    """The design built out to its growth target: the servers day one's upper tiers were
    built for, the same scalable unit, no further growth."""
    spec = copy.deepcopy(candidate.spec)
    spec.pop("gpus", None)
    spec.pop("growth", None)
    design = _clos(plan)
    assert design.built_for_servers is not None
    spec["servers"] = design.built_for_servers
    if design.scalable_unit and "scalable_unit" not in candidate.left_out:
        spec["fabric"]["scalable_unit"] = design.scalable_unit
        _pin_leaf_ratio(spec, plan)
    final = Candidate(candidate.index, candidate.name + "-final", spec, candidate.choices, candidate.left_out)
    return evaluate(final, requirements_file, failures=failures)


def _clos(plan: Plan) -> ClosRecord | PlanesRecord:
    """The design record of a plan that grows (growth is a Clos idea: Clos and multi-plane)."""
    design = plan.view.design
    assert isinstance(design, (ClosRecord, PlanesRecord)), design.topology
    return design


def _pin_leaf_ratio(spec: dict, plan: Plan) -> None:
    """A default unit may build its leaf below the ratio asked (expand/unit_choice.py: more
    uplinks where that is cheaper), but a given scalable_unit measures the ratio exactly:
    pinning the unit alone would ask the target for a leaf day one does not have (an SU of 37
    at 2:1 needs 18.5 uplinks). So the leaf's measured ratio is pinned with it, in Gb/s."""
    ports = _clos(plan).leaf_ports
    if ports is None or not ports.up:
        return
    down_gbps = plan.view.design.speed_gbps
    up_gbps = plan.view.uplink_gbps
    measured = Fraction(ports.down * down_gbps, ports.up * up_gbps)
    leaf = f"{measured.numerator}:{measured.denominator}"
    over = spec["fabric"].get("oversubscription")
    # A bare ratio is the leaf's (the spine's stays its default); a mapping keeps its spine.
    spec["fabric"]["oversubscription"] = {**over, "leaf": leaf} if isinstance(over, dict) else {"leaf": leaf}
