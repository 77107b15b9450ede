"""report.html: one self-contained page (no external file, script or font) with the
summary, checks and findings, the BOM, the fabric diagram and plots.

Findings and figures come from the plan's check results, which the pipeline runs once
and passes to every renderer (summary.json and report/checks.json read the same).

Plots are inline SVG bars drawn here (bandwidth per tier, links lost per switch
failure, cable lengths): a picture where a table reads worse, with no plotting
dependency and byte-identical output.
"""

from __future__ import annotations

from html import escape

import numpy as np

from ..check import CheckResults
from ..check.findings import Finding
from ..plan.bom import bill_of_materials
from ..plan.model import Plan
from .summary import summarize
from .diagrams import overview_dot, overview_layout, render_svg
from .writer import OutputDir

CSS = """body{font-family:Helvetica,Arial,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{margin-bottom:4px}h2{border-bottom:1px solid #ccc;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f3f5f8}td.n{text-align:right}.totals td:first-child{font-weight:bold}
.error{color:#b71c1c}.warning{color:#e65100}.info{color:#1565c0}.plots{display:flex;flex-wrap:wrap;gap:24px}
figure{margin:0}figcaption{font-size:12px;color:#555}.diagram svg{max-width:100%;height:auto}"""

# Sets data-loaded once the page is parsed and records script errors: the browser test reads both.
SCRIPT = """window.addEventListener('error',function(e){var d=document.getElementById('load-errors');
d.textContent+=(e.message||'error')+'\\n';});
window.addEventListener('load',function(){document.body.setAttribute('data-loaded','ok');
document.body.setAttribute('data-svgs',String(document.querySelectorAll('svg').length));});"""


def report_findings(checks: CheckResults) -> list[Finding]:
    return list(checks.findings)


def bars(title: str, items: list[tuple[str, float]], unit: str, width: int = 420) -> str:
    """A horizontal bar chart as inline SVG."""
    row, left = 22, 150
    top = max((v for _, v in items), default=0) or 1
    h = row * len(items) + 30
    out = [f'<figure><svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h}" role="img" '
           f'aria-label="{escape(title)}"><title>{escape(title)}</title>']
    for k, (label, value) in enumerate(items):
        y = 10 + k * row
        w = (width - left - 70) * value / top
        out.append(f'<text x="{left - 6}" y="{y + 14}" font-size="11" text-anchor="end">{escape(label)}</text>'
                   f'<rect x="{left}" y="{y + 2}" width="{w:.1f}" height="{row - 6}" fill="#5c85d6"/>'
                   f'<text x="{left + w + 4:.1f}" y="{y + 14}" font-size="11">{value:,.4g} {escape(unit)}</text>')
    out.append(f"</svg><figcaption>{escape(title)}</figcaption></figure>")
    return "".join(out)


def bandwidth_per_tier(plan: Plan) -> list[tuple[str, float]]:
    links = plan.links
    gbps = np.bincount(links.kind.astype(np.int64), weights=links.speed_gbps.astype(np.float64), minlength=len(plan.link_kinds))
    return [(k, g / 1000) for k, g in zip(plan.link_kinds, gbps.tolist()) if g]


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
    items = [(f"{v:g} m", float(c)) for v, c in zip(values.tolist(), counts.tolist())]
    beyond = int(np.isnan(order).sum())
    return items + ([("beyond reach", float(beyond))] if beyond else [])


def _table(header: list[str], rows: list[list], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(
        f'<td class="n">{escape(_fmt(v))}</td>' if i in numeric else f"<td>{escape(_fmt(v))}</td>" for i, v in enumerate(r))
        + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _fmt(v) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:,.1f}" if not v.is_integer() else f"{int(v):,}"
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def _strip_prolog(svg: str) -> str:
    return svg[svg.index("<svg"):]


def report_html(plan: Plan, checks: CheckResults) -> str:
    s = summarize(plan, checks)
    bom = plan.memo("bom", bill_of_materials)
    findings = report_findings(checks)
    phys = plan.physical
    totals = [["GPUs", s["gpus"]], ["servers", f"{s['servers']:,} x {s['server']}"],
              ["topology", f"{s['topology']}, {s['tiers']} tiers, {s['speed_gbps']}G"]]
    totals += [[f"{role} switches", f"{n:,} x {s['switch']}"] for role, n in s["switches"].items()]
    totals += [[f"{kind} cables", n] for kind, n in s["cables"].items()]
    totals += [["cables", len(plan.links)], ["transceivers", s["transceivers"]]]
    totals += [[f"oversubscription {t}", r] for t, r in s["oversubscription"].items()]
    if phys is not None:
        totals += [["racks", len(phys.racks)]]
    power = sum(line.total_power_w or 0 for line in bom)
    totals += [["known power", f"{power / 1000:,.1f} kW (items without a figure excluded)"]]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(plan.name)}: clusterc report</title>"
             f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>",
             f'<h1 id="design-name">{escape(plan.name)}</h1><p>{s["gpus"]:,} GPUs, {len(plan.links):,} cables. '
             f"Compiled by clusterc.</p>", '<pre id="load-errors" hidden></pre>',
             '<h2>Summary</h2><table class="totals" id="totals">'
             + "".join(f"<tr><td>{escape(k)}</td><td>{escape(_fmt(v))}</td></tr>" for k, v in totals) + "</table>"]
    if s["notes"]:
        parts.append("<ul>" + "".join(f"<li>{escape(n)}</li>" for n in s["notes"]) + "</ul>")
    parts.append(f'<h2>Checks and findings</h2><p id="findings-count">{len(findings)} finding(s)</p>')
    if findings:
        parts.append("<table><tr><th>severity</th><th>code</th><th>message</th><th>where</th></tr>" + "".join(
            f'<tr><td class="{escape(f.severity)}">{escape(f.severity)}</td><td>{escape(f.code)}</td>'
            f"<td>{escape(f.message)}</td><td>{escape(f.where)}</td></tr>" for f in findings) + "</table>")
    parts.append("<h2>Bill of materials</h2>" + _table(
        ["category", "part number", "description", "quantity", "unit W", "total W", "notes"],
        [[b.category, b.part_number, b.description, b.quantity, b.unit_power_w, b.total_power_w, b.notes] for b in bom],
        {3, 4, 5}))
    svg = plan.memo("fabric_svg", lambda pl: render_svg(overview_dot(pl), overview_layout(pl)))
    parts.append(f'<h2>Fabric</h2><div class="diagram">{_strip_prolog(svg)}</div>')
    plots = [bars("Bandwidth per tier (one direction)", bandwidth_per_tier(plan), "Tb/s"),
             bars("Failure impact: bisection lost (worst balanced cut)", failure_impact(checks), "%")]
    hist = length_histogram(plan)
    if hist:
        plots.append(bars("Links by orderable length (a twin-port copper cable carries two)", hist, "links"))
    parts.append('<h2>Plots</h2><div class="plots">' + "".join(plots) + "</div>")
    if phys is not None:
        counts = np.bincount(phys.dev_rack, minlength=len(phys.racks))
        power_w = phys.rack_power_w()
        used = phys.rack_used_u()
        parts.append(f"<h2>Racks</h2><p>{escape(phys.model['statement'])}</p>" + _table(
            ["rack", "kind", "devices", "U used", "kW (known)", "kW budget"],
            [[r.name, r.kind, int(c), f"{int(u)}/{r.usable_u}", round(float(p) / 1000, 1), r.power_budget_w / 1000]
             for r, c, p, u in zip(phys.racks, counts, power_w, used)], {2, 4, 5}))
    parts.append("</body></html>\n")
    return "".join(parts)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    out.write_text("report.html", report_html(plan, checks))
