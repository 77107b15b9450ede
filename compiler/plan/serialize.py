"""plan.json: the whole plan as data, one table row per line so that diffs stay readable.

Tables are {"columns": [...], "rows": [[...], ...]}: at 100k+ GPUs a list of
objects would repeat every key hundreds of thousands of times.
"""

from __future__ import annotations

import json

from .model import Plan
from .views import link_columns

FORMAT = "clusterc-plan"
VERSION = 1

DEVICE_COLUMNS = ["name", "role", "model", "layout", "tier", "index", "su", "pod", "rail", "group", "fabric"]
PORT_COLUMNS = ["name", "cage", "lane", "speed_gbps", "form_factor", "top", "cage_gbps"]
LINK_COLUMNS = ["cable_id", "kind", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "media"]


def _dump(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _table(columns: list[str], rows, indent: str) -> str:
    body = (",\n" + indent + "  ").join(_dump(r) for r in rows)
    inner = f"\n{indent}  {body}\n{indent}" if body else ""
    return f'{{"columns": {_dump(columns)}, "rows": [{inner}]}}'


def plan_json_text(plan: Plan) -> str:
    c = link_columns(plan)
    link_rows = zip(c["cable_id"].tolist(), c["kind"].tolist(), c["a_device"].tolist(), c["a_port"].tolist(),
                    c["b_device"].tolist(), c["b_port"].tolist(), c["speed_gbps"].tolist(), c["media"].tolist())
    device_rows = ([d.name, d.role, d.model, d.layout, d.tier, d.index, d.su, d.pod, d.rail, d.group, d.fabric]
                   for d in plan.devices)
    layouts = ",\n".join(
        f"    {_dump(lid)}: " + _table(PORT_COLUMNS, ([p.name, p.cage, p.lane, p.speed_gbps, p.form_factor, p.top, p.cage_gbps]
                                              for p in lay.ports), "    ")
        for lid, lay in plan.layouts.items()
    )
    head = {
        "$schema": "plan.schema.json",
        "format": FORMAT,
        "version": VERSION,
        "name": plan.name,
        "design": plan.design,
        "notes": plan.notes,
        "facts": plan.facts,
    }
    head_text = json.dumps(head, indent=2, ensure_ascii=False)[:-2]  # drop the closing "\n}"
    return (
        head_text
        + ',\n  "port_layouts": {\n' + layouts + "\n  }"
        + ',\n  "devices": ' + _table(DEVICE_COLUMNS, device_rows, "  ")
        + ',\n  "links": ' + _table(LINK_COLUMNS, link_rows, "  ")
        + "\n}\n"
    )
