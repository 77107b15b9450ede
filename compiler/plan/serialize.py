"""plan.json: the whole plan as data, one table row per line so that diffs stay readable.

Tables are {"columns": [...], "rows": [[...], ...]}: at 100k+ GPUs a list of
objects would repeat every key hundreds of thousands of times.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np

from .fabrics import fabric_view
from .model import Device, LinkTable, Plan, Port, PortLayout
from .physical import Physical, Rack
from .routing import dotted
from .scale_up import ScaleUpDomains
from .views import cable_ids, per_port

FORMAT = "clusterc-plan"
VERSION = 1

DEVICE_COLUMNS = ["name", "role", "model", "layout", "tier", "index", "su", "pod", "rail", "group", "fabric", "rack", "u"]
PORT_COLUMNS = ["name", "cage", "lane", "speed_gbps", "form_factor", "top", "cage_gbps"]
LINK_COLUMNS = ["cable_id", "kind", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "media", "length_m", "order_m"]
RACK_COLUMNS = ["name", "row", "position", "kind", "height_u", "usable_u", "power_budget_w"]


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
    phys = plan.physical
    if phys is not None and phys.length_m is not None:
        lengths = [f"{x:.2f}" for x in phys.length_m.tolist()]
        orders = ["null" if x != x else f"{x:g}" for x in phys.order_m.tolist()]
    else:
        lengths = orders = ["null"] * len(links)
    rows = zip([enc(c) for c in plan.memo("cable_ids", cable_ids)], kinds[links.kind].tolist(),
               names[links.a_dev].tolist(), port_names[offsets[links.a_dev] + links.a_port].tolist(),
               names[links.b_dev].tolist(), port_names[offsets[links.b_dev] + links.b_port].tolist(),
               links.speed_gbps.tolist(), media[links.media].tolist(), lengths, orders)
    return _Raw("[%s,%s,%s,%s,%s,%s,%d,%s,%s,%s]" % r for r in rows)


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


def _addressing_text(plan: Plan, fabric: str | None = None) -> str:
    """The routing plan of an Ethernet fabric: pools, ASN range, per-device loopback/ASN/
    management address, per-link /31 (upper end .even, lower end .odd), NOS port names.
    `fabric`: an extra fabric's, from its view; its device rows are its own switches (the
    servers take no address from it), its links its own."""
    r = plan.routing
    head = {"nos": r.nos, "peering": r.peering, "pools": r.pools, "regions": r.regions, "site": r.site,
            "asn_range": list(r.asn_range), "interface_names": {nos: {lid: list(n) for lid, n in sorted(by.items())}
                                                                for nos, by in sorted(r.port_names.items())}}
    head_text = json.dumps(head, indent=2, ensure_ascii=False)[:-2].replace("\n", "\n  ")
    loop, mgmt = dotted(r.loopback), dotted(r.management)
    dev_rows = ([d.name, loop[i] if r.loopback[i] else None, int(r.asn[i]) or None, mgmt[i] if r.management[i] else None]
                for i, d in enumerate(plan.devices) if fabric is None or d.fabric == fabric)
    numbered = np.nonzero(r.link_net)[0]
    ids = plan.memo("cable_ids", cable_ids)
    nets = dotted(r.link_net[numbered])
    link_rows = _Raw('["%s","%s/31"]' % (ids[i], n) for i, n in zip(numbered.tolist(), nets))
    return (head_text + ',\n    "devices": ' + _table(ADDRESS_DEVICE_COLUMNS, dev_rows, "    ")
            + ',\n    "links": ' + _table(ADDRESS_LINK_COLUMNS, link_rows, "    ") + "\n  }")


def _fabric_addressing_text(plan: Plan) -> str:
    """"fabric_addressing": each Ethernet extra fabric's routing plan, by fabric name in
    spec order ("addressing" stays the compute fabric's); nothing without one."""
    if not plan.fabric_routing:
        return ""
    parts = [f"    {_dump(name)}: " + _addressing_text(fabric_view(plan, name), name).replace("\n", "\n  ")
             for name in plan.fabric_routing]
    return ',\n  "fabric_addressing": {\n' + ",\n".join(parts) + "\n  }"


def plan_json_text(plan: Plan) -> str:
    link_rows = _link_rows(plan)
    phys = plan.physical
    if phys is not None:
        rack_names = [r.name for r in phys.racks]
        places = [(rack_names[r], u) for r, u in zip(phys.dev_rack.tolist(), phys.dev_u.tolist())]
    else:
        places = [(None, None)] * len(plan.devices)
    device_rows = ([d.name, d.role, d.model, d.layout, d.tier, d.index, d.su, d.pod, d.rail, d.group, d.fabric, rack, u]
                   for d, (rack, u) in zip(plan.devices, places))
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
        "requirements": plan.requirements,
        "analysis": plan.analysis,
        "scale_up": plan.scale_up.as_json() if plan.scale_up else None,
    }
    if phys is not None:
        head["physical"] = {"model": phys.model,
                            "racks": {"columns": RACK_COLUMNS, "rows": [[r.name, r.row, r.position, r.kind, r.height_u, r.usable_u,
                                                                        r.power_budget_w] for r in phys.racks]}}
    head_text = json.dumps(head, indent=2, ensure_ascii=False)[:-2]  # drop the closing "\n}"
    return (
        head_text
        + ',\n  "port_layouts": {\n' + layouts + "\n  }"
        + ',\n  "devices": ' + _table(DEVICE_COLUMNS, device_rows, "  ")
        + ',\n  "links": ' + _table(LINK_COLUMNS, link_rows, "  ")
        + (',\n  "addressing": ' + _addressing_text(plan) if plan.routing is not None else "")
        + _fabric_addressing_text(plan)
        + "\n}\n"
    )


def plan_digest(plan: Plan, text: str | None = None) -> str:
    """sha256 of plan.json's text: the identity of a plan (which plan a folder of outputs
    belongs to). `text`: plan.json's text when the caller has it already (saves
    serialising the plan twice; about 1 s at 131,072 GPUs)."""
    return plan.memo("plan_sha256", lambda p: hashlib.sha256((plan_json_text(p) if text is None else text)
                                                             .encode("utf-8")).hexdigest())


def plan_from_json(data: dict) -> Plan:
    """Rebuild a Plan from plan.json (the inverse of plan_json_text)."""
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"not a {FORMAT} v{VERSION} file")
    layouts = {lid: PortLayout(lid, tuple(Port(*row) for row in table["rows"]))
               for lid, table in data["port_layouts"].items()}
    devices = []
    offset = 0
    for row in data["devices"]["rows"]:
        rec = dict(zip(data["devices"]["columns"], row))
        dev = Device(rec["name"], rec["role"], rec["model"], rec["layout"], rec["tier"], rec["index"],
                     su=rec["su"], pod=rec["pod"], rail=rec["rail"], group=rec["group"], fabric=rec["fabric"],
                     port_offset=offset)
        offset += len(layouts[dev.layout])
        devices.append(dev)
    by_name = {d.name: i for i, d in enumerate(devices)}
    port_index = {lid: {p.name: i for i, p in enumerate(lay.ports)} for lid, lay in layouts.items()}
    cols = data["links"]["columns"]
    ci = {c: cols.index(c) for c in cols}
    kinds: list[str] = []
    media: list[str] = []
    a_dev, a_port, b_dev, b_port, kind, med, speed = [], [], [], [], [], [], []
    for row in data["links"]["rows"]:
        a, b = by_name[row[ci["a_device"]]], by_name[row[ci["b_device"]]]
        a_dev.append(a)
        b_dev.append(b)
        a_port.append(port_index[devices[a].layout][row[ci["a_port"]]])
        b_port.append(port_index[devices[b].layout][row[ci["b_port"]]])
        k, m = row[ci["kind"]], row[ci["media"]]
        if k not in kinds:
            kinds.append(k)
        if m not in media:
            media.append(m)
        kind.append(kinds.index(k))
        med.append(media.index(m))
        speed.append(row[ci["speed_gbps"]])
    links = LinkTable(np.array(a_dev, dtype=np.int32), np.array(a_port, dtype=np.int32), np.array(b_dev, dtype=np.int32),
                      np.array(b_port, dtype=np.int32), np.array(kind, dtype=np.int16), np.array(med, dtype=np.int16),
                      np.array(speed, dtype=np.int32))
    plan = Plan(name=data["name"], devices=devices, layouts=layouts, links=links, link_kinds=kinds, media=media,
                design=data["design"], notes=list(data["notes"]), facts=data["facts"])
    plan.requirements = data.get("requirements", {})
    plan.analysis = data.get("analysis", {})
    plan.scale_up = ScaleUpDomains.from_json(data.get("scale_up"))
    if data.get("physical") is not None:
        plan.physical = _physical_from_json(data, plan, by_name)
    return plan


def _physical_from_json(data: dict, plan: Plan, by_name: dict[str, int]) -> Physical:
    """The physical side of a plan.json (racks, rack and U per device, lengths per link), so
    that `diff` of a compiled folder sees what a diff of its spec sees: rack moves, lengths,
    exact parts. Heights and power come from the facts (as placement took them); an
    extra endpoint's height from the model (files written before it was recorded: 1U)."""
    rec = data["physical"]
    model = rec["model"]
    rack_rows = [dict(zip(rec["racks"]["columns"], row)) for row in rec["racks"]["rows"]]
    racks = [Rack(r["name"], r["row"], _row_index(r["row"]), r["position"], r["kind"], r["height_u"], r["usable_u"],
                  float(r["power_budget_w"])) for r in rack_rows]
    rack_index = {r.name: i for i, r in enumerate(racks)}
    cols = data["devices"]["columns"]
    ri, ui = cols.index("rack"), cols.index("u")
    n = len(plan.devices)
    dev_rack = np.empty(n, dtype=np.int32)
    dev_u = np.empty(n, dtype=np.int16)
    for row in data["devices"]["rows"]:
        i = by_name[row[0]]
        dev_rack[i], dev_u[i] = rack_index[row[ri]], row[ui]
    models = plan.facts["models"]
    endpoint_u = model.get("endpoint_rack_units", 1)
    height = {m: (r.get("rack_units") or endpoint_u) for m, r in models.items()}
    power = {m: (math.nan if r.get("power_w") is None else float(r["power_w"])) for m, r in models.items()}
    dev_h = np.array([height[d.model] for d in plan.devices], dtype=np.int16)
    dev_w = np.array([power[d.model] for d in plan.devices], dtype=np.float64)
    lcols = data["links"]["columns"]
    li, oi = lcols.index("length_m"), lcols.index("order_m")
    rows = data["links"]["rows"]
    length = np.array([math.nan if r[li] is None else r[li] for r in rows], dtype=np.float64)
    order = np.array([math.nan if r[oi] is None else r[oi] for r in rows], dtype=np.float64)
    rack = model.get("rack", {})
    return Physical(racks, dev_rack, dev_u, dev_h, dev_w, float(rack.get("width_m", 0.6)), float(model.get("row_pitch_m", 3.0)),
                    int(rack.get("depth_mm", 0)), length_m=length, order_m=order, model=model)


def _row_index(row: str) -> int:
    """A, B, ..., Z, AA, ... -> 0, 1, ... (the inverse of placement.row_name)."""
    index = 0
    for ch in row:
        index = index * 26 + (ord(ch) - ord("A") + 1)
    return index - 1
