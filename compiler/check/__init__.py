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
import time

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


def _run(ctx: CheckContext, checks: dict[str, Check],
         names: list[str]) -> tuple[dict[str, Figures], dict[str, list[Finding]], dict[str, float]]:
    """Run `names` (in that order, dependencies first) on one fabric: figures, findings and
    seconds by check name."""
    figures: dict[str, Figures] = {}
    findings: dict[str, list[Finding]] = {}
    seconds: dict[str, float] = {}
    for name in names:
        check = checks[name]
        t0 = time.perf_counter()
        with progress_stage(f"check {name}"):
            record, found = check.run(ctx, **{need: figures[need] for need in check.needs})
        seconds[name] = time.perf_counter() - t0
        if type(record) is not check.figures:  # our bug: the registry and the check disagree
            raise TypeError(f"check {name} returned {type(record).__name__}, not {check.figures.__name__}")
        figures[name] = record
        findings[name] = found
    return figures, findings, seconds


def run_checks(plan: Plan, seed: int = 1, checks: dict[str, Check] = CHECKS) -> CheckResults:
    """Every check once on the compute fabric; on a plan with extra fabrics, also every
    per-fabric check (budgets, physical, bisection, oversubscription, redundancy) on each
    of them, their findings naming the fabric (GPU paths, collectives, traffic and the
    spec's requirements are the compute fabric's). `seed` draws the random cuts and
    failure samples."""
    order = check_order(checks)
    figures, found, seconds = _run(CheckContext(fabric_plan(plan, COMPUTE), seed=seed, whole=plan), checks, order)
    in_registry_order = [f for name in checks for f in found[name]]
    per_fabric = with_needs(checks, {name for name, c in checks.items() if c.per_fabric})
    fabric_figures = {}
    for name in fabric_names(plan)[1:]:  # the extra network fabrics (storage, in-band, out-of-band)
        extra, extra_found, _ = _run(CheckContext(fabric_check_plan(plan, name), seed=seed, whole=plan), checks,
                                     [n for n in order if n in per_fabric])
        fabric_figures[name] = extra
        in_registry_order += [of_fabric(f, name) for check in checks if check in extra_found
                              for f in extra_found[check]]
    findings = sorted(in_registry_order, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))  # stable
    return CheckResults(name=plan.name, figures={name: figures[name] for name in checks}, findings=tuple(findings),
                        seconds=seconds, fabric_figures=fabric_figures)


def of_fabric(finding: Finding, fabric: str) -> Finding:
    """An extra fabric's finding: its `fabric` set and its message saying which fabric."""
    return dataclasses.replace(finding, fabric=fabric, message=f"{fabric} fabric: {finding.message}")


__all__ = ["CHECKS", "Check", "CheckOrderError", "CheckResults", "check_order", "run_checks"]
