"""Physical checks over a placed plan: rack power and cable reach. Each returns
Findings with numbers; `check_physical` is the check the runner calls. Impossible halls
(too small, devices too tall or deep) never get this far: placement refuses them.
O(devices + links) numpy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.fabrics import COMPUTE, CORD_MEDIUM, management_cords
from ..plan.model import Plan
from ..plan.power import RackDraw, rack_draw, secondary_note, secondary_power_models, switch_optics_w
from ..plan.views import cable_ids, cage_table, end_module_ports, link_end_cages, link_ends, port_table
from .context import CheckContext
from .figures import Figures
from .findings import Finding


@dataclass(frozen=True)
class PhysicalFigures(Figures):
    """Rack power and reach report findings only (with a physical layout)."""


def rack_power(plan: Plan) -> list[Finding]:
    """Each rack's draw (plan/power.py: devices and switch-side optics) against its layout budget."""
    phys = plan.physical
    if phys is None:
        return []
    out: list[Finding] = []
    draw = rack_draw(plan)
    for i in np.nonzero(draw.known_w > np.array([r.power_budget_w for r in phys.racks]) + 1e-6)[0].tolist():
        rack = phys.racks[i]
        members = int((phys.dev_rack == i).sum())
        out.append(Finding("RACK_OVER_POWER", "error",
                           f"rack {rack.name} draws up to {draw.known_w[i] / 1000:.1f} kW from {members} devices"
                           f"{_optics(draw, i)}; its budget is {rack.power_budget_w / 1000:g} kW", rack.name))
    if draw.unknown.any():
        racks = np.nonzero(draw.unknown)[0].size
        no_figure = np.isnan(phys.dev_power_w)
        modules = switch_optics_w(plan)[1] & ~no_figure
        what = []
        if no_figure.any():
            models = sorted({plan.devices[i].model for i in np.nonzero(no_figure)[0].tolist()})
            what.append(f"{int(no_figure.sum())} devices ({', '.join(models)}) have no power figure in the catalog")
        if modules.any():
            what.append(f"{int(modules.sum())} switches hold modules without one")
        out.append(Finding("RACK_POWER_UNKNOWN", "warning",
                           f"{'; '.join(what)}; the power of {racks} rack(s) is counted without them", "catalog"))
    secondary = secondary_power_models(plan)
    if secondary:
        out.append(Finding("RACK_POWER_SECONDARY", "info",
                           f"rack power counts the {secondary_note(secondary)}: "
                           + "; ".join(f"{m}: {src}" for m, src in secondary.items()), "catalog"))
    return out


def _optics(draw: RackDraw, i: int) -> str:
    return f" ({draw.optics_w[i] / 1000:.1f} kW of it switch-side optics)" if draw.optics_w[i] else ""


def rack_power_limit(plan: Plan, limit_kw: float) -> tuple[dict, list[Finding]]:
    """requirements.rack_power_kw: no rack may draw more. A rack whose known draw is over
    fails; one within it that holds parts without a published power is unknown, said so
    (a warning naming the parts), never passed as if they drew nothing."""
    phys = plan.physical
    if phys is None:  # the spec refuses the requirement without a layout; a plan.json could lack one
        return ({"name": "rack_power_kw", "ok": False, "required": limit_kw, "measured": None},
                [Finding("RACK_POWER_NOT_JUDGED", "error", "requirements.rack_power_kw: the plan has no racks (no layout)",
                         "layout")])
    draw = rack_draw(plan)
    limit_w = limit_kw * 1000.0
    worst = int(np.argmax(draw.known_w))
    over = np.nonzero(draw.known_w > limit_w + 1e-6)[0]
    unsure = np.nonzero((draw.unknown > 0) & (draw.known_w <= limit_w + 1e-6))[0]
    result = {"name": "rack_power_kw", "ok": not over.size, "required": limit_kw,
              "measured": round(float(draw.known_w[worst]) / 1000, 2), "worst_rack": phys.racks[worst].name,
              "racks_over": int(over.size), "racks_unknown": int(unsure.size)}
    findings = []
    if over.size:
        i = int(over[np.argmax(draw.known_w[over])])
        floor = " at least" if draw.unknown[i] else ""
        findings.append(Finding(
            "RACK_POWER_ABOVE_LIMIT", "error",
            f"rack {phys.racks[i].name} draws{floor} {draw.known_w[i] / 1000:.1f} kW{_optics(draw, i)}; "
            f"the limit is {limit_kw:g} kW" + (f" ({over.size} racks over)" if over.size > 1 else ""), phys.racks[i].name))
    if unsure.size:
        i = int(unsure[np.argmax(draw.known_w[unsure])])
        models = sorted({m for r in unsure.tolist() for m in draw.unknown_models(plan, r)})
        findings.append(Finding(
            "RACK_POWER_UNKNOWN_AGAINST_LIMIT", "warning",
            f"{unsure.size} rack(s) hold parts without a published power ({', '.join(models)}): whether they stay "
            f"within {limit_kw:g} kW is unknown; without those parts they draw up to {draw.known_w[i] / 1000:.1f} kW "
            f"(rack {phys.racks[i].name})", phys.racks[i].name))
    return result, findings


def link_reach(plan: Plan) -> list[Finding]:
    phys = plan.physical
    if phys is None or phys.order_m is None:
        return []
    beyond = np.isnan(phys.order_m)
    if not beyond.any():
        return []
    idx = np.nonzero(beyond)[0]
    assert phys.length_m is not None  # set together with order_m
    worst = int(idx[np.argmax(phys.length_m[idx])])
    links = plan.links
    media_id = plan.media[int(links.media[worst])]
    rec = plan.view.facts.media[media_id]
    a, b = plan.devices[int(links.a_dev[worst])].name, plan.devices[int(links.b_dev[worst])].name
    cid = plan.memo("cable_ids", cable_ids)[worst]
    return [Finding("LINK_BEYOND_REACH", "error",
                    f"{idx.size} link(s) are longer than any medium at their speed reaches; the longest, {cid} "
                    f"({a} to {b}, {int(links.speed_gbps[worst])}G), needs {phys.length_m[worst]:.1f} m and the "
                    f"longest-reach medium that fits its ends ({media_id}, {rec.cable_part_number}) comes in at most "
                    f"{max(rec.lengths_m or [rec.reach_m or 0.0]):g} m", cid)]


def cord_reach(plan: Plan) -> list[Finding]:
    """Management cords (plan/fabrics.py management_cords: a switch management port to its
    management leaf, no link of the plan) longer than their medium reaches: the same
    finding as a link's, naming the longest cord."""
    beyond = [c for c in management_cords(plan) if c.length_m is not None and c.order_m is None]
    if not beyond:
        return []
    worst = max(beyond, key=lambda c: c.length_m or 0.0)
    rec = plan.view.facts.media[CORD_MEDIUM]
    return [Finding("LINK_BEYOND_REACH", "error",
                    f"{len(beyond)} management cord(s) are longer than {CORD_MEDIUM} ({rec.cable_part_number}) reaches "
                    f"({max(rec.lengths_m or (rec.reach_m or 0.0,)):g} m); the longest, {worst.cable_id} ({worst.switch} "
                    f"{worst.port} to {worst.leaf} {worst.leaf_port}), needs {worst.length_m:.1f} m: place the management "
                    f"leaf nearer the switches it serves", worst.cable_id)]


def fiber_mpo_sharing(plan: Plan) -> list[Finding]:
    """A straight fiber joins one optical port (MPO) to one. Where a module carries two or
    more logical ports on one MPO (a 4 x 200G cage on a twin-port 2 x 400G module) and a
    straight fiber is ordered, those ports must all reach the same peer MPO; if they go to
    different devices (rail-optimized Gaudi 3: lanes 1 and 2 of an OSFP to two leaves) the
    fibers cannot be cabled as ordered and the catalog has no breakout that would. With a
    layout or without. O(links) numpy."""
    links = plan.links
    media = plan.view.facts.media
    straight = np.array([media[m].fit == "port" and media[m].needs_transceivers for m in plan.media], dtype=bool)
    if not len(links) or not straight.any():
        return []
    sel = straight[links.media]
    cage_ports = plan.memo("cage_table", cage_table)[3]
    lane = plan.memo("port_table", port_table)["lane"]
    ends, cages, modules = link_ends(plan), link_end_cages(plan), end_module_ports(plan)
    shared = []
    for module, c in zip(modules, cages, strict=True):  # more logical ports in the cage than optical ports
        shared.append(sel & (module > 0) & (cage_ports[c] > module))

    def mpo(end: int, idx: np.ndarray) -> np.ndarray:  # the links' optical port ids at an end, where asked only
        gid, c, module = ends[end][idx], cages[end][idx], modules[end][idx]
        return c * 8 + (lane[gid].astype(np.int64) - 1) * np.maximum(module, 1) // cage_ports[c]

    bad_mpos = 0
    example = -1
    for end in (0, 1):
        idx = np.nonzero(shared[end])[0]
        if not idx.size:
            continue
        here, peer = mpo(end, idx), mpo(1 - end, idx)
        order = np.lexsort((peer, here))
        here, peer, idx = here[order], peer[order], idx[order]
        first = np.r_[True, here[1:] != here[:-1]]
        group = np.cumsum(first) - 1
        peers = np.bincount(group, weights=np.r_[True, (here[1:] != here[:-1]) | (peer[1:] != peer[:-1])])
        bad = np.nonzero(peers > 1)[0]
        bad_mpos += bad.size
        if bad.size and example < 0:
            example = int(idx[np.nonzero(first)[0][bad[0]]])
    if not bad_mpos:
        return []
    names = [d.name for d in plan.devices]
    a, b = names[int(links.a_dev[example])], names[int(links.b_dev[example])]
    part = media[plan.media[int(links.media[example])]].cable_part_number
    cid = plan.memo("cable_ids", cable_ids)[example]
    return [Finding("FIBER_MPO_SHARED", "warning",
                    f"{bad_mpos:,} optical ports (MPOs) carry two or more logical ports to different peers, e.g. at "
                    f"{cid} ({a} to {b}, {int(links.speed_gbps[example])}G); a straight fiber ({part}) joins one MPO "
                    f"to one, so those links cannot be cabled as the BOM orders them and the catalog has no breakout "
                    f"that would: send the ports of one MPO to one peer, or order breakout fibers by hand", cid)]


def physical_findings(plan: Plan) -> list[Finding]:
    return rack_power(plan) + link_reach(plan) + cord_reach(plan) + fiber_mpo_sharing(plan)


def check_physical(ctx: CheckContext) -> tuple[PhysicalFigures, list[Finding]]:
    # Racks are shared: their power (a storage switch draws from its rack too) is judged once,
    # with the compute fabric, over every fabric's devices; cable reach and MPO sharing are
    # each fabric's own links, judged on that fabric so its findings name it.
    racks = rack_power(ctx.all_fabrics) if ctx.fabric.name == COMPUTE else []
    return PhysicalFigures(), racks + link_reach(ctx.plan) + cord_reach(ctx.plan) + fiber_mpo_sharing(ctx.plan)
