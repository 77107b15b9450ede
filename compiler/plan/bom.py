"""The bill of materials of a plan: what procurement orders, with quantities and power.

A pure function of the plan (its devices, links and the catalog facts it carries).
Transceivers are counted per cage: a twin-port module serves both logical ports of
its cage, so a cage with one or two links in use takes one module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Plan

NOT_IN_CATALOG = "NOT IN CATALOG"


@dataclass(frozen=True, slots=True)
class BomLine:
    category: str  # switch, server, endpoint, nic, transceiver, cable
    part_number: str
    description: str
    quantity: int
    unit_power_w: float | None
    notes: str = ""

    @property
    def total_power_w(self) -> float | None:
        return None if self.unit_power_w is None else self.unit_power_w * self.quantity


def _cage_types(plan: Plan) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per global port: its global cage id and its cage type (index into the returned keys).

    A cage type is (form factor, top, cage bandwidth): what a transceiver must fit.
    """
    keys: list[str] = []
    per_layout: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
    for lid, layout in plan.layouts.items():
        index: dict[str, int] = {}
        local = np.empty(len(layout), dtype=np.int64)
        ctype = np.empty(len(layout), dtype=np.int64)
        for i, port in enumerate(layout.ports):
            local[i] = index.setdefault(port.cage, len(index))
            key = f"{port.form_factor} {port.top} {port.cage_gbps}G"
            if key not in keys:
                keys.append(key)
            ctype[i] = keys.index(key)
        per_layout[lid] = (local, ctype, len(index))
    n = plan.port_count()
    cage = np.empty(n, dtype=np.int64)
    ctype = np.empty(n, dtype=np.int64)
    next_cage = 0
    for dev in plan.devices:
        local, types, n_cages = per_layout[dev.layout]
        cage[dev.port_offset:dev.port_offset + local.size] = next_cage + local
        ctype[dev.port_offset:dev.port_offset + local.size] = types
        next_cage += n_cages
    return cage, ctype, keys


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
                                 "" if rec["power_w"] is not None else "power not published"))
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

    # Transceivers: one per (cage, medium) with at least one link.
    links = plan.links
    if len(links):
        cage_of_port, type_of_port, type_keys = _cage_types(plan)
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
        tally: dict[tuple[str, str], int] = {}
        for c, q in zip(combo.tolist(), qty.tolist()):
            key, media_id = type_keys[c // n_media], plan.media[c % n_media]
            if not facts["media"][media_id]["needs_transceivers"]:
                continue
            part = facts["media"][media_id]["transceivers"].get(key) or f"{NOT_IN_CATALOG}: {media_id} {key}"
            tally[(part, media_id)] = tally.get((part, media_id), 0) + q
        for (part, media_id), qty in sorted(tally.items()):
            t = facts["transceivers"].get(part)
            if t:
                lines.append(BomLine("transceiver", part, t["description"], qty, t["power_w"],
                                     "" if t["confidence"] == "vendor" else f"part number {t['confidence']}"))
            else:
                lines.append(BomLine("transceiver", part, "no transceiver for this cage in the catalog", qty, None,
                                     "add one to the catalog"))
        per_media = np.bincount(links.media.astype(np.int64), minlength=len(plan.media))
        for mi, qty in enumerate(per_media.tolist()):
            m = facts["media"][plan.media[mi]]
            if qty and m.get("field_cable", True):
                lines.append(BomLine("cable", m["cable_part_number"] or NOT_IN_CATALOG, m["cable_description"], qty, None,
                                     "length per cable: set once a physical layout exists"))
    return lines

