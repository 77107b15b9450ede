"""The summary of a plan: the contract scripts read (`summary.json`) and the CLI prints."""

from __future__ import annotations

from math import gcd

from .bom import NOT_IN_CATALOG, bill_of_materials
from .model import Plan

SWITCH_ROLES = ("leaf", "spine", "core")


def _ratio(down: int, up: int) -> str:
    g = gcd(down, up) or 1
    return f"{down // g}:{up // g}"


def summarize(plan: Plan) -> dict:
    design = plan.design
    counts = plan.count_by_role()
    switches = {role: counts[role] for role in SWITCH_ROLES if role in counts}
    oversub = {"leaf": _ratio(design["leaf_ports"]["down"], design["leaf_ports"]["up"])}
    if design["tiers"] == 3:
        oversub["spine"] = _ratio(design["spine_ports"]["down"], design["spine_ports"]["up"])
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
        "cables": plan.count_by_kind(),
        "tiers": design["tiers"],
        "oversubscription": oversub,
        "endpoints": {role: n for role, n in counts.items() if role not in SWITCH_ROLES and role != "server"},
        "transceivers": transceivers,
        "topology": design["topology"],
        "server": design["server"],
        "switch": design["switch"],
        "speed_gbps": design["speed_gbps"],
        "notes": notes,
    }
