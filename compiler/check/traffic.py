"""The headline of the traffic analysis in the check report: what an all-to-all (MoE) gets
under each routing that applies to the fabric, and the figures the spec's
`requirements: traffic:` ask for (checked in requirements.py, TRAFFIC_BELOW_REQUIREMENT).

The analysis itself is compiler/traffic (`clusterc traffic` gives every pattern, hot links
and failures). The headline is left out above the size each family's routes give for it
(traffic/routing.py `headline_max_gpus`: on a Clos 4,096 GPUs, where it costs about 0.4 s
of CPU), with an info finding that says what it would cost; a requirement is evaluated at
any size.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..plan.model import Plan
from ..traffic import TrafficError, traffic_report
from ..traffic.fabric import TrafficFabric
from ..traffic.routing import Router, RoutingError
from .context import CheckContext
from .figures import Figures
from .findings import Finding

HEADLINE_PATTERN = "all-to-all"
KEYS = ("fraction", "min_fraction", "gbps_per_gpu", "max_link_load")


@dataclass(frozen=True)
class TrafficFigures(Figures):
    """The headline (`pattern`, `results` per routing, `notes`, or why `skipped` /
    `unavailable`) and the spec's `required` floors with what was measured: checks.json's
    `traffic` entry as is (its keys follow what applies to the fabric)."""

    entry: dict

    def as_json(self) -> dict:
        return self.entry


def check_traffic(ctx: CheckContext) -> tuple[TrafficFigures, list[Finding]]:
    """The headline and the required floors."""
    return _traffic(ctx, headline=True)


def _traffic(ctx: CheckContext, headline: bool) -> tuple[TrafficFigures, list[Finding]]:
    plan = ctx.plan
    gpus = plan.view.design.gpus
    wanted = (plan.requirements or {}).get("traffic") or []
    figures: dict = {"pattern": HEADLINE_PATTERN, "results": [], "required": []}
    findings: list[Finding] = []
    routings: list[str] = []
    if not headline:
        figures["skipped"] = "headline not measured (requirements only)"
    else:
        try:
            router = Router(TrafficFabric(plan, graph=ctx.graph))
        except RoutingError as exc:
            figures["skipped"] = str(exc)
        else:
            if gpus > router.headline_max_gpus:
                figures["skipped"] = (f"not estimated above {router.headline_max_gpus:,} GPUs on this {router.model.kind} "
                                      f"fabric in every compile ({router.headline_cost}); run clusterc traffic --pattern all-to-all")
                findings.append(Finding("TRAFFIC_ESTIMATE_SKIPPED", "info",
                                        f"{HEADLINE_PATTERN} over {gpus:,} GPUs: {figures['skipped']}", "fabric"))
            else:
                routings = list(router.available())
    notes: list[str] = []
    for routing, result in _headline(plan, routings):
        if isinstance(result, TrafficError):  # a model that does not apply to this (degraded) fabric says why
            figures.setdefault("unavailable", {})[routing] = str(result)
            continue
        figures["results"].append({"routing": result["routing"], **{k: result[k] for k in KEYS}})
        notes += [n for n in result["notes"] if n not in notes]
    if routings:
        figures["notes"] = notes
        text = ", ".join(f"{r['routing']} {r['fraction']:.1%} of line rate (slowest connection {r['min_fraction']:.1%})"
                         for r in figures["results"])
        if figures["results"]:
            findings.append(Finding("TRAFFIC_ESTIMATE", "info", f"{HEADLINE_PATTERN} over {gpus:,} GPUs, calibrated max-min sharing: {text}",
                                    "fabric"))
    for req in wanted:
        entry = {**req}
        try:
            report = traffic_report(plan, [req["pattern"]], [req["routing"]], fail=req.get("fail"))
        except TrafficError as exc:
            entry["error"] = str(exc)
        else:
            fail = req.get("fail")
            r = next((x for x in report["results"] if x["failure"] == fail), None)
            if r is None:  # the failure leaves a fabric this routing cannot route
                entry["error"] = next(u["reason"] for u in report["unavailable"] if u["failure"] == fail)
            else:
                entry["measured"] = r["min_fraction" if req.get("measure") == "slowest" else "fraction"]
        figures["required"].append(entry)
    return TrafficFigures(figures), findings


def _headline(plan: Plan, routings: list[str]) -> list[tuple[str, dict | TrafficError]]:
    """The headline pattern's result under each routing: one analysis for all of them (the
    fabric and the pattern built once), or routing by routing where one does not apply."""
    if not routings:
        return []
    try:
        return list(zip(routings, traffic_report(plan, [HEADLINE_PATTERN], routings)["results"], strict=True))
    except TrafficError:
        pass
    out: list[tuple[str, dict | TrafficError]] = []
    for routing in routings:
        try:
            out.append((routing, traffic_report(plan, [HEADLINE_PATTERN], [routing])["results"][0]))
        except TrafficError as exc:
            out.append((routing, exc))
    return out


def check_traffic_required(ctx: CheckContext) -> tuple[TrafficFigures, list[Finding]]:
    """The spec's traffic floors only, without the all-to-all headline (seconds at 16,384
    GPUs): for judging many candidate designs (clusterc explore), where only a requirement
    decides anything."""
    return _traffic(ctx, headline=False)


def traffic_requirement_results(traffic: TrafficFigures) -> tuple[list[dict], list[Finding]]:
    """The spec's traffic floors against what check_traffic measured."""
    results, findings = [], []
    for entry in traffic.entry.get("required", []):
        measure = entry.get("measure", "mean")
        what = f"{entry['pattern']} under {entry['routing']}" + (f" after losing {entry['fail']}" if entry.get("fail") else "")
        name = (f"traffic.{entry['pattern']}.{entry['routing']}" + (".slowest" if measure == "slowest" else "")
                + (f" after {entry['fail']}" if entry.get("fail") else ""))
        if "error" in entry:
            results.append({"name": name, "ok": False, "required": entry["min_fraction"], "measured": None})
            findings.append(Finding("TRAFFIC_REQUIREMENT_NOT_APPLICABLE", "error",
                                    f"requirements.traffic asks for {what}: {entry['error']}", "fabric"))
            continue
        ok = entry["measured"] >= entry["min_fraction"] - 1e-9
        results.append({"name": name, "ok": ok, "required": entry["min_fraction"], "measured": entry["measured"], "measure": measure})
        if not ok:
            findings.append(Finding("TRAFFIC_BELOW_REQUIREMENT", "error",
                                    f"{what}: {'the slowest connection gets' if measure == 'slowest' else 'GPUs get'} "
                                    f"{entry['measured']:.1%} of NIC line rate; required at least {entry['min_fraction']:.0%}",
                                    "fabric"))
    return results, findings
