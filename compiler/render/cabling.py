"""cabling.csv: one row per physical cable, both ends, for the people who pull them.

A cable carrying several logical links (twin-port copper, splitters, two 200G ports of one
MPO on one fiber: plan/cables.py) is one row: `cable_id` is the physical cable's, `links`
lists the logical cable ids it carries, and each end column holds one value where the
links agree, else theirs `;`-separated in `links` order. An 800G link between twin-port
modules is two fibers: two rows, ids `<link>.1` and `<link>.2`.

Columns line up with NetBox's cable CSV and UFM's Cable Validation Tool P2P file; the physical columns
(row, rack, RU, length) stay empty unless the spec has a physical layout. With one,
`part_number` is the exact orderable part for `length_m` (the orderable length) and
`modelled_m` is the length the model gives before rounding up.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from ..check import CheckResults
from ..plan.fabrics import fabric_names, is_multi_fabric, link_fabric, management_cords
from ..plan.model import Plan
from ..plan.cables import joined, multi_link_cables, physical_cable_ids, physical_cable_labels, physical_cables
from ..plan.views import cable_ids, cable_part, device_nos, device_places, end_part_labels, floor_port_names, port_table
from .csvtext import csv_field
from .writer import OutputDir, in_batches

HEADER = [
    "cable_id", "kind",
    "a_device", "a_role", "a_port", "a_cage", "a_lane", "a_transceiver", "a_row", "a_rack", "a_ru",
    "b_device", "b_role", "b_port", "b_cage", "b_lane", "b_transceiver", "b_row", "b_rack", "b_ru",
    "speed_gbps", "media", "connector", "part_number", "length_m", "jacket_color", "polarity",
    "label_a", "label_b", "modelled_m", "links",
]
END_COLUMNS = 9  # device, role, port, cage, lane, transceiver, row, rack, ru


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    """One row per physical cable (plan.cables): its id, the logical links it carries
    (`links`, `;`-separated, the last column before `fabric`), and per column the links' values, once where they agree."""
    links = plan.links
    cables = physical_cables(plan)
    offsets = plan.port_offsets()
    a_gid = offsets[links.a_dev] + links.a_port
    b_gid = offsets[links.b_dev] + links.b_port
    # Pre-joined, pre-escaped pieces: per device "name,role"; per port "name,cage,lane".
    dev_piece = np.array([f"{csv_field(d.name)},{csv_field(d.role)}" for d in plan.devices], dtype=object)
    port_piece = port_pieces(plan)
    kinds = np.array([csv_field(k) for k in plan.link_kinds], dtype=object)
    a_tr, b_tr = transceiver_columns(plan)
    place = physical_pieces(plan)
    tail = media_tail(plan)
    label_a, label_b = physical_cable_labels(plan)
    quote_names = _needs_quoting(plan)
    if any(any(ch in t for ch in ',"\n\r') for t in label_a[:1] + label_b[:1]) or quote_names:
        label_a, label_b = [csv_field(t) for t in label_a], [csv_field(t) for t in label_b]
    ids = physical_cable_ids(plan)
    logical = plan.memo("cable_ids", cable_ids)
    first = cables.first_link
    a_end = (dev_piece[links.a_dev] + "," + port_piece[a_gid] + "," + np.array(a_tr, dtype=object) + ","
             + place[links.a_dev]) if len(links) else np.zeros(0, dtype=object)
    b_end = (dev_piece[links.b_dev] + "," + port_piece[b_gid] + "," + np.array(b_tr, dtype=object) + ","
             + place[links.b_dev]) if len(links) else np.zeros(0, dtype=object)
    logical_arr = np.array(logical, dtype=object)
    carried = logical_arr[first]
    a_col, b_col = a_end[first], b_end[first]
    multi = multi_link_cables(cables)
    if multi:  # several links on one cable: each column its links' values joined
        per_device = _device_columns(plan)
        ends = list(zip((links.a_dev, links.b_dev), (a_gid, b_gid), plan.memo("end_part_labels", end_part_labels), strict=True))
        for idx, matrix in multi:
            text = logical_arr[matrix[:, 0]]
            for j in range(1, matrix.shape[1]):
                text = text + ";" + logical_arr[matrix[:, j]]
            carried[idx] = text
            for col, (dev, gid, tr) in zip((a_col, b_col), ends, strict=True):
                columns = _raw_end(plan, per_device, dev[matrix], gid[matrix], tr[matrix])
                escape = np.frompyfunc(csv_field, 1, 1) if _raw_needs_quoting(columns) else None
                pieces = [joined(c) for c in columns]
                if escape is not None:
                    pieces = [escape(piece) for piece in pieces]
                merged = pieces[0]
                for piece in pieces[1:]:
                    merged = merged + "," + piece
                col[idx] = merged
    a_col, b_col, carried = a_col.tolist(), b_col.tolist(), carried.tolist()
    if quote_names:  # cable ids are device names and port numbers
        ids, carried = [csv_field(c) for c in ids], [csv_field(c) for c in carried]
    rows: Iterator[tuple] = zip(ids, kinds[links.kind[first]].tolist(), a_col, b_col, links.speed_gbps[first].tolist(), tail,
               label_a, label_b, modelled_lengths(plan), carried, strict=True)
    fmt = "%s,%s,%s,%s,%d,%s,%s,%s,%s,%s\n"
    header = HEADER
    if is_multi_fabric(plan):  # several fabrics: each cable's fabric in a last column
        names = np.array(fabric_names(plan), dtype=object)[link_fabric(plan)[first]].tolist()
        rows = (row + (f,) for row, f in zip(rows, names, strict=True))
        fmt, header = fmt[:-1] + ",%s\n", HEADER + ["fabric"]
    lines = itertools.chain([",".join(header) + "\n"], (fmt % row for row in rows), management_cord_rows(plan, place, quote_names))
    out.write_chunks("cabling.csv", in_batches(lines))



MANAGEMENT_KIND = "management-leaf"  # a switch's management port to a management leaf


def management_cord_rows(plan: Plan, place: np.ndarray, quote: bool) -> list[str]:
    """One row per management cord (plan.fabrics.management_cords: a switch management port
    to a management leaf), after the plan's cables: the floor pulls them and the BOM orders
    them. Kind `<fabric>:management-leaf`; with a layout, the cord's orderable and modelled
    length (expand/management.py cord_lengths), as the plan's own cables show theirs."""
    media = plan.view.facts.media.get("cat6")
    cords = management_cords(plan)
    if media is None or not cords:
        return []
    index = {d.name: i for i, d in enumerate(plan.devices)}
    places = plan.memo("device_places", device_places)
    multi = is_multi_fabric(plan)
    esc = csv_field if quote else (lambda v: v)
    out = []
    for c in cords:
        sw, lf = plan.devices[index[c.switch]], plan.devices[index[c.leaf]]
        cage = next((p.cage for p in plan.layouts[lf.layout].ports if p.name == c.leaf_port), "")
        near, far = f"{places[index[c.switch]]}:{c.port}", f"{places[index[c.leaf]]}:{c.leaf_port}"
        fields = [esc(c.cable_id), esc(f"{c.fabric}:{MANAGEMENT_KIND}"),
                  esc(c.switch), esc(sw.role), esc(c.port), esc(c.port), "1", "", place[index[c.switch]],
                  esc(c.leaf), esc(lf.role), esc(c.leaf_port), esc(cage), "1", "", place[index[c.leaf]],
                  "1", "CAT6", "RJ45", csv_field(cable_part(media, c.order_m)),
                  "" if c.order_m is None else f"{c.order_m:g}", media.jacket or "", "",
                  csv_field(f"{c.cable_id} {near} / {far}"), csv_field(f"{c.cable_id} {far} / {near}"),
                  "" if c.length_m is None else f"{c.length_m:.2f}",
                  esc(c.cable_id)] + ([c.fabric] if multi else [])
        out.append(",".join(fields) + "\n")
    return out


def port_pieces(plan: Plan) -> np.ndarray:
    """Per global port the pre-joined `port,cage,lane` piece: the port as the device's NOS
    names it (views.floor_port_names), the cage as numbered on the panel beside it. Built
    once per (layout, NOS), then spread over the devices."""
    nos_of = plan.memo("device_nos", device_nos)
    floor = plan.memo("floor_port_names", floor_port_names)
    pieces: dict[tuple[str, str | None], np.ndarray] = {}
    parts = []
    for d, nos in zip(plan.devices, nos_of, strict=True):
        key = (d.layout, nos)
        if key not in pieces:
            ports = plan.layouts[d.layout].ports
            names = floor[d.port_offset:d.port_offset + len(ports)].tolist()
            pieces[key] = np.array([f"{csv_field(n)},{csv_field(p.cage)},{p.lane}" for n, p in zip(names, ports, strict=True)], dtype=object)
        parts.append(pieces[key])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


def _device_columns(plan: Plan) -> list[np.ndarray]:
    """Per device, unescaped: name, role, row, rack, ru (object arrays of str)."""
    names = np.array([d.name for d in plan.devices], dtype=object)
    roles = np.array([d.role for d in plan.devices], dtype=object)
    phys = plan.physical
    if phys is None:
        row = rack = ru = np.full(len(plan.devices), "", dtype=object)
    else:
        row = np.array([r.row for r in phys.racks] or [""], dtype=object)[phys.dev_rack]
        rack = np.array([r.name for r in phys.racks] or [""], dtype=object)[phys.dev_rack]
        ru = np.array([str(u) for u in phys.dev_u.tolist()], dtype=object)
    return [names, roles, row, rack, ru]


def _raw_end(plan: Plan, per_device: list[np.ndarray], dev: np.ndarray, gid: np.ndarray, tr: np.ndarray) -> list[np.ndarray]:
    """One end's END_COLUMNS for (n, k) matrices of links' devices, ports and transceivers,
    unescaped: device, role, port, cage, lane, transceiver, row, rack, ru."""
    ports = plan.memo("port_table", port_table)
    floor = plan.memo("floor_port_names", floor_port_names)  # as the switch's NOS names it, like its config
    names, roles, row, rack, ru = per_device
    as_text = np.frompyfunc(str, 1, 1)
    return [names[dev], roles[dev], floor[gid], as_text(ports["cage"][gid]), as_text(ports["lane"][gid]),
            as_text(tr), row[dev], rack[dev], ru[dev]]


def _raw_needs_quoting(columns: list[np.ndarray]) -> bool:
    """Whether any value of the end columns needs CSV quoting (checked once per distinct value)."""
    values = {v for col in columns for v in set(col.ravel().tolist())}
    return any(ch in v for v in values for ch in ',"\n\r')


def modelled_lengths(plan: Plan) -> list[str]:
    """Per physical cable, the modelled length of its longest logical link (what it must reach)."""
    phys = plan.physical
    cables = physical_cables(plan)
    if phys is None or phys.length_m is None:
        return [""] * len(cables)
    longest = np.maximum.reduceat(phys.length_m[cables.links], cables.indptr[:-1])[cables.group] if len(cables) else []
    return [f"{x:.2f}" for x in np.asarray(longest).tolist()]


def _needs_quoting(plan: Plan) -> bool:
    """Labels are joined from device/rack and port names; quote them all if any could need it."""
    names = [d.name for d in plan.devices] + [p.name for lay in plan.layouts.values() for p in lay.ports]
    return any(ch in n for n in names for ch in ',"\n\r')


def physical_pieces(plan: Plan) -> np.ndarray:
    """Per device the pre-joined `row,rack,ru` piece (empty fields without a layout)."""
    phys = plan.physical
    if phys is None:
        return np.full(len(plan.devices), ",,", dtype=object)
    racks = [f"{csv_field(r.row)},{csv_field(r.name)}" for r in phys.racks]
    return np.array([f"{racks[r]},{u}" for r, u in zip(phys.dev_rack.tolist(), phys.dev_u.tolist(), strict=True)], dtype=object)


def media_tail(plan: Plan) -> list[str]:
    """Per physical cable the pre-joined `media,connector,part_number,length_m,jacket_color,polarity`;
    the exact part and orderable length with a layout. Every row is one cable: an 800G
    link between twin-port modules (two fibers, views.fibers_per_link) is two rows, its
    strands `.1` and `.2` (MPO port 1 to 1, 2 to 2)."""
    cables = physical_cables(plan)
    pieces_by_media = []
    for media_id in plan.media:
        rec = plan.view.facts.media[media_id]
        optical = rec.fiber in ("mmf", "smf")
        connector = "MPO-12/APC" if optical else ("RJ45" if rec.fiber == "cat6" else
                                                  f"{rec.end_form_factor or 'OSFP'} (integral)")
        pieces_by_media.append((rec.fiber.upper(), connector, rec.jacket, "Type-B" if optical else ""))
    media = plan.links.media[cables.first_link].astype(np.float64)
    # (medium, orderable length) pairs are few: build each piece once, then index.
    order = np.full(len(cables), -1.0) if cables.order_m is None else np.nan_to_num(cables.order_m, nan=-1.0)
    pairs, inverse = np.unique(np.stack([media, order]), axis=1, return_inverse=True)
    pieces = []
    for mi, length in zip(pairs[0].astype(int).tolist(), pairs[1].tolist(), strict=True):
        f, c, j, pol = pieces_by_media[mi]
        rec = plan.view.facts.media[plan.media[mi]]
        part = cable_part(rec, length if length >= 0 else None) if cables.order_m is not None else rec.cable_part_number
        text = f"{length:g}" if length >= 0 else ""
        pieces.append(",".join(csv_field(v) for v in (f, c, part, text, j, pol)))
    return np.array(pieces, dtype=object)[inverse.reshape(-1)].tolist() if len(cables) else []


def transceiver_columns(plan: Plan) -> tuple[list[str], list[str]]:
    """The transceiver part at each end (plan.views.end_part_labels), CSV-escaped."""
    out = []
    for parts in plan.memo("end_part_labels", end_part_labels):
        uniq, inverse = np.unique(parts.astype(str), return_inverse=True)
        out.append(np.array([csv_field(u) for u in uniq.tolist()], dtype=object)[inverse.reshape(-1)].tolist())
    return out[0], out[1]
