"""plan.json: the whole plan as data, one table row per line so that diffs stay readable.

Tables are {"columns": [...], "rows": [[...], ...]}: at 100k+ GPUs a list of
objects would repeat every key hundreds of thousands of times.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from ipaddress import IPv4Address

import numpy as np

from .columns import Coded, Piece, text_chunks
from .fabric_record import COMPUTE, Fabric, kind_of
from .fabrics import fabric_names, fabric_plan, is_multi_fabric, serve_management_ports, single_fabric
from .model import DEFAULT_SERDES_GBPS, Device, LinkTable, Plan, Port, PortLayout
from .physical import Physical, Rack
from .routing import RoutingPlan, dotted, dotted_pieces
from .scale_up import ScaleUpDomains
from .views import cable_id_pieces, cable_ids, per_port

FORMAT = "clusterc-plan"
VERSION = 1

DEVICE_COLUMNS = ["name", "role", "model", "layout", "tier", "index", "su", "pod", "rail", "group", "fabric", "rack", "u"]
PORT_COLUMNS = ["name", "cage", "lane", "speed_gbps", "form_factor", "top", "cage_gbps"]
# Only a layout with a cage off 100G-PAM4 lanes (XDR) carries this column: every other
# plan.json reads as before it existed, and a missing column means the default.
SERDES_COLUMN = "serdes_gbps"
LINK_COLUMNS = ["cable_id", "kind", "a_device", "a_port", "b_device", "b_port", "speed_gbps", "media", "length_m", "order_m"]
RACK_COLUMNS = ["name", "row", "position", "kind", "height_u", "usable_u", "power_budget_w"]


# One encoder for all rows: json.dumps(..., separators=...) builds a new encoder per call.
_dump = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _link_rows(plan: Plan) -> _Pieces:
    """Link rows as pieces of JSON text: each distinct string is encoded once, then rows are
    joined from columns (columns.text_chunks; no Python step per link)."""
    links = plan.links
    enc = json.encoder.encode_basestring  # the C encoder json.dumps(ensure_ascii=False) uses
    names = np.array([enc(d.name) for d in plan.devices], dtype=object)
    port_names = per_port(plan, {lid: np.array([enc(p.name) for p in lay.ports], dtype=object)
                                 for lid, lay in plan.layouts.items()})
    kinds = np.array([enc(k) for k in plan.link_kinds], dtype=object)
    media = np.array([enc(m) for m in plan.media], dtype=object)
    offsets = plan.port_offsets()
    phys = plan.physical
    lengths: Piece = "null"
    orders: Piece = "null"
    if phys is not None and phys.length_m is not None and phys.order_m is not None:  # set together
        lengths = [f"{x:.2f}" for x in phys.length_m.tolist()]
        orders = ["null" if x != x else f"{x:g}" for x in phys.order_m.tolist()]
    speed = links.speed_gbps.astype(np.int64)
    speeds = Coded(np.array([str(v) for v in range(int(speed.max(initial=0)) + 1)], dtype=object), speed)
    # the cable id (naming.cable_id) from its two pieces, each device's encoded once (JSON
    # escapes character by character, so the encoded pieces join into the encoded id)
    id_devices, id_numbers = cable_id_pieces(plan)
    id_heads = np.array([enc(d)[:-1] for d in id_devices.tolist()], dtype=object)  # '"' + the device's part
    id_tails = np.array([n + '"' for n in id_numbers.tolist()], dtype=object)
    return _Pieces(["[", Coded(id_heads, links.a_dev), Coded(id_tails, links.a_port), ",", Coded(kinds, links.kind),
                    ",", Coded(names, links.a_dev), ",", port_names[offsets[links.a_dev] + links.a_port],
                    ",", Coded(names, links.b_dev), ",", port_names[offsets[links.b_dev] + links.b_port], ",", speeds, ",",
                    Coded(media, links.media), ",", lengths, ",", orders, "]"], len(links))


# What JSON escapes in a string (json.encoder.encode_basestring; with ensure_ascii,
# encode_basestring_ascii also every character outside printable ASCII): a text without any
# is its own encoding, quoted.
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_NEEDS_ESCAPE_ASCII = re.compile(r'[^\x20-\x7e]|["\\]')


def json_strings(values: np.ndarray, ensure_ascii: bool = False) -> list[Piece]:
    """A column of str as JSON strings, as pieces: the values between quotes where none
    needs escaping (one scan of them all), else each encoded, as json.dumps with this
    ensure_ascii would."""
    needs, encode = ((_NEEDS_ESCAPE_ASCII, json.encoder.encode_basestring_ascii) if ensure_ascii
                     else (_NEEDS_ESCAPE, json.encoder.encode_basestring))
    if needs.search("".join(values.tolist())) is None:
        return ['"', values, '"']
    return [np.array([encode(v) for v in values.tolist()], dtype=object)]


def _json_column(values: list) -> list[Piece]:
    """A column of JSON scalars (str, int, float, bool, None) as pieces of their JSON text,
    as _dump writes each: a column of str through json_strings, else each distinct value
    encoded once, then looked up per row at C speed (map)."""
    column = np.empty(len(values), dtype=object)
    if all(map(str.__instancecheck__, values)):
        column[:] = values
        return json_strings(column)
    if set(map(type, values)) <= {int, type(None), str}:  # distinct values are distinct dict keys
        text = {v: _dump(v) for v in set(values)}
        column[:] = list(map(text.__getitem__, values))
    else:  # 1, 1.0 and True are one dict key: keyed with the type
        typed = {(type(v), v): "" for v in values}
        for key in typed:
            typed[key] = _dump(key[1])
        column[:] = [typed[(type(v), v)] for v in values]
    return [column]


def _json_rows(columns: list[list]) -> _Pieces:
    """Rows of a table given by its columns (lists of JSON scalars), as JSON text pieces:
    each row `[v,v,...]` exactly as _dump writes the row, without encoding a row at a time."""
    pieces: list[Piece] = ["["]
    for j, values in enumerate(columns):
        pieces += ([","] if j else []) + _json_column(values)
    return _Pieces(pieces + ["]"], len(columns[0]) if columns else 0)


@dataclass(frozen=True, slots=True)
class _Pieces:
    """Rows that are already JSON text, as the pieces of a row (columns.text_chunks)."""

    pieces: list[Piece]
    rows: int


def _table(columns: list[str], rows, indent: str) -> str:
    return "".join(_table_parts(columns, rows, indent))


def _table_parts(columns: list[str], rows, indent: str) -> Iterator[str]:
    """A table's JSON text in parts, made as they are read (a table of a million rows is
    never held whole)."""
    sep = ",\n" + indent + "  "
    head = f'{{"columns": {_dump(columns)}, "rows": ['
    if isinstance(rows, _Pieces):  # each row then the separator; the last row's cut off
        chunks = text_chunks(rows.pieces + [sep], rows.rows)
    else:
        text = sep.join(_dump(r) for r in rows)
        chunks = iter([text + sep] if text else [])
    last = next(chunks, None)
    if last is None:
        yield head + "]}"
        return
    yield head
    yield f"\n{indent}  "
    for chunk in chunks:
        yield last
        last = chunk
    yield last[:-len(sep)]
    yield f"\n{indent}]}}"


ADDRESS_DEVICE_COLUMNS = ["name", "loopback", "asn", "management"]
ADDRESS_LINK_COLUMNS = ["cable_id", "subnet"]


def _addressing_text(plan: Plan, fabric: str | None = None) -> str:
    """_addressing_parts joined (an extra fabric's, which plan_json_text indents)."""
    return "".join(_addressing_parts(plan, fabric))


def _addressing_parts(plan: Plan, fabric: str | None = None) -> Iterator[str]:
    """The routing plan of an Ethernet fabric: pools, ASN range, per-device loopback/ASN/
    management address, per-link /31 (upper end .even, lower end .odd), NOS port names.
    `plan`: that fabric's plan (plan/fabrics.py fabric_plan), whose indices its routing's
    are. `fabric`: an extra fabric's name; its device rows are its own switches (the
    servers take no address from it), its links its own. A link's cable id is spelled from
    its device's and port number's pieces (views.cable_id_pieces), not a string per link.
    The names of a routed fabric's devices need no JSON escaping (expand refuses a name no
    switch config can hold)."""
    r = plan.routing
    assert r is not None  # called only for a fabric with a routing plan
    head = {"nos": r.nos, "adaptive_routing": r.adaptive_routing, "peering": r.peering, "pools": r.pools, "regions": r.regions, "site": r.site,
            "asn_range": list(r.asn_range), "interface_names": {nos: {lid: list(n) for lid, n in sorted(by.items())}
                                                                for nos, by in sorted(r.port_names.items())},
            # SerDes lanes per port ("0,1"), as SONiC's PORT table spells them: configs need them
            "port_lanes": {lid: [",".join(map(str, ln)) for ln in lanes] for lid, lanes in sorted(r.port_lanes.items())}}
    head_text = json.dumps(head, indent=2, ensure_ascii=False)[:-2].replace("\n", "\n  ")
    loop, mgmt = dotted(r.loopback), dotted(r.management)
    kept = [i for i, d in enumerate(plan.devices) if fabric is None or d.fabric == fabric]
    lo_set, asn, mgmt_set = (r.loopback != 0).tolist(), r.asn.tolist(), (r.management != 0).tolist()
    dev_rows = _json_rows([[plan.devices[i].name for i in kept], [loop[i] if lo_set[i] else None for i in kept],
                           [int(asn[i]) or None for i in kept], [mgmt[i] if mgmt_set[i] else None for i in kept]])
    numbered = np.nonzero(r.link_net)[0]
    id_devices, id_numbers = cable_id_pieces(plan)
    links = plan.links
    link_rows = _Pieces(['["', Coded(id_devices, links.a_dev[numbered]), Coded(id_numbers, links.a_port[numbered]), '","',
                         *dotted_pieces(r.link_net[numbered]), '/31"]'], int(numbered.size))
    return chain([head_text, ',\n    "devices": '], _table_parts(ADDRESS_DEVICE_COLUMNS, dev_rows, "    "),
                 [',\n    "links": '], _table_parts(ADDRESS_LINK_COLUMNS, link_rows, "    "), ["\n  }"])


def _fabric_addressing_text(plan: Plan) -> str:
    """"fabric_addressing": each Ethernet extra fabric's routing plan, by fabric name in
    spec order ("addressing" stays the compute fabric's); nothing without one."""
    routed = [name for name in fabric_names(plan) if name != COMPUTE and plan.fabrics[name].routing is not None]
    if not routed:
        return ""
    parts = [f"    {_dump(name)}: " + _addressing_text(fabric_plan(plan, name), name).replace("\n", "\n  ")
             for name in routed]
    return ',\n  "fabric_addressing": {\n' + ",\n".join(parts) + "\n  }"


def _layout_table(layout: PortLayout) -> str:
    serdes = any(p.serdes_gbps != DEFAULT_SERDES_GBPS for p in layout.ports)
    columns = PORT_COLUMNS + [SERDES_COLUMN] if serdes else PORT_COLUMNS
    return _table(columns, ([p.name, p.cage, p.lane, p.speed_gbps, p.form_factor, p.top, p.cage_gbps]
                            + ([p.serdes_gbps] if serdes else []) for p in layout.ports), "    ")


def plan_json_text(plan: Plan) -> str:
    """plan.json's text (plan_json_parts joined)."""
    return "".join(plan_json_parts(plan))


def plan_json_parts(plan: Plan) -> Iterator[str]:
    """plan.json's text in parts of at most a few MB, each table's rows made as they are
    read: a writer streams them (at 524,288 GPUs the text is 250 MB; held whole, and
    encoded once for the digest and once for the file, it was three fresh mappings of it)."""
    link_rows = _link_rows(plan)
    phys = plan.physical
    if phys is not None:
        rack_names = [r.name for r in phys.racks]
        places = [(rack_names[r], u) for r, u in zip(phys.dev_rack.tolist(), phys.dev_u.tolist(), strict=True)]
    else:
        places = [(None, None)] * len(plan.devices)
    devices = plan.devices
    device_rows = _json_rows([[getattr(d, field) for d in devices] for field in DEVICE_COLUMNS[:-2]]
                             + [[rack for rack, _ in places], [u for _, u in places]])
    layouts = ",\n".join(f"    {_dump(lid)}: " + _layout_table(lay) for lid, lay in plan.layouts.items())
    head = {
        "$schema": "plan.schema.json",
        "format": FORMAT,
        "version": VERSION,
        "name": plan.name,
        # the fabric records, where the plan has several, close its design (plan/fabric_record.py json_record)
        "design": {**plan.design, "fabrics": {name: plan.fabrics[name].json_record() for name in fabric_names(plan)}}
        if is_multi_fabric(plan) else plan.design,
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
    addressing: Iterable[str] = (chain([',\n  "addressing": '], _addressing_parts(fabric_plan(plan)))
                                 if plan.routing is not None else [])
    return chain([head_text, ',\n  "port_layouts": {\n', layouts, "\n  }", ',\n  "devices": '],
                 _table_parts(DEVICE_COLUMNS, device_rows, "  "), [',\n  "links": '], _table_parts(LINK_COLUMNS, link_rows, "  "),
                 addressing, [_fabric_addressing_text(plan), "\n}\n"])


def plan_digest(plan: Plan, sha256: str | None = None) -> str:
    """sha256 of plan.json's text: the identity of a plan (which plan a folder of outputs
    belongs to). `sha256`: that digest where the caller has it already (plan.json's renderer
    hashes the text as it writes it: serialising the plan twice cost about 1 s at 131,072 GPUs)."""
    if sha256 is not None:
        return plan.memo("plan_sha256", lambda p: sha256)
    return plan.memo("plan_sha256", lambda p: hashlib.sha256(plan_json_text(p).encode("utf-8")).hexdigest())


def _address(text: str | None) -> int:
    return int(IPv4Address(text)) if text else 0


def _routing_from_json(rec: dict, plan: Plan) -> RoutingPlan:
    """The routing plan of `plan` (the whole plan, or one extra fabric's view) from its
    plan.json section: the inverse of _addressing_text. Devices and links without a row
    have no address (0), as when they were planned."""
    index = {d.name: i for i, d in enumerate(plan.devices)}
    n = len(plan.devices)
    loopback, asn, management = np.zeros(n, dtype=np.uint32), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.uint32)
    for name, lo, a, mg in rec["devices"]["rows"]:
        i = index[name]
        loopback[i], asn[i], management[i] = _address(lo), a or 0, _address(mg)
    link_of = {cid: i for i, cid in enumerate(plan.memo("cable_ids", cable_ids))}
    link_net = np.zeros(len(plan.links), dtype=np.uint32)
    for cid, subnet in rec["links"]["rows"]:
        link_net[link_of[cid]] = _address(subnet.split("/")[0])
    return RoutingPlan(
        nos=rec["nos"], peering=rec["peering"], pools=dict(rec["pools"]), asn_range=tuple(rec["asn_range"]),
        loopback=loopback, asn=asn, management=management, link_net=link_net,
        port_names={nos: {lid: tuple(names) for lid, names in by.items()} for nos, by in rec["interface_names"].items()},
        port_lanes={lid: [[int(x) for x in text.split(",")] for text in lanes]
                    for lid, lanes in rec.get("port_lanes", {}).items()},
        regions=rec["regions"], site=dict(rec.get("site") or {}),
        adaptive_routing=bool(rec.get("adaptive_routing", False)))  # absent: a plan.json of an older clusterc


def plan_from_json(data: dict) -> Plan:
    """Rebuild a Plan from plan.json (the inverse of plan_json_text): every output renders
    from it as from the plan that wrote it (tests/test_metamorphic.py)."""
    if data.get("format") != FORMAT or data.get("version") != VERSION:
        raise ValueError(f"not a {FORMAT} v{VERSION} file")
    layouts = {lid: PortLayout(lid, tuple(Port(**dict(zip(table["columns"], row, strict=True))) for row in table["rows"]))
               for lid, table in data["port_layouts"].items()}
    devices = []
    offset = 0
    for row in data["devices"]["rows"]:
        rec = dict(zip(data["devices"]["columns"], row, strict=True))
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
    media: list[str] = list(data["facts"].get("media", {}))  # the plan's order (the BOM lists media in it)
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
    design = dict(data["design"])
    plan = Plan(name=data["name"], devices=devices, layouts=layouts, links=links, link_kinds=kinds, media=media,
                design=design, notes=list(data["notes"]), facts=data["facts"])
    plan.fabrics = _fabrics_from_json(design.pop("fabrics", None), plan)
    plan.requirements = data.get("requirements", {})
    plan.analysis = data.get("analysis", {})
    plan.scale_up = ScaleUpDomains.from_json(data.get("scale_up"))
    if data.get("physical") is not None:
        plan.physical = _physical_from_json(data, plan, by_name)
    # Routing is read back into each fabric's record, sized to that fabric as expand made it.
    if data.get("addressing") is not None:
        routing = _routing_from_json(data["addressing"], fabric_plan(plan))
        plan.routing = plan.fabrics[COMPUTE].routing = routing
    for name, rec in (data.get("fabric_addressing") or {}).items():
        plan.fabrics[name].routing = _routing_from_json(rec, fabric_plan(plan, name))
    serve_management_ports(plan)  # the served switches' gateways and prefix (their addresses are in the rows)
    plan._memo.clear()  # fabric plans made above hold no routing yet; the next ones will
    plan.seal_view()  # a plan.json whose servers do not come first is refused here (PLAN_INVALID)
    return plan


def _fabrics_from_json(records: dict | None, plan: Plan) -> dict[str, Fabric]:
    """The fabric records from design.fabrics: each fabric's own devices are the run of
    devices with its `fabric` column, its links those whose upper end is one of them
    (in plan order, as expand wrote them). Routing is read back by plan_from_json."""
    if not records:
        return single_fabric(plan)
    names = list(records)
    of_device = np.array([names.index(d.fabric) for d in plan.devices], dtype=np.int64)
    of_link = of_device[plan.links.b_dev]
    servers = range(sum(1 for d in plan.devices if d.role == "server"))
    out = {}
    for k, (name, rec) in enumerate(records.items()):
        own = np.nonzero(of_device == k)[0]
        mine = np.nonzero(of_link == k)[0]
        first, end = rec["server_ports"]
        devices = range(int(own[0]), int(own[-1]) + 1) if own.size else range(0)  # compute's: the servers too
        links = range(int(mine[0]), int(mine[-1]) + 1) if mine.size else range(0)
        if len(devices) != own.size or len(links) != mine.size:
            raise ValueError(f"plan.json: fabric {name}'s devices or links are not one run")
        design = plan.design if name == COMPUTE else {k2: v for k2, v in rec.items() if k2 not in ("nic_group", "server_ports")}
        out[name] = Fabric(name, kind_of(name), rec.get("nic_group", COMPUTE), servers, devices, links, (first, end), design)
    return out


def _physical_from_json(data: dict, plan: Plan, by_name: dict[str, int]) -> Physical:
    """The physical side of a plan.json (racks, rack and U per device, lengths per link), so
    that `diff` of a compiled folder sees what a diff of its spec sees: rack moves, lengths,
    exact parts. Heights and power come from the facts (as placement took them); an
    extra endpoint's height from the model (files written before it was recorded: 1U)."""
    rec = data["physical"]
    model = rec["model"]
    rack_rows = [dict(zip(rec["racks"]["columns"], row, strict=True)) for row in rec["racks"]["rows"]]
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
