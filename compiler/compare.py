"""Design comparison: one column per spec, one row per figure a designer weighs
(GPUs, switches by role, cables by kind, transceivers, power, bisection, oversubscription,
hops, the worst single failure). Pure functions over compiled plans; the CLI prints."""

from __future__ import annotations

from .check import CheckResults
from .check.bisection import BisectionFigures
from .check.hops import HopsFigures
from .check.traffic import TrafficFigures
from .plan.fabrics import COMPUTE
from .plan.order import DEFAULT_SCOPE, SCOPES, Totals, order_totals
from .plan.model import Plan
from .plan.power import secondary_power_models
from .render.summary import summarize
from .resilience.report import failure_figures
from .traffic.text import seconds_text


def design_figures(plan: Plan, checks: CheckResults, samples: int = 0, seed: int = 1,
                   rates_file: str | None = None) -> dict:
    """The figures compared for one plan and its check results (plain JSON values). With
    `samples`: also the compute fabric under that many sampled failure states (resilience)."""
    s = summarize(plan, checks)
    scoped = {scope: order_totals(plan, scope) for scope in SCOPES}  # the whole order, every fabric
    default = scoped[DEFAULT_SCOPE]
    worst = None
    for what, f in s["failures"].items():
        if worst is None or f["bisection_lost_percent"] > worst["bisection_lost_percent"]:
            worst = {"what": what, **f}
    hops = checks.of(HopsFigures)
    return {
        "name": s["name"], "topology": s["topology"], "gpus": s["gpus"], "servers": s["servers"],
        "switches": s["switches"], "switches_total": sum(s["switches"].values()),
        "cables": s["cables"], "cables_total": sum(s["cables"].values()),
        "transceivers": s["transceivers"],
        # cost and power in the default scope (plan/order.py, the same as explore's), and in every scope;
        # cost only from the user's price file (spec bom.prices), None without one or while a part is unpriced
        "scope": DEFAULT_SCOPE, **scope_figures(default),
        "scopes": {scope: scope_figures(t) for scope, t in scoped.items()},
        "power_secondary_for": list(secondary_power_models(plan)),
        "bisection_gbps": s["bisection_gbps"]["worst_cut"],
        "bisection_per_gpu_gbps": checks.of(BisectionFigures).per_gpu_gbps,
        "oversubscription": s["oversubscription"],
        "max_hops": hops.max, "hops_unit": hops.unit or "switches",
        "worst_single_failure": worst,
        # under sampled failure states (clusterc resilience's figures), with --samples; else None
        "resilience": failure_figures(plan, samples, seed, rates_file) if samples else None,
        "scale_up": s.get("scale_up"),
        # the check's all-reduce of the largest message size (routed ring; check/collectives.py)
        "allreduce": s["allreduce"],
        # all-to-all per routing, max-min fair (check/traffic.py); empty where not estimated
        "traffic": {r["routing"]: {"fraction": r["fraction"], "min_fraction": r["min_fraction"]}
                    for r in checks.of(TrafficFigures).entry.get("results", [])},
        # storage / in-band / OOB networks: what they add to the bill (the rows above are compute)
        "extra_fabrics": {name: {"switches": sum(f["switches"].values()), "cables": sum(f["cables"].values()),
                                 "transceivers": f["transceivers"]}
                          for name, f in (s.get("fabrics") or {}).items() if name != COMPUTE},
    }


def scope_figures(t: Totals) -> dict:
    """Cost and power of one scope as plain JSON values (cost a number of the currency,
    exact to the cent: the sum is decimal, only this last step is a float)."""
    return {"power_w": round(t.power_w), "power_unknown_for": list(t.power_unknown_for),
            "cost": None if t.cost is None else float(t.cost),
            "priced_cost": None if t.priced is None else float(t.priced),
            "currency": t.currency, "cost_unpriced_parts": list(t.unpriced)}


def _cost_text(f: dict) -> str:
    if f["currency"] is None:
        return "no price file"
    if f["cost"] is None:
        return f"unknown: {len(f['cost_unpriced_parts'])} part(s) unpriced"
    return f"{f['cost']:,.0f} {f['currency']}"


def _fmt(n) -> str:
    return "-" if n is None else (f"{n:,}" if isinstance(n, int) else str(n))


def _scale_up(up: dict | None) -> str:
    if not up:
        return "-"
    return f"{up['gpus_per_domain']:,} GPUs, {up['gbytes_per_s_per_gpu']:,} GB/s/GPU" if up["gbytes_per_s_per_gpu"] \
        else f"{up['gpus_per_domain']:,} GPUs"


def _allreduce(a: dict | None) -> str:
    if not a:
        return "-"
    if a["seconds"] is None:
        return f"{a['message']}: never completes"
    return f"{a['message']} {a['algorithm']} {seconds_text(a['seconds'])}"


def comparison_rows(figures: list[dict]) -> list[tuple[str, list[str]]]:
    """Rows of the comparison table: (label, one cell per design). Keys missing from a
    design (a role or cable kind it does not have) show as '-'."""
    def union(key):
        return list(dict.fromkeys(k for f in figures for k in f[key]))

    rows = [("topology", [f["topology"] for f in figures]),
            ("GPUs", [_fmt(f["gpus"]) for f in figures]),
            ("servers", [_fmt(f["servers"]) for f in figures])]
    rows += [(f"switches: {r}", [_fmt(f["switches"].get(r)) for f in figures]) for r in union("switches")]
    rows.append(("switches total", [_fmt(f["switches_total"]) for f in figures]))
    rows += [(f"cables: {k}", [_fmt(f["cables"].get(k)) for f in figures]) for k in union("cables")]
    rows.append(("cables total", [_fmt(f["cables_total"]) for f in figures]))
    rows.append(("transceivers", [_fmt(f["transceivers"]) for f in figures]))
    for name in union("extra_fabrics"):
        for what in ("switches", "cables", "transceivers"):
            rows.append((f"{name} fabric: {what}", [_fmt((f["extra_fabrics"].get(name) or {}).get(what)) for f in figures]))
    rows.append(("scale-up domain", [_scale_up(f["scale_up"]) for f in figures]))
    if any(f["scale_up"] and f["scale_up"]["switch_trays"] for f in figures):
        rows.append(("scale-up switch trays", [_fmt(f["scale_up"]["switch_trays"] if f["scale_up"] else None) for f in figures]))
    for scope in [DEFAULT_SCOPE] + [x for x in SCOPES if x != DEFAULT_SCOPE]:
        rows.append((f"power, {scope} (kW, known parts)", [
            f"{f['scopes'][scope]['power_w'] / 1000:,.1f}" + (" +?" if f["scopes"][scope]["power_unknown_for"] else "")
            + (" (secondary: " + ", ".join(f["power_secondary_for"]) + ")" if f.get("power_secondary_for") else "")
            for f in figures]))
        rows.append((f"cost, {scope} (price file)", [_cost_text(f["scopes"][scope]) for f in figures]))
    rows.append(("bisection (Gb/s)", [_fmt(f["bisection_gbps"]) for f in figures]))
    rows.append(("bisection per GPU (Gb/s)", [_fmt(f["bisection_per_gpu_gbps"]) for f in figures]))
    rows += [(f"oversubscription {t}", [f["oversubscription"].get(t, "-") for f in figures]) for t in union("oversubscription")]
    rows.append(("all-reduce (largest size)", [_allreduce(f["allreduce"]) for f in figures]))
    pattern = "all-to-all"
    for routing in union("traffic"):
        rows.append((f"{pattern} {routing} (mean/slowest)", [
            f"{t['fraction']:.0%}/{t['min_fraction']:.0%}" if (t := f["traffic"].get(routing)) else "-" for f in figures]))
    rows.append(("max hops", [f"{_fmt(f['max_hops'])} {'links' if f['hops_unit'] != 'switches' else 'sw'}" for f in figures]))
    rows.append(("worst single failure", [
        f"{f['worst_single_failure']['what']} -{f['worst_single_failure']['bisection_lost_percent']}%"
        if f["worst_single_failure"] else "-" for f in figures]))
    if any(f["resilience"] for f in figures):
        r0 = next(f["resilience"] for f in figures if f["resilience"])
        for key, label in (("delivery", "delivery"), ("bisection_fraction", "bisection fraction"),
                           ("gpus_cut_off_share", "GPU share cut off")):
            rows.append((f"{label} under failures, p99/mean ({r0['samples']:,} states)", [
                f"{r[key + '_p99']:.4f}/{r[key + '_mean']:.4f}" if (r := f["resilience"]) else "-" for f in figures]))
    return rows


def comparison_text(figures: list[dict]) -> str:
    rows = [("", [f["name"] for f in figures])] + comparison_rows(figures)
    label_w = max(len(r[0]) for r in rows)
    widths = [max(len(r[1][i]) for r in rows) for i in range(len(figures))]
    lines = [f"{label:<{label_w}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)) for label, cells in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"
