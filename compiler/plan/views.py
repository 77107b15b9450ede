"""Column views of a plan's links for writers: names instead of indices, built with
numpy fancy indexing (one pass per column, no per-link Python objects)."""

from __future__ import annotations

import numpy as np

from .model import Plan


def cable_ids(plan: Plan) -> list[str]:
    """Every link's cable id (see naming.cable_id), in link order."""
    from ..expand.naming import cable_id

    names = [d.name for d in plan.devices]
    return [cable_id(names[a], p + 1) for a, p in zip(plan.links.a_dev.tolist(), plan.links.a_port.tolist())]


def per_port(plan: Plan, per_layout: dict[str, np.ndarray]) -> np.ndarray:
    """Spread a per-layout array (one value per port of the layout) over every global port."""
    parts = [per_layout[d.layout] for d in plan.devices]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


def port_table(plan: Plan) -> dict[str, np.ndarray]:
    """Per global port id: port name, cage, lane, and the cage key transceivers are chosen by."""
    cols = {"name": lambda p: p.name, "cage": lambda p: p.cage, "lane": lambda p: p.lane,
            "cage_key": lambda p: f"{p.form_factor} {p.top} {p.cage_gbps}G"}
    out = {}
    for col, get in cols.items():
        dtype = np.int32 if col == "lane" else object
        out[col] = per_port(plan, {lid: np.array([get(p) for p in lay.ports], dtype=dtype)
                                   for lid, lay in plan.layouts.items()})
    return out
