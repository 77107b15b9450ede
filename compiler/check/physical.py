"""Physical checks over a placed plan: rack power and cable reach. Each returns
Findings with numbers; `check_physical` is the check the runner calls. Impossible halls
(too small, devices too tall or deep) never get this far: placement refuses them.
O(devices + links) numpy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.model import Plan
from ..plan.views import cable_ids
from .context import CheckContext
from .figures import Figures
from .findings import Finding


@dataclass(frozen=True)
class PhysicalFigures(Figures):
    """Rack power and reach report findings only (with a physical layout)."""


def rack_power(plan: Plan) -> list[Finding]:
    phys = plan.physical
    if phys is None:
        return []
    out: list[Finding] = []
    load = phys.rack_power_w()
    for i in np.nonzero(load > np.array([r.power_budget_w for r in phys.racks]) + 1e-6)[0].tolist():
        rack = phys.racks[i]
        members = int((phys.dev_rack == i).sum())
        out.append(Finding("RACK_OVER_POWER", "error",
                           f"rack {rack.name} draws up to {load[i] / 1000:.1f} kW from {members} devices; "
                           f"its budget is {rack.power_budget_w / 1000:g} kW", rack.name))
    unknown = np.isnan(phys.dev_power_w)
    if unknown.any():
        models = sorted({plan.devices[i].model for i in np.nonzero(unknown)[0].tolist()})
        racks = np.unique(phys.dev_rack[unknown]).size
        out.append(Finding("RACK_POWER_UNKNOWN", "warning",
                           f"{int(unknown.sum())} devices ({', '.join(models)}) have no power figure in the catalog; "
                           f"the power of {racks} rack(s) is counted without them", "catalog"))
    return out


def link_reach(plan: Plan) -> list[Finding]:
    phys = plan.physical
    if phys is None or phys.order_m is None:
        return []
    beyond = np.isnan(phys.order_m)
    if not beyond.any():
        return []
    idx = np.nonzero(beyond)[0]
    worst = int(idx[np.argmax(phys.length_m[idx])])
    links = plan.links
    media_id = plan.media[int(links.media[worst])]
    rec = plan.facts["media"][media_id]
    a, b = plan.devices[int(links.a_dev[worst])].name, plan.devices[int(links.b_dev[worst])].name
    cid = plan.memo("cable_ids", cable_ids)[worst]
    return [Finding("LINK_BEYOND_REACH", "error",
                    f"{idx.size} link(s) are longer than any medium at their speed reaches; the longest, {cid} "
                    f"({a} to {b}, {int(links.speed_gbps[worst])}G), needs {phys.length_m[worst]:.1f} m and the "
                    f"longest-reach medium that fits its ends ({media_id}, {rec['cable_part_number']}) comes in at most "
                    f"{max(rec['lengths_m'] or [rec['reach_m']]):g} m", cid)]


def physical_findings(plan: Plan) -> list[Finding]:
    return rack_power(plan) + link_reach(plan)


def check_physical(ctx: CheckContext) -> tuple[PhysicalFigures, list[Finding]]:
    # rack power and cable reach of every fabric: a storage switch draws from its rack too
    return PhysicalFigures(), physical_findings(ctx.all_fabrics)
