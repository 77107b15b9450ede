"""The spec's `requirements:`, each checked against the measured figures; a violation is
an error finding with a stable code (and `clusterc check` exits 1)."""

from __future__ import annotations

from dataclasses import dataclass

from .allowed import nos_result, switch_models_result
from .bisection import BisectionFigures
from .context import CheckContext
from .figures import Figures
from .findings import Finding
from .traffic import TrafficFigures, traffic_requirement_results
from .hops import HopsFigures
from .oversubscription import OversubscriptionFigures, ratio_text
from .physical import rack_power_limit
from .redundancy import failure_impact
from .survive import survive_scenarios


@dataclass(frozen=True)
class RequirementsFigures(Figures):
    # One plain record per requirement the spec states: name, ok, and what was required and
    # measured (for `survive`: the failure scenario's detail instead).
    results: list[dict]
    ok: bool


def _ratio_value(text: str) -> float:
    down, up = text.split(":")
    return int(down) / int(up)


def _survive(ctx: CheckContext, survive: dict, bisection: BisectionFigures) -> tuple[dict, list[Finding]]:
    """The worst of the survive scenarios (check/survive.py): most servers cut off, then the
    least bisection; the result names what was examined and which elements the worst lost."""
    scenarios = survive_scenarios(ctx, survive)
    base = bisection.worst_cut_gbps
    if not scenarios:  # an extra fabric without the named elements (the spec checks the compute one)
        return {"failures": "", "examined": {"scenarios": [], "note": "this fabric has none of the switches or links named"}}, []
    cuts = ctx.failure_cuts(bisection.cuts)
    worst, worst_sc, worst_key = None, None, None
    for sc in scenarios:
        imp = failure_impact(ctx, base, cuts, keep_link=sc.keep_link, keep_switch=sc.keep_switch, near=sc.near)
        key = (imp.servers_cut_off, -imp.bisection_gbps)
        if worst_key is None or key > worst_key:
            worst, worst_sc, worst_key = imp, sc, key
    assert worst is not None and worst_sc is not None  # scenarios is not empty
    fraction = worst.bisection_gbps / base if base else 0.0
    need = survive.get("min_bisection_fraction", 0.5)
    what = worst_sc.what
    detail = {"failures": what, "bisection_gbps": worst.bisection_gbps, "worst_cut": worst.worst_cut,
              "bisection_fraction": round(fraction, 4), "servers_cut_off": worst.servers_cut_off,
              "gpu_ports_cut_off": worst.gpu_ports_cut_off,
              "examined": {"scenarios": [sc.placement for sc in scenarios], "worst": worst_sc.placement,
                           "elements": list(worst_sc.elements),
                           "cuts": f"{len(cuts)} balanced cuts of the intact fabric and those through the damage"}}
    findings = []
    if worst.servers_cut_off:
        findings.append(Finding("FAILURE_DISCONNECTS_SERVERS", "error",
                                f"losing {what} ({worst_sc.placement}) cuts {worst.servers_cut_off} servers off the fabric "
                                f"(requirement: survive it)", worst_sc.elements[0] if worst_sc.elements else "fabric"))
    if fraction < need:
        findings.append(Finding("FAILURE_BISECTION_BELOW_FRACTION", "error",
                                f"losing {what} ({worst_sc.placement}) leaves {worst.bisection_gbps:,} Gb/s bisection "
                                f"= {fraction:.1%} of {base:,} Gb/s; required at least {need:.0%}", "fabric"))
    return detail, findings


def check_requirements(ctx: CheckContext, bisection: BisectionFigures, oversubscription: OversubscriptionFigures,
                       hops: HopsFigures, traffic: TrafficFigures) -> tuple[RequirementsFigures, list[Finding]]:
    req = ctx.plan.requirements
    results: list[dict] = []
    findings: list[Finding] = []
    bis = bisection.worst_cut_gbps
    if "min_bisection_gbps" in req:
        ok = bis >= req["min_bisection_gbps"]
        results.append({"name": "min_bisection_gbps", "ok": ok, "required": req["min_bisection_gbps"], "measured": bis,
                        "examined": f"{len(bisection.cuts)} balanced cuts, worst '{bisection.worst_cut}' "
                                    f"({bisection.worst_cut_is})"})
        if not ok:
            findings.append(Finding("BISECTION_BELOW_REQUIREMENT", "error",
                                    f"worst-cut bisection {bis:,} Gb/s is below the required {req['min_bisection_gbps']:,} Gb/s "
                                    f"(cut '{bisection.worst_cut}')", "fabric"))
    for tier, limit in (req.get("max_oversubscription") or {}).items():
        measured = oversubscription.tiers.get(tier)
        if measured is None:  # the role exists (expand/requirements.py) but has no uplinks: a top tier
            results.append({"name": f"max_oversubscription.{tier}", "ok": True, "required": limit, "measured": None,
                            "examined": f"no {tier} switch has uplinks: a top tier, nothing above it to oversubscribe"})
            continue
        ok = measured.max_ratio <= _ratio_value(limit) + 1e-9
        results.append({"name": f"max_oversubscription.{tier}", "ok": ok, "required": limit, "measured": measured.max,
                        "examined": f"every {tier} switch with uplinks (worst: {measured.worst_switch})"})
        if not ok:
            findings.append(Finding("OVERSUBSCRIPTION_ABOVE_LIMIT", "error",
                                    f"{tier} oversubscription {measured.max} (at {measured.worst_switch}) exceeds the limit {limit}",
                                    measured.worst_switch))
    if req.get("survive"):
        detail, f = _survive(ctx, req["survive"], bisection)
        results.append({"name": "survive", "ok": not f, **detail})
        findings.extend(f)
    if req.get("availability"):  # sampled over failure states: too costly for every check
        results.append({"name": "availability", "ok": True, "required": req["availability"], "measured": None,
                        "judged_by": "clusterc resilience",
                        "examined": "not judged here: judged by `clusterc resilience`"})
    if "max_hops" in req:
        most_hops = hops.max_switches if hops.max_switches is not None else hops.max
        ok = most_hops is not None and most_hops <= req["max_hops"]
        results.append({"name": "max_hops", "ok": ok, "required": req["max_hops"], "measured": most_hops,
                        "examined": hops.method or "no GPU pair to measure"})
        if not ok:
            findings.append(Finding("HOPS_ABOVE_LIMIT", "error",
                                    f"longest GPU-to-GPU path crosses {most_hops} switches; the limit is {req['max_hops']}", "fabric"))
    traffic_results, traffic_findings = traffic_requirement_results(traffic)
    results += traffic_results
    findings += traffic_findings
    # what may be bought, run and powered: judged on every fabric of the plan (racks are shared)
    for key, judge in (("switch_models", switch_models_result), ("nos", nos_result), ("rack_power_kw", rack_power_limit)):
        if req.get(key) is not None:
            result, found = judge(ctx.all_fabrics, req[key])
            results.append(result)
            findings.extend(found)
    return RequirementsFigures(results=results, ok=all(r["ok"] for r in results)), findings


__all__ = ["check_requirements", "ratio_text"]
