"""Column views of a plan's links for writers: names instead of indices, built with
numpy fancy indexing (one pass per column, no per-link Python objects)."""

from __future__ import annotations

import numpy as np

from .model import Plan


def cable_ids(n: int) -> list[str]:
    width = max(6, len(str(n)))
    return [f"C{i:0{width}d}" for i in range(1, n + 1)]


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
