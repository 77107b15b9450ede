"""plan.json: the whole plan as data, one table row per line so that diffs stay readable.

Tables are {"columns": [...], "rows": [[...], ...]}: at 100k+ GPUs a list of
objects would repeat every key hundreds of thousands of times.
"""

from __future__ import annotations

import json

import numpy as np

from .model import Plan
from .views import cable_ids, per_port

FORMAT = "clusterc-plan"
VERSION = 1

DEVICE_COLUMNS = ["name", "role", "model", "layout", "tier", "index", "su", "pod", "rail", "group", "fabric"]
PORT_COLUMNS = ["name", "cage", "lane", "speed_gbps", "form_factor", "top", "cage_gbps"]
LINK_COLUMNS = ["cable_id", "kind", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "media"]


# One encoder for all rows: json.dumps(..., separators=...) builds a new encoder per call.
_dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _link_rows(plan: Plan):
    """Link rows as ready JSON text: each distinct string is encoded once, then rows are
    assembled by indexing (about 10x faster than encoding 400k lists one by one)."""
    links = plan.links
    enc = json.encoder.encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses
    names = np.array([enc(d.name) for d in plan.devices], dtype=object)
    port_names = per_port(plan, {lid: np.array([enc(p.name) for p in lay.ports], dtype=object)
                                 for lid, lay in plan.layouts.items()})
    kinds = np.array([enc(k) for k in plan.link_kinds], dtype=object)
    media = np.array([enc(m) for m in plan.media], dtype=object)
    offsets = plan.port_offsets()
    rows = zip([enc(c) for c in plan.memo("cable_ids", lambda pl: cable_ids(len(pl.links)))], kinds[links.kind].tolist(),
               names[links.a_dev].tolist(), port_names[offsets[links.a_dev] + links.a_port].tolist(),
               names[links.b_dev].tolist(), port_names[offsets[links.b_dev] + links.b_port].tolist(),
               links.speed_gbps.tolist(), media[links.media].tolist())
    return _Raw("[%s,%s,%s,%s,%s,%s,%d,%s]" % r for r in rows)


class _Raw:
    """Rows that are already JSON text."""

    def __init__(self, texts):
        self.texts = texts


def _table(columns: list[str], rows, indent: str) -> str:
    texts = rows.texts if isinstance(rows, _Raw) else (_dump(r) for r in rows)
    body = (",\n" + indent + "  ").join(texts)
    inner = f"\n{indent}  {body}\n{indent}" if body else ""
    return f'{{"columns": {_dump(columns)}, "rows": [{inner}]}}'


ADDRESS_DEVICE_COLUMNS = ["name", "loopback", "asn", "management"]
ADDRESS_LINK_COLUMNS = ["cable_id", "subnet"]


def _addressing_text(plan: Plan) -> str:
    """The routing plan of an Ethernet fabric: pools, ASN range, per-device loopback/ASN/
    management address, per-link /31 (upper end .even, lower end .odd), NOS port names."""
    from .routing import dotted

    r = plan.routing
    head = {"nos": r.nos, "peering": r.peering, "pools": r.pools, "regions": r.regions,
            "asn_range": list(r.asn_range), "interface_names": {nos: {lid: list(n) for lid, n in sorted(by.items())}
                                                                for nos, by in sorted(r.port_names.items())}}
    head_text = json.dumps(head, indent=2, ensure_ascii=False)[:-2].replace("\n", "\n  ")
    loop, mgmt = dotted(r.loopback), dotted(r.management)
    dev_rows = ([d.name, loop[i] if r.loopback[i] else None, int(r.asn[i]) or None, mgmt[i] if r.management[i] else None]
                for i, d in enumerate(plan.devices))
    numbered = np.nonzero(r.link_net)[0]
    ids = plan.memo("cable_ids", lambda pl: cable_ids(len(pl.links)))
    nets = dotted(r.link_net[numbered])
    link_rows = _Raw('["%s","%s/31"]' % (ids[i], n) for i, n in zip(numbered.tolist(), nets))
    return (head_text + ',\n    "devices": ' + _table(ADDRESS_DEVICE_COLUMNS, dev_rows, "    ")
            + ',\n    "links": ' + _table(ADDRESS_LINK_COLUMNS, link_rows, "    ") + "\n  }")


def plan_json_text(plan: Plan) -> str:
    link_rows = _link_rows(plan)
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
        + (',\n  "addressing": ' + _addressing_text(plan) if plan.routing is not None else "")
        + "\n}\n"
    )
