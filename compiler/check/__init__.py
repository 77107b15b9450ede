"""Analyses over a plan that return findings (capacity, bisection, redundancy, ...): a
stage of the pipeline.

CHECKS registers every check by name with what it needs from the others and the typed
figures it returns (check/stage.py). `run_checks(plan)` runs each once, dependencies first,
and returns CheckResults; the pipeline runs it before rendering and hands the results to
every renderer (report/checks.json, summary.json, report.html). Nothing caches results
on the plan.
"""

from __future__ import annotations

import dataclasses
import os
import time
from dataclasses import dataclass, field

from ..plan.fabrics import COMPUTE, fabric_check_plan, fabric_names, fabric_plan
from ..plan.model import Plan
from ..progress import stage as progress_stage  # (check/stage.py, a submodule, would shadow `stage`)
from .bisection import BisectionFigures, check_bisection
from .budgets import BudgetsFigures, check_budgets
from .collectives import CollectivesFigures, check_collectives
from .context import CheckContext
from .figures import Figures
from .findings import Finding
from .hops import HopsFigures, check_hops
from .oversubscription import OversubscriptionFigures, check_oversubscription
from .physical import PhysicalFigures, check_physical
from .redundancy import RedundancyFigures, check_redundancy
from .requirements import RequirementsFigures, check_requirements
from .scale_up import ScaleUpFigures, check_scale_up
from .traffic import TrafficFigures, check_traffic
from .unit_fill import UnitFillFigures, check_unit_fill
from .stage import Check, CheckOrderError, CheckResults, check_order, with_needs

# check name -> check. Registry order is the order of figures in checks.json.
CHECKS: dict[str, Check] = {
    "budgets": Check(check_budgets, BudgetsFigures, per_fabric=True),
    "physical": Check(check_physical, PhysicalFigures, per_fabric=True),  # rack power, reach (with a layout)
    "bisection": Check(check_bisection, BisectionFigures, per_fabric=True),
    "oversubscription": Check(check_oversubscription, OversubscriptionFigures, per_fabric=True),
    "unit_fill": Check(check_unit_fill, UnitFillFigures),  # a mostly empty last SU and what it costs
    "redundancy": Check(check_redundancy, RedundancyFigures, needs=("bisection",), per_fabric=True),
    "hops": Check(check_hops, HopsFigures),
    "scale_up": Check(check_scale_up, ScaleUpFigures),
    "collectives": Check(check_collectives, CollectivesFigures),  # routed (compiler/traffic/estimate.py)
    # all-to-all per routing (compiler/traffic); requirements read it
    "traffic": Check(check_traffic, TrafficFigures),
    "requirements": Check(check_requirements, RequirementsFigures,
                          needs=("bisection", "oversubscription", "hops", "traffic")),
}

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


# One run of checks on one fabric: figures, findings and seconds by check name.
_Run = tuple[dict[str, Figures], dict[str, list[Finding]], dict[str, float]]


def _run(ctx: CheckContext, checks: dict[str, Check], names: list[str],
         given: dict[str, Figures] | None = None) -> _Run:
    """Run `names` (in that order, dependencies first) on one fabric: figures, findings and
    seconds by check name. `given`: figures of checks run elsewhere that these may need."""
    available = dict(given or {})
    figures: dict[str, Figures] = {}
    findings: dict[str, list[Finding]] = {}
    seconds: dict[str, float] = {}
    for name in names:
        check = checks[name]
        t0 = time.perf_counter()
        with progress_stage(f"check {name}"):
            record, found = check.run(ctx, **{need: available[need] for need in check.needs})
        seconds[name] = time.perf_counter() - t0
        if type(record) is not check.figures:  # our bug: the registry and the check disagree
            raise TypeError(f"check {name} returned {type(record).__name__}, not {check.figures.__name__}")
        figures[name] = available[name] = record
        findings[name] = found
    return figures, findings, seconds


def run_checks(plan: Plan, seed: int = 1, checks: dict[str, Check] = CHECKS) -> CheckResults:
    """Every check once on the compute fabric; on a plan with extra fabrics, also every
    per-fabric check (budgets, physical, bisection, oversubscription, redundancy) on each
    of them, their findings naming the fabric (GPU paths, collectives, traffic and the
    spec's requirements are the compute fabric's). `seed` draws the random cuts and
    failure samples."""
    order = check_order(checks)
    compute = _run(CheckContext(fabric_plan(plan, COMPUTE), seed=seed, whole=plan), checks, order)
    extra = {name: _run_extra(plan, name, seed, checks) for name in fabric_names(plan)[1:]}
    return _assemble(plan, checks, compute, extra)


def _run_extra(plan: Plan, fabric: str, seed: int, checks: dict[str, Check]) -> _Run:
    """The per-fabric checks (and those they need) on an extra fabric."""
    per_fabric = with_needs(checks, {name for name, c in checks.items() if c.per_fabric})
    return _run(CheckContext(fabric_check_plan(plan, fabric), seed=seed, whole=plan), checks,
                [n for n in check_order(checks) if n in per_fabric])


def _assemble(plan: Plan, checks: dict[str, Check], compute: _Run, extra: dict[str, _Run]) -> CheckResults:
    """CheckResults from the compute fabric's run and each extra fabric's (in fabric order):
    figures in registry order, findings errors first, each severity in registry order."""
    figures, found, seconds = compute
    in_registry_order = [f for name in checks for f in found[name]]
    fabric_figures = {}
    for name, (extra_figures, extra_found, _) in extra.items():
        fabric_figures[name] = extra_figures
        in_registry_order += [of_fabric(f, name) for check in checks if check in extra_found
                              for f in extra_found[check]]
    findings = sorted(in_registry_order, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))  # stable
    return CheckResults(name=plan.name, figures={name: figures[name] for name in checks}, findings=tuple(findings),
                        seconds=seconds, fabric_figures=fabric_figures)


# The compute fabric's checks as independent jobs for a compile that runs them on several
# cores (render/parallel.py): each group holds a check with those it needs, longest first
# (CPU seconds at 131,072 | 524,288 GPUs: bisection and redundancy 0.9 | 7.1, collectives
# 0.3 | 3.0, the rest 0.3 | 1.8). A check in no group, or one that needs a check of another
# group (requirements), runs last, in the compile's process, with the others' figures.
CHECK_JOBS: tuple[tuple[str, ...], ...] = (
    ("bisection", "redundancy"),
    ("collectives",),
    ("budgets", "physical", "oversubscription", "unit_fill", "hops", "scale_up", "traffic"),
)


@dataclass
class CheckJobs:
    """run_checks split into jobs that any process forked from this one may run
    (`run(k)`: job k's figures, findings and seconds, small enough to pickle), longest
    first, and `finish`, which turns every job's result (in job order) into the same
    CheckResults as run_checks(plan), whichever process ran which job. A job that raised
    hands its exception to `finish`, which raises the one run_checks would have raised
    first (the earliest check in check order)."""

    plan: Plan
    seed: int
    checks: dict[str, Check]
    groups: tuple[tuple[str, ...], ...]  # the compute fabric's groups, then one per extra fabric
    last: tuple[str, ...]  # the compute checks run by `finish`
    _context: tuple[int, CheckContext] | None = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.groups)

    def run(self, k: int) -> _Run:
        extras = fabric_names(self.plan)[1:]
        if k >= len(self.groups) - len(extras):
            return _run_extra(self.plan, extras[k - (len(self.groups) - len(extras))], self.seed, self.checks)
        return _run(self._compute_context(), self.checks, list(self.groups[k]))

    def _compute_context(self) -> CheckContext:
        """The compute fabric's context, one per process: the jobs a process runs share what it
        derives (the graph's arrays, the cuts, the flow network), as in run_checks."""
        if self._context is None or self._context[0] != os.getpid():
            self._context = (os.getpid(), CheckContext(fabric_plan(self.plan, COMPUTE), seed=self.seed, whole=self.plan))
        assert self._context is not None
        return self._context[1]

    def finish(self, results: list[_Run | BaseException]) -> CheckResults:
        order = check_order(self.checks)
        n_compute = len(self.groups) - len(fabric_names(self.plan)[1:])
        compute, extras = results[:n_compute], results[n_compute:]
        failed = [(min(order.index(n) for n in group), r) for group, r in zip(self.groups[:n_compute], compute, strict=True)
                  if isinstance(r, BaseException)]
        if failed:  # the compute fabric's checks run first, in check order
            raise min(failed, key=lambda pair: pair[0])[1]
        figures: dict[str, Figures] = {}
        found: dict[str, list[Finding]] = {}
        seconds: dict[str, float] = {}
        for part in compute:
            assert not isinstance(part, BaseException)
            figures.update(part[0])
            found.update(part[1])
            seconds.update(part[2])
        if self.last:
            tail = _run(self._compute_context(), self.checks, list(self.last), given=figures)
            figures.update(tail[0])
            found.update(tail[1])
            seconds.update(tail[2])
        extra: dict[str, _Run] = {}
        for name, part in zip(fabric_names(self.plan)[1:], extras, strict=True):
            if isinstance(part, BaseException):  # then each extra fabric, in fabric order
                raise part
            extra[name] = part
        return _assemble(self.plan, self.checks, (figures, found, seconds), extra)


def check_jobs(plan: Plan, seed: int = 1, checks: dict[str, Check] = CHECKS,
               groups: tuple[tuple[str, ...], ...] = CHECK_JOBS) -> CheckJobs:
    """run_checks(plan) as CheckJobs: the groups of `groups` whose checks are registered and
    need only checks of their own group, then one job per extra fabric; every other check
    runs in `finish`."""
    order = check_order(checks)
    independent = [tuple(n for n in order if n in group) for group in groups
                   if set(group) <= set(checks) and all(set(checks[n].needs) <= set(group) for n in group)]
    grouped = {n for group in independent for n in group}
    return CheckJobs(plan, seed, checks, tuple(independent) + tuple((f"fabric:{name}",) for name in fabric_names(plan)[1:]),
                     tuple(n for n in order if n not in grouped))


def of_fabric(finding: Finding, fabric: str) -> Finding:
    """An extra fabric's finding: its `fabric` set and its message saying which fabric."""
    return dataclasses.replace(finding, fabric=fabric, message=f"{fabric} fabric: {finding.message}")


__all__ = ["CHECKS", "CHECK_JOBS", "Check", "CheckJobs", "CheckOrderError", "CheckResults", "check_jobs", "check_order",
           "run_checks"]
