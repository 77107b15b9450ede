"""The bill of materials of a plan: what procurement orders, with quantities and power.

A pure function of the plan (its devices, links and the catalog facts it carries).
Transceivers are counted per cage: a twin-port module serves both logical ports of
its cage, so a cage with one or two links in use takes one module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .fabric_record import COMPUTE
from .cables import PhysicalCables, physical_cables
from .columns import distinct
from .facts import MediumFacts
from .model import Plan
from .views import (NOT_IN_CATALOG, NOT_PUBLISHED, SPLIT_WAYS, cage_table, fibers_per_link, link_end_cages, part_label,  # noqa: F401
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
    spare_of: str = ""  # spares: the category of the part kept on the shelf
    # transceivers: how many of `quantity` sit in server cages, whose draw is within the
    # server's maximum power (plan/power.py), so a total holding the servers counts it once
    in_servers: int = 0

    @property
    def total_power_w(self) -> float | None:
        return None if self.unit_power_w is None else self.unit_power_w * self.quantity


def bill_of_materials(plan: Plan) -> list[BomLine]:
    facts = plan.view.facts
    lines: list[BomLine] = []
    per_model: dict[str, int] = {}
    for dev in plan.devices:
        per_model[dev.model] = per_model.get(dev.model, 0) + 1
    for model, qty in per_model.items():
        rec = facts.models[model]
        if rec.kind == "switch":
            lines.append(BomLine("switch", rec.part_number, f'{rec.vendor} {rec.model}', qty, rec.power_w,
                                 "power not published" if rec.power_w is None else
                                 f'power secondary: {rec.power_source}' if rec.power_confidence == "secondary"
                                 else ""))
        elif rec.kind == "server":
            lines.append(BomLine("server", rec.part_number, f'{rec.vendor} {rec.model}, {rec.gpus} GPUs', qty,
                                 rec.power_w, "maximum power" if rec.power_w else "power not published"))
            if rec.nics:
                nic_part = rec.nic_part_number or ("built in" if rec.nics_built_in else NOT_IN_CATALOG)
                lines.append(BomLine("nic", nic_part, rec.nic or "", qty * rec.nics, None,
                                     "part of the server" if rec.nics_built_in else "order separately"))
        elif rec.kind == "chip":
            continue  # counted in its host server
        else:
            lines.append(BomLine("endpoint", "", f"{model} (fabric endpoint, customer supplied)", qty, None))

    lines.extend(_scale_up_lines(plan))
    # Transceivers: one per (cage, medium) with at least one link.
    links = plan.links
    if len(links):
        type_keys = plan.memo("cage_table", cage_table)[2]
        combo, per_combo, at_server = _cages_in_use(plan)
        n_media = len(plan.media)
        # Tallied per transceiver; a straight and a splitter medium of one fiber kind share
        # their modules (a switch cage runs one or the other: media.optical_variant).
        tally: dict[str, int] = {}
        hosted: dict[str, int] = {}
        for c, q, h in zip(combo.tolist(), per_combo.tolist(), at_server.tolist(), strict=True):
            key, media_id = type_keys[c // n_media], plan.media[c % n_media]
            part = transceiver_part(facts, media_id, key)
            if part is None:
                continue
            tally[part] = tally.get(part, 0) + q
            hosted[part] = hosted.get(part, 0) + h
        for part, qty in sorted(tally.items(), key=lambda item: part_label(facts, item[0])):
            t = facts.transceivers.get(part)
            label = part_label(facts, part)
            if t and label.startswith(NOT_PUBLISHED):
                lines.append(BomLine("transceiver", label, t.description, qty, t.power_w,
                                     "part number not published: ask the vendor for the ordering code"
                                     + ("" if t.power_w is not None else "; power not published"),
                                     in_servers=hosted[part]))
            elif t:
                lines.append(BomLine("transceiver", label, t.description, qty, t.power_w,
                                     "" if t.confidence == "vendor" else f"part number {t.confidence}",
                                     in_servers=hosted[part]))
            else:
                lines.append(BomLine("transceiver", part, "no transceiver for this cage in the catalog", qty, None,
                                     "add one to the catalog", in_servers=hosted[part]))
        lines.extend(_cable_lines(plan))
    return lines


def _cages_in_use(plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A transceiver per (cage, medium) with at least one link, counted by (cage type,
    medium): the keys `type * media + medium` in use (ascending), how many cages each, and
    how many of those sit in servers. Cages are marked per medium (no sort of the link
    ends: that was n log n), then counted over the few cage types."""
    links = plan.links
    cage_of_port, type_of_port, type_keys, _ = plan.memo("cage_table", cage_table)
    n_cages, n_media = int(cage_of_port.max()) + 1, len(plan.media)
    cage_type = np.zeros(n_cages, dtype=np.int64)
    cage_type[cage_of_port] = type_of_port
    server = np.fromiter((d.tier == 0 for d in plan.devices), dtype=bool, count=len(plan.devices))
    ends = link_end_cages(plan)
    at_server = np.zeros(n_cages, dtype=bool)  # a cage is on one device: each of its ends says the same
    for cages, dev in zip(ends, (links.a_dev, links.b_dev), strict=True):
        at_server[cages] = server[dev]
    per_key = np.zeros(len(type_keys) * n_media, dtype=np.int64)
    hosted = np.zeros_like(per_key)
    for mi in range(n_media):
        sel: np.ndarray | slice = slice(None) if n_media == 1 else links.media == mi
        used = np.zeros(n_cages, dtype=bool)
        for cages in ends:
            used[cages[sel]] = True
        per_key[mi::n_media] = np.bincount(cage_type[used], minlength=len(type_keys))
        hosted[mi::n_media] = np.bincount(cage_type[used & at_server], minlength=len(type_keys))
    combo = np.flatnonzero(per_key)
    return combo, per_key[combo], hosted[combo]


def spare_lines(lines: list[BomLine], spares_percent: dict[str, float]) -> list[BomLine]:
    """Spares to order with the build, the one rule everywhere (plan/order.py): per
    orderable part of a category with a percentage (spec `bom.spares_percent`), that share
    of the part's quantity over all `lines` (the whole order, every fabric), rounded up
    once. A generic cable ordered by length ("<part> <length> m") is one part: its spares
    are counted over every length and cut at the longest. A spare sits on a shelf: it
    draws no power, so its power stays empty."""
    groups: dict[tuple[str, str], list[BomLine]] = {}
    for line in lines:
        pct = spares_percent.get(line.category)
        if not pct or line.category == "spare" or not line.part_number or line.part_number.startswith(NOT_IN_CATALOG):
            continue
        groups.setdefault((line.category, orderable_part(line)), []).append(line)
    out = []
    for (category, _), same in groups.items():
        pct = spares_percent[category]
        total = sum(line.quantity for line in same)
        qty = math.ceil(Fraction(total) * Fraction(str(pct)) / 100)  # exact: 2% of 50 is 1, not 2 by float noise
        if not qty:
            continue
        longest = max(same, key=lambda line: line.length_m or 0.0)
        lengths = sorted({line.length_m for line in same if line.length_m is not None})
        over = f"{total:,}" + (f" over {len(lengths)} lengths, cut at the longest" if len(lengths) > 1 and
                               orderable_part(longest) != longest.part_number else "")
        out.append(BomLine("spare", longest.part_number, f"spare {category}: {longest.description}", qty, None,
                           f"{pct:g}% of {over} rounded up; on the shelf, no power", longest.length_m, spare_of=category))
    return out


def orderable_part(line: BomLine) -> str:
    """The part a line orders: a generic cable's "<part> <length> m" is its part (its
    spares are counted over every length; a price for it prices every length)."""
    if line.length_m is not None and line.part_number.endswith(suffix := f" {line.length_m:g} m"):
        return line.part_number[: -len(suffix)]
    return line.part_number


def _fiber_note(plan: Plan, fibers: np.ndarray, sel: np.ndarray) -> str:
    """Where some of the selected links take more than one fiber (views.fibers_per_link): say so."""
    many = sel & (fibers > 1)
    if not many.any():
        return ""
    speeds = "/".join(f"{s}G" for s in np.unique(plan.links.speed_gbps[many]).tolist())
    per = "/".join(str(f) for f in np.unique(fibers[many]).tolist())
    return (f"; {int(many.sum()):,} links at {speeds} take {per} fibers each (one per optical port of the "
            f"twin-port modules at both ends)")


def _splitter_note(plan: Plan, sel: np.ndarray, medium: MediumFacts) -> str:
    """For splitter fibers: how many links (legs) the splitters carry, so the count reads right."""
    if medium.fit != "split" or not medium.needs_transceivers or not sel.any():
        return ""
    speeds = "/".join(f"{s}G" for s in np.unique(plan.links.speed_gbps[sel]).tolist())
    return (f"; 1:{SPLIT_WAYS} splitter fibers for {int(sel.sum()):,} links at {speeds}: one per optical port of the "
            f"twin-port end, a leg to each of the {SPLIT_WAYS} ends it serves")


def _cable_lines(plan: Plan) -> list[BomLine]:
    """Cables by orderable part: one line per medium, or with a layout per (medium,
    orderable length). Counted over plan.cables.physical_cables, the rows of cabling.csv."""
    cables = physical_cables(plan)
    if not len(cables):
        return []
    links = plan.links
    first = cables.first_link
    cable_media = links.media[first]
    fibers = plan.memo("fibers_per_link", fibers_per_link)
    out: list[BomLine] = []
    for mi, media_id in enumerate(plan.media):
        m = plan.view.facts.media[media_id]
        mine = cable_media == mi
        if not mine.any():
            continue
        in_medium = links.media == mi
        if cables.order_m is None:
            out.append(BomLine("cable", m.cable_part_number or NOT_IN_CATALOG, m.cable_description,
                               int(mine.sum()), m.cable_power_w,
                               "length per cable: set once a physical layout exists"
                               + _fiber_note(plan, fibers, in_medium) + _shared_note(plan, cables, mine, m)
                               + _splitter_note(plan, in_medium, m)))
            continue
        order = cables.order_m
        for length in distinct(order[mine & ~np.isnan(order)]).tolist():
            here = mine & (order == length)
            part, description, note = cable_of_length(m, length)
            in_group = np.zeros(cables.indptr.size - 1, dtype=bool)
            in_group[cables.group[here]] = True
            carried = np.zeros(len(links), dtype=bool)  # the logical links these cables carry
            carried[cables.links[np.repeat(in_group, np.diff(cables.indptr))]] = True
            extra = _fiber_note(plan, fibers, carried) if m.fit == "port" else ""
            extra += _shared_note(plan, cables, here, m) + _splitter_note(plan, carried, m)
            out.append(BomLine("cable", part, description, int(here.sum()), m.cable_power_w, note + extra, length_m=length))
        too_long = mine & np.isnan(order)
        if too_long.any():
            out.append(cable_beyond_reach(m, media_id, int(too_long.sum())))
    return out


def cable_of_length(m: MediumFacts, length: float) -> tuple[str, str, str]:
    """A medium's cable of one orderable length (the plan's typed media facts): its part
    number, description and how the part was found."""
    part = m.parts.get(f"{length:g}", f"{m.cable_part_number} {length:g} m")
    note = ("length code -Nxxx inferred from NVIDIA ordering tables" if f"{length:g}" in m.parts else
            "orderable lengths not in our sources: the modelled length rounded up to a whole metre; "
            "order the nearest length the vendor sells" if not m.lengths_published else
            "generic cable: the modelled length rounded up to a whole metre, part per site" if not m.lengths_m else
            "no part for this length in the catalog")
    return part, f"{m.cable_description}, {length:g} m", note


def cable_beyond_reach(m: MediumFacts, media_id: str, quantity: int) -> BomLine:
    """The line of cables no orderable length of the medium reaches (unpriced, no part)."""
    return BomLine("cable", f"{NOT_IN_CATALOG}: {media_id} longer than {max(m.lengths_m or (m.reach_m or 0.0,)):g} m",
                   m.cable_description, quantity, None, "no orderable length reaches: see the LINK_BEYOND_REACH finding")


def _shared_note(plan: Plan, cables: PhysicalCables, sel: np.ndarray, medium: MediumFacts) -> str:
    """For straight fibers that carry several logical links (two 200G ports of one MPO to
    one peer MPO): say how many links the fibers carry, so the count reads right."""
    if medium.fit != "port":
        return ""
    many = sel & (cables.link_count > 1)
    if not many.any():
        return ""
    carried = int(cables.link_count[many].sum())
    per = "/".join(str(k) for k in np.unique(cables.link_count[many]).tolist())
    return (f"; {int(many.sum()):,} fibers carry {carried:,} links, {per} each (logical ports that share an optical "
            f"port (MPO) of their modules and go to one peer MPO)")


def _scale_up_lines(plan: Plan) -> list[BomLine]:
    """NVLink switch trays and backplanes outside the servers (NVL72: 9 trays and one cartridge
    set per rack). Their NVLink ports are backplane connections: no cable lines, no cabling rows."""
    up = plan.scale_up
    parts = plan.view.facts.scale_up_parts
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
        source = f"part of the {p.part_of}" if p.part_of else "order separately"
        out.append(BomLine("scale-up", p.part_number or (f"included: {p.part_of}" if p.part_of else NOT_IN_CATALOG),
                           f"{p.vendor} {p.model}" + (f", {p.rack_units}U" if p.rack_units else "")
                           + (f", {p.switch_asics} NVSwitch ASICs" if p.switch_asics else ""),
                           per_domain * up.domains, p.power_w,
                           f"scale-up: {what}; {source}; backplane-connected, no field cables"
                           + ("" if p.power_w is not None else "; power not published")))
    return out
