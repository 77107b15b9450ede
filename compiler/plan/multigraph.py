"""The plan as a multigraph of devices and links: one attribute table that both graph
exports read, the networkx MultiGraph (`to_networkx`) and graph.graphml; and the same
devices as a simple networkx Graph with parallel cables summed (`to_capacity_graph`).

networkx's connectivity and cut functions (edge_connectivity, minimum_edge_cut, ...)
read a MultiGraph as a simple graph: 2 cables between a leaf and a spine count once, so
they undercount (16 where the fabric has 32 edge-disjoint leaf-to-leaf paths), and its
flow functions refuse multigraphs. The capacity graph carries per device pair `links`
(cables) and `capacity` (summed Gb/s): a max-flow over `links` is the edge-disjoint path
count the checks report, over `capacity` the Gb/s.

Nodes are devices (id = device name), edges are links (key = cable id, the id of
cabling.csv), so one graph holds parallel cables between the same two switches. An
attribute that does not apply (no SU on a spine, no rack without a layout) is absent
rather than None: GraphML has no null and networkx's writers refuse None.

Cost: the columns come from the columnar link table by numpy indexing (one Python value
per field and link, no record object); `to_networkx` adds what networkx needs, a dict per node and
per edge: O(devices + links) time, ~11 us and ~600 B per link (16,384 GPUs, 49,152
links: 0.5 s and 29 MB; benchmarks/graph_export.py). For 100k+ GPU analyses prefer
`compiler.plan.graph.fabric_graph` (scipy arrays, what the checks use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .model import Plan
from .columns import Coded
from .views import cable_id_pieces, cable_ids, per_port_table

if TYPE_CHECKING:
    import networkx

# name -> GraphML attr.type (int, double or string), in the order files list them.
DEVICE_ATTRIBUTES = {
    "role": "string",  # server, leaf, spine, core, router, chip, or an endpoint role
    "model": "string",  # catalog id
    "tier": "int",  # 0 endpoints, 1 leaf, 2 spine, 3 core
    "index": "int",  # 1-based within its group
    "su": "int",  # scalable unit
    "pod": "int",  # pod (three tiers), dragonfly group, multi-plane plane
    "rail": "int",
    "group": "int",  # core group
    "fabric": "string",  # compute, or an extra fabric (storage, oob, ...)
    "rack": "string",  # with a physical layout: TIA-606 rack name
    "u": "int",  # with a physical layout: lowest rack unit it occupies
}
LINK_ATTRIBUTES = {
    "cable": "string",  # cable id as in cabling.csv (also the edge key)
    "kind": "string",  # server-leaf, leaf-spine, ...
    "fabric": "string",
    "speed_gbps": "int",
    "media": "string",  # media id (catalog)
    "length_m": "double",  # with a layout: orderable length (cabling.csv length_m)
    "modelled_m": "double",  # with a layout: modelled routed length (cabling.csv modelled_m)
    "a_device": "string",  # end a: the lower tier (GraphML source)
    "a_port": "string",  # port name as on the front panel
    "b_device": "string",  # end b: the upper tier (GraphML target)
    "b_port": "string",
}


def device_columns(plan: Plan) -> dict[str, list]:
    """Per device attribute columns (None where an attribute does not apply), plus `name`."""
    devs = plan.devices
    cols: dict[str, list] = {"name": [d.name for d in devs]}
    for attr in ("role", "model", "tier", "index", "su", "pod", "rail", "group", "fabric"):
        cols[attr] = [getattr(d, attr) for d in devs]
    phys = plan.physical
    if phys is None:
        cols["rack"] = cols["u"] = [None] * len(devs)
    else:
        racks = np.array([r.name for r in phys.racks], dtype=object)
        cols["rack"] = racks[phys.dev_rack].tolist()
        cols["u"] = phys.dev_u.tolist()
    return cols


def link_columns(plan: Plan) -> dict[str, list]:
    """Per link attribute columns in link order (None where an attribute does not apply)."""
    cols = {name: column if isinstance(column, list) else column.values().tolist()
            for name, column in link_pieces(plan).items() if not isinstance(column, tuple)}
    return {"cable": plan.memo("cable_ids", cable_ids), **cols}


# A link attribute column: its values (None where it does not apply), a Coded column (table
# values may be None or numbers), or Coded columns whose values are laid end to end (the
# cable id: its device's piece, then its port number).
LinkColumn = list | Coded | tuple[Coded, ...]


def link_pieces(plan: Plan) -> dict[str, LinkColumn]:
    """link_columns as graph.graphml reads them: where a column draws on few values (a kind,
    a device's name, a port name of a layout) a table and per link an index into it, so
    no Python value is made per link and field (1.6 million links at 524,288 GPUs)."""
    L = plan.links
    names = np.array([d.name for d in plan.devices], dtype=object)
    # a port's name from its layout's list: a table of the used layouts' ports
    layout_ports, src = per_port_table(plan, {lid: np.array([p.name for p in lay.ports], dtype=object)
                                              for lid, lay in plan.layouts.items()})
    offsets = plan.port_offsets()
    # a link belongs to the fabric of its upper end (plan/fabrics.py); a view keeps only its own
    fabric_of_device = np.array([d.fabric for d in plan.devices], dtype=object)
    devices, numbers = cable_id_pieces(plan)
    return {
        "cable": (Coded(devices, L.a_dev), Coded(numbers, L.a_port)),
        "kind": Coded(np.array(plan.link_kinds, dtype=object), L.kind),
        "fabric": Coded(fabric_of_device, L.b_dev),
        "speed_gbps": _small_ints(L.speed_gbps),
        "media": Coded(np.array(plan.media, dtype=object), L.media),
        "length_m": _lengths(plan, "order_m"),
        "modelled_m": _lengths(plan, "length_m"),
        "a_device": Coded(names, L.a_dev),
        "a_port": Coded(layout_ports, src[offsets[L.a_dev] + L.a_port]),
        "b_device": Coded(names, L.b_dev),
        "b_port": Coded(layout_ports, src[offsets[L.b_dev] + L.b_port]),
    }


def _small_ints(values: np.ndarray) -> LinkColumn:
    """Integers as Python ints: a table 0..max indexed by the values where they are small
    and not negative (speeds in Gb/s), else a list."""
    if not values.size or values.min() < 0 or values.max() >= 1 << 16:
        return values.tolist()
    return Coded(np.arange(int(values.max()) + 1, dtype=np.int64).astype(object), values)


def _lengths(plan: Plan, field: str) -> list:
    """Metres rounded to the centimetre as cabling.csv prints them; None without a layout or a reach."""
    values = getattr(plan.physical, field, None) if plan.physical is not None else None
    if values is None:
        return [None] * len(plan.links)
    return [None if x != x else round(x, 2) for x in values.tolist()]  # x != x: NaN, no medium reaches


def present(names, row) -> dict:
    """The attributes of one node or edge that apply (not None)."""
    return {k: v for k, v in zip(names, row, strict=True) if v is not None}


def _add_devices(g, plan: Plan) -> list[str]:
    """A node per device with the attributes that apply; returns the names in device order."""
    dcols = device_columns(plan)
    dnames = list(DEVICE_ATTRIBUTES)
    g.add_nodes_from(zip(dcols["name"], (present(dnames, row) for row in zip(*(dcols[a] for a in dnames), strict=True)), strict=True))
    return dcols["name"]


def to_networkx(plan: Plan) -> networkx.MultiGraph:
    """The plan as a networkx MultiGraph: a node per device, an edge per link (key = cable
    id), attributes as in DEVICE_ATTRIBUTES and LINK_ATTRIBUTES. The graph's `name` is the
    plan's. Servers are nodes too: restrict to switches (`tier > 0`) for switch-only analyses."""
    import networkx as nx  # ~0.1 s to import; only the API and tests need it

    g: nx.MultiGraph = nx.MultiGraph(name=plan.name)
    _add_devices(g, plan)
    lcols = link_columns(plan)
    lnames = list(LINK_ATTRIBUTES)
    rows = (present(lnames, row) for row in zip(*(lcols[a] for a in lnames), strict=True))
    # (u, v, key, data): MultiGraph takes 4-tuples, the stubs declare only Graph's forms
    g.add_edges_from(zip(lcols["a_device"], lcols["b_device"], lcols["cable"], rows, strict=True))  # type: ignore[arg-type]
    return g


def to_capacity_graph(plan: Plan) -> networkx.Graph:
    """The plan as a simple networkx Graph: the nodes of `to_networkx`, one edge per pair of
    devices joined by cables, with `links` (how many cables), `capacity` (their summed
    Gb/s: networkx's flow functions read this name by default) and `kind` (of the first
    cable, in link order). For
    networkx's flow and cut algorithms, which a MultiGraph's parallel cables defeat."""
    import networkx as nx

    g: nx.Graph = nx.Graph(name=plan.name)
    names = _add_devices(g, plan)
    L = plan.links
    if len(L) == 0:
        return g
    lo = np.minimum(L.a_dev, L.b_dev).astype(np.int64)
    hi = np.maximum(L.a_dev, L.b_dev).astype(np.int64)
    pairs, first, inverse = np.unique(lo * len(plan.devices) + hi, return_index=True, return_inverse=True)
    links = np.bincount(inverse, minlength=pairs.size)
    capacity = np.bincount(inverse, weights=L.speed_gbps.astype(np.float64), minlength=pairs.size).astype(np.int64)
    kinds = np.array(plan.link_kinds, dtype=object)[L.kind[first]].tolist()
    a_dev, b_dev = L.a_dev[first].tolist(), L.b_dev[first].tolist()  # end a stays the lower tier
    g.add_edges_from((names[a], names[b], {"links": int(n), "capacity": int(c), "kind": k})
                     for a, b, n, c, k in zip(a_dev, b_dev, links.tolist(), capacity.tolist(), kinds, strict=True))
    return g
