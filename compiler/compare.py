"""Design comparison: one column per spec, one row per figure a designer weighs
(GPUs, switches by role, cables by kind, transceivers, power, bisection, oversubscription,
hops, the worst single failure). Pure functions over compiled plans; the CLI prints."""

from __future__ import annotations

from .check import CheckResults
from .check.bisection import BisectionFigures
from .check.hops import HopsFigures
from .check.traffic import TrafficFigures
from .plan.bom import bom_totals
from .plan.fabrics import COMPUTE, fabric_bom
from .plan.model import Plan
from .plan.power import secondary_power_models
from .render.summary import summarize


def design_figures(plan: Plan, checks: CheckResults) -> dict:
    """The figures compared for one plan and its check results (plain JSON values)."""
    s = summarize(plan, checks)
    bom = [line for _, line in fabric_bom(plan)]  # every fabric's parts (the compute bill alone for one)
    known = [line.total_power_w for line in bom if line.total_power_w is not None]
    unknown = sorted({line.category for line in bom if line.total_power_w is None and line.category in ("switch", "server", "transceiver")})
    worst = None
    for what, f in s["failures"].items():
        if worst is None or f["bisection_lost_percent"] > worst["bisection_lost_percent"]:
            worst = {"what": what, **f}
    hops = checks.of(HopsFigures)
    prices = plan.facts.get("bom", {}).get("prices")
    everything = bom_totals(bom, prices)[-1]
    return {
        "name": s["name"], "topology": s["topology"], "gpus": s["gpus"], "servers": s["servers"],
        "switches": s["switches"], "switches_total": sum(s["switches"].values()),
        "cables": s["cables"], "cables_total": sum(s["cables"].values()),
        "transceivers": s["transceivers"],
        "power_w": round(sum(known)), "power_unknown_for": unknown,
        "power_secondary_for": list(secondary_power_models(plan)),
        # cost only from the user's price file (spec bom.prices); None without one, never guessed
        "cost": None if prices is None else round(everything.cost, 2),
        "currency": None if prices is None else prices["currency"],
        "cost_unpriced_parts": list(everything.unpriced),
        "bisection_gbps": s["bisection_gbps"]["worst_cut"],
        "bisection_per_gpu_gbps": checks.of(BisectionFigures).per_gpu_gbps,
        "oversubscription": s["oversubscription"],
        "max_hops": hops.max, "hops_unit": hops.unit or "switches",
        "worst_single_failure": worst,
        "scale_up": s.get("scale_up"),
        # all-to-all per routing, max-min fair (check/traffic.py); empty where not estimated
        "traffic": {r["routing"]: {"fraction": r["fraction"], "min_fraction": r["min_fraction"]}
                    for r in checks.of(TrafficFigures).entry.get("results", [])},
        # storage / in-band / OOB networks: what they add to the bill (the rows above are compute)
        "extra_fabrics": {name: {"switches": sum(f["switches"].values()), "cables": sum(f["cables"].values()),
                                 "transceivers": f["transceivers"]}
                          for name, f in (s.get("fabrics") or {}).items() if name != COMPUTE},
    }


def _fmt(n) -> str:
    return "-" if n is None else (f"{n:,}" if isinstance(n, int) else str(n))


def _scale_up(up: dict | None) -> str:
    if not up:
        return "-"
    return f"{up['gpus_per_domain']:,} GPUs, {up['gbytes_per_s_per_gpu']:,} GB/s/GPU" if up["gbytes_per_s_per_gpu"] \
        else f"{up['gpus_per_domain']:,} GPUs"


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
    rows.append(("power (kW, known parts)", [f"{f['power_w'] / 1000:,.1f}" + (" +?" if f["power_unknown_for"] else "")
                                             + (" (secondary: " + ", ".join(f["power_secondary_for"]) + ")"
                                                if f.get("power_secondary_for") else "")
                                             for f in figures]))
    rows.append(("cost (price file)", [("no price file" if f["cost"] is None else
                                        f"{f['cost']:,.0f} {f['currency']}" + (" +?" if f["cost_unpriced_parts"] else ""))
                                       for f in figures]))
    rows.append(("bisection (Gb/s)", [_fmt(f["bisection_gbps"]) for f in figures]))
    rows.append(("bisection per GPU (Gb/s)", [_fmt(f["bisection_per_gpu_gbps"]) for f in figures]))
    rows += [(f"oversubscription {t}", [f["oversubscription"].get(t, "-") for f in figures]) for t in union("oversubscription")]
    pattern = "all-to-all"
    for routing in union("traffic"):
        rows.append((f"{pattern} {routing} (mean/slowest)", [
            f"{t['fraction']:.0%}/{t['min_fraction']:.0%}" if (t := f["traffic"].get(routing)) else "-" for f in figures]))
    rows.append(("max hops", [f"{_fmt(f['max_hops'])} {'links' if f['hops_unit'] != 'switches' else 'sw'}" for f in figures]))
    rows.append(("worst single failure", [
        f"{f['worst_single_failure']['what']} -{f['worst_single_failure']['bisection_lost_percent']}%"
        if f["worst_single_failure"] else "-" for f in figures]))
    return rows


def comparison_text(figures: list[dict]) -> str:
    rows = [("", [f["name"] for f in figures])] + comparison_rows(figures)
    label_w = max(len(r[0]) for r in rows)
    widths = [max(len(r[1][i]) for r in rows) for i in range(len(figures))]
    lines = [f"{label:<{label_w}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)) for label, cells in rows]
    return "\n".join(line.rstrip() for line in lines) + "\n"
