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
from dataclasses import dataclass

import numpy as np

from ..check import CheckResults
from ..plan.fabrics import fabric_names, is_multi_fabric, link_fabric, management_cord_labels, management_cords
from ..plan.model import Plan
from ..plan.cables import (PhysicalCables, joined, multi_link_cables, physical_cable_end_pieces, physical_cable_id_array,
                           physical_cables)
from ..plan.columns import Coded, Piece, concat, present, text_chunks
from ..plan.views import (cable_id_array, cable_id_pieces, cable_part, device_nos, end_part_labels, end_part_names,
                          end_transceiver_codes, floor_port_names, label_pieces, link_ends, port_table)
from .csvtext import csv_field
from .writer import OutputDir

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
    (`links`, `;`-separated, the last column before `fabric`), and per column the links' values, once where they agree.
    Rows are joined from columns of pre-escaped pieces (plan/columns.py text_chunks), no string built per row."""
    links = plan.links
    cables = physical_cables(plan)
    quote_names = _needs_quoting(plan)
    near_a, near_b = physical_cable_end_pieces(plan)
    multi = multi_link_cables(cables)
    ids: list[Piece]
    carried: list[Piece]
    if not quote_names and cables.in_link_order:
        # each cable is its link: its id is the link's, spelled as pieces (device, port number), no string per cable
        devices, numbers = cable_id_pieces(plan)
        ids = carried = [Coded(devices, links.a_dev), Coded(numbers, links.a_port)]
    else:
        ids, carried = [physical_cable_id_array(plan)], [_carried_ids(plan, cables, multi)]
    label_a, label_b = label_pieces(ids, near_a, near_b), label_pieces(ids, near_b, near_a)
    if quote_names or _any_needs_quoting(label_a) or _any_needs_quoting(label_b):
        quoted: list[list[Piece]] = [[np.array([csv_field(t) for t in concat(p).tolist()], dtype=object)] for p in (label_a, label_b)]
        label_a, label_b = quoted
    if quote_names:  # cable ids are device names and port numbers
        ids = [np.array([csv_field(c) for c in concat(ids).tolist()], dtype=object)]
        carried = [np.array([csv_field(c) for c in concat(carried).tolist()], dtype=object)]
    speed = cables.per_cable(links.speed_gbps)
    speeds = Coded(np.array([str(v) for v in range(int(speed.max(initial=0)) + 1)], dtype=object), speed)
    kinds = Coded(np.array([csv_field(k) for k in plan.link_kinds], dtype=object), cables.per_cable(links.kind))
    place = physical_pieces(plan)
    shared = _EndPieces(np.array([f"{csv_field(d.name)},{csv_field(d.role)}" for d in plan.devices], dtype=object),
                        port_pieces(plan), np.array([csv_field(t) for t in end_part_names(plan)], dtype=object), place)
    pieces: list[Piece] = [*ids, ",", kinds, ",", *end_pieces(plan, shared, multi, 0), ",", *end_pieces(plan, shared, multi, 1),
                           ",", speeds, ",", media_tail(plan), ",", *label_a, ",", *label_b,
                           ",", modelled_lengths(plan), ",", *carried]
    header = HEADER
    if is_multi_fabric(plan):  # several fabrics: each cable's fabric in a last column
        pieces += [",", Coded(np.array(fabric_names(plan), dtype=object), cables.per_cable(link_fabric(plan)))]
        header = HEADER + ["fabric"]
    pieces.append("\n")
    out.write_chunks("cabling.csv", itertools.chain([",".join(header) + "\n"], text_chunks(pieces, len(cables)),
                                                    management_cord_rows(plan, place, quote_names)))


def _carried_ids(plan: Plan, cables: PhysicalCables, multi: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Per physical cable, the ids of the logical links it carries, `;`-separated, in link order."""
    logical = plan.memo("cable_id_array", cable_id_array)
    carried = logical[cables.first_link]
    for idx, matrix in multi:
        carried[idx] = concat([logical[matrix[:, 0]]] + [p for j in range(1, matrix.shape[1]) for p in (";", logical[matrix[:, j]])])
    return carried


def _any_needs_quoting(pieces: list[Piece]) -> bool:
    """Whether the first row's text of these pieces needs CSV quoting (labels are joined
    from names that need none, or every name is quoted: _needs_quoting)."""
    head = [p if isinstance(p, str) else p.table[p.codes[:1]] if isinstance(p, Coded) else p[:1] for p in pieces]
    return any(ch in t for t in concat(head).tolist() for ch in ',"\n\r')


@dataclass(frozen=True, slots=True)
class _EndPieces:
    """Pre-escaped CSV pieces an end's columns are indexed from."""

    device: np.ndarray  # per device `name,role`
    port: np.ndarray  # per global port `port,cage,lane` (port_pieces)
    transceiver: np.ndarray  # per transceiver code (views.end_transceiver_codes) its part, as views.end_part_names
    place: np.ndarray  # per device `row,rack,ru` (physical_pieces)


def end_pieces(plan: Plan, shared: _EndPieces, multi: list[tuple[np.ndarray, np.ndarray]], end: int) -> list[Piece]:
    """One end's END_COLUMNS (end 0: a, 1: b) per physical cable as CSV pieces: `device,role`,
    `port,cage,lane`, transceiver, `row,rack,ru` of its first link; on a cable of several
    links (multi: plan/cables.py multi_link_cables) the first piece is the whole end, each
    column its links' values joined (plan/cables.py joined), and the others are empty."""
    links = plan.links
    dev = (links.a_dev, links.b_dev)[end]
    gid = link_ends(plan)[end]
    cables = physical_cables(plan)
    first = cables.first_link
    codes = plan.memo("end_transceiver_codes", end_transceiver_codes)[1 + end]
    if not multi:  # each column drawn from its table (columns.Coded: the separators go into the tables)
        dev_of = cables.per_cable(dev)
        return [Coded(shared.device, dev_of), ",", Coded(shared.port, cables.per_cable(gid)), ",",
                Coded(shared.transceiver, cables.per_cable(codes)), ",", Coded(shared.place, dev_of)]
    columns = [shared.device[dev[first]], shared.port[gid[first]], shared.transceiver[codes[first]], shared.place[dev[first]]]
    seps = np.full(len(first), ",", dtype=object)
    # several links on one cable: each column its links' values joined
    per_device = _device_columns(plan)
    labels = plan.memo("end_part_labels", end_part_labels)[end]
    for idx, matrix in multi:
        raw = [joined(c) for c in _raw_end(plan, per_device, dev[matrix], gid[matrix], labels[matrix])]
        if _raw_needs_quoting(raw):
            raw = [np.frompyfunc(csv_field, 1, 1)(c) for c in raw]
        columns[0][idx] = concat([raw[0]] + [p for c in raw[1:] for p in (",", c)])
        for col in columns[1:]:
            col[idx] = ""
        seps[idx] = ""
    return [columns[0], seps, columns[1], seps, columns[2], seps, columns[3]]


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
    multi = is_multi_fabric(plan)
    esc = csv_field if quote else (lambda v: v)
    out = []
    for c, label_a, label_b in zip(cords, *management_cord_labels(plan), strict=True):
        sw, lf = plan.devices[index[c.switch]], plan.devices[index[c.leaf]]
        cage = next((p.cage for p in plan.layouts[lf.layout].ports if p.name == c.leaf_port), "")
        fields = [esc(c.cable_id), esc(f"{c.fabric}:{MANAGEMENT_KIND}"),
                  esc(c.switch), esc(sw.role), esc(c.port), esc(c.port), "1", "", place[index[c.switch]],
                  esc(c.leaf), esc(lf.role), esc(c.leaf_port), esc(cage), "1", "", place[index[c.leaf]],
                  "1", "CAT6", "RJ45", csv_field(cable_part(media, c.order_m)),
                  "" if c.order_m is None else f"{c.order_m:g}", media.jacket or "", "",
                  csv_field(label_a), csv_field(label_b),
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


def modelled_lengths(plan: Plan) -> Piece:
    """Per physical cable, the modelled length of its longest logical link (what it must
    reach), as a piece: empty (one constant piece) without a layout."""
    phys = plan.physical
    cables = physical_cables(plan)
    if phys is None or phys.length_m is None:
        return ""
    longest = np.maximum.reduceat(phys.length_m[cables.links], cables.indptr[:-1])[cables.group] if len(cables) else []
    return np.array([f"{x:.2f}" for x in np.asarray(longest).tolist()], dtype=object)


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


def media_tail(plan: Plan) -> Piece:
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
    media = cables.per_cable(plan.links.media)
    if media.size and (int(media.min()) < 0 or int(media.max()) >= len(plan.media)):
        raise ValueError("a link's medium is not one of the plan's media")  # a table would give another's text

    def piece(mi: int, length: float) -> str:
        f, c, j, pol = pieces_by_media[mi]
        rec = plan.view.facts.media[plan.media[mi]]
        part = cable_part(rec, length if length >= 0 else None) if cables.order_m is not None else rec.cable_part_number
        return ",".join(csv_field(v) for v in (f, c, part, f"{length:g}" if length >= 0 else "", j, pol))

    if not len(cables):
        return np.zeros(0, dtype=object)
    order = cables.order_m
    if order is None or _one_value(order):
        # one orderable length (none without a layout): the pieces are per medium, the codes the media
        length = -1.0 if order is None or np.isnan(order[0]) else float(order[0])
        table = np.full(len(plan.media), "", dtype=object)
        for mi in present(media, len(plan.media)).tolist():
            table[mi] = piece(mi, length)
        return Coded(table, media)
    # (medium, orderable length) pairs are few: build each piece once, then index. The pairs
    # used are found by marking, each cable's by a rank table (np.unique's sort of a million
    # cables took 0.2 s at 524,288 GPUs)
    lengths, length_code = np.unique(np.nan_to_num(order, nan=-1.0), return_inverse=True)
    span = max(lengths.size, 1)
    code = media.astype(np.int64) * span + length_code.reshape(-1)
    pairs = present(code, len(plan.media) * span)
    rank = np.zeros(len(plan.media) * span, dtype=np.int64)
    rank[pairs] = np.arange(pairs.size)
    pieces = [piece(mi, length) for mi, length in zip((pairs // span).tolist(), lengths[pairs % span].tolist(), strict=True)]
    return Coded(np.array(pieces, dtype=object), rank[code])


def _one_value(values: np.ndarray) -> bool:
    """Whether a float column holds one value (NaN counted as a value), in one pass each way."""
    first = values[0]
    return bool(np.isnan(values).all()) if np.isnan(first) else float(values.min()) == float(values.max()) == float(first)


