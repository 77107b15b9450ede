"""Bisection bandwidth two ways: closed form from the structure, and max-flow over
balanced cuts of the plan graph (the worst cut found, and which it was)."""

from __future__ import annotations

from dataclasses import dataclass

from .context import CheckContext
from .cuts import CutFlow
from .families import family_of
from .figures import Figures
from .findings import Finding

CONVENTION = "one direction, Gb/s; a cut splits the GPUs into two equal halves"


@dataclass(frozen=True)
class BisectionFigures(Figures):
    convention: str
    analytic_gbps: int | None  # closed form; None where the topology has none
    analytic_formula: str
    worst_cut_gbps: int  # max-flow over the worst balanced cut: what the design guarantees
    worst_cut: str
    # "exact" where a proven closed form equals the worst cut found, or every balanced split
    # was tried; else "upper bound": a balanced cut that exists, the true minimum may be lower
    worst_cut_is: str
    per_gpu_gbps: float | None
    cuts: list[CutFlow]


def check_bisection(ctx: CheckContext) -> tuple[BisectionFigures, list[Finding]]:
    plan, g = ctx.plan, ctx.graph
    analytic, formula = family_of(plan).bisection_gbps(plan, g)  # None where no form is proven
    cuts = []
    for cut in ctx.cuts:
        cuts.append(CutFlow(cut.name, cut.description, ctx.cut_gbps(cut)))
    worst = min(cuts, key=lambda c: c.gbps) if cuts else CutFlow("", "", 0)
    gpus = plan.view.design.gpus
    family = family_of(plan)
    exact = (analytic is not None and analytic == worst.gbps) or family.exhaustive(plan, g)
    figures = BisectionFigures(
        convention=CONVENTION,
        analytic_gbps=analytic,
        analytic_formula=formula,
        worst_cut_gbps=worst.gbps,
        worst_cut=worst.name,
        worst_cut_is="exact" if exact else "upper bound",
        per_gpu_gbps=round(worst.gbps / (gpus / 2), 3) if gpus >= 2 else None,
        cuts=cuts,
    )
    bound = "" if exact else "; an upper bound: no proven closed form confirms it"
    findings = [Finding("BISECTION", "info",
                        f"bisection {worst.gbps:,} Gb/s (worst of {len(cuts)} balanced cuts: {worst.name}{bound}); "
                        f"closed form {analytic:,} Gb/s" if analytic is not None else
                        f"bisection {worst.gbps:,} Gb/s (worst of {len(cuts)} balanced cuts: {worst.name}{bound})", "fabric")]
    if analytic is not None and analytic != worst.gbps:
        findings.append(Finding(
            "BISECTION_METHODS_DISAGREE", "warning",
            f"closed form gives {analytic:,} Gb/s but max-flow finds {worst.gbps:,} Gb/s on cut '{worst.name}': "
            f"the design is not symmetric (partial SU/pod, endpoints) or the closed form does not cover it; trust the max-flow figure",
            "fabric"))
    return figures, findings
