"""The floor's view of the cables: one row per physical cable (plan/cables.py) and per
management cord (plan.fabrics.management_cords), both ends spelled as a technician
reads them, and the order in which each rack's sheet lists them.

Shared by the pull sheets (render/floor.py), the workbook's rack sheets and the label
sheets, so all three list the same cables with the same ends, lengths and parts.
A cable of several logical links (twin-port copper, a splitter) names all its ports at
an end (`osfp1-p1+osfp1-p2`); its end's rack and U are its first link's.

Rack order (`rack_entries`): a cable is listed on the sheet of each rack it ends in,
this rack's end first; once where both ends are in one rack, under the end with the
lower U (then port). Sorted by rack, U, port index, cable. O(cables log cables) numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..plan.cables import joined, multi_link_cables, physical_cable_ids, physical_cable_labels, physical_cables
from ..plan.fabrics import management_cord_labels, management_cords
from ..plan.model import Plan
from ..plan.views import cable_part, end_part_labels, floor_port_names, port_table

NO_MEDIUM = "NO MEDIUM REACHES"  # as cabling.xlsx has said for a link no medium reaches
NOT_MODELLED = "not modelled"  # a cord whose length the plan does not model


@dataclass(frozen=True, slots=True)
class FloorEnd:
    """One end of every row (columns; object arrays of str unless said)."""

    rack: np.ndarray  # int64: index into plan.physical.racks
    u: np.ndarray  # int64: the device's lowest U
    port_key: np.ndarray  # int64: sort key of the port (global port id; a management port after its device's)
    device: np.ndarray
    port: np.ndarray  # as the device's NOS names it (views.floor_port_names)
    panel: np.ndarray  # as printed on the panel (the layout's port name)
    transceiver: np.ndarray  # the part at this end ("" for copper)
    label: np.ndarray  # the label stuck on this end: `<id> <this end> / <far end>`


@dataclass(frozen=True, slots=True)
class FloorRows:
    """Per cable (physical cables in cabling.csv order, then management cords)."""

    cable_id: np.ndarray
    media: np.ndarray  # MMF, SMF, DAC, CAT6, ...
    length_m: np.ndarray  # float64: orderable length; NaN: none reaches or not modelled
    length_text: np.ndarray  # `10 m`, NO_MEDIUM or NOT_MODELLED
    part: np.ndarray  # the exact part at that length
    ends: tuple[FloorEnd, FloorEnd]  # A, B

    def __len__(self) -> int:
        return int(self.cable_id.size)


def floor_rows(plan: Plan) -> FloorRows:
    """Every cable the floor pulls, both ends (module doc); needs a physical layout. Memoised."""
    return plan.memo("floor_rows", _floor_rows)


def _text(values: list[str] | np.ndarray) -> np.ndarray:
    return np.array(list(values), dtype=object)


def _floor_rows(plan: Plan) -> FloorRows:
    phys = plan.physical
    assert phys is not None, "floor rows need a physical layout"
    links = plan.links
    cables = physical_cables(plan)
    first = cables.first_link
    offsets = plan.port_offsets()
    dev_names = _text([d.name for d in plan.devices])
    nos_names = plan.memo("floor_port_names", floor_port_names)
    panel_names = plan.memo("port_table", port_table)["name"]
    ids = _text(physical_cable_ids(plan))
    labels = physical_cable_labels(plan)
    media_rec = [plan.view.facts.media[m] for m in plan.media]
    media_kind = _text([rec.fiber.upper() for rec in media_rec])[links.media[first]] if len(cables) else _text([])
    n = len(cables)
    order = cables.order_m if cables.order_m is not None else np.full(n, np.nan)
    # (medium, length) pairs are few: spell each once, then index.
    pairs: dict[tuple[int, float], tuple[str, str]] = {}
    part, length_text = np.empty(n, dtype=object), np.empty(n, dtype=object)
    for i, (m, o) in enumerate(zip(links.media[first].tolist(), order.tolist(), strict=True)):
        reach = not math.isnan(o)
        spelled = (m, o if reach else -1.0)
        if spelled not in pairs:
            pairs[spelled] = (cable_part(media_rec[m], o) if reach else NO_MEDIUM, f"{o:g} m" if reach else NO_MEDIUM)
        part[i], length_text[i] = pairs[spelled]
    cords = management_cords(plan)
    index = {d.name: i for i, d in enumerate(plan.devices)}
    cord_labels = management_cord_labels(plan)
    cat6 = plan.view.facts.media.get("cat6")
    ends = []
    for e, (dev, port, tr) in enumerate(zip((links.a_dev, links.b_dev), (links.a_port, links.b_port),
                                            plan.memo("end_part_labels", end_part_labels), strict=True)):
        gid = offsets[dev] + port
        cols = [dev_names[dev], nos_names[gid], panel_names[gid], tr.astype(str).astype(object)]
        picked = [c[first] for c in cols]
        for idx, matrix in multi_link_cables(cables):  # an end of several ports names them all
            for col, out in zip(cols, picked, strict=True):
                out[idx] = _joined_end(col[matrix])
        cord_dev = np.array([index[c.switch if e == 0 else c.leaf] for c in cords], dtype=np.int64)
        cord_port = _text([c.port if e == 0 else c.leaf_port for c in cords])
        cord_key = np.array([offsets[d] + len(plan.layouts[plan.devices[d].layout].ports) for d in cord_dev.tolist()],
                            dtype=np.int64)
        cord_gid = _cord_gid(plan, cords, e, index)
        key = np.concatenate([gid[first], np.where(cord_gid >= 0, cord_gid, cord_key)]).astype(np.int64)
        all_dev = np.concatenate([dev[first], cord_dev]).astype(np.int64)
        cord_label = _text(cord_labels[e])
        ends.append(FloorEnd(rack=phys.dev_rack[all_dev].astype(np.int64), u=phys.dev_u[all_dev].astype(np.int64),
                             port_key=key, device=np.concatenate([picked[0], dev_names[cord_dev]]),
                             port=np.concatenate([picked[1], cord_port]), panel=np.concatenate([picked[2], cord_port]),
                             transceiver=np.concatenate([picked[3], _text([""] * len(cords))]),
                             label=np.concatenate([_text(labels[e]), cord_label])))
    cord_lengths = [_cord_length(c) for c in cords]
    cord_m = np.array([m for m, _ in cord_lengths], dtype=np.float64)
    cord_text = _text([t for _, t in cord_lengths])
    cord_part = _text([cable_part(cat6, None if math.isnan(m) else m) if cat6 is not None else "" for m in cord_m.tolist()])
    return FloorRows(cable_id=np.concatenate([ids, _text([c.cable_id for c in cords])]),
                     media=np.concatenate([media_kind, _text(["CAT6"] * len(cords))]),
                     length_m=np.concatenate([order.astype(np.float64), cord_m]),
                     length_text=np.concatenate([length_text, cord_text]),
                     part=np.concatenate([part, cord_part]),
                     ends=(ends[0], ends[1]))


def _joined_end(values: np.ndarray) -> np.ndarray:
    """An end of several ports: each column's values once where they agree, else `+`-joined."""
    return np.array([v.replace(";", "+") for v in joined(values.astype(object)).tolist()], dtype=object)


def _cord_gid(plan: Plan, cords: list, end: int, index: dict[str, int]) -> np.ndarray:
    """A cord end's global port id where the port is in its device's layout (the leaf's
    port), else -1 (a switch management port: not in the layout)."""
    out = np.full(len(cords), -1, dtype=np.int64)
    for k, c in enumerate(cords):
        d = plan.devices[index[c.switch if end == 0 else c.leaf]]
        name = c.port if end == 0 else c.leaf_port
        pos = next((i for i, p in enumerate(plan.layouts[d.layout].ports) if p.name == name), None)
        if pos is not None:
            out[k] = d.port_offset + pos
    return out


def _cord_length(cord) -> tuple[float, str]:
    """A management cord's orderable length and its text: the length where the plan
    models it (`order_m`), NO_MEDIUM where it models one no cord reaches, else NaN and
    NOT_MODELLED (read by name: older plans' cords carry no lengths)."""
    order, modelled = getattr(cord, "order_m", None), getattr(cord, "length_m", None)
    if order is not None:
        return float(order), f"{float(order):g} m"
    return float("nan"), NO_MEDIUM if modelled is not None else NOT_MODELLED


def rack_entries(rows: FloorRows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rack, row, near end) in sheet order (module doc); near end 0 = A, 1 = B."""
    a, b = rows.ends
    n = len(rows)
    same = a.rack == b.rack
    b_first = same & ((b.u < a.u) | ((b.u == a.u) & (b.port_key < a.port_key)))
    keep_b = ~same
    row = np.concatenate([np.arange(n), np.nonzero(keep_b)[0]]).astype(np.int64)
    end = np.concatenate([b_first.astype(np.int8), np.ones(int(keep_b.sum()), dtype=np.int8)])
    rack = np.where(end == 0, a.rack[row], b.rack[row])
    u = np.where(end == 0, a.u[row], b.u[row])
    key = np.where(end == 0, a.port_key[row], b.port_key[row])
    order = np.lexsort((row, key, u, rack))
    return rack[order], row[order], end[order]
