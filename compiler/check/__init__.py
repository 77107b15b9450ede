"""Analyses over a plan that return findings (capacity, bisection, redundancy, ...).

`run_checks(plan)` runs every registered check in order (later checks may read earlier
figures) and returns the report written to report/checks.json.
"""

from __future__ import annotations

import time

from ..plan.fabrics import fabric_view
from ..plan.model import Plan
from ..progress import stage
from .bisection import CONVENTION, check_bisection
from .budgets import check_budgets
from .collectives import check_collectives
from .context import CheckContext
from .hops import check_hops
from .oversubscription import check_oversubscription
from .physical import physical_findings
from .redundancy import check_redundancy
from .requirements import check_requirements
from .scale_up import check_scale_up
from .traffic import check_traffic

# check name -> fn(ctx) -> (figures, findings). Order matters: later ones read earlier figures.
CHECKS = {
    "budgets": check_budgets,
    # rack power and cable reach (with a layout) of every fabric: a storage switch draws from its rack too
    "physical": lambda ctx: ({}, physical_findings(ctx.all_fabrics)),
    "bisection": check_bisection,
    "oversubscription": check_oversubscription,
    "redundancy": check_redundancy,
    "hops": check_hops,
    "scale_up": check_scale_up,  # before collectives, which use its domains
    "collectives": check_collectives,
    "traffic": check_traffic,  # all-to-all per routing (compiler/traffic); before requirements, which read it
    "requirements": check_requirements,
}

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def run_checks(plan: Plan, seed: int = 1) -> dict:
    # Checks judge the compute fabric: storage and management links are no GPU paths.
    ctx = CheckContext(fabric_view(plan), seed=seed, whole=plan)
    findings = []
    seconds = {}
    for name, check in CHECKS.items():
        t0 = time.perf_counter()
        with stage(f"check {name}"):
            figures, found = check(ctx)
        seconds[name] = time.perf_counter() - t0
        ctx.figures[name] = figures
        findings.extend(found)
    findings.sort(key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
    errors = [f for f in findings if f.severity == "error"]
    return {
        "name": plan.name,
        "ok": not errors,
        "convention": CONVENTION,
        "figures": ctx.figures,
        "findings": [f.as_dict() for f in findings],
        "_seconds": seconds,  # timing for benchmarks; never written to files
    }


def report_for(plan: Plan) -> dict:
    """The check report of a plan, computed once and shared by every output; without timings."""
    report = plan.memo("checks", run_checks)
    return {k: v for k, v in report.items() if not k.startswith("_")}
