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

Servers fill compute racks from U1 up; switches fill racks from the top (below the
reserved U) down, nearest the overhead tray. Racks hold what their U and power budget
allow; an impossible hall (too small, a server taller, deeper or hungrier than a rack)
is a SpecInvalid naming the numbers. Cost: O(devices) Python, O(links) numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import Diagnostic, SpecInvalid
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
    """Heights and power of the devices, from the catalog; errors where the hall cannot hold them."""

    def __init__(self, design: ClosDesign, layout: Layout, loaded: LoadedSpec):
        rack = layout.rack
        self.usable_u = rack.height_u - rack.reserved_u
        self.budget_w = rack.power_kw * 1000.0
        server, switch = design.server, design.switch
        if server.rack_units is None:
            raise _fail(loaded, "LAYOUT_SIZE_UNKNOWN", ("server",),
                        f"the catalog has no height (rack_units) for {server.id}, so it cannot be placed",
                        "give rack_units for it in a catalog file (spec key `catalog`)")
        if switch.rack_units is None:
            raise _fail(loaded, "LAYOUT_SIZE_UNKNOWN", ("fabric", "switch"),
                        f"the catalog has no height (rack_units) for {switch.id}, so it cannot be placed",
                        "give rack_units for it in a catalog file (spec key `catalog`)")
        self.server_u, self.switch_u = server.rack_units, switch.rack_units
        self.server_w = float(server.power_w) if server.power_w is not None else math.nan
        self.switch_w = float(switch.power_w) if switch.power_w is not None else math.nan
        self.endpoint_u = layout.endpoint_rack_units
        for what, u, path in ((server.id, self.server_u, ("server",)), (switch.id, self.switch_u, ("fabric", "switch"))):
            if u > self.usable_u:
                raise _fail(loaded, "LAYOUT_DEVICE_TOO_TALL", ("layout", "rack", "height_u"),
                            f"a {what} is {u}U; a {rack.height_u}U rack with {rack.reserved_u}U reserved has {self.usable_u}U",
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
        switch_by_power = int(self.budget_w // self.switch_w) if not math.isnan(self.switch_w) else 10**9
        self.switches_per_rack = max(1, min(self.usable_u // self.switch_u, switch_by_power))

    def tor_racks(self, servers: int, leaves: int) -> int:
        """Fewest compute racks holding `servers` plus `leaves` spread over them."""
        racks = max(1, math.ceil(servers / self.servers_per_rack))
        while True:
            s, l = math.ceil(servers / racks), math.ceil(leaves / racks)
            power = s * np.nan_to_num(self.server_w) + l * np.nan_to_num(self.switch_w)
            if s * self.server_u + l * self.switch_u <= self.usable_u and (power <= self.budget_w or s <= 1):
                return racks
            racks += 1


def _units(plan: Plan, design: ClosDesign) -> tuple[list[list[int]], list[list[int]]]:
    """Servers and leaves per unit, in plan order."""
    servers: dict[int, list[int]] = {}
    leaves: dict[int, list[int]] = {}
    spl = design.servers_per_leaf
    srv_seen = 0
    leaf_seen = 0
    for i, d in enumerate(plan.devices):
        if d.role == "server":
            key = d.su if d.su is not None else srv_seen // spl
            srv_seen += 1
            servers.setdefault(key, []).append(i)
        elif d.role == "leaf" and not is_management_leaf(d):  # those go with the spines
            key = d.su if d.su is not None else leaf_seen
            leaf_seen += 1
            leaves.setdefault(key, []).append(i)
    keys = sorted(set(servers) | set(leaves))
    return [servers.get(k, []) for k in keys], [leaves.get(k, []) for k in keys]


def _chunks(items: list[int], size: int) -> list[list[int]]:
    return [items[i:i + size] for i in range(0, len(items), size)] or []


def _compute_racks(servers: list[int], sizes: _Sizes) -> list[tuple[str, list[int]]]:
    return [("compute", c) for c in _chunks(servers, sizes.servers_per_rack)]


def _network_racks(switches: list[int], sizes: _Sizes) -> list[tuple[str, list[int]]]:
    return [("network", c) for c in _chunks(switches, sizes.switches_per_rack)]


def _blocks(plan: Plan, design: ClosDesign, layout: Layout, sizes: _Sizes) -> list[_Block]:
    unit_servers, unit_leaves = _units(plan, design)
    policy = layout.leaf_placement
    blocks: list[_Block] = []
    if policy == "top-of-rack":
        for srv, lf in zip(unit_servers, unit_leaves):
            n = sizes.tor_racks(len(srv), len(lf))
            per = math.ceil(len(srv) / n) if srv else 0
            racks = [("compute", srv[k * per:(k + 1) * per] + lf[k::n]) for k in range(n)]
            blocks.append(_Block(racks))
    elif policy == "network-rack":
        for srv, lf in zip(unit_servers, unit_leaves):
            blocks.append(_Block(_network_racks(lf, sizes) + _compute_racks(srv, sizes)))
    else:  # end-of-row / middle-of-row: pack units into rows, network racks shared per row
        pending_srv: list[list[int]] = []
        pending_lf: list[int] = []

        def close() -> None:
            if not pending_srv:
                return
            compute = [r for srv in pending_srv for r in _compute_racks(srv, sizes)]
            network = _network_racks(pending_lf, sizes)
            if policy == "middle-of-row":
                half = (len(compute) + 1) // 2
                blocks.append(_Block(compute[:half] + network + compute[half:]))
            else:
                blocks.append(_Block(compute + network))
            pending_srv.clear()
            pending_lf.clear()

        for srv, lf in zip(unit_servers, unit_leaves):
            racks_if_added = (sum(math.ceil(len(s) / sizes.servers_per_rack) for s in pending_srv + [srv])
                              + math.ceil((len(pending_lf) + len(lf)) / sizes.switches_per_rack))
            if pending_srv and racks_if_added > layout.racks_per_row:
                close()
            pending_srv.append(srv)
            pending_lf.extend(lf)
        close()
    spines = [i for i, d in enumerate(plan.devices) if d.role == "spine" or is_management_leaf(d)]
    cores = [i for i, d in enumerate(plan.devices) if d.role == "core"]
    endpoints = [i for i, d in enumerate(plan.devices) if d.tier == 0 and d.role != "server"]
    core_racks = _network_racks(spines, sizes) + _network_racks(cores, sizes)
    if endpoints:
        per = max(1, sizes.usable_u // sizes.endpoint_u)
        core_racks += [("network", c) for c in _chunks(endpoints, per)]
    if core_racks:
        blocks.append(_Block(core_racks))
    return blocks


def _positions(blocks: list[_Block], per_row: int) -> list[tuple[int, int]]:
    """(row, position) per rack in block order, with unlimited rows."""
    out: list[tuple[int, int]] = []
    row, pos = 0, 0
    for block in blocks:
        k = len(block.racks)
        if pos and k <= per_row and pos + k > per_row:
            row, pos = row + 1, 0
        for _ in range(k):
            out.append((row, pos))
            pos += 1
            if pos == per_row:
                row, pos = row + 1, 0
    return out


def place(plan: Plan, design: ClosDesign, loaded: LoadedSpec) -> Physical:
    layout = loaded.spec.layout
    assert layout is not None
    sizes = _Sizes(design, layout, loaded)
    blocks = _blocks(plan, design, layout, sizes)
    positions = _positions(blocks, layout.racks_per_row)
    rows_needed = positions[-1][0] + 1 if positions else 0
    if rows_needed > layout.rows:
        kinds = [kind for b in blocks for kind, _ in b.racks]
        raise _fail(loaded, "LAYOUT_HALL_TOO_SMALL", ("layout", "rows"),
                    f"the hall is too small: {len(kinds)} racks ({kinds.count('compute')} compute, "
                    f"{kinds.count('network')} network, {sizes.servers_per_rack} servers per rack, "
                    f"{layout.leaf_placement}) need {rows_needed} rows of {layout.racks_per_row}; "
                    f"the layout has {layout.rows} ({layout.rows * layout.racks_per_row} positions)",
                    f"use rows: {rows_needed}, more racks_per_row, or denser racks")

    n_dev = len(plan.devices)
    dev_rack = np.full(n_dev, -1, dtype=np.int32)
    dev_u = np.zeros(n_dev, dtype=np.int16)
    dev_h = np.zeros(n_dev, dtype=np.int16)
    dev_w = np.full(n_dev, np.nan)
    for i, d in enumerate(plan.devices):
        if d.role == "server":
            dev_h[i], dev_w[i] = sizes.server_u, sizes.server_w
        elif d.tier == 0:
            dev_h[i] = sizes.endpoint_u
        else:
            dev_h[i], dev_w[i] = sizes.switch_u, sizes.switch_w
    racks: list[Rack] = []
    rack_spec = layout.rack
    flat = [r for b in blocks for r in b.racks]
    for (kind, members), (row, pos) in zip(flat, positions):
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
