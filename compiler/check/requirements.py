"""The spec's `requirements:`, each checked against the measured figures; a violation is
an error finding with a stable code (and `clusterc check` exits 1)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .allowed import nos_result, switch_models_result
from .bisection import BisectionFigures
from .context import CheckContext
from .figures import Figures
from .findings import Finding
from .traffic import TrafficFigures, traffic_requirement_results
from .hops import HopsFigures
from .oversubscription import OversubscriptionFigures, ratio_text
from .physical import rack_power_limit


@dataclass(frozen=True)
class RequirementsFigures(Figures):
    # One plain record per requirement the spec states: name, ok, and what was required and
    # measured (for `survive`: the failure scenario's detail instead).
    results: list[dict]
    ok: bool


def _ratio_value(text: str) -> float:
    down, up = text.split(":")
    return int(down) / int(up)


def _clustered(ctx: CheckContext, role: str, k: int) -> np.ndarray:
    """k switches of `role` from one group (pod/SU/core group): the clustered loss is the worst."""
    g = ctx.graph
    idx = np.nonzero(ctx.switch_role == role)[0]
    keep = np.ones(g.n, dtype=bool)
    keep[idx[:k]] = False
    return keep


def _survive(ctx: CheckContext, survive: dict, base: int) -> tuple[dict, list[Finding]]:
    g = ctx.graph
    keep_switch = np.ones(g.n, dtype=bool)
    keep_link = np.ones(g.a.size, dtype=bool)
    what = []
    for role in ("leaf", "spine", "core"):
        k = survive.get(role, 0)
        if k:
            keep_switch &= _clustered(ctx, role, k)
            what.append(f"{k} {role}")
    k = survive.get("link", 0)
    if k:
        # k uplinks of the same leaf: the leaf loses the most of its paths.
        leaf = int(np.nonzero(ctx.switch_tier == 1)[0][0])
        mine = np.nonzero((g.a == leaf) | (g.b == leaf))[0][:k]
        keep_link[mine] = False
        what.append(f"{k} link(s)")
    value, cut = ctx.worst_cut_gbps(keep_link, keep_switch)
    gpu = g.at_is_gpu_server
    alive = np.unique(g.at_device[gpu & keep_switch[g.at_switch]])
    servers = np.unique(g.at_device[gpu])
    cut_off = int(servers.size - alive.size)
    fraction = value / base if base else 0.0
    need = survive.get("min_bisection_fraction", 0.5)
    detail = {"failures": ", ".join(what), "bisection_gbps": value, "worst_cut": cut,
              "bisection_fraction": round(fraction, 4), "servers_cut_off": cut_off}
    findings = []
    if cut_off:
        findings.append(Finding("FAILURE_DISCONNECTS_SERVERS", "error",
                                f"losing {detail['failures']} cuts {cut_off} servers off the fabric (requirement: survive it)", "fabric"))
    if fraction < need:
        findings.append(Finding("FAILURE_BISECTION_BELOW_FRACTION", "error",
                                f"losing {detail['failures']} leaves {value:,} Gb/s bisection = {fraction:.1%} of {base:,} Gb/s; "
                                f"required at least {need:.0%}", "fabric"))
    return detail, findings


def check_requirements(ctx: CheckContext, bisection: BisectionFigures, oversubscription: OversubscriptionFigures,
                       hops: HopsFigures, traffic: TrafficFigures) -> tuple[RequirementsFigures, list[Finding]]:
    req = ctx.plan.requirements
    results: list[dict] = []
    findings: list[Finding] = []
    bis = bisection.worst_cut_gbps
    if "min_bisection_gbps" in req:
        ok = bis >= req["min_bisection_gbps"]
        results.append({"name": "min_bisection_gbps", "ok": ok, "required": req["min_bisection_gbps"], "measured": bis})
        if not ok:
            findings.append(Finding("BISECTION_BELOW_REQUIREMENT", "error",
                                    f"worst-cut bisection {bis:,} Gb/s is below the required {req['min_bisection_gbps']:,} Gb/s "
                                    f"(cut '{bisection.worst_cut}')", "fabric"))
    for tier, limit in (req.get("max_oversubscription") or {}).items():
        measured = oversubscription.tiers.get(tier)
        if measured is None:
            results.append({"name": f"max_oversubscription.{tier}", "ok": True, "required": limit, "measured": None})
            continue
        ok = measured.max_ratio <= _ratio_value(limit) + 1e-9
        results.append({"name": f"max_oversubscription.{tier}", "ok": ok, "required": limit, "measured": measured.max})
        if not ok:
            findings.append(Finding("OVERSUBSCRIPTION_ABOVE_LIMIT", "error",
                                    f"{tier} oversubscription {measured.max} (at {measured.worst_switch}) exceeds the limit {limit}",
                                    measured.worst_switch))
    if req.get("survive"):
        detail, f = _survive(ctx, req["survive"], bis)
        results.append({"name": "survive", "ok": not f, **detail})
        findings.extend(f)
    if "max_hops" in req:
        measured = hops.max_switches if hops.max_switches is not None else hops.max
        ok = measured is not None and measured <= req["max_hops"]
        results.append({"name": "max_hops", "ok": ok, "required": req["max_hops"], "measured": measured})
        if not ok:
            findings.append(Finding("HOPS_ABOVE_LIMIT", "error",
                                    f"longest GPU-to-GPU path crosses {measured} switches; the limit is {req['max_hops']}", "fabric"))
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
