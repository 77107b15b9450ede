"""Column views of a plan's links for writers: names instead of indices, built with
numpy fancy indexing (one pass per column, no per-link Python objects)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Sized

import numpy as np

from .columns import Piece, concat
from .facts import MediumFacts, PlanFacts
from .model import Plan
from .naming import CABLE_ID_SEPARATOR

# A part the catalog lacks: named so in the BOM and cabling.csv alike, never left blank.
NOT_IN_CATALOG = "NOT IN CATALOG"
# A part the catalog knows but whose vendor publishes no number (XDR modules): named so,
# with the catalog's name for it, where a part number would stand.
NOT_PUBLISHED = "PART NUMBER NOT PUBLISHED"
SPLIT_WAYS = 2  # NVIDIA's splitter fibers are 1:2 (MFP7E20, MFP7E40); no other fan-out is in the catalog


def transceiver_part(facts: PlanFacts, media_id: str, cage_key: str) -> str | None:
    """The transceiver a cage of type `cage_key` takes on `media_id`: its catalog id, a
    NOT IN CATALOG line where the medium needs one the catalog lacks, None for copper."""
    medium = facts.media[media_id]
    if not medium.needs_transceivers:
        return None
    return medium.transceivers.get(cage_key) or f"{NOT_IN_CATALOG}: {media_id} {cage_key}"


def part_label(facts: PlanFacts, transceiver: str) -> str:
    """How the BOM and cabling.csv name a transceiver (an id from transceiver_part): its part
    number, or `PART NUMBER NOT PUBLISHED: <id>` where the vendor publishes none. Both name
    it this way, so they agree row for line."""
    rec = facts.transceivers.get(transceiver)
    if rec is None:
        return transceiver  # NOT IN CATALOG: ...
    return rec.part_number if rec.part_number else f"{NOT_PUBLISHED}: {transceiver}"


def splitter_heads(cage: np.ndarray, cage_ports: np.ndarray, lane: np.ndarray, ga: np.ndarray, gb: np.ndarray) -> np.ndarray:
    """Per splitter-fiber link (global ports ga, gb), an id of the splitter it is a leg of:
    the optical port (MPO) at its grouped end, the end whose cage holds more logical ports
    (SPLIT_WAYS per MPO), as global cage * 8 + MPO index, MPO = (lane - 1) // SPLIT_WAYS: the
    four 200G ports of a 4 x 200G cage on a twin-port module are lanes 1-2 on one MPO and
    3-4 on the other, so two splitters."""
    grouped_b = cage_ports[cage[gb]] > cage_ports[cage[ga]]
    g = np.where(grouped_b, gb, ga)
    return cage[g] * 8 + (lane[g].astype(np.int64) - 1) // SPLIT_WAYS


def cable_ids(plan: Plan) -> list[str]:
    """Every link's cable id (see naming.cable_id), in link order: cable_id_array as a list."""
    return plan.memo("cable_id_array", cable_id_array).tolist()


def cable_id_array(plan: Plan) -> np.ndarray:
    """Every link's cable id as an object array of str, in link order (memoised: the
    writers that index ids by link read it rather than turn the list back into an array).
    Each device's and each port number's piece of the id is spelled once, then the pieces
    are joined per link in one numpy pass (a Python call per link cost ~1 us, 0.4 s at
    131,072 GPUs)."""
    links = plan.links
    if not len(links):
        return np.zeros(0, dtype=object)
    devices, numbers = cable_id_pieces(plan)
    return devices[links.a_dev] + numbers[links.a_port]


def cable_id_pieces(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """A cable id's two pieces: per device its name and the separator, per port index of an
    a end its 1-based number (as naming.cable_id); link k's id is
    devices[a_dev[k]] + numbers[a_port[k]]. A writer of a large table puts the two in as
    pieces (plan/columns.text_chunks) rather than gather a string per link."""
    links = plan.links
    ports = int(links.a_port.max()) + 1 if len(links) else 0
    devices = np.array([d.name + CABLE_ID_SEPARATOR for d in plan.devices], dtype=object)
    numbers = np.array([str(p + 1) for p in range(ports)], dtype=object)
    return devices, numbers


def per_port(plan: Plan, per_layout: dict[str, np.ndarray]) -> np.ndarray:
    """Spread a per-layout array (one value per port of the layout) over every global port:
    the layouts' arrays one after another in device order. One gather from the layouts'
    arrays laid end to end, by an index computed once per plan (port_sources): port_table,
    the NOS names and the writers each spread several columns."""
    table, place = per_port_table(plan, per_layout)
    return table[place]


def per_port_table(plan: Plan, per_layout: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """per_port as the used layouts' arrays laid end to end (a few hundred values) and per
    global port its place there: per_port is table[place]. A writer of a big table takes
    the pair as a Coded column rather than gather a value per port."""
    if not plan.devices:
        return np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64)
    used, src = plan.memo("port_sources", port_sources)
    return _end_to_end(plan.layouts, used, per_layout), src


def _end_to_end(layouts: Mapping[str, Sized], used: list[str], per_layout: dict[str, np.ndarray]) -> np.ndarray:
    """The used layouts' per-port arrays laid end to end (port_sources' order)."""
    arrays = [per_layout[lid] for lid in used]
    if any(a.size != len(layouts[lid]) for lid, a in zip(used, arrays, strict=True)):
        raise ValueError("per_port: one value per port of each layout")
    return np.concatenate(arrays)


def port_sources(plan: Plan) -> tuple[list[str], np.ndarray]:
    """The layouts the plan's devices use (in plan.layouts order) and, per global port, where
    its value is in those layouts' per-port arrays laid end to end (per_port)."""
    lids = list(plan.layouts)
    index = {lid: k for k, lid in enumerate(lids)}
    code = np.fromiter((index[d.layout] for d in plan.devices), dtype=np.int64, count=len(plan.devices))
    used = np.unique(code).tolist()  # few distinct layouts: numpy's hash path is quick here
    size_of = np.array([len(plan.layouts[lid]) for lid in lids], dtype=np.int64)
    base = np.zeros(len(lids), dtype=np.int64)  # each used layout's first value in the arrays laid end to end
    base[used] = np.cumsum(size_of[used]) - size_of[used]
    sizes = size_of[code]
    starts = np.cumsum(sizes) - sizes
    src = np.repeat(base[code] - starts, sizes) + np.arange(int(sizes.sum()), dtype=np.int64)
    return [lids[k] for k in used], src


def link_port_ids(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the global port id of its end a and of its end b (the device's port offset
    plus the port), memoised: the cabling memos each index per-port tables by them."""
    links = plan.links
    offsets = plan.port_offsets()
    return offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port


def link_ends(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """link_port_ids, computed once per plan."""
    return plan.memo("link_port_ids", link_port_ids)


def link_end_cages(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the global cage (cage_table) of its end a and of its end b, memoised and
    read-only: the budgets and physical checks, the physical cables and the BOM each read them."""
    return plan.memo("link_end_cages", _link_end_cages)


def _link_end_cages(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    cage = plan.memo("cage_table", cage_table)[0]
    a, b = (cage[g] for g in link_ends(plan))
    a.flags.writeable = b.flags.writeable = False
    return a, b


def port_table(plan: Plan) -> PortColumns:
    """Per global port id: port name, cage, lane, and the cage key transceivers are chosen by."""
    return PortColumns(plan)


class PortColumns(Mapping[str, np.ndarray]):
    """port_table's columns, each spread over the global ports when first read: a reader of
    the lanes does not pay for every port's name, cage and cage key (object arrays of a
    value per port, 3.1M at 524,288 GPUs), and the cage keys only a test reads. It holds the
    layouts and where each port's value is (port_sources), not the plan: a memo that held
    its plan would keep a dropped plan alive until the cyclic collector ran."""

    GETTERS = {"name": lambda p: p.name, "cage": lambda p: p.cage, "lane": lambda p: p.lane,
               "cage_key": lambda p: p.cage_key}

    def __init__(self, plan: Plan) -> None:
        self._layouts = plan.layouts
        self._used, self._src = (plan.memo("port_sources", port_sources) if plan.devices
                                 else ([], np.zeros(0, dtype=np.int64)))
        self._built: dict[str, np.ndarray] = {}

    def __getitem__(self, col: str) -> np.ndarray:
        if col not in self._built:
            get = self.GETTERS[col]
            dtype = np.int32 if col == "lane" else object
            if not self._used:
                self._built[col] = np.zeros(0, dtype=dtype)
            else:
                per_layout = {lid: np.array([get(p) for p in self._layouts[lid].ports], dtype=dtype) for lid in self._used}
                self._built[col] = _end_to_end(self._layouts, self._used, per_layout)[self._src]
        return self._built[col]

    def __iter__(self) -> Iterator[str]:
        return iter(self.GETTERS)

    def __len__(self) -> int:
        return len(self.GETTERS)


def nos_port_names(plan: Plan, nos: str | None) -> np.ndarray:
    """Per global port, its name as `nos` spells it on a switch of this plan's routing
    (RoutingPlan.port_names, from the switch model's nos_port_names), the panel name where
    it has none (servers, InfiniBand, a model without that NOS's names, no NOS). Switch
    configs (the fabric's NOS, or the twin's), monitoring and the twin read ports so."""
    table, place = nos_port_table(plan, nos)
    return table[place]


def nos_port_table(plan: Plan, nos: str | None) -> tuple[np.ndarray, np.ndarray]:
    """nos_port_names as per_port_table gives it: the names of the used layouts' ports, and
    per global port its place among them."""
    routing = plan.routing
    per_layout = routing.port_names.get(nos, {}) if nos is not None and routing is not None else {}
    return per_port_table(plan, {lid: np.array(per_layout.get(lid) or [p.name for p in lay.ports], dtype=object)
                                 for lid, lay in plan.layouts.items()})


def device_nos(plan: Plan) -> list[str | None]:
    """Per device, the NOS whose names its ports carry: a switch of a fabric whose configs
    are written for a NOS (spec fabric.nos / fabrics[].nos); None for servers, endpoints,
    InfiniBand switches and fabrics without one."""
    by_fabric: dict[str, str | None] = {}
    out: list[str | None] = []
    for d in plan.devices:
        if d.tier == 0:
            out.append(None)
            continue
        if d.fabric not in by_fabric:
            rec = plan.fabrics.get(d.fabric) if plan.fabrics else None
            routing = rec.routing if rec is not None else plan.routing
            by_fabric[d.fabric] = routing.nos if routing is not None else None
        out.append(by_fabric[d.fabric])
    return out


def floor_port_names(plan: Plan) -> np.ndarray:
    """Per global port, its name where people work on it: as the device's NOS names it
    (the plan's routing port names, expand.ports.nos_port_names from the switch model's
    nos_port_names), else the panel name (servers, InfiniBand, no NOS). The cabling sheet,
    the labels, verify's fixes and the cable-validation file all read this, so each names
    a port as the switch's config does (SONiC Ethernet8, NVUE swp2s0, EOS Ethernet2/1)."""
    nos_of = plan.memo("device_nos", device_nos)
    per: dict[tuple[str, str | None], np.ndarray] = {}
    parts = []
    for d, nos in zip(plan.devices, nos_of, strict=True):
        key = (d.layout, nos)
        arr = per.get(key)
        if arr is None:
            names = None
            if nos is not None:
                rec = plan.fabrics.get(d.fabric) if plan.fabrics else None
                routing = rec.routing if rec is not None else plan.routing
                names = routing.port_names.get(nos, {}).get(d.layout) if routing is not None else None
            arr = per[key] = np.array(list(names) if names else [p.name for p in plan.layouts[d.layout].ports], dtype=object)
        parts.append(arr)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=object)


def floor_port_labels(plan: Plan) -> np.ndarray:
    """Per global port, floor_port_names with the cage number printed on the panel beside a
    name that is not the panel's own (SONiC `Ethernet8[2]`: cage 2 of a panel numbered
    1..64); a panel name (swp2s0, Ethernet2/1, 1/2/1, nic3) stands alone."""
    names = plan.memo("floor_port_names", floor_port_names)
    table = plan.memo("port_table", port_table)
    differs = names != table["name"]
    if not differs.any():
        return names
    out = names.copy()
    out[differs] = names[differs] + "[" + table["cage"][differs] + "]"
    return out


def cage_table(plan: Plan) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Per global port: its global cage id and its cage type (index into the returned keys).

    A cage type is (form factor, top, cage bandwidth, lane rate): what a transceiver must fit.
    Also returns the number of logical ports per global cage.
    """
    keys: list[str] = []
    per_layout: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
    for lid, layout in plan.layouts.items():
        index: dict[str, int] = {}
        local = np.empty(len(layout), dtype=np.int64)
        ctype = np.empty(len(layout), dtype=np.int64)
        for i, port in enumerate(layout.ports):
            local[i] = index.setdefault(port.cage, len(index))
            key = port.cage_key
            if key not in keys:
                keys.append(key)
            ctype[i] = keys.index(key)
        per_layout[lid] = (local, ctype, np.bincount(local, minlength=len(index)))
    n = plan.port_count()
    cage = np.empty(n, dtype=np.int64)
    ctype = np.empty(n, dtype=np.int64)
    lids = list(per_layout)
    index = {lid: k for k, lid in enumerate(lids)}
    code = np.fromiter((index[d.layout] for d in plan.devices), dtype=np.int64, count=len(plan.devices))
    n_cages = np.array([per_layout[lid][2].size for lid in lids], dtype=np.int64)[code] if lids else np.zeros(0, dtype=np.int64)
    first_cage = np.cumsum(n_cages) - n_cages  # each device's first global cage, in device order
    offsets = plan.port_offsets()
    sizes = np.empty(int(n_cages.sum()), dtype=np.int64)
    for k, lid in enumerate(lids):  # a layout's devices at once: rows of one 2-d assignment
        devs = np.nonzero(code == k)[0]
        local, types, counts = per_layout[lid]
        if not devs.size:
            continue
        if local.size:
            at = offsets[devs][:, None] + np.arange(local.size)
            cage[at] = first_cage[devs][:, None] + local
            ctype[at] = types
        if counts.size:
            sizes[first_cage[devs][:, None] + np.arange(counts.size)] = counts
    return cage, ctype, keys, sizes


def device_places(plan: Plan) -> list[str]:
    """Per device, how a label names it: `<rack>-<U>` (TIA-606, lowest U, two digits)
    with a physical layout, else the device name."""
    phys = plan.physical
    if phys is None:
        return [d.name for d in plan.devices]
    racks = [r.name for r in phys.racks]
    return [f"{racks[r]}-{u:02d}" for r, u in zip(phys.dev_rack.tolist(), phys.dev_u.tolist(), strict=True)]


def label_pieces(ids: Sequence[Piece], near: Sequence[Piece], far: Sequence[Piece]) -> list[Piece]:
    """A cable label's text as pieces (columns.concat, columns.text_chunks): `<id> <near> / <far>`,
    each end read from where it is (TIA-606): the B end's label swaps near and far. The id
    and each end are their own pieces (cable_id_pieces, cable_ends)."""
    return [*ids, " ", *near, " / ", *far]


def cable_ends(plan: Plan) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per link, how a label names its A end and its B end: `<place>:<port>`, the place as
    device_places, the port as floor_port_labels; each end as two pieces (object arrays of
    str: the place with its colon, the port), joined only where a row is (text_chunks), so
    no string is built per link end (0.17 s at 131,072 GPUs, 1 s at 524,288)."""
    links = plan.links
    place = place_prefixes(plan)
    names = plan.memo("floor_port_labels", floor_port_labels)
    if not len(links):
        return [np.zeros(0, dtype=object)] * 2, [np.zeros(0, dtype=object)] * 2
    ga, gb = link_ends(plan)
    return [place[links.a_dev], names[ga]], [place[links.b_dev], names[gb]]


def place_prefixes(plan: Plan) -> np.ndarray:
    """Per device `<place>:` (device_places and the colon), an object array: an end's label
    text is then one concatenation per cable end, not two. Memoised: the logical cable ends
    (cable_ends) and the physical ones (cables.physical_cable_end_pieces) both read it;
    shared, so read-only (readers gather from it)."""
    return plan.memo("place_prefixes", _place_prefixes)


def _place_prefixes(plan: Plan) -> np.ndarray:
    out = np.array([f"{p}:" for p in plan.memo("device_places", device_places)], dtype=object)
    out.flags.writeable = False
    return out


def cable_labels(plan: Plan) -> tuple[list[str], list[str]]:
    """Label text for both ends of every cable: `<id> <near>:<port> / <far>:<port>`, a port
    as floor_port_labels gives it; the B end swaps near and far (TIA-606: each end reads
    from where it is)."""
    a, b = plan.memo("cable_ends", cable_ends)
    if not len(a[0]):
        return [], []
    ids = plan.memo("cable_id_array", cable_id_array)
    return concat(label_pieces([ids], a, b)).tolist(), concat(label_pieces([ids], b, a)).tolist()


def cable_part(media_rec: MediumFacts, order_m: float | None) -> str:
    """The cable to order for a medium (a plan.facts media record) at an orderable length:
    the catalog's part for that length where it has one, else the medium's generic part."""
    if order_m is None or order_m != order_m:  # no layout, or no length reaches (NaN)
        return media_rec.cable_part_number
    return media_rec.parts.get(f"{order_m:g}", media_rec.cable_part_number)


def end_transceiver_codes(plan: Plan) -> tuple[list[str], np.ndarray, np.ndarray]:
    """end_transceivers as codes: the distinct transceivers (catalog ids, "" for none) and per
    link the index of the one at end a and at end b. Decided once per (medium, cage type),
    then spread over the links by indexing: no Python work per link."""
    links = plan.links
    _, ctype, keys, _ = plan.memo("cage_table", cage_table)
    parts: list[str] = [""]
    table = np.zeros((max(len(plan.media), 1), max(len(keys), 1)), dtype=np.int64)
    for mi, media_id in enumerate(plan.media):
        for ki, key in enumerate(keys):
            part = transceiver_part(plan.view.facts, media_id, key) or ""
            if part not in parts:
                parts.append(part)
            table[mi, ki] = parts.index(part)
    if not len(links):
        return parts, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    ga, gb = link_ends(plan)
    media = links.media.astype(np.int64)
    return parts, table[media, ctype[ga]], table[media, ctype[gb]]


def end_transceivers(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the transceiver (catalog id) at end a and at end b, from the link's medium and
    the end's cage type ("" where the medium takes none; NOT IN CATALOG where the catalog lacks
    one). part_label names them for people."""
    parts, code_a, code_b = plan.memo("end_transceiver_codes", end_transceiver_codes)
    names = np.array(parts, dtype=object)
    return names[code_a], names[code_b]


def end_module_ports(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the optical ports (MPOs) of the module at end a and at end b: the catalog
    transceiver's `ports`, 0 where the end takes none or the catalog lacks it."""
    parts, code_a, code_b = plan.memo("end_transceiver_codes", end_transceiver_codes)
    transceivers = plan.view.facts.transceivers
    ports = np.array([transceivers[t].ports if t in transceivers else 0 for t in parts], dtype=np.int64)
    return ports[code_a], ports[code_b]


def end_part_names(plan: Plan) -> list[str]:
    """Per transceiver code (end_transceiver_codes), how people read it (part_label; "" for none)."""
    parts, _, _ = plan.memo("end_transceiver_codes", end_transceiver_codes)
    return [part_label(plan.view.facts, u) if u else "" for u in parts]


def end_part_labels(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """end_transceivers as people read them (part_label): the cabling sheet's and diff's columns."""
    _, code_a, code_b = plan.memo("end_transceiver_codes", end_transceiver_codes)
    labels = np.array(end_part_names(plan), dtype=object)
    return labels[code_a], labels[code_b]


def fibers_per_link(plan: Plan) -> np.ndarray:
    """Per link, the fiber cables it takes: one, or where a link's speed fills more than one
    optical port of its modules, that many. A twin-port 2x400G OSFP module has two MPO-12
    optical ports of 400G each (cage bandwidth / the module's ports); two such modules linked
    at 800G take both, so an 800G switch-to-switch link is two fibers, ordered alike
    (NVIDIA LinkX: "twin-port transceivers can be linked to each other forming an 800Gb/s
    link ... require ordering two fibers"). Copper is counted per cable by its fit (bom.py).

    Where the two ends' modules have optical ports of different rates the wider decides.
    A splitter-fiber link is one leg: one here (plan/cables.py groups legs and MPO-sharing links)."""
    links = plan.links
    if not len(links):
        return np.ones(0, dtype=np.int64)
    cage_gbps = per_port(plan, {lid: np.array([p.cage_gbps for p in lay.ports], dtype=np.int64)
                                for lid, lay in plan.layouts.items()})
    widest = np.zeros(len(links), dtype=np.int64)  # Gb/s of one optical port, the wider end's; 0: no module
    for module_ports, gid in zip(end_module_ports(plan), link_ends(plan), strict=True):
        widest = np.maximum(widest, np.where(module_ports > 0, cage_gbps[gid] // np.maximum(module_ports, 1), 0))
    speed = links.speed_gbps.astype(np.int64)
    return np.where(widest > 0, np.maximum(1, -(-speed // np.maximum(widest, 1))), 1)


def link_physical(plan: Plan) -> dict[str, list]:
    """Per link, every physical attribute the floor sees, as plain values (None where the
    plan has no layout): rack and U of each end's device, transceiver part at each end,
    medium, orderable length, cable part, and both labels. What `diff` compares."""
    links = plan.links
    n = len(links)
    a_tr, b_tr = plan.memo("end_part_labels", end_part_labels)
    label_a, label_b = plan.memo("cable_labels", cable_labels)
    phys = plan.physical
    media_ids = [plan.media[m] for m in links.media.tolist()]
    if phys is None:
        none = [None] * n
        a_rack = b_rack = a_u = b_u = order = none
    else:
        racks = np.array([r.name for r in phys.racks] or [""], dtype=object)
        a_rack, b_rack = racks[phys.dev_rack[links.a_dev]].tolist(), racks[phys.dev_rack[links.b_dev]].tolist()
        a_u, b_u = phys.dev_u[links.a_dev].tolist(), phys.dev_u[links.b_dev].tolist()
        order = [None] * n if phys.order_m is None else [None if x != x else x for x in phys.order_m.tolist()]
    media = plan.view.facts.media
    parts = [cable_part(media[m], o) for m, o in zip(media_ids, order, strict=True)]
    return {"a_rack": a_rack, "a_u": a_u, "a_transceiver": a_tr.tolist(), "b_rack": b_rack, "b_u": b_u,
            "b_transceiver": b_tr.tolist(), "media": media_ids, "length_m": order, "part_number": parts,
            "label_a": label_a, "label_b": label_b}
