"""The summary of a plan: the contract scripts read (`summary.json`) and the CLI prints."""

from __future__ import annotations

import numpy as np

from .bom import NOT_IN_CATALOG, bill_of_materials
from .fabrics import is_multi_fabric, summarize_fabrics
from .model import Plan

SWITCH_ROLES = ("leaf", "spine", "core")


def _switch_roles(plan: Plan) -> list[str]:
    """Roles of switches (tier > 0), in plan order: leaf, spine, core; router; ..."""
    return list(dict.fromkeys(d.role for d in plan.devices if d.tier > 0))


def cables_by_kind(plan: Plan) -> dict[str, int]:
    """Links per kind that are field cables (board traces and backplanes are not)."""
    media = plan.facts.get("media", {})
    pulled = [media.get(m, {}).get("field_cable", True) for m in plan.media]
    if all(pulled):
        return plan.count_by_kind()
    keep = np.array(pulled, dtype=bool)[plan.links.media]
    counts = np.bincount(plan.links.kind[keep].astype(np.int64), minlength=len(plan.link_kinds))
    return {k: int(c) for k, c in zip(plan.link_kinds, counts) if c}


def summarize(plan: Plan) -> dict:
    if is_multi_fabric(plan):  # the compute fabric's figures, then every fabric's (plan/fabrics.py)
        return summarize_fabrics(plan, summarize)
    design = plan.design
    counts = plan.count_by_role()
    switch_roles = _switch_roles(plan)
    switches = {role: counts[role] for role in switch_roles}
    from ..check import report_for  # checks read the plan; the summary reports their figures

    figures = report_for(plan)["figures"]
    oversub = {tier: f["max"] for tier, f in figures["oversubscription"].items()}
    bisection = figures["bisection"]
    failures = {role.replace("link:", "link "): {"element": f.get("switch") or f.get("link"),
                                                 "bisection_lost_percent": f["bisection_lost_percent"],
                                                 "gpu_ports_cut_off": f["gpu_ports_cut_off"],
                                                 "servers_cut_off": f["servers_cut_off"]}
                for role, f in figures["redundancy"]["single_failures"].items()}
    bom = plan.memo("bom", bill_of_materials)
    transceivers = sum(line.quantity for line in bom if line.category == "transceiver")
    notes = list(plan.notes)
    for line in bom:
        if line.part_number.startswith(NOT_IN_CATALOG) or line.part_number == NOT_IN_CATALOG:
            notes.append(f"BOM: {line.quantity} x {line.category} not in the catalog ({line.part_number})")
    return {
        "name": plan.name,
        "gpus": design["gpus"],
        "servers": design["servers"],
        "switches": switches,
        "cables": cables_by_kind(plan),
        "tiers": design["tiers"],
        "oversubscription": oversub,
        "endpoints": {role: n for role, n in counts.items() if role not in switch_roles and role not in ("server", "chip")},
        "transceivers": transceivers,
        "topology": design["topology"],
        "server": design["server"],
        "switch": design["switch"],
        # per-tier models, only where a spec gives them (fabric.spine_switch / core_switch)
        **({"switch_models": {role: design.get(f"{role}_switch", design["switch"]) for role in switches}}
           if "spine_switch" in design or "core_switch" in design else {}),
        "speed_gbps": design["speed_gbps"],
        "scale_up": plan.scale_up.summary() if plan.scale_up else None,
        "bisection_gbps": {"analytic": bisection["analytic_gbps"], "worst_cut": bisection["worst_cut_gbps"]},
        "failures": failures,
        "checks_ok": report_for(plan)["ok"],
        "notes": notes,
    }
