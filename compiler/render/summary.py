"""summary.json: the short contract scripts read (see README, "summary.json") and the CLI
prints: the plan's counts and its check figures."""

from __future__ import annotations

import json

import numpy as np

from ..check import CheckResults
from ..check.bisection import BisectionFigures
from ..check.collectives import CollectivesFigures, headline as collective_headline
from ..check.oversubscription import OversubscriptionFigures
from ..check.redundancy import RedundancyFigures
from ..plan.bom import NOT_IN_CATALOG, NOT_PUBLISHED, bill_of_materials
from ..plan.fabrics import fabric_names, fabric_plan, is_multi_fabric
from ..plan.model import Plan
from .writer import OutputDir



def _switch_roles(plan: Plan) -> list[str]:
    """Roles of switches (tier > 0), in plan order: leaf, spine, core; router; ..."""
    return list(dict.fromkeys(d.role for d in plan.devices if d.tier > 0))


def cables_by_kind(plan: Plan) -> dict[str, int]:
    """Links per kind that are field cables (board traces and backplanes are not)."""
    media = plan.view.facts.media
    pulled = [media[m].field_cable if m in media else True for m in plan.media]
    if all(pulled):
        return plan.count_by_kind()
    keep = np.array(pulled, dtype=bool)[plan.links.media]
    counts = np.bincount(plan.links.kind[keep].astype(np.int64), minlength=len(plan.link_kinds))
    return {k: int(c) for k, c in zip(plan.link_kinds, counts, strict=True) if c}


def speed_text(summary: dict) -> str:
    """The fabric's link speed for a summary line: one speed, or the server links' and the
    switch-to-switch links' where they differ (fabric.uplink_speed_gbps)."""
    up = summary.get("uplink_speed_gbps")
    return f"{summary['speed_gbps']}G" if up is None else f"{summary['speed_gbps']}G to servers, {up}G between switches"


def summarize(plan: Plan, checks: CheckResults) -> dict:
    """summary.json of a plan and its check results (run_checks(plan))."""
    if is_multi_fabric(plan):  # the compute fabric's figures, then every fabric's (summarize_fabrics)
        return summarize_fabrics(plan, checks)
    view = plan.view
    design = view.design
    counts = plan.count_by_role()
    switch_roles = _switch_roles(plan)
    switches = {role: counts[role] for role in switch_roles}
    oversub = {tier: f.max for tier, f in checks.of(OversubscriptionFigures).tiers.items()}
    bisection = checks.of(BisectionFigures)
    failures = {role.replace("link:", "link "): {"element": f.switch or f.link,
                                                 "bisection_lost_percent": f.bisection_lost_percent,
                                                 "gpu_ports_cut_off": f.gpu_ports_cut_off,
                                                 "servers_cut_off": f.servers_cut_off}
                for role, f in checks.of(RedundancyFigures).single_failures.items()}
    bom = plan.memo("bom", bill_of_materials)
    transceivers = sum(line.quantity for line in bom if line.category == "transceiver")
    notes = list(plan.notes)
    for line in bom:
        if line.part_number.startswith(NOT_IN_CATALOG) or line.part_number == NOT_IN_CATALOG:
            notes.append(f"BOM: {line.quantity} x {line.category} not in the catalog ({line.part_number})")
        elif line.part_number.startswith(NOT_PUBLISHED) and line.category != "spare":
            notes.append(f"BOM: {line.quantity} x {line.category}: part number not published "
                         f"({line.part_number[len(NOT_PUBLISHED) + 2:]}); ask the vendor before ordering")
    return {
        "name": plan.name,
        "gpus": design.gpus,
        "servers": design.servers,
        "switches": switches,
        "cables": cables_by_kind(plan),
        "tiers": design.tiers,
        "oversubscription": oversub,
        "endpoints": {role: n for role, n in counts.items() if role not in switch_roles and role not in ("server", "chip")},
        "transceivers": transceivers,
        "topology": design.topology,
        "server": design.server,
        "switch": design.switch,
        # per-tier models, only where a spec gives them (fabric.spine_switch / core_switch)
        **({"switch_models": {role: view.model_id(role) for role in switches}}
           if any(view.model_id(role) != design.switch for role in ("spine", "core")) else {}),
        "speed_gbps": design.speed_gbps,
        # switch-to-switch links at another speed (fabric.uplink_speed_gbps), only where they are
        **({"uplink_speed_gbps": view.uplink_gbps} if view.uplink_gbps != design.speed_gbps else {}),
        "scale_up": plan.scale_up.summary() if plan.scale_up else None,
        "bisection_gbps": {"analytic": bisection.analytic_gbps, "worst_cut": bisection.worst_cut_gbps},
        "failures": failures,
        # the check's all-reduce estimate of the largest message size (check/collectives.py)
        "allreduce": collective_headline(checks.of(CollectivesFigures)),
        "checks_ok": checks.ok,
        # where the spine racks stand and the links' length under each placement tried (expand/layout.py)
        **({"spine_placement": _spine_placement(plan.physical.model["spine_placement"])}
           if plan.physical is not None and "spine_placement" in plan.physical.model else {}),
        "notes": notes,
    }


def _spine_placement(record: dict) -> dict:
    return {"chosen": record["chosen"], "spine_rows": record["spine_rows"],
            "link_length_m": {o["placement"]: o["link_length_m"] for o in record["options"]}}


def fabric_summary(plan: Plan, name: str, checks: CheckResults) -> dict:
    """One fabric's figures for summary.json: its switches, cables, optics and the measured
    down:up ratio per tier (the compute fabric's other checks are in the top level)."""
    view = fabric_plan(plan, name)
    d = view.view.design
    switches: dict[str, int] = {}
    for dev in map(plan.devices.__getitem__, plan.fabrics[name].devices):  # its own devices (servers are shared)
        if dev.tier > 0:
            switches[dev.role] = switches.get(dev.role, 0) + 1
    first, end = plan.fabrics[name].server_ports
    oversub = checks.of(OversubscriptionFigures, fabric=name)
    return {
        "nic_group": plan.fabrics[name].nic_group,
        "topology": d.topology,
        "switch": d.switch,
        "speed_gbps": d.speed_gbps,
        "tiers": d.tiers,
        "ports_per_server": end - first,
        "switches": switches,
        "cables": cables_by_kind(view),
        "transceivers": sum(line.quantity for line in view.memo("bom", bill_of_materials) if line.category == "transceiver"),
        "oversubscription": {tier: f.max for tier, f in oversub.tiers.items()},
    }


def summarize_fabrics(plan: Plan, checks: CheckResults) -> dict:
    """summary.json of a plan with several fabrics: the compute fabric's figures (checks run
    on it alone), then `fabrics` with every fabric's switches, cables and optics."""
    out = summarize(fabric_plan(plan), checks)
    out["fabrics"] = {name: fabric_summary(plan, name, checks) for name in fabric_names(plan)}
    return out


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    out.write_text("summary.json", json.dumps(summarize(plan, checks), indent=2) + "\n")
