"""Placement: every device into a rack and a U position, deterministically.

The hall is `rows` x `racks_per_row` positions filled row by row. The fabric is cut
into units (a scalable unit; a leaf and its servers where a fat tree has no SUs), and
units into blocks of adjacent racks:
- `top-of-rack`: a block per unit, its leaves at the top of its compute racks;
- `network-rack`: a block per unit, its network rack(s) first, then its compute racks;
- `end-of-row` / `middle-of-row`: units packed into rows; each row's block ends with
  (or has in its middle) the network racks holding the leaves of the units in it.
Spines, cores and extra endpoints follow in network racks of their own. A block starts
a new row rather than straddle a row break, unless it is longer than a row.

Extra fabrics (spec `fabrics:`) are placed like the compute fabric's tiers: a storage,
in-band or OOB leaf goes with the unit of the first server it serves, after that
unit's compute leaves (in the row's or unit's network racks, or dealt over its compute
racks with `top-of-rack`), so its server cables stay short and in the row; its spines,
cores and endpoints get network racks of their own after the compute fabric's. A
one-switch fabric (an OOB switch for an SU) is a leaf and sits with its servers.

Under `growth:` this runs on the plan at the growth target (expand/final_size.py), and
day one takes its devices' places from it: no rack of today moves when the cluster grows.

Servers fill compute racks from U1 up; switches fill racks from the top (below the
reserved U) down, nearest the overhead tray. Racks hold what their U and power budget
allow; an impossible hall (too small, a server taller, deeper or hungrier than a rack)
is a SpecInvalid naming the numbers. Cost: O(devices) Python, O(links) numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan.fabrics import COMPUTE
from ..plan.model import Plan, is_management_leaf
from ..plan.physical import Physical, Rack
from ..spec.load import LoadedSpec
from ..spec.model import Layout
from .resolve import ClosDesign


@dataclass
class _Block:
    """Adjacent rack positions: each rack a list of device indices, with its kind."""

    racks: list[tuple[str, list[int]]]


def row_name(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(ord("A") + rem) + letters
    return letters


def _fail(loaded: LoadedSpec, code: str, path: tuple, message: str, hint: str = "") -> SpecInvalid:
    return SpecInvalid([loaded.diagnostic(code, path, message, hint)])


class _Sizes:
    """Heights and power of the devices, from the catalog; errors where the hall cannot hold them.

    Per device (`height_u`, `power_w`): servers and every switch model in the plan (compute
    and extra fabrics) by their catalog entry, extra endpoints `layout.endpoint_rack_units`
    with no power figure. A switch's optics are not counted here: which modules its cages
    take depends on the media, chosen by cable length after placement; the physical check
    judges each rack with them (plan/power.py)."""

    def __init__(self, plan: Plan, design: ClosDesign, layout: Layout, loaded: LoadedSpec):
        rack = layout.rack
        self.usable_u = rack.height_u - rack.reserved_u
        self.budget_w = rack.power_kw * 1000.0
        server = design.server
        catalog = design.catalog
        # where each switch model comes from in the spec, for errors that point at it
        paths: dict[str, tuple] = {design.switch.id: ("fabric", "switch")}
        for i, fab in enumerate(loaded.spec.fabrics):
            paths.setdefault(fab.switch, ("fabrics", i, "switch"))
        models = {d.model for d in plan.devices if d.tier > 0}
        if server.rack_units is None:
            raise _fail(loaded, "LAYOUT_SIZE_UNKNOWN", ("server",),
                        f"the catalog has no height (rack_units) for {server.id}, so it cannot be placed",
                        "give rack_units for it in a catalog file (spec key `catalog`)")
        unit: dict[str, int] = {server.id: server.rack_units}
        watts: dict[str, float] = {server.id: float(server.power_w) if server.power_w is not None else math.nan}
        for model in sorted(models, key=lambda m: (paths.get(m, ("fabric",)), m)):
            sw = catalog.switches[model]
            if sw.rack_units is None:
                raise _fail(loaded, "LAYOUT_SIZE_UNKNOWN", paths.get(model, ("fabric", "switch")),
                            f"the catalog has no height (rack_units) for {sw.id}, so it cannot be placed",
                            "give rack_units for it in a catalog file (spec key `catalog`)")
            unit[model] = sw.rack_units
            watts[model] = float(sw.power_w) if sw.power_w is not None else math.nan
        self.server_u, self.server_w = unit[server.id], watts[server.id]
        self.endpoint_u = layout.endpoint_rack_units
        for model, u in unit.items():
            if u > self.usable_u:
                raise _fail(loaded, "LAYOUT_DEVICE_TOO_TALL", ("layout", "rack", "height_u"),
                            f"a {model} is {u}U; a {rack.height_u}U rack with {rack.reserved_u}U reserved has {self.usable_u}U",
                            f"use racks of at least {u + rack.reserved_u}U")
        if server.depth_mm is not None and server.depth_mm > rack.depth_mm:
            raise _fail(loaded, "LAYOUT_DEVICE_TOO_DEEP", ("layout", "rack", "depth_mm"),
                        f"a {server.id} is {server.depth_mm} mm deep; the racks are {rack.depth_mm} mm deep",
                        f"use racks at least {server.depth_mm} mm deep (plus cable room behind)")
        if self.server_w > self.budget_w:
            raise _fail(loaded, "LAYOUT_RACK_POWER_TOO_LOW", ("layout", "rack", "power_kw"),
                        f"one {server.id} draws up to {self.server_w / 1000:g} kW; the rack budget is {rack.power_kw:g} kW",
                        f"use a budget of at least {math.ceil(self.server_w / 100) / 10:g} kW per rack")
        by_u = self.usable_u // self.server_u
        by_power = int(self.budget_w // self.server_w) if not math.isnan(self.server_w) else by_u
        if layout.servers_per_rack is not None:
            if layout.servers_per_rack * self.server_u > self.usable_u:
                raise _fail(loaded, "LAYOUT_RACK_TOO_SHORT", ("layout", "servers_per_rack"),
                            f"{layout.servers_per_rack} x {self.server_u}U {server.id} = {layout.servers_per_rack * self.server_u}U; "
                            f"a rack has {self.usable_u}U usable", f"at most {by_u} per rack")
            # Honoured even above the power budget: check.physical reports that with numbers.
            self.servers_per_rack = layout.servers_per_rack
        else:
            self.servers_per_rack = min(by_u, by_power)
        self.height_u = np.array([self.endpoint_u if d.tier == 0 and d.role != "server" else unit[d.model]
                                  for d in plan.devices], dtype=np.int16)
        self.power_w = np.array([math.nan if d.tier == 0 and d.role != "server" else watts[d.model]
                                 for d in plan.devices], dtype=np.float64)

    def pack(self, devices: list[int]) -> list[list[int]]:
        """Devices in order into as few racks as their U and power allow, each rack filled
        before the next (a device with no power figure counts 0 W; one device always fits
        an empty rack, and check.physical reports a rack over its budget)."""
        racks: list[list[int]] = []
        used_u, used_w = self.usable_u + 1, 0.0
        for i in devices:
            u, w = int(self.height_u[i]), float(np.nan_to_num(self.power_w[i]))
            if used_u + u > self.usable_u or used_w + w > self.budget_w:
                racks.append([])
                used_u, used_w = 0, 0.0
            racks[-1].append(i)
            used_u += u
            used_w += w
        return racks

    def tor_racks(self, servers: int, leaves: list[int]) -> int:
        """Fewest compute racks holding `servers` plus `leaves` dealt over them round robin."""
        racks = max(1, math.ceil(servers / self.servers_per_rack))
        server_w = float(np.nan_to_num(self.server_w))
        while True:
            per = math.ceil(servers / racks)
            fits = True
            for k in range(racks):
                s = max(0, min(per, servers - k * per))
                lf = leaves[k::racks]
                u = s * self.server_u + int(self.height_u[lf].sum()) if lf else s * self.server_u
                w = s * server_w + float(np.nan_to_num(self.power_w[lf]).sum()) if lf else s * server_w
                if u > self.usable_u or (w > self.budget_w and s > 1):
                    fits = False
                    break
            if fits:
                return racks
            racks += 1


def _compute(d) -> bool:
    return d.fabric == COMPUTE


def _units(plan: Plan, design: ClosDesign) -> tuple[list[list[int]], list[list[int]], list[list[int]], list[int]]:
    """Per unit (an SU; a leaf and its servers where a fat tree has no SUs), in plan order:
    its servers, its compute leaves, and the leaves of extra fabrics whose first server is
    in it (a storage or OOB leaf goes where the servers it serves are); plus the extra
    fabrics' leaves that serve no server."""
    servers: dict[int, list[int]] = {}
    leaves: dict[int, list[int]] = {}
    spl = design.servers_per_leaf
    srv_seen = 0
    leaf_seen = 0
    unit_of_server = np.full(len(plan.devices), -1, dtype=np.int64)
    for i, d in enumerate(plan.devices):
        if d.role == "server":
            key = d.su if d.su is not None else srv_seen // spl
            srv_seen += 1
            servers.setdefault(key, []).append(i)
            unit_of_server[i] = key
        elif d.role == "leaf" and _compute(d) and not is_management_leaf(d):  # those go with the spines
            key = d.su if d.su is not None else leaf_seen
            leaf_seen += 1
            leaves.setdefault(key, []).append(i)
    keys = sorted(set(servers) | set(leaves))
    extra = [i for i, d in enumerate(plan.devices) if d.role == "leaf" and not _compute(d)]
    by_unit: dict[int, list[int]] = {}
    homeless: list[int] = []
    if extra:
        links = plan.links
        first = np.full(len(plan.devices), len(plan.devices), dtype=np.int64)
        to_server = unit_of_server[links.a_dev] >= 0
        np.minimum.at(first, links.b_dev[to_server], links.a_dev[to_server])
        for i in extra:  # plan order: fabric by fabric, leaf by leaf
            if first[i] < len(plan.devices):
                by_unit.setdefault(int(unit_of_server[first[i]]), []).append(i)
            else:
                homeless.append(i)
    return ([servers.get(k, []) for k in keys], [leaves.get(k, []) for k in keys],
            [by_unit.get(k, []) for k in keys], homeless)


def _chunks(items: list[int], size: int) -> list[list[int]]:
    return [items[i:i + size] for i in range(0, len(items), size)] or []


def _compute_racks(servers: list[int], sizes: _Sizes) -> list[tuple[str, list[int]]]:
    return [("compute", c) for c in _chunks(servers, sizes.servers_per_rack)]


def _network_racks(switches: list[int], sizes: _Sizes) -> list[tuple[str, list[int]]]:
    return [("network", c) for c in sizes.pack(switches)]


def _central_racks(plan: Plan, homeless: list[int], sizes: _Sizes) -> list[tuple[str, list[int]]]:
    """Network racks of their own after the last unit: the compute fabric's spines, its
    cores and its extra endpoints, each group starting a rack; then the extra fabrics'
    spines, cores and leaves that serve no server (a few switches each: they share racks,
    fabric by fabric in spec order), then their endpoints (storage targets)."""
    compute = [(i, d) for i, d in enumerate(plan.devices) if _compute(d) and d.role != "server"]
    racks: list[tuple[str, list[int]]] = []
    # management leaves of extra endpoints (attach: management-leaf) sit with the spines they link to
    for group in ([i for i, d in compute if d.role == "spine" or is_management_leaf(d)],
                  [i for i, d in compute if d.role == "core"],
                  [i for i, d in compute if d.tier == 0]):
        racks += _network_racks(group, sizes)
    homeless_set = set(homeless)
    extra = [(i, d) for i, d in enumerate(plan.devices) if not _compute(d)]
    racks += _network_racks([i for i, d in extra if d.tier >= 2 or i in homeless_set], sizes)
    racks += _network_racks([i for i, d in extra if d.tier == 0], sizes)
    return racks


def _unit_blocks(plan: Plan, design: ClosDesign, layout: Layout, sizes: _Sizes,
                 units: tuple[list[list[int]], list[list[int]], list[list[int]]]) -> list[_Block]:
    unit_servers, unit_leaves, unit_extra = units
    policy = layout.leaf_placement
    blocks: list[_Block] = []
    if policy == "top-of-rack":
        for srv, lf, ex in zip(unit_servers, unit_leaves, unit_extra, strict=True):
            switches = lf + ex
            n = sizes.tor_racks(len(srv), switches)
            per = math.ceil(len(srv) / n) if srv else 0
            racks = [("compute", srv[k * per:(k + 1) * per] + switches[k::n]) for k in range(n)]
            blocks.append(_Block(racks))
    elif policy == "network-rack":
        for srv, lf, ex in zip(unit_servers, unit_leaves, unit_extra, strict=True):
            blocks.append(_Block(_network_racks(lf + ex, sizes) + _compute_racks(srv, sizes)))
    else:  # end-of-row / middle-of-row: pack units into rows, network racks shared per row
        pending_srv: list[list[int]] = []
        pending_lf: list[int] = []
        pending_ex: list[int] = []

        def close() -> None:
            if not pending_srv:
                return
            compute = [r for srv in pending_srv for r in _compute_racks(srv, sizes)]
            network = _network_racks(pending_lf + pending_ex, sizes)
            if policy == "middle-of-row":
                half = (len(compute) + 1) // 2
                blocks.append(_Block(compute[:half] + network + compute[half:]))
            else:
                blocks.append(_Block(compute + network))
            pending_srv.clear()
            pending_lf.clear()
            pending_ex.clear()

        for srv, lf, ex in zip(unit_servers, unit_leaves, unit_extra, strict=True):
            racks_if_added = (sum(math.ceil(len(s) / sizes.servers_per_rack) for s in pending_srv + [srv])
                              + len(sizes.pack(pending_lf + lf + pending_ex + ex)))
            if pending_srv and racks_if_added > layout.racks_per_row:
                close()
            pending_srv.append(srv)
            pending_lf.extend(lf)
            pending_ex.extend(ex)
        close()
    return blocks


def _positions(blocks: list[_Block], per_row: int, skip_rows: frozenset[int] = frozenset()) -> list[tuple[int, int]]:
    """(row, position) per rack in block order, with unlimited rows, never in `skip_rows`."""
    out: list[tuple[int, int]] = []
    row, pos = 0, 0
    while row in skip_rows:
        row += 1

    def next_row() -> tuple[int, int]:
        r = row + 1
        while r in skip_rows:
            r += 1
        return r, 0

    for block in blocks:
        k = len(block.racks)
        if pos and k <= per_row and pos + k > per_row:
            row, pos = next_row()
        for _ in range(k):
            out.append((row, pos))
            pos += 1
            if pos == per_row:
                row, pos = next_row()
    return out


def _middle(blocks: list[_Block]) -> int:
    """The block index with as many racks before it as after it (the earlier one on a tie)."""
    sizes = [len(b.racks) for b in blocks]
    total = sum(sizes)
    best, before, best_gap = 0, 0, total
    for k in range(len(blocks) + 1):
        gap = abs(total - 2 * before)
        if gap < best_gap:
            best, best_gap = k, gap
        if k < len(blocks):
            before += sizes[k]
    return best


class Hall:
    """The devices cut into units and central racks once; `place` stands them in the hall
    with the spine, core and central racks where it is told (start, middle or end of the
    racks the fabric fills, or the rows `layout.spine_rows` names)."""

    def __init__(self, plan: Plan, design: ClosDesign, loaded: LoadedSpec):
        layout = loaded.spec.layout
        assert layout is not None
        self.plan, self.loaded, self.layout = plan, loaded, layout
        self.sizes = _Sizes(plan, design, layout, loaded)
        unit_servers, unit_leaves, unit_extra, homeless = _units(plan, design)
        self.units = _unit_blocks(plan, design, layout, self.sizes, (unit_servers, unit_leaves, unit_extra))
        self.central = _Block(_central_racks(plan, homeless, self.sizes))

    def _spine_rows(self) -> list[int]:
        rows = []
        for i, name in enumerate(self.layout.spine_rows):
            index = next((r for r in range(self.layout.rows) if row_name(r) == name), None)
            if index is None:
                raise _fail(self.loaded, "LAYOUT_SPINE_ROW_OUTSIDE", ("layout", "spine_rows", i),
                            f"row {name} is not in the hall: it has {self.layout.rows} rows, "
                            f"{row_name(0)} to {row_name(self.layout.rows - 1)}",
                            f"name rows from {row_name(0)} to {row_name(self.layout.rows - 1)}, or add rows")
            rows.append(index)
        return rows

    def _arrange(self, where: str) -> list[tuple[tuple[int, int], tuple[str, list[int]]]]:
        """Each rack's (row, position) and (kind, members), in the order the blocks give them."""
        per_row = self.layout.racks_per_row
        if where == "rows":
            rows = self._spine_rows()
            unit_racks = [r for b in self.units for r in b.racks]
            placed = list(zip(_positions(self.units, per_row, frozenset(rows)), unit_racks, strict=True))
            capacity = len(rows) * per_row
            if len(self.central.racks) > capacity:
                raise _fail(self.loaded, "LAYOUT_SPINE_ROWS_TOO_SMALL", ("layout", "spine_rows"),
                            f"the spines, cores and central switches fill {len(self.central.racks)} racks; "
                            f"{len(rows)} row{'s' if len(rows) > 1 else ''} of {per_row} "
                            f"hold{'' if len(rows) > 1 else 's'} {capacity}",
                            f"name {math.ceil(len(self.central.racks) / per_row)} rows in spine_rows")
            central_at = [(rows[k // per_row], k % per_row) for k in range(len(self.central.racks))]
            return placed + list(zip(central_at, self.central.racks, strict=True))
        at = {"start": 0, "middle": _middle(self.units), "end": len(self.units)}[where]
        blocks = self.units[:at] + [self.central] + self.units[at:]
        racks = [r for b in blocks for r in b.racks]
        return list(zip(_positions(blocks, per_row), racks, strict=True))

    def central_rows(self, phys: Physical) -> list[str]:
        """The rows the spine, core and central racks stand in, in walking order."""
        members = [i for _, m in self.central.racks for i in m]
        rows = {int(phys.racks[r].row_index) for r in np.unique(phys.dev_rack[members]).tolist()} if members else set()
        return [row_name(r) for r in sorted(rows)]

    def place(self, where: str) -> Physical:
        plan, layout, sizes = self.plan, self.layout, self.sizes
        arranged = sorted(self._arrange(where), key=lambda item: item[0])  # racks in walking order
        rows_needed = max((row for (row, _), _ in arranged), default=-1) + 1
        if rows_needed > layout.rows:
            kinds = [kind for _, (kind, _) in arranged]
            grown = f" at the growth target ({plan.design_record.servers:,} servers)" if self.loaded.spec.growth is not None else ""
            spines = f", spines at the {where}" if self.central.racks and where != "rows" else ""
            raise _fail(self.loaded, "LAYOUT_HALL_TOO_SMALL", ("layout", "rows"),
                        f"the hall is too small{grown}: {len(kinds)} racks ({kinds.count('compute')} compute, "
                        f"{kinds.count('network')} network, {sizes.servers_per_rack} servers per rack, "
                        f"{layout.leaf_placement}{spines}) need {rows_needed} rows of {layout.racks_per_row}; "
                        f"the layout has {layout.rows} ({layout.rows * layout.racks_per_row} positions)",
                        f"use rows: {rows_needed}, more racks_per_row, or denser racks")

        n_dev = len(plan.devices)
        dev_rack = np.full(n_dev, -1, dtype=np.int32)
        dev_u = np.zeros(n_dev, dtype=np.int16)
        dev_h, dev_w = sizes.height_u, sizes.power_w
        racks: list[Rack] = []
        rack_spec = layout.rack
        for (row, pos), (kind, members) in arranged:
            index = len(racks)
            name = f"{layout.hall}.{row_name(row)}{pos + 1:02d}"
            racks.append(Rack(name, row_name(row), row, pos + 1, kind, rack_spec.height_u, sizes.usable_u, sizes.budget_w))
            bottom, top = 1, sizes.usable_u + 1  # servers stack up from U1, switches down from the top
            for i in members:
                dev_rack[i] = index
                if plan.devices[i].role == "server":
                    dev_u[i] = bottom
                    bottom += int(dev_h[i])
                else:
                    top -= int(dev_h[i])
                    dev_u[i] = top
            if bottom > top:  # sizing above keeps this from happening: our bug if it does
                raise AssertionError(f"rack {name} overfilled: {bottom - 1}U from below meets {top}U from above")
        if (dev_rack < 0).any():
            missing = plan.devices[int(np.nonzero(dev_rack < 0)[0][0])].name
            raise AssertionError(f"device {missing} was not placed")
        return Physical(racks, dev_rack, dev_u, dev_h, dev_w, rack_spec.width_m, layout.row_pitch_m, rack_spec.depth_mm)
