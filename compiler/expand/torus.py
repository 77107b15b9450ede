"""Torus and mesh (k-ary n-cube, 1 to 3 dimensions, each dimension wrapped or open).

Two forms:
- direct: the accelerators' own chip-to-chip ports form the torus (TPU ICI). Chips are
  plan devices (role `chip`, tier 0) grouped on hosts (role `server`, no fabric ports);
  a link between chips of one host is a board trace (kind `board`), between hosts a cable
  (kind `chip-chip`).
- switched: servers attach to torus routers (role `router`, tier 1) wired as the torus
  (kinds `server-router`, `router-router`).

Wiring rule (one rule, readable without the tool): the node at coordinate c links its
`<axis>+` port(s) to the `<axis>-` port(s) of c + 1 along that axis, wrapping from k-1 to
0 on wrapped dimensions; with `twist`, wrapping links of one axis also move `offset`
along another. Nodes are in row-major order (x slowest), so plan-order halves are the
x bisection. Links are numpy columns; no per-link Python objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import SpecInvalid
from ..plan.model import Device, Port, PortLayout
from ..spec.load import LoadedSpec
from ..spec.model import Fabric
from ..plan import naming
from . import ports
from .assembly import PlanAssembly
from .hosts import plain_hosts_record
from .resolve import Common, OnCommon, Report, resolve_common, size_field

AXES = "xyz"
LINK_KINDS = ("server-router", "router-router", "chip-chip", "board")


@dataclass(frozen=True)
class TorusDesign(OnCommon):
    c: Common
    dims: tuple[int, ...]
    wrap: tuple[bool, ...]
    direct: bool
    links_per_neighbor: int
    twist: tuple[int, int, int] | None  # (wrapped axis, shifted axis, offset)
    host_grid: tuple[int, ...] | None  # direct: chips of one host along each axis
    servers_per_router: int | None  # switched
    notes: tuple[str, ...]

    @property
    def nodes(self) -> int:
        return math.prod(self.dims)


def _host_grid(grid: list[int], n: int) -> tuple[int, ...]:
    """A host's chip block in n dimensions: extra catalog axes fold into the last one."""
    g = list(grid[:n]) + [1] * max(0, n - len(grid))
    g[-1] *= math.prod(grid[n:]) if len(grid) > n else 1
    return tuple(g)


def resolve(loaded: LoadedSpec) -> TorusDesign:
    fabric = loaded.spec.fabric
    direct = fabric.switch is None
    c = resolve_common(loaded, LINK_KINDS, direct=direct)
    errors = []

    def error(code, path, message, hint=""):
        errors.append(loaded.diagnostic(code, path, message, hint))

    assert fabric.dims is not None  # a torus needs dims (spec/model.py's topology check)
    dims = tuple(fabric.dims)
    wrap = _wrap(loaded, dims)
    for d, (k, w) in enumerate(zip(dims, wrap, strict=True)):
        if w and k == 1:
            error("DESIGN_IMPOSSIBLE", ("fabric", "wrap") if fabric.wrap is not None else ("fabric", "dims"),
                  f"dimension {AXES[d]} has size 1 and is marked as torus (wrapped): a node cannot link to itself",
                  f"set wrap[{d}]: false, or drop the dimension")
    twist = _twist(fabric, dims, wrap, error)
    notes: list[str] = []
    host_grid, spr = None, None
    if direct:
        host_grid = _direct_hosts(loaded, c, dims, error, notes)
    else:
        spr = _servers_per_router(c, fabric, dims, error, notes)
    if errors:
        raise SpecInvalid(errors)
    return TorusDesign(c, dims, wrap, direct, fabric.links_per_neighbor, twist, host_grid, spr, tuple(notes))


def _wrap(loaded: LoadedSpec, dims: tuple[int, ...]) -> tuple[bool, ...]:
    """fabric.wrap, one per dimension; default: every dimension wrapped for a torus, none for a mesh."""
    fabric, n = loaded.spec.fabric, len(dims)
    wrap = tuple(fabric.wrap) if fabric.wrap is not None else (fabric.topology == "torus",) * n
    if len(wrap) != n:
        raise SpecInvalid([loaded.diagnostic(
            "SPEC_INVALID", ("fabric", "wrap"), f"wrap has {len(wrap)} entries but dims has {n}",
            f"give one true/false per dimension, e.g. wrap: {[fabric.topology == 'torus'] * n}")])
    return wrap


def _twist(fabric: Fabric, dims: tuple[int, ...], wrap: tuple[bool, ...], error: Report) -> tuple[int, int, int] | None:
    """fabric.twist as (dimension twisted, dimension it shifts along, offset), checked."""
    if fabric.twist is None:
        return None
    n = len(dims)
    t0, t1 = fabric.twist.dims
    if not (0 <= t0 < n and 0 <= t1 < n and t0 != t1):
        error("SPEC_INVALID", ("fabric", "twist", "dims"), f"twist dims {list(fabric.twist.dims)} must be two different dimensions of 0..{n - 1}")
    elif not wrap[t0]:
        error("SPEC_INVALID", ("fabric", "twist", "dims"), f"twist: dimension {AXES[t0]} is not wrapped, so it has no wrap-around links to twist")
    elif fabric.twist.offset >= dims[t1]:
        error("SPEC_INVALID", ("fabric", "twist", "offset"),
              f"twist offset {fabric.twist.offset} must be below dimension {AXES[t1]}'s size {dims[t1]}")
    else:
        return (t0, t1, fabric.twist.offset)
    return None


def _direct_hosts(loaded: LoadedSpec, c: Common, dims: tuple[int, ...], error: Report,
                  notes: list[str]) -> tuple[int, ...]:
    """A direct torus of accelerators: one chip per node, enough chip-to-chip ports, whole
    hosts along every dimension. A host's chip block."""
    fabric, n, m = loaded.spec.fabric, len(dims), loaded.spec.fabric.links_per_neighbor
    nodes, shape = math.prod(dims), "x".join(map(str, dims))
    up = c.server.scale_up
    # a direct torus is of chips joined by their own ports: the server's torus scale-up domain
    assert up is not None and up.ports_per_gpu is not None
    gpus = c.servers * c.server.gpus
    if gpus != nodes:
        error("DESIGN_IMPOSSIBLE", size_field(loaded.spec),
              f"a direct {shape} {fabric.topology} has {nodes:,} chips but the spec gives {gpus:,}",
              f"use gpus: {nodes}, or dims whose product is {gpus:,}")
    needed = 2 * n * m
    if needed > up.ports_per_gpu:
        error("DESIGN_IMPOSSIBLE", ("fabric", "dims"),
              f"{n} dimensions x 2 directions x {m} link(s) = {needed} ports per chip; a {c.server.gpu} has {up.ports_per_gpu}",
              "use fewer dimensions or links_per_neighbor: 1")
    host_grid = _host_grid(up.host_grid or [c.server.gpus], n)
    bad = [d for d in range(n) if dims[d] % host_grid[d]]
    if bad:
        d = bad[0]
        error("DESIGN_IMPOSSIBLE", ("fabric", "dims"),
              f"dimension {AXES[d]} = {dims[d]} is not a whole number of hosts ({c.server.id} holds its chips as "
              f"{'x'.join(map(str, host_grid))})", f"use a multiple of {host_grid[d]}")
    if up.port_gbps_confidence not in (None, "vendor"):
        notes.append(f"{c.server.id}: chip-to-chip port speed {up.port_gbps}G is {up.port_gbps_confidence} (see the catalog entry)")
    return host_grid


def _servers_per_router(c: Common, fabric: Fabric, dims: tuple[int, ...], error: Report, notes: list[str]) -> int:
    """A switched torus: servers per router, which must fit the router's ports with its torus links."""
    n, m, nodes = len(dims), fabric.links_per_neighbor, math.prod(dims)
    switch, nics = c.switch, c.nics
    assert switch is not None and nics is not None  # switched: resolve_common required both
    radix = switch.radix(c.speed_gbps)
    nic_ports = len(nics.ports)
    spr = math.ceil(c.servers / nodes)
    need = spr * nic_ports + 2 * n * m
    if need > radix:
        error("DESIGN_IMPOSSIBLE", ("fabric", "switch"),
              f"each router needs {spr} servers x {nic_ports} NIC ports + {2 * n * m} torus ports = {need}; "
              f"{switch.id} has {radix} at {c.speed_gbps}G",
              f"use more routers (dims), fewer servers, or a switch with at least {need} ports")
    if c.servers < nodes:
        notes.append(f"{nodes - c.servers} of {nodes} routers have no server")
    return spr


def _chip_layout(server, speed_gbps: int, n: int, m: int) -> PortLayout:
    """Every chip-to-chip port of an accelerator: <axis>+ / <axis>- (with a lane number
    when links_per_neighbor > 1), then the unused ones as ici<i>."""
    names = []
    for d in range(n):
        for sign in "+-":
            names += [f"{AXES[d]}{sign}" if m == 1 else f"{AXES[d]}{sign}{i + 1}" for i in range(m)]
    names += [f"ici{i + 1}" for i in range(len(names), server.scale_up.ports_per_gpu)]
    return PortLayout(f"{server.id}/chip", tuple(Port(p, p, 1, speed_gbps, "ICI", "none", speed_gbps) for p in names))


def _torus_links(d: TorusDesign) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Per axis: (axis, source node, destination node), node ids in row-major order."""
    dims = d.dims
    coords = np.unravel_index(np.arange(d.nodes, dtype=np.int64), dims)
    out = []
    for axis, k in enumerate(dims):
        src = np.arange(d.nodes, dtype=np.int64)
        if not d.wrap[axis]:
            src = src[coords[axis] < k - 1]
        dst_coords = [c[src].copy() for c in coords]
        wraps = dst_coords[axis] == k - 1
        dst_coords[axis] = (dst_coords[axis] + 1) % k
        if d.twist is not None and d.twist[0] == axis:
            t1, off = d.twist[1], d.twist[2]
            dst_coords[t1] = np.where(wraps, (dst_coords[t1] + off) % dims[t1], dst_coords[t1])
        if k == 1:
            continue
        out.append((axis, src, np.ravel_multi_index(dst_coords, dims)))
    return out


def build(d: TorusDesign):
    c = d.c
    n, m = len(d.dims), d.links_per_neighbor
    b = PlanAssembly(c.catalog, c.media_requested)
    coords = np.unravel_index(np.arange(d.nodes, dtype=np.int64), d.dims)
    if d.direct:
        host_layout = b.layout(PortLayout(f"{c.server.id}/host", ()))
        chip_layout = b.layout(_chip_layout(c.server, c.speed_gbps, n, m))
        host_grid = d.host_grid
        assert host_grid is not None  # set for a direct torus (resolve)
        host_dims = tuple(k // g for k, g in zip(d.dims, host_grid, strict=True))
        host_of = np.ravel_multi_index(tuple(cc // g for cc, g in zip(coords, host_grid, strict=True)), host_dims)
        for h in range(c.servers):
            b.add(Device(naming.server(c.server.hostname_prefix, h + 1, None), "server", c.server.id, host_layout, 0, h + 1))
        first = len(b.devices)
        coord_rows = np.stack(coords, axis=1).tolist()
        host_list = host_of.tolist()
        for i in range(d.nodes):
            b.add(Device(naming.coordinate(c.server.hostname_prefix, tuple(coord_rows[i])), "chip", f"{c.server.id}/chip",
                         chip_layout, 0, i + 1, group=host_list[i] + 1))
        for axis, src, dst in _torus_links(d):
            board = host_of[src] == host_of[dst]
            for lane in range(m):
                for kind, sel in (("board", board), ("chip-chip", ~board)):
                    b.link_block(kind, first + src[sel], np.full(int(sel.sum()), 2 * axis * m + lane),
                                 first + dst[sel], np.full(int(sel.sum()), (2 * axis + 1) * m + lane),
                                 medium="board" if kind == "board" else "ici")
    else:
        switch, nics, spr = c.switch, c.nics, d.servers_per_router
        assert switch is not None and nics is not None and spr is not None  # set for a switched torus (resolve)
        server_layout = b.layout(ports.server_layout(c.server.id, "compute", nics))
        router_layout = b.layout(ports.switch_layout(switch, c.speed_gbps))
        for s in range(c.servers):
            b.add(Device(naming.server(c.server.hostname_prefix, s + 1, None), "server", c.server.id, server_layout, 0, s + 1))
        first = len(b.devices)
        coord_rows = np.stack(coords, axis=1).tolist()
        for i in range(d.nodes):
            b.add(Device(naming.coordinate("router", tuple(coord_rows[i])), "router", switch.id, router_layout, 1, i + 1))
        nic = len(nics.ports)
        g = np.arange(c.servers, dtype=np.int64)
        router, slot = np.divmod(g, spr)
        b.link_block("server-router", np.repeat(g, nic), np.tile(np.arange(nic), c.servers),
                     first + np.repeat(router, nic), np.repeat(slot * nic, nic) + np.tile(np.arange(nic), c.servers))
        base = spr * nic
        for axis, src, dst in _torus_links(d):
            for lane in range(m):
                b.link_block("router-router", first + src, np.full(src.size, base + 2 * axis * m + lane),
                             first + dst, np.full(src.size, base + (2 * axis + 1) * m + lane))
    return b.plan(c.spec.name, _design_record(d), list(d.notes))


def _design_record(d: TorusDesign) -> dict:
    c = d.c
    return {
        "topology": c.spec.fabric.topology,
        "tiers": 0 if d.direct else 1,
        "direct": d.direct,
        "server": c.server.id,
        "switch": c.switch.id if c.switch else None,
        "speed_gbps": c.speed_gbps,
        "switch_radix": c.switch.radix(c.speed_gbps) if c.switch else None,
        "servers": c.servers,
        "gpus": d.gpus,
        "dims": list(d.dims),
        "wrap": list(d.wrap),
        "twist": list(d.twist) if d.twist else None,
        "links_per_neighbor": d.links_per_neighbor,
        "hosts": plain_hosts_record(c.spec, c.server),
        "host_grid": list(d.host_grid) if d.host_grid else None,
        "servers_per_router": d.servers_per_router,
    }
