"""report.html: one self-contained page (no external file, script or font) with the
summary, every fabric's figures, checks and findings, the BOM of every fabric, each
fabric's overview diagram and plots. Spelled by templates/report/report.html.j2; this
module decides what the page holds.

This output sees every fabric of the plan (RENDERERS["report"].reads: all): the BOM is
bom.csv's rows exactly, and each fabric's overview (the one in diagrams/) is drawn.
Findings, figures and plots are the compute fabric's, from the check results the
pipeline runs once and hands to every renderer (summary.json and report/checks.json
read the same).

Plots are inline SVG bars (bandwidth per tier, links lost per switch failure, cable
lengths): a picture where a table reads worse, with no plotting dependency and
byte-identical output.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..check import CheckResults
from ..check.findings import Finding
from ..plan.order import order_totals
from ..plan.fabrics import COMPUTE, fabric_names, fabric_plan, is_multi_fabric
from ..plan.model import Plan
from ..plan.physical import spine_placement_sentence
from ..plan.power import rack_draw
from .units import rate_text
from .axis import nice_ticks, tick_text
from .bom import bom_table
from .diagrams import fabric_overviews, scope_names
from .summary import speed_text, summarize
from .templates import render_template
from .writer import OutputDir

BOM_NUMERIC = {"quantity", "unit_power_w", "total_power_w"}  # right-aligned columns


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    y: float
    width: float  # px
    value: str  # e.g. "204.8 Tb/s"


@dataclass(frozen=True, slots=True)
class Tick:
    x: float  # px
    text: str


@dataclass(frozen=True, slots=True)
class BarChart:
    """A horizontal bar chart, laid out here and drawn by the report template: bars, a
    value axis under them with its ticks and label (with the unit), and a sentence that
    says what the chart shows."""

    title: str
    width: int
    height: int
    left: int  # x where bars start
    row_px: int
    bars: tuple[Bar, ...]
    axis_y: float  # px: the value axis under the bars
    ticks: tuple[Tick, ...]
    axis_label: str  # what the bars measure, with the unit
    what: str  # one sentence: what the chart shows


def report_css() -> str:
    """report.html's style sheet, for other pages in its style (explore.html)."""
    return render_template("report/style.css.j2")


def report_findings(checks: CheckResults) -> list[Finding]:
    return list(checks.findings)


def bars(title: str, items: list[tuple[str, float, str]], axis_label: str, what: str, width: int = 460) -> BarChart:
    """A chart of (label, value in the axis's unit, value as text) bars."""
    row, left, right = 22, 150, 80
    top = max((v for _, v, _ in items), default=0) or 1
    span = width - left - right
    axis_y = 10 + row * len(items) + 2
    values, step = nice_ticks(0, top, 4)
    ticks = tuple(Tick(round(left + span * v / top, 1), tick_text(v, step)) for v in values)
    return BarChart(title, width, int(axis_y) + 40, left, row,
                    tuple(Bar(label, 10 + k * row, round(span * value / top, 1), text)
                          for k, (label, value, text) in enumerate(items)), axis_y, ticks, axis_label, what)


def bandwidth_chart(plan: Plan) -> BarChart:
    per_tier = bandwidth_per_tier(plan)
    tera = max((g for _, g in per_tier), default=0) >= 1000
    scale, unit = (1000, "Tb/s") if tera else (1, "Gb/s")
    return bars("Bandwidth per tier (one direction)", [(k, g / scale, rate_text(g)) for k, g in per_tier],
                f"{unit}, one direction",
                "The sum of the line rates of each tier's links, in one direction: what the tier can carry "
                "at most; the tiers above the servers carry less where the fabric is oversubscribed.")


def failure_chart(checks: CheckResults) -> BarChart:
    items = failure_impact(checks)
    sentence = ("How much of the fabric's bisection bandwidth (its worst balanced cut) is lost when one "
                "switch of each role, or one link of each tier, fails")
    if any(label.endswith("p99") for label, _ in items):
        sentence += ", and in the worst 1 % of random link failures (Monte Carlo)"
    return bars("Failure impact: bisection lost (worst balanced cut)", [(k, v, f"{v:,.3g} %") for k, v in items],
                "% of bisection bandwidth lost", sentence + ".")


def length_chart(hist: list[tuple[str, float]]) -> BarChart:
    return bars("Links by orderable length (a twin-port copper cable carries two)",
                [(k, n, f"{int(n):,} links") for k, n in hist], "links",
                "How many links are ordered at each length: the modelled route plus slack, rounded up to a "
                "length the part is sold in.")


def bandwidth_per_tier(plan: Plan) -> list[tuple[str, float]]:
    """Per link kind (tier), the sum of its links' line rates, Gb/s."""
    links = plan.links
    gbps = np.bincount(links.kind.astype(np.int64), weights=links.speed_gbps.astype(np.float64), minlength=len(plan.link_kinds))
    return [(k, g) for k, g in zip(plan.link_kinds, gbps.tolist(), strict=True) if g]


def failure_impact(checks: CheckResults) -> list[tuple[str, float]]:
    """Bisection lost (percent, worst balanced cut) when one element fails, and the
    Monte Carlo tail of random link failures (from the redundancy check)."""
    red = checks.as_json()["figures"]["redundancy"]
    items = [(f"one {role}", f["bisection_lost_percent"]) for role, f in red["single_failures"].items()]
    mc = red.get("monte_carlo") or {}
    if mc:
        items.append((f"{mc['failed_links']} random links, p99", mc["bisection_lost_percent_p99"]))
    return items


def length_histogram(plan: Plan) -> list[tuple[str, float]]:
    phys = plan.physical
    if phys is None or phys.order_m is None:
        return []
    order = phys.order_m
    values, counts = np.unique(order[~np.isnan(order)], return_counts=True)
    items = [(f"{v:g} m", float(c)) for v, c in zip(values.tolist(), counts.tolist(), strict=True)]
    beyond = int(np.isnan(order).sum())
    return items + ([("beyond reach", float(beyond))] if beyond else [])


def fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.1f}" if not v.is_integer() else f"{int(v):,}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def totals(s: dict, plan: Plan, compute: Plan) -> list[tuple[str, str]]:
    """The summary table: the compute fabric's figures (the extra fabrics have a table of their own)."""
    rows = [("GPUs", s["gpus"]), ("servers", f"{s['servers']:,} x {s['server']}"),
            ("topology", f"{s['topology']}, {s['tiers']} tiers, {speed_text(s)}")]
    rows += [(f"{role} switches", f"{n:,} x {s['switch']}") for role, n in s["switches"].items()]
    rows += [(f"{kind} cables", n) for kind, n in s["cables"].items()]
    cables = sum(s["cables"].values())
    rows += [("cables", cables)]
    if len(compute.links) > cables:  # board traces (direct torus hosts), backplanes: links, not cables to pull
        rows += [("links that are not cables", len(compute.links) - cables)]
    rows += [("transceivers", s["transceivers"])]
    rows += [(f"oversubscription {t}", r) for t, r in s["oversubscription"].items()]
    if plan.physical is not None:
        rows += [("racks", len(plan.physical.racks))]
    for scope, what in (("network", "switches, optics, cables"), ("cluster", "everything ordered")):  # plan/order.py
        t = order_totals(plan, scope)  # every fabric, as the bill below
        rows += [(f"known power, {scope}", f"{t.power_w / 1000:,.1f} kW ({what}; "
                  + (f"no figure for {', '.join(t.power_unknown_for)})" if t.power_unknown_for else "every part has a figure)"))]
    return [(k, fmt(v)) for k, v in rows]


def fabric_rows(s: dict) -> list[tuple[str, ...]]:
    """One row per fabric (several-fabric plans): what summary.json's `fabrics` holds."""
    out: list[tuple[str, ...]] = []
    for name, f in (s.get("fabrics") or {}).items():
        out.append((name, f["topology"], f"{f['switch']} ({f['speed_gbps']}G)", str(f["tiers"]),
                    ", ".join(f"{n:,} {role}" for role, n in f["switches"].items()),
                    ", ".join(f"{n:,} {kind}" for kind, n in f["cables"].items()), f"{f['transceivers']:,}",
                    ", ".join(f"{tier} {r}" for tier, r in f["oversubscription"].items())))
    return out


def diagram_sections(plan: Plan) -> list[dict]:
    """Per fabric: its name, where its diagrams are, and its overview as inline SVG."""
    out = []
    for fabric, folder, drawing in fabric_overviews(plan):
        detail = scope_names(fabric_plan(plan, fabric))
        files = f"{folder}fabric.svg" + (f"; one diagram per scope: {folder}{detail[0]}.svg" +
                                         (f" … {detail[-1]}.svg ({len(detail)} files)" if len(detail) > 1 else "")
                                         if detail else "")
        out.append({"fabric": fabric, "files": files, "svg": drawing.svg()})
    return out


def field_cables(s: dict) -> int:
    """Cables to pull, every fabric's (summary.json's cables: board traces excluded)."""
    if s.get("fabrics"):
        return sum(n for f in s["fabrics"].values() for n in f["cables"].values())
    return sum(s["cables"].values())


def report_html(plan: Plan, checks: CheckResults) -> str:
    compute = fabric_plan(plan)  # the plan itself for one fabric
    s = summarize(plan, checks)
    findings = report_findings(checks)
    header, rows = bom_table(plan)
    plots = [bandwidth_chart(compute), failure_chart(checks)]
    hist = length_histogram(compute)
    if hist:
        plots.append(length_chart(hist))
    racks = []
    phys = plan.physical
    if phys is not None:
        counts = np.bincount(phys.dev_rack, minlength=len(phys.racks))
        power_w, used = rack_draw(plan).known_w, phys.rack_used_u()
        racks = [(r.name, r.kind, f"{int(c):,}", f"{int(u)}/{r.usable_u}", fmt(round(float(p) / 1000, 1)),
                  fmt(r.power_budget_w / 1000)) for r, c, p, u in zip(phys.racks, counts, power_w, used, strict=True)]
    return render_template(
        "report/report.html.j2",
        name=plan.name,
        gpus=f"{s['gpus']:,}",
        cables=f"{field_cables(s):,}",
        multi=is_multi_fabric(plan),
        fabric_count=len(fabric_names(plan)),
        compute=COMPUTE,
        totals=totals(s, plan, compute),
        notes=s["notes"],
        fabrics=fabric_rows(s),
        findings=findings,
        bom_header=header,
        bom_rows=[["" if v is None else str(v) for v in row] for row in rows],  # as bom.csv writes them
        bom_numeric=[h in BOM_NUMERIC for h in header],
        diagrams=diagram_sections(plan),
        plots=plots,
        racks=racks,
        rack_statement=phys.model["statement"] if phys is not None else "",
        spine_placement=spine_placement_sentence(phys.model["spine_placement"])
        if phys is not None and "spine_placement" in phys.model else "",
    )


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    out.write_text("report.html", report_html(plan, checks))
