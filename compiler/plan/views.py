"""Column views of a plan's links for writers: names instead of indices, built with
numpy fancy indexing (one pass per column, no per-link Python objects)."""

from __future__ import annotations

import numpy as np

from .model import Plan


def cable_ids(n: int) -> list[str]:
    width = max(6, len(str(n)))
    return [f"C{i:0{width}d}" for i in range(1, n + 1)]


def port_table(plan: Plan) -> dict[str, np.ndarray]:
    """Per global port id: port name, cage, lane, and the cage key transceivers are chosen by."""
    names: list[str] = []
    cages: list[str] = []
    lanes: list[int] = []
    keys: list[str] = []
    per_layout = {
        lid: ([p.name for p in lay.ports], [p.cage for p in lay.ports], [p.lane for p in lay.ports],
              [f"{p.form_factor} {p.top} {p.cage_gbps}G" for p in lay.ports])
        for lid, lay in plan.layouts.items()
    }
    for dev in plan.devices:
        n, c, la, k = per_layout[dev.layout]
        names.extend(n)
        cages.extend(c)
        lanes.extend(la)
        keys.extend(k)
    return {"name": np.array(names, dtype=object), "cage": np.array(cages, dtype=object),
            "lane": np.array(lanes, dtype=np.int32), "cage_key": np.array(keys, dtype=object)}


def link_columns(plan: Plan) -> dict[str, np.ndarray]:
    links = plan.links
    dev_names = np.array([d.name for d in plan.devices], dtype=object)
    dev_roles = np.array([d.role for d in plan.devices], dtype=object)
    offsets = plan.port_offsets()
    ports = port_table(plan)
    a_gid = offsets[links.a_dev] + links.a_port
    b_gid = offsets[links.b_dev] + links.b_port
    kinds = np.array(plan.link_kinds, dtype=object)
    media = np.array(plan.media, dtype=object)
    cols = {
        "cable_id": np.array(cable_ids(len(links)), dtype=object),
        "kind": kinds[links.kind],
        "a_device": dev_names[links.a_dev],
        "a_role": dev_roles[links.a_dev],
        "a_port": ports["name"][a_gid],
        "a_cage": ports["cage"][a_gid],
        "a_lane": ports["lane"][a_gid],
        "b_device": dev_names[links.b_dev],
        "b_role": dev_roles[links.b_dev],
        "b_port": ports["name"][b_gid],
        "b_cage": ports["cage"][b_gid],
        "b_lane": ports["lane"][b_gid],
        "speed_gbps": links.speed_gbps,
        "media": media[links.media],
    }
    # Transceiver part at each end, from the medium and the end's cage type.
    for end, gid in (("a", a_gid), ("b", b_gid)):
        parts = np.empty(len(links), dtype=object)
        keys = ports["cage_key"][gid]
        for mi, media_id in enumerate(plan.media):
            table = plan.facts["media"][media_id]["transceivers"]
            sel = links.media == mi
            parts[sel] = [table.get(k) or "" for k in keys[sel]] if sel.any() else []
        cols[f"{end}_transceiver"] = parts
    return cols
