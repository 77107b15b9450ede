"""racks/<rack>.svg: the elevation of every rack (front view, U1 at the bottom).

Plain SVG laid out here (an elevation is boxes on a U grid, which a layout engine
would only get wrong) and spelled in templates/racks/. Each device box carries the device name (as an SVG <title> too,
for hover and for tests), its model and U span; the reserved top U are hatched.
Written only for plans with a physical layout.
"""

from __future__ import annotations

from html import escape

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.power import rack_draw
from .templates import render_template, row_format
from .writer import OutputDir

U_PX, WIDTH, MARGIN = 14, 260, 34
FILL = {"server": "#c8e6c9", "leaf": "#bbdefb", "spine": "#ffe0b2", "core": "#f8bbd0"}
ELEMENTS = "racks/elements.j2"


def rack_svg(plan: Plan, r: int) -> str:
    phys = plan.physical
    assert phys is not None  # elevations are written only for a plan with a physical layout
    rack = phys.racks[r]
    members = np.nonzero(phys.dev_rack == r)[0].tolist()
    height = rack.height_u * U_PX
    power = float(rack_draw(plan).known_w[r]) / 1000  # devices and switch-side optics (plan/power.py)
    title = f"{rack.name} ({rack.kind}): {len(members)} devices, {int(phys.dev_height_u[members].sum())}U used, " \
            f"{power:.1f} of {rack.power_budget_w / 1000:g} kW (known)"
    u_number = row_format(ELEMENTS, "u_number", 3)
    reserved = row_format(ELEMENTS, "reserved", 4)
    device = row_format(ELEMENTS, "device", 9)
    units = []
    for u in range(1, rack.height_u + 1):
        y = MARGIN + height - u * U_PX
        units.append(u_number % (MARGIN - 4, y + U_PX - 3, u))
        if u > rack.usable_u:
            units.append(reserved % (MARGIN, y, WIDTH, U_PX))
    devices = []
    for i in members:
        d = plan.devices[i]
        lo, size = int(phys.dev_u[i]), int(phys.dev_height_u[i])
        y = MARGIN + height - (lo + size - 1) * U_PX
        label = f"{d.name}  {d.model}  U{lo}" + (f"-{lo + size - 1}" if size > 1 else "")
        devices.append(device % (escape(d.name), MARGIN + 2, y + 1, WIDTH - 4, size * U_PX - 2, FILL.get(d.role, "#eeeeee"),
                                 MARGIN + 8, y + min(size * U_PX, 2 * U_PX) / 2 + 4, escape(label)))
    return render_template("racks/rack.svg.j2", width=WIDTH + 2 * MARGIN, height=height + 2 * MARGIN + 10,
                           title=escape(title), margin=MARGIN, rack_width=WIDTH, rack_height=height,
                           units=units, devices=devices)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if plan.physical is None:
        return
    for r, rack in enumerate(plan.physical.racks):
        out.write_text(f"racks/{rack.name}.svg", rack_svg(plan, r))
