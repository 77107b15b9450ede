"""Discovery in plan terms: every node to a plan device (and, for an InfiniBand CA, the
NIC port it is), every link end to a global port id.

Names first: a node's label is matched to a device name exactly, case-blind, without a
DNS domain, or inside the forms the tools print (`MF0;<host>:MQM9700/U1` for a managed
NVIDIA switch, `<host> <mlx5_N | panel port>` for a CA). A node whose label names no
device, or whose links mostly contradict the device it names, is identified by its
neighbours instead: each resolved neighbour port has one planned cable, whose other
end says which device (and port) should be there. That vote is what turns a switch
with a factory or mistyped name into one `name` finding instead of dozens of
wrong-device ones. Cost: O(links) dictionary look-ups; the vote looks only at the
nodes that need it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..plan.model import NO_LINK, Plan
from .discovery import Discovery
from .names import ib_port_numbers, port_spellings

_MF0 = re.compile(r"^MF0;([^:]+):")
UNRESOLVED = -1  # port not said or not a port of that device


@dataclass
class Resolved:
    keys: list[str]  # node keys, index = node id
    labels: list[str]
    node_dev: np.ndarray  # device index, or <= -2 for a node that is no plan device (-2 - node id)
    node_port: np.ndarray  # fixed port index (a CA is one NIC port) or -1
    a_node: np.ndarray  # per link row
    b_node: np.ndarray
    a_gport: np.ndarray  # global port id or -1
    b_gport: np.ndarray
    renamed: list[tuple[int, int]] = field(default_factory=list)  # (node id, device) identified by neighbours
    # CA nodes of the right host whose NIC port only the neighbour could tell (their label's
    # device name, e.g. mlx5_3, is not in the catalog): the host end of their cable is unchecked
    inferred_ports: list[int] = field(default_factory=list)

    def dev(self, node_ids: np.ndarray) -> np.ndarray:
        return self.node_dev[node_ids]


def _device_names(plan: Plan) -> tuple[dict[str, int], dict[str, int]]:
    exact = {d.name: i for i, d in enumerate(plan.devices)}
    lower: dict[str, int] = {}
    for name, i in exact.items():
        lower.setdefault(name.lower(), i)
    return exact, lower


def split_label(label: str, kind: str) -> tuple[str, str | None]:
    """(host, port token) from a tool's label."""
    m = _MF0.match(label)
    if m:
        return m.group(1), None
    if kind == "ca":
        parts = label.split()
        if len(parts) >= 2:
            return parts[0], parts[-1]
    return label.strip(), None


def lookup_device(name: str, exact: dict[str, int], lower: dict[str, int]) -> int:
    if name in exact:
        return exact[name]
    low = name.lower()
    if low in lower:
        return lower[low]
    short = low.split(".", 1)[0]  # an FQDN system name
    return lower.get(short, -1)


def resolve(plan: Plan, disc: Discovery) -> Resolved:
    exact, lower = _device_names(plan)
    spell = port_spellings(plan)
    keys = list(disc.nodes)
    index = {k: i for i, k in enumerate(keys)}
    labels = [disc.nodes[k].label for k in keys]
    node_dev = np.empty(len(keys), dtype=np.int64)
    node_port = np.full(len(keys), UNRESOLVED, dtype=np.int64)
    for i, k in enumerate(keys):
        n = disc.nodes[k]
        host, token = split_label(n.label, n.kind)
        dev = lookup_device(host, exact, lower)
        node_dev[i] = dev if dev >= 0 else -2 - i
        if dev >= 0 and n.kind == "ca":
            table = spell[plan.devices[dev].layout]
            node_port[i] = table.get(token, table.get((token or "").lower(), UNRESOLVED)) if token else UNRESOLVED
    rows = disc.links
    a_node = np.fromiter((index[r[0]] for r in rows), dtype=np.int64, count=len(rows))
    b_node = np.fromiter((index[r[2]] for r in rows), dtype=np.int64, count=len(rows))
    res = Resolved(keys, labels, node_dev, node_port, a_node, b_node,
                   np.empty(len(rows), dtype=np.int64), np.empty(len(rows), dtype=np.int64))
    _resolve_ports(plan, disc, res, spell)
    for _round in range(4):  # a renamed switch's neighbours may themselves be renamed: a few rounds settle it
        if not _identify_by_neighbours(plan, disc, res):
            break
        _resolve_ports(plan, disc, res, spell)
    return res


def _resolve_ports(plan: Plan, disc: Discovery, res: Resolved, spell) -> None:
    """Every link end to a global port id (or UNRESOLVED). A CA node is its own port; an
    InfiniBand port number is looked up per layout with numpy; a spelled port (LLDP, CSV)
    through a dictionary per (layout, spelling), each spelling resolved once."""
    offsets = plan.port_offsets()
    layout_ids = list(plan.layouts)
    layout_of = np.array([layout_ids.index(d.layout) for d in plan.devices] or [0], dtype=np.int64)
    ib = ib_port_numbers(plan)
    ib_lookup = []
    for lid in layout_ids:
        table = ib.get(lid, {})
        arr = np.full(max(table, default=0) + 1, UNRESOLVED, dtype=np.int64)
        for number, port in table.items():
            arr[number] = port
        ib_lookup.append(arr)
    rows = disc.links
    for side, (nodes, col) in enumerate(((res.a_node, 1), (res.b_node, 3))):
        dev = res.node_dev[nodes]
        known = dev >= 0
        safe_dev = np.where(known, dev, 0)
        fixed = res.node_port[nodes]
        local = np.full(len(rows), UNRESOLVED, dtype=np.int64)
        local[known & (fixed >= 0)] = fixed[known & (fixed >= 0)]
        specs = [r[col] for r in rows]
        numbered = np.fromiter((type(x) is int for x in specs), dtype=bool, count=len(specs)) & known & (fixed < 0)
        if numbered.any():
            numbers = np.fromiter((x if type(x) is int else 0 for x in specs), dtype=np.int64, count=len(specs))
            lay = layout_of[safe_dev]
            for li in np.unique(lay[numbered]).tolist():
                sel = numbered & (lay == li)
                arr = ib_lookup[li]
                n = numbers[sel]
                local[sel] = np.where((n >= 0) & (n < arr.size), arr[np.clip(n, 0, arr.size - 1)], UNRESOLVED)
        spelled = known & (fixed < 0) & ~numbered
        if spelled.any():
            cache: dict[tuple, int] = {}
            lay = layout_of[safe_dev]
            for r in np.flatnonzero(spelled).tolist():
                spec = specs[r]
                if not spec:
                    continue
                key = (int(lay[r]), spec)
                hit = cache.get(key)
                if hit is None:
                    table = spell[layout_ids[key[0]]]
                    hit = UNRESOLVED
                    for p in spec:
                        hit = table.get(p, table.get(p.lower(), UNRESOLVED))
                        if hit != UNRESOLVED:
                            break
                    cache[key] = hit
                local[r] = hit
        gport = np.where(local >= 0, offsets[safe_dev] + local, UNRESOLVED)
        if side == 0:
            res.a_gport = gport
        else:
            res.b_gport = gport


def _identify_by_neighbours(plan: Plan, disc: Discovery, res: Resolved) -> bool:
    """Re-identify nodes whose label names no device, or whose links mostly contradict
    the device they name, by the planned cables at their resolved neighbours' ports.
    True if any node changed."""
    lop = plan.memo("link_of_port", lambda p: p.link_of_port())
    offsets = plan.port_offsets()
    links = plan.links
    a_g = offsets[links.a_dev] + links.a_port
    b_g = offsets[links.b_dev] + links.b_port
    port_dev = np.repeat(np.arange(len(plan.devices)), [len(plan.layouts[d.layout]) for d in plan.devices])

    # rows as seen from each node: (node, its port spec, neighbour global port)
    both_node = np.concatenate([res.a_node, res.b_node])
    peer_g = np.concatenate([res.b_gport, res.a_gport])
    own_g = np.concatenate([res.a_gport, res.b_gport])
    cable = np.where(peer_g >= 0, lop[np.maximum(peer_g, 0)], NO_LINK)
    other_g = np.where(cable >= 0, np.where(a_g[np.maximum(cable, 0)] == peer_g, b_g[np.maximum(cable, 0)],
                                            a_g[np.maximum(cable, 0)]), -1)
    agrees = (other_g >= 0) & (own_g == other_g)
    n_rows = np.bincount(both_node, minlength=len(res.keys))
    n_ok = np.bincount(both_node, weights=agrees, minlength=len(res.keys))
    suspect = (res.node_dev < 0) | ((n_rows >= 2) & (n_ok * 2 < n_rows))
    candidates = np.flatnonzero(suspect & (n_rows > 0))
    if candidates.size == 0:
        return False
    rows_of: dict[int, list[int]] = {int(c): [] for c in candidates}
    for j in np.flatnonzero(np.isin(both_node, candidates)).tolist():
        rows_of[int(both_node[j])].append(j)
    claimed = {}  # (device, fixed port or -1) -> node, for nodes that name their device correctly
    for i in range(len(res.keys)):
        if res.node_dev[i] >= 0 and not suspect[i]:
            claimed[(int(res.node_dev[i]), int(res.node_port[i]) if disc.nodes[res.keys[i]].kind == "ca" else -1)] = i

    def vote(node: int) -> Counter:
        votes: Counter = Counter()
        for j in rows_of[node]:
            g = int(other_g[j])
            if g >= 0:
                dev = int(port_dev[g])
                votes[(dev, g - int(offsets[dev]))] += 1
        return votes

    # A CA is one NIC port: a host is identified by all its CAs together, never by one cable.
    groups: dict[str, list[int]] = {}
    changed = False
    for node in candidates.tolist():
        n = disc.nodes[res.keys[node]]
        if n.kind != "ca":
            votes: Counter = Counter()
            for (dev, _port), k in vote(node).items():
                votes[dev] += k
            if not votes:
                continue
            dev, k = votes.most_common(1)[0]
            total = sum(1 for j in rows_of[node] if peer_g[j] >= 0)  # rows whose neighbour is placed
            if k * 2 <= total or k < 2 or res.node_dev[node] == dev:
                continue
            holder = claimed.get((dev, -1))
            if holder is not None and n.guid is not None and disc.nodes[res.keys[holder]].guid not in (None, n.guid):
                continue  # another InfiniBand node already is that switch
            res.node_dev[node] = dev
            claimed[(dev, -1)] = node
            res.renamed.append((node, dev))
            changed = True
        elif res.node_dev[node] >= 0:
            if res.node_port[node] != UNRESOLVED:
                continue  # the right host and a known port: a cabling matter, not a naming one
            ports = {p for (d, p) in vote(node) if d == res.node_dev[node]}
            if len(ports) == 1 and (int(res.node_dev[node]), next(iter(ports))) not in claimed:
                res.node_port[node] = ports.pop()
                claimed[(int(res.node_dev[node]), int(res.node_port[node]))] = node
                res.inferred_ports.append(node)
                changed = True
        else:
            groups.setdefault(split_label(n.label, "ca")[0], []).append(node)
    for _host, nodes in sorted(groups.items()):
        per_node = {node: vote(node) for node in nodes}
        devs: Counter = Counter()
        for votes in per_node.values():
            for (dev, _port), k in votes.items():
                devs[dev] += k
        if not devs:
            continue
        dev, k = devs.most_common(1)[0]
        if k * 2 <= sum(1 for x in nodes for j in rows_of[x] if peer_g[j] >= 0):
            continue
        for node, votes in per_node.items():
            res.node_dev[node] = dev
            ranked = [p for (d, p), _k in votes.most_common() if d == dev]
            if ranked and (dev, ranked[0]) not in claimed:
                res.node_port[node] = ranked[0]
                claimed[(dev, ranked[0])] = node
            res.renamed.append((node, dev))
        changed = True
    return changed
