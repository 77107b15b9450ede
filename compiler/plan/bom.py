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


def _cage_ids(plan: Plan) -> tuple[np.ndarray, list]:
    """Global cage id of every global port, and the first Port of each global cage."""
    per_layout: dict[str, tuple[np.ndarray, list]] = {}
    for lid, layout in plan.layouts.items():
        index: dict[str, int] = {}
        first: list = []
        for port in layout.ports:
            if port.cage not in index:
                index[port.cage] = len(first)
                first.append(port)
        local = np.fromiter((index[p.cage] for p in layout.ports), dtype=np.int64, count=len(layout))
        per_layout[lid] = (local, first)
    out = np.empty(plan.port_count(), dtype=np.int64)
    cage_port: list = []
    for dev in plan.devices:
        local, first = per_layout[dev.layout]
        out[dev.port_offset:dev.port_offset + local.size] = len(cage_port) + local
        cage_port.extend(first)
    return out, cage_port


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
            nic_part = rec["nic_part_number"] or ("built in" if rec["nics_built_in"] else NOT_IN_CATALOG)
            lines.append(BomLine("nic", nic_part, rec["nic"], qty * rec["nics"], None,
                                 "part of the server" if rec["nics_built_in"] else "order separately"))
        else:
            lines.append(BomLine("endpoint", "", f"{model} (fabric endpoint, customer supplied)", qty, None))

    # Transceivers: one per (cage, medium) with at least one link.
    links = plan.links
    if len(links):
        cage_of_port, cage_port = _cage_ids(plan)
        offsets = plan.port_offsets()
        ends_cage = np.concatenate([cage_of_port[offsets[links.a_dev] + links.a_port],
                                    cage_of_port[offsets[links.b_dev] + links.b_port]])
        ends_media = np.concatenate([links.media, links.media]).astype(np.int64)
        pairs = np.unique(ends_cage * len(plan.media) + ends_media)
        cage_ids, media_idx = np.divmod(pairs, len(plan.media))
        tally: dict[tuple[str, str], int] = {}
        for cid, mi in zip(cage_ids.tolist(), media_idx.tolist()):
            port = cage_port[cid]
            key = f"{port.form_factor} {port.top} {port.cage_gbps}G"
            media_id = plan.media[mi]
            if not facts["media"][media_id]["needs_transceivers"]:
                continue
            part = facts["media"][media_id]["transceivers"].get(key) or f"{NOT_IN_CATALOG}: {media_id} {key}"
            tally[(part, media_id)] = tally.get((part, media_id), 0) + 1
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
            if qty:
                m = facts["media"][plan.media[mi]]
                lines.append(BomLine("cable", m["cable_part_number"], m["cable_description"], qty, None,
                                     "length per cable: set once a physical layout exists"))
    return lines

