"""Bisection bandwidth two ways: closed form from the structure, and max-flow over
balanced cuts of the plan graph (the worst cut found, and which it was)."""

from __future__ import annotations

from .analytic import ANALYTIC
from .context import CheckContext
from .findings import Finding

CONVENTION = "one direction, Gb/s; a cut splits the GPUs into two equal halves"


def check_bisection(ctx: CheckContext) -> tuple[dict, list[Finding]]:
    plan, g = ctx.plan, ctx.graph
    closed = ANALYTIC.get(plan.design["topology"])
    analytic, formula = closed(plan, g) if closed else (None, "no closed form for this topology")
    cuts = []
    for cut in ctx.cuts:
        cuts.append({"name": cut.name, "description": cut.description,
                     "gbps": ctx.cut_gbps(cut)})
    worst = min(cuts, key=lambda c: c["gbps"]) if cuts else {"name": "", "gbps": 0}
    gpus = plan.design["gpus"]
    figures = {
        "convention": CONVENTION,
        "analytic_gbps": analytic,
        "analytic_formula": formula,
        "worst_cut_gbps": worst["gbps"],
        "worst_cut": worst["name"],
        "per_gpu_gbps": round(worst["gbps"] / (gpus / 2), 3) if gpus >= 2 else None,
        "cuts": cuts,
    }
    findings = [Finding("BISECTION", "info",
                        f"bisection {worst['gbps']:,} Gb/s (worst of {len(cuts)} balanced cuts: {worst['name']}); "
                        f"closed form {analytic:,} Gb/s" if analytic is not None else
                        f"bisection {worst['gbps']:,} Gb/s (worst of {len(cuts)} balanced cuts: {worst['name']})", "fabric")]
    if analytic is not None and analytic != worst["gbps"]:
        findings.append(Finding(
            "BISECTION_METHODS_DISAGREE", "warning",
            f"closed form gives {analytic:,} Gb/s but max-flow finds {worst['gbps']:,} Gb/s on cut '{worst['name']}': "
            f"the design is not symmetric (partial SU/pod, endpoints) or the closed form does not cover it; trust the max-flow figure",
            "fabric"))
    return figures, findings
