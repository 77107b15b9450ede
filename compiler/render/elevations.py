"""racks/<rack>.svg: the elevation of every rack (front view, U1 at the bottom).

Plain SVG written directly: an elevation is boxes on a U grid, which a layout engine
would only get wrong. Each device box carries the device name (as an SVG <title> too,
for hover and for tests), its model and U span; the reserved top U are hatched.
Written only for plans with a physical layout.
"""

from __future__ import annotations

from html import escape

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from .writer import OutputDir

U_PX, WIDTH, MARGIN = 14, 260, 34
FILL = {"server": "#c8e6c9", "leaf": "#bbdefb", "spine": "#ffe0b2", "core": "#f8bbd0"}


def rack_svg(plan: Plan, r: int) -> str:
    phys = plan.physical
    rack = phys.racks[r]
    members = np.nonzero(phys.dev_rack == r)[0].tolist()
    height = rack.height_u * U_PX
    power = float(np.nansum(phys.dev_power_w[members])) / 1000
    title = f"{rack.name} ({rack.kind}): {len(members)} devices, {int(phys.dev_height_u[members].sum())}U used, " \
            f"{power:.1f} of {rack.power_budget_w / 1000:g} kW (known)"
    w, h = WIDTH + 2 * MARGIN, height + 2 * MARGIN + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="Helvetica,Arial,sans-serif">',
           f"<title>{escape(title)}</title>",
           f'<text x="{MARGIN}" y="16" font-size="11" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{MARGIN}" y="{MARGIN}" width="{WIDTH}" height="{height}" fill="#fafafa" stroke="#333"/>']
    for u in range(1, rack.height_u + 1):
        y = MARGIN + height - u * U_PX
        out.append(f'<text x="{MARGIN - 4}" y="{y + U_PX - 3}" font-size="8" text-anchor="end">{u}</text>')
        if u > rack.usable_u:
            out.append(f'<rect x="{MARGIN}" y="{y}" width="{WIDTH}" height="{U_PX}" fill="#e0e0e0" stroke="#bbb"/>')
    for i in members:
        d = plan.devices[i]
        lo, size = int(phys.dev_u[i]), int(phys.dev_height_u[i])
        y = MARGIN + height - (lo + size - 1) * U_PX
        label = f"{d.name}  {d.model}  U{lo}" + (f"-{lo + size - 1}" if size > 1 else "")
        out.append(f'<g><title>{escape(d.name)}</title>'
                   f'<rect x="{MARGIN + 2}" y="{y + 1}" width="{WIDTH - 4}" height="{size * U_PX - 2}" rx="2" '
                   f'fill="{FILL.get(d.role, "#eeeeee")}" stroke="#555"/>'
                   f'<text x="{MARGIN + 8}" y="{y + min(size * U_PX, 2 * U_PX) / 2 + 4}" font-size="10">{escape(label)}</text></g>')
    out.append("</svg>\n")
    return "".join(out)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if plan.physical is None:
        return
    for r, rack in enumerate(plan.physical.racks):
        out.write_text(f"racks/{rack.name}.svg", rack_svg(plan, r))
