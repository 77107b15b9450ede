"""cabling.csv: one row per cable, both ends, for the people who pull them.

Columns follow the cable-schedule layout in formats.md 7.2; the physical columns
(row, rack, RU, length) stay empty unless the spec has a physical layout. With one,
`part_number` is the exact orderable part for `length_m` (the orderable length) and
`modelled_m` is the length the model gives before rounding up.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..check import CheckResults
from ..plan.fabrics import fabric_names, is_multi_fabric, link_fabric
from ..plan.model import Plan
from ..plan.views import cable_ids, cable_labels, cable_part, end_part_labels, fibers_per_link, per_port
from .csvtext import csv_field
from .writer import OutputDir

HEADER = [
    "cable_id", "kind",
    "a_device", "a_role", "a_port", "a_cage", "a_lane", "a_transceiver", "a_row", "a_rack", "a_ru",
    "b_device", "b_role", "b_port", "b_cage", "b_lane", "b_transceiver", "b_row", "b_rack", "b_ru",
    "speed_gbps", "media", "connector", "part_number", "length_m", "jacket_color", "polarity",
    "label_a", "label_b", "modelled_m",
]


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    links = plan.links
    offsets = plan.port_offsets()
    a_gid = offsets[links.a_dev] + links.a_port
    b_gid = offsets[links.b_dev] + links.b_port
    # Pre-joined, pre-escaped pieces: per device "name,role"; per port "name,cage,lane".
    dev_piece = np.array([f"{csv_field(d.name)},{csv_field(d.role)}" for d in plan.devices], dtype=object)
    port_piece = per_port(plan, {lid: np.array([f"{csv_field(p.name)},{csv_field(p.cage)},{p.lane}" for p in lay.ports],
                                                dtype=object) for lid, lay in plan.layouts.items()})
    kinds = np.array([csv_field(k) for k in plan.link_kinds], dtype=object)
    a_tr, b_tr = transceiver_columns(plan)
    place = physical_pieces(plan)
    tail = media_tail(plan)
    label_a, label_b = plan.memo("cable_labels", cable_labels)
    if any(any(ch in t for ch in ',"\n\r') for t in label_a[:1] + label_b[:1]) or _needs_quoting(plan):
        label_a, label_b = [csv_field(t) for t in label_a], [csv_field(t) for t in label_b]
    rows = zip(plan.memo("cable_ids", cable_ids), kinds[links.kind].tolist(),
               dev_piece[links.a_dev].tolist(), port_piece[a_gid].tolist(), a_tr, place[links.a_dev].tolist(),
               dev_piece[links.b_dev].tolist(), port_piece[b_gid].tolist(), b_tr, place[links.b_dev].tolist(),
               links.speed_gbps.tolist(), tail, label_a, label_b, modelled_lengths(plan))
    # Board traces and backplanes are links of the plan but not cables anyone pulls.
    pulled = np.array([plan.facts["media"][m].get("field_cable", True) for m in plan.media], dtype=bool)
    if len(links) and not pulled[links.media].all():
        rows = itertools.compress(rows, pulled[links.media].tolist())
    fmt = "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%d,%s,%s,%s,%s\n"
    header = HEADER
    if is_multi_fabric(plan):  # several fabrics: each cable's fabric in a last column
        names = np.array(fabric_names(plan), dtype=object)[link_fabric(plan)].tolist()
        if len(links) and not pulled[links.media].all():
            names = list(itertools.compress(names, pulled[links.media].tolist()))
        rows = (row + (f,) for row, f in zip(rows, names))
        fmt, header = fmt[:-1] + ",%s\n", HEADER + ["fabric"]
    out.write_text("cabling.csv", ",".join(header) + "\n" + "".join(fmt % row for row in rows))


def modelled_lengths(plan: Plan) -> list[str]:
    phys = plan.physical
    if phys is None or phys.length_m is None:
        return [""] * len(plan.links)
    return [f"{x:.2f}" for x in phys.length_m.tolist()]


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
    return np.array([f"{racks[r]},{u}" for r, u in zip(phys.dev_rack.tolist(), phys.dev_u.tolist())], dtype=object)


def media_tail(plan: Plan) -> list[str]:
    """Per link the pre-joined `media,connector,part_number,length_m,jacket_color,polarity`;
    the exact part and orderable length with a layout. A link of two fibers (800G between
    twin-port modules, views.fibers_per_link) says `2x MPO-12/APC`: one row, two fibers of
    that part, both ends' MPO ports 1 to 1 and 2 to 2."""
    links = plan.links
    pieces_by_media = []
    for media_id in plan.media:
        rec = plan.facts["media"][media_id]
        optical = rec["fiber"] in ("mmf", "smf")
        connector = "MPO-12/APC" if optical else ("RJ45" if rec["fiber"] == "cat6" else
                                                  f"{rec.get('end_form_factor', 'OSFP')} (integral)")
        pieces_by_media.append((rec["fiber"].upper(), connector,
                                rec["cable_part_number"], rec["jacket"], "Type-B" if optical else ""))
    fibers = plan.memo("fibers_per_link", fibers_per_link)

    def connector(c: str, k: int) -> str:
        return c if k == 1 else f"{k}x {c}"

    phys = plan.physical
    if phys is None or phys.order_m is None:
        if (fibers == 1).all():
            table = np.array([",".join(csv_field(v) for v in (f, c, part, "", j, pol)) for f, c, part, j, pol in pieces_by_media],
                             dtype=object)
            return table[links.media].tolist()
        keys, inverse = np.unique(np.stack([links.media.astype(np.int64), fibers]), axis=1, return_inverse=True)
        pieces = []
        for mi, k in zip(keys[0].tolist(), keys[1].tolist()):
            f, c, part, j, pol = pieces_by_media[mi]
            pieces.append(",".join(csv_field(v) for v in (f, connector(c, k), part, "", j, pol)))
        return np.array(pieces, dtype=object)[inverse.reshape(-1)].tolist()
    # (medium, orderable length, fibers) triples are few: build each piece once, then index.
    order = np.nan_to_num(phys.order_m, nan=-1.0)
    triples, inverse = np.unique(np.stack([links.media.astype(np.float64), order, fibers.astype(np.float64)]), axis=1,
                                 return_inverse=True)
    pieces = []
    for mi, length, k in zip(triples[0].astype(int).tolist(), triples[1].tolist(), triples[2].astype(int).tolist()):
        f, c, _, j, pol = pieces_by_media[mi]
        part = cable_part(plan.facts["media"][plan.media[mi]], length if length >= 0 else None)
        text = f"{length:g}" if length >= 0 else ""
        pieces.append(",".join(csv_field(v) for v in (f, connector(c, k), part, text, j, pol)))
    return np.array(pieces, dtype=object)[inverse.reshape(-1)].tolist()


def transceiver_columns(plan: Plan) -> tuple[list[str], list[str]]:
    """The transceiver part at each end (plan.views.end_part_labels), CSV-escaped."""
    out = []
    for parts in plan.memo("end_part_labels", end_part_labels):
        uniq, inverse = np.unique(parts.astype(str), return_inverse=True)
        out.append(np.array([csv_field(u) for u in uniq.tolist()], dtype=object)[inverse.reshape(-1)].tolist())
    return out[0], out[1]
