"""The bill of materials of a plan: what procurement orders, with quantities and power.

A pure function of the plan (its devices, links and the catalog facts it carries).
Transceivers are counted per cage: a twin-port module serves both logical ports of
its cage, so a cage with one or two links in use takes one module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .fabric import COMPUTE
from .model import Plan
from .views import (NOT_IN_CATALOG, NOT_PUBLISHED, SPLIT_WAYS, cage_table, fibers_per_link, part_label,  # noqa: F401
                    port_table, splitter_heads, transceiver_part)  # (NOT_IN_CATALOG, NOT_PUBLISHED: read by summary, BOM users)



@dataclass(frozen=True, slots=True)
class BomLine:
    category: str  # switch, server, endpoint, nic, scale-up, transceiver, cable
    part_number: str
    description: str
    quantity: int
    unit_power_w: float | None
    notes: str = ""
    length_m: float | None = None  # cables with a layout: the orderable length this part is

    @property
    def total_power_w(self) -> float | None:
        return None if self.unit_power_w is None else self.unit_power_w * self.quantity


def bill_of_materials(plan: Plan) -> list[BomLine]:
    facts = plan.facts
    lines: list[BomLine] = []
    per_model: dict[str, int] = {}
    for dev in plan.devices:
        per_model[dev.model] = per_model.get(dev.model, 0) + 1
    for model, qty in per_model.items():
        rec = facts["models"][model]
        if rec["kind"] == "switch":
            lines.append(BomLine("switch", rec["part_number"], f'{rec["vendor"]} {rec["model"]}', qty, rec["power_w"],
                                 "power not published" if rec["power_w"] is None else
                                 f'power secondary: {rec.get("power_source")}' if rec.get("power_confidence") == "secondary"
                                 else ""))
        elif rec["kind"] == "server":
            lines.append(BomLine("server", rec["part_number"], f'{rec["vendor"]} {rec["model"]}, {rec["gpus"]} GPUs', qty,
                                 rec["power_w"], "maximum power" if rec["power_w"] else "power not published"))
            if rec["nics"]:
                nic_part = rec["nic_part_number"] or ("built in" if rec["nics_built_in"] else NOT_IN_CATALOG)
                lines.append(BomLine("nic", nic_part, rec["nic"], qty * rec["nics"], None,
                                     "part of the server" if rec["nics_built_in"] else "order separately"))
        elif rec["kind"] == "chip":
            continue  # counted in its host server
        else:
            lines.append(BomLine("endpoint", "", f"{model} (fabric endpoint, customer supplied)", qty, None))

    lines.extend(_scale_up_lines(plan))
    # Transceivers: one per (cage, medium) with at least one link.
    links = plan.links
    if len(links):
        cage_of_port, type_of_port, type_keys, _ = plan.memo("cage_table", cage_table)
        offsets = plan.port_offsets()
        ends = np.concatenate([offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port])
        ends_media = np.concatenate([links.media, links.media]).astype(np.int64)
        n_media = len(plan.media)
        # One transceiver per (cage, medium) in use; then count those by (cage type, medium).
        in_use = np.unique(cage_of_port[ends] * n_media + ends_media)
        cage_type = np.zeros(int(cage_of_port.max()) + 1, dtype=np.int64)
        cage_type[cage_of_port] = type_of_port
        cages, media_idx = np.divmod(in_use, n_media)
        combo, qty = np.unique(cage_type[cages] * n_media + media_idx, return_counts=True)
        # Tallied per transceiver; a straight and a splitter medium of one fiber kind share
        # their modules (a switch cage runs one or the other: media.optical_variant).
        tally: dict[str, int] = {}
        for c, q in zip(combo.tolist(), qty.tolist()):
            key, media_id = type_keys[c // n_media], plan.media[c % n_media]
            part = transceiver_part(facts, media_id, key)
            if part is None:
                continue
            tally[part] = tally.get(part, 0) + q
        for part, qty in sorted(tally.items(), key=lambda item: part_label(facts, item[0])):
            t = facts["transceivers"].get(part)
            label = part_label(facts, part)
            if t and label.startswith(NOT_PUBLISHED):
                lines.append(BomLine("transceiver", label, t["description"], qty, t["power_w"],
                                     "part number not published: ask the vendor for the ordering code"
                                     + ("" if t["power_w"] is not None else "; power not published")))
            elif t:
                lines.append(BomLine("transceiver", label, t["description"], qty, t["power_w"],
                                     "" if t["confidence"] == "vendor" else f"part number {t['confidence']}"))
            else:
                lines.append(BomLine("transceiver", part, "no transceiver for this cage in the catalog", qty, None,
                                     "add one to the catalog"))
        if plan.physical is not None and plan.physical.order_m is not None:
            lines.extend(_cables_by_length(plan, cage_of_port))
        else:
            fibers = plan.memo("fibers_per_link", fibers_per_link)
            for mi, media_id in enumerate(plan.media):
                m = facts["media"][media_id]
                in_medium = links.media == mi
                if in_medium.any() and m.get("field_cable", True):  # board traces are not ordered
                    lines.append(BomLine("cable", m["cable_part_number"] or NOT_IN_CATALOG, m["cable_description"],
                                         cable_count(plan, cage_of_port, in_medium, m), None,
                                         "length per cable: set once a physical layout exists"
                                         + _fiber_note(plan, fibers, in_medium) + _splitter_note(plan, in_medium, m)))
    return lines + spare_lines(lines, plan.facts.get("bom", {}).get("spares_percent", {}))


def spare_lines(lines: list[BomLine], spares_percent: dict[str, float]) -> list[BomLine]:
    """Spares to order with the build: per part of a category with a percentage (spec
    `bom.spares_percent`), that share of its quantity rounded up. A spare sits on a shelf:
    it draws no power, so its power stays empty."""
    out = []
    for line in lines:
        pct = spares_percent.get(line.category)
        if not pct or line.part_number.startswith(NOT_IN_CATALOG) or not line.part_number:
            continue
        qty = math.ceil(line.quantity * pct / 100 - 1e-9)  # 2% of 50 is 1, not 2 by float noise
        if qty:
            out.append(BomLine("spare", line.part_number, f"spare {line.category}: {line.description}", qty, None,
                               f"{pct:g}% of {line.quantity:,} rounded up; on the shelf, no power", line.length_m))
    return out


@dataclass(frozen=True, slots=True)
class CategoryTotal:
    """One category of a bill: how many parts, their known power and, with a price file, cost."""

    category: str
    quantity: int
    power_w: float  # of the lines with a published power
    power_unknown_lines: int  # lines without one (the power above is a floor then)
    cost: float | None  # None without a price file
    unpriced: tuple[str, ...]  # part numbers the price file lacks (cost above is a floor then)


def bom_totals(lines: list[BomLine], prices: dict | None) -> list[CategoryTotal]:
    """Totals per category in first-appearance order, then 'all'. `prices`: the plan's
    facts['bom']['prices'] (currency and unit price by part number), or None."""
    order = list(dict.fromkeys(line.category for line in lines)) + ["all"]
    out = []
    for cat in order:
        sel = [line for line in lines if cat in ("all", line.category)]
        power = sum(line.total_power_w for line in sel if line.total_power_w is not None)
        unknown = sum(1 for line in sel if line.unit_power_w is None and line.category != "spare"
                      and line.notes != "part of the server")
        cost, unpriced = None, ()
        if prices is not None:
            table = prices["parts"]
            cost = sum(table[line.part_number] * line.quantity for line in sel if line.part_number in table)
            unpriced = tuple(sorted({line.part_number or line.description for line in sel if line.part_number not in table
                                     and "built in" not in line.part_number and not line.part_number.startswith("included")}))
        out.append(CategoryTotal(cat, sum(line.quantity for line in sel), power, unknown, cost, unpriced))
    return out


def _fiber_note(plan: Plan, fibers: np.ndarray, sel: np.ndarray) -> str:
    """Where some of the selected links take more than one fiber (views.fibers_per_link): say so."""
    many = sel & (fibers > 1)
    if not many.any():
        return ""
    speeds = "/".join(f"{s}G" for s in np.unique(plan.links.speed_gbps[many]).tolist())
    per = "/".join(str(f) for f in np.unique(fibers[many]).tolist())
    return (f"; {int(many.sum()):,} links at {speeds} take {per} fibers each (one per optical port of the "
            f"twin-port modules at both ends)")


def cable_count(plan: Plan, cage_of_port: np.ndarray, sel: np.ndarray, medium: dict) -> int:
    """Physical cables behind the selected links (all of one medium, a plan.facts media
    record): one per link for straight optics (per optical port a link fills: two fibers
    for 800G between twin-port modules), one per cage pair for twin-port copper, one per
    switch cage for a copper splitter, one per optical port of the grouped end for a
    splitter fiber (views.splitter_heads: a 4 x 200G cage's four links take two)."""
    links = plan.links
    fit = medium["fit"]
    if fit == "port":
        return int(plan.memo("fibers_per_link", fibers_per_link)[sel].sum())
    offsets = plan.port_offsets()
    if fit == "cage":
        return int(np.unique(cage_of_port[offsets[links.a_dev[sel]] + links.a_port[sel]]).size)
    if medium["needs_transceivers"]:
        return int(np.unique(_splitter_heads(plan, sel)).size)
    return int(np.unique(cage_of_port[offsets[links.b_dev[sel]] + links.b_port[sel]]).size)


def _splitter_heads(plan: Plan, sel: np.ndarray) -> np.ndarray:
    cage, _, _, cage_ports = plan.memo("cage_table", cage_table)
    offsets = plan.port_offsets()
    links = plan.links
    return splitter_heads(cage, cage_ports, plan.memo("port_table", port_table)["lane"],
                          offsets[links.a_dev[sel]] + links.a_port[sel], offsets[links.b_dev[sel]] + links.b_port[sel])


def _splitter_note(plan: Plan, sel: np.ndarray, medium: dict) -> str:
    """For splitter fibers: how many links (legs) the splitters carry, so the count reads right."""
    if medium["fit"] != "split" or not medium["needs_transceivers"] or not sel.any():
        return ""
    speeds = "/".join(f"{s}G" for s in np.unique(plan.links.speed_gbps[sel]).tolist())
    return (f"; 1:{SPLIT_WAYS} splitter fibers for {int(sel.sum()):,} links at {speeds}: one per optical port of the "
            f"twin-port end, a leg to each of the {SPLIT_WAYS} ends it serves")


def _cables_by_length(plan: Plan, cage_of_port: np.ndarray) -> list[BomLine]:
    """Cables by exact orderable part: one line per (medium, length)."""
    out: list[BomLine] = []
    order = plan.physical.order_m
    media = plan.links.media
    for mi, media_id in enumerate(plan.media):
        m = plan.facts["media"][media_id]
        in_medium = media == mi
        lengths = np.unique(order[in_medium & ~np.isnan(order)])
        for length in lengths.tolist():
            qty = cable_count(plan, cage_of_port, in_medium & (order == length), m)
            part = m["parts"].get(f"{length:g}", f"{m['cable_part_number']} {length:g} m")
            note = ("length code -Nxxx inferred from NVIDIA ordering tables" if f"{length:g}" in m["parts"] else
                    "orderable lengths not in our sources: the modelled length rounded up to a whole metre; "
                    "order the nearest length the vendor sells" if not m.get("lengths_published", True) else
                    "generic cable: the modelled length rounded up to a whole metre, part per site" if not m["lengths_m"] else
                    "no part for this length in the catalog")
            fibers = plan.memo("fibers_per_link", fibers_per_link) if m["fit"] == "port" else np.ones(0)
            extra = _fiber_note(plan, fibers, in_medium & (order == length)) if fibers.size else ""
            extra += _splitter_note(plan, in_medium & (order == length), m)
            out.append(BomLine("cable", part, f"{m['cable_description']}, {length:g} m", qty, m["cable_power_w"], note + extra,
                               length_m=length))
        too_long = in_medium & np.isnan(order)
        if too_long.any():
            out.append(BomLine("cable", f"{NOT_IN_CATALOG}: {media_id} longer than {max(m['lengths_m'] or [m['reach_m']]):g} m",
                               m["cable_description"], cable_count(plan, cage_of_port, too_long, m), None,
                               "no orderable length reaches: see the LINK_BEYOND_REACH finding"))
    return out


def _scale_up_lines(plan: Plan) -> list[BomLine]:
    """NVLink switch trays and backplanes outside the servers (NVL72: 9 trays and one cartridge
    set per rack). Their NVLink ports are backplane connections: no cable lines, no cabling rows."""
    up = plan.scale_up
    parts = plan.facts.get("scale_up_parts", {})
    if up is None or not up.domains:
        return []
    if next(iter(plan.fabrics), COMPUTE) != COMPUTE:
        return []  # an extra fabric's plan (plan/fabrics.py): the trays ship with the racks, billed once with compute
    out = []
    for ref, per_domain in ((up.switch_tray, up.switch_trays_per_domain), (up.backplane, 1)):
        if ref is None:
            continue
        p = parts[ref]
        what = f"{per_domain} per {up.kind} domain ({up.gpus_per_domain} GPUs)"
        source = f"part of the {p['part_of']}" if p["part_of"] else "order separately"
        out.append(BomLine("scale-up", p["part_number"] or (f"included: {p['part_of']}" if p["part_of"] else NOT_IN_CATALOG),
                           f"{p['vendor']} {p['model']}" + (f", {p['rack_units']}U" if p["rack_units"] else "")
                           + (f", {p['switch_asics']} NVSwitch ASICs" if p["switch_asics"] else ""),
                           per_domain * up.domains, p["power_w"],
                           f"scale-up: {what}; {source}; backplane-connected, no field cables"
                           + ("" if p["power_w"] is not None else "; power not published")))
    return out
