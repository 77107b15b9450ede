"""Lowering of fat-tree and rail-optimized Clos designs into a plan.

Port assignment (one rule each, so a cabling sheet can be read without the tool):
- leaf: downlinks take logical ports 1..d in panel order, uplinks d+1..d+u, the rest are spare;
  with uplinks faster than downlinks (fabric.uplink_speed_gbps) the downlinks fill whole
  cages split for their speed and the uplinks start at the first port of the next cage;
- rail-optimized: NIC of rail r of the j-th server of an SU -> leaf r of that SU, port j;
  fat-tree: the servers of a leaf take its downlinks in order, NICs in rail order;
- a leaf's uplinks to one spine are contiguous (uplink t -> spine t // m); a spine's
  downlinks follow leaf order (leaf l, link i -> port l*m + i); likewise spine -> core;
- extra endpoints take free leaf downlinks in (SU, port, rail) order, so an endpoint's
  ports land on different leaves; or spare spine/core ports, or management leaves of
  their own (endpoints.py).

Links are built as numpy columns; no per-link Python objects.
"""

from __future__ import annotations

import numpy as np

from ..plan import naming
from ..plan.model import Device, LinkTable, Plan
from . import endpoints, ports
from .assembly import PlanAssembly
from .resolve import ClosDesign
from .resolve import resolve as resolve_clos
from .spine_leaf_groups import regroup


def resolve(loaded) -> ClosDesign:
    """The family's resolver (expand/families.py): the cheapest Clos, or its leaves regrouped
    as NVIDIA's spine-leaf groups where the spec asks (spine_leaf_groups.py)."""
    design = resolve_clos(loaded)
    return design if loaded.spec.fabric.spine_leaf_group is None else regroup(loaded, design)

TIER_SERVER, TIER_LEAF, TIER_SPINE, TIER_CORE = 0, 1, 2, 3


def build(design: ClosDesign) -> Plan:
    d = design
    s = d.sizing
    b = PlanAssembly(d.catalog, d.media_requested)
    server_layout = b.layout(ports.server_layout(d.server.id, "compute", d.nics))
    switch_layout = b.layout(ports.leaf_layout(d.switch, d.speed_gbps, d.up_gbps, d.leaf_ports.down_cages(s.leaf.down)))
    spine_sw, core_sw = d.spine_switch or d.switch, d.core_switch or d.spine_switch or d.switch
    # every spine and core port runs at the uplink speed; at one speed, the leaf's layout when the model is the same
    spine_layout = b.layout(ports.switch_layout(spine_sw, d.up_gbps))
    core_layout = b.layout(ports.switch_layout(core_sw, d.up_gbps))

    server_first = _add_servers(b, d, server_layout)
    leaf_first = _add_leaves(b, d, switch_layout)
    spine_first = _add_spines(b, d, spine_sw.id, spine_layout)
    core_first = _add_cores(b, d, core_sw.id, core_layout)
    _link_servers_to_leaves(b, d, server_first, leaf_first)
    # extra endpoints: free leaf downlinks, spare spine/core ports, management leaves
    mgmt_first = endpoints.place(b, d, leaf_first, spine_first, core_first, switch_layout)
    _link_leaves_to_spines(b, d, leaf_first, spine_first, ports.first_port_at(spine_sw, d.up_gbps))
    if s.tiers == 3:
        _link_spines_to_cores(b, d, spine_first, core_first)
    endpoints.management_uplinks(b, d, mgmt_first, spine_first)

    links = LinkTable.concat(b.parts)
    plan = Plan(
        name=d.spec.name,
        devices=b.devices,
        layouts=b.layouts,
        links=links,
        link_kinds=b.kinds,
        media=b.media_ids,
        design=_design_record(d),
        notes=list(d.notes),
    )
    return plan


def _add_servers(b: PlanAssembly, d: ClosDesign, layout: str) -> int:
    """Servers in spec order, named by SU and place (or hosts: names); the first's index."""
    su_size, model = d.su_size, d.server.id
    # (SU, place in it) of each server, then names and devices in comprehensions, added as one block
    places: list[tuple[int | None, int]] = [(g // su_size + 1, g % su_size + 1) for g in range(d.servers)] \
        if su_size else [(None, g + 1) for g in range(d.servers)]
    prefix = d.server.hostname_prefix
    names = d.hosts.server_names(places) if d.hosts else [naming.server(prefix, j, su) for su, j in places]
    return b.add_block([Device(name, "server", model, layout, TIER_SERVER, j, su)
                        for name, (su, j) in zip(names, places, strict=True)])


def _add_leaves(b: PlanAssembly, d: ClosDesign, layout: str) -> int:
    """Leaves: rail-optimized, rail r of SU u; fat-tree, in order (by SU where there are
    SUs); each with its pod at three tiers. The first's index."""
    s, first = d.sizing, len(b.devices)
    if d.rail_optimized:
        for su in range(1, d.sus + 1):
            for r in range(1, d.rails + 1):
                b.add(Device(naming.rail_leaf(su, r), "leaf", d.switch.id, layout, TIER_LEAF, r, su=su, rail=r))
    else:
        leaves_per_su = (d.su_size // d.servers_per_leaf) if d.su_size else None
        for li in range(s.leaves):
            leaf_su, idx = (li // leaves_per_su + 1, li % leaves_per_su + 1) if leaves_per_su else (None, li + 1)
            b.add(Device(naming.leaf(idx, leaf_su), "leaf", d.switch.id, layout, TIER_LEAF, idx, su=leaf_su))
    leaf_pod, _ = _leaf_pods(d)
    for li in range(s.leaves):
        b.devices[first + li].pod = int(leaf_pod[li]) + 1 if s.tiers == 3 else None
    return first


def _add_spines(b: PlanAssembly, d: ClosDesign, model: str, layout: str) -> int:
    """Spines pod by pod (one pod at two tiers); the first's index."""
    s, first = d.sizing, len(b.devices)
    for p in range(s.pods):
        for j in range(s.spines_per_pod):
            pod = p + 1 if s.tiers == 3 else None
            b.add(Device(naming.spine(j + 1, pod), "spine", model, layout, TIER_SPINE, j + 1, pod=pod))
    return first


def _add_cores(b: PlanAssembly, d: ClosDesign, model: str, layout: str) -> int:
    """Cores at three tiers, core group j (joined to spine j of every pod) after group j-1;
    the index the first core has (or would have)."""
    s, first = d.sizing, len(b.devices)
    if s.tiers == 3:
        for j in range(s.spines_per_pod):
            for c in range(s.cores_per_group):
                idx = j * s.cores_per_group + c + 1
                b.add(Device(naming.core(idx), "core", model, layout, TIER_CORE, idx, group=j + 1))
    return first


def _link_servers_to_leaves(b: PlanAssembly, d: ClosDesign, server_first: int, leaf_first: int) -> None:
    """Rail-optimized: NIC r of the j-th server of an SU -> leaf r of the SU, port j;
    fat-tree: a leaf's servers on its downlinks in order, NICs in rail order."""
    n, rails = d.servers, d.rails
    g = np.arange(n, dtype=np.int64)
    nic = np.arange(rails, dtype=np.int64)
    a_dev = np.repeat(server_first + g, rails)
    a_port = np.tile(nic, n)
    if d.rail_optimized:
        assert d.su_size is not None  # a rail-optimized fabric is built of SUs
        su0, slot = np.divmod(g, d.su_size)
        b_dev = np.repeat(leaf_first + su0 * rails, rails) + a_port
        b_port = np.repeat(slot, rails)
    else:
        leaf_of, slot = np.divmod(g, d.servers_per_leaf)
        b_dev = np.repeat(leaf_first + leaf_of, rails)
        b_port = np.repeat(slot * rails, rails) + a_port
    b.link_block("server-leaf", a_dev, a_port, b_dev, b_port)


def _link_leaves_to_spines(b: PlanAssembly, d: ClosDesign, leaf_first: int, spine_first: int,
                           spine_first_port: int) -> None:
    """A leaf's uplink t -> spine t // m of its pod, at port (leaf's place) * m + t % m.
    At two tiers a spine with an uplink cage group takes the leaves there
    (`spine_first_port`, after its host ports)."""
    s = d.sizing
    L, up, m = s.leaves, s.leaf.up, s.leaf_spine_links
    leaf_idx = np.repeat(np.arange(L, dtype=np.int64), up)
    t = np.tile(np.arange(up, dtype=np.int64), L)
    a_dev = leaf_first + leaf_idx
    a_port = d.leaf_ports.first_uplink(s.leaf.down) + t
    if s.tiers == 2:
        b_dev = spine_first + t // m
        b_port = leaf_idx * m + t % m + spine_first_port
    else:
        leaf_pod, leaf_in_pod = _leaf_pods(d)
        pod, in_pod = leaf_pod[leaf_idx], leaf_in_pod[leaf_idx]
        b_dev = spine_first + pod * s.spines_per_pod + t // m
        b_port = in_pod * m + t % m
    b.link_block("leaf-spine", a_dev, a_port, b_dev, b_port)


def _link_spines_to_cores(b: PlanAssembly, d: ClosDesign, spine_first: int, core_first: int) -> None:
    """Spine j of pod p, uplink t -> core t // m_c of core group j, port p * m_c + t % m_c."""
    s = d.sizing
    S, us, mc = s.spines, s.spine.up, s.spine_core_links
    sp = np.repeat(np.arange(S, dtype=np.int64), us)
    t = np.tile(np.arange(us, dtype=np.int64), S)
    pod, j = np.divmod(sp, s.spines_per_pod)
    b.link_block("spine-core", spine_first + sp, s.spine.down + t,
                 core_first + j * s.cores_per_group + t // mc, pod * mc + t % mc)


def _leaf_pods(d: ClosDesign) -> tuple[np.ndarray, np.ndarray]:
    """Per leaf (0-based, plan order): its pod and its place in the pod. Pods are runs of
    leaves in leaf order, or with spine-leaf groups (spine_leaf_groups.py) one rail's leaves
    of `slg_units` SUs: leaf (SU u, rail r) is in group (u // slg_units) * rails + r, place
    u % slg_units."""
    s = d.sizing
    li = np.arange(s.leaves, dtype=np.int64)
    if d.slg_units is None:
        return np.divmod(li, s.leaves_per_pod)
    su, rail = np.divmod(li, d.rails)
    block, place = np.divmod(su, d.slg_units)
    return block * d.rails + rail, place


def _design_record(d: ClosDesign) -> dict:
    s = d.sizing
    leaf_ports = d.leaf_ports
    rec = {
        "topology": d.shape.topology,
        "tiers": s.tiers,
        "server": d.server.id,
        "switch": d.switch.id,
        "speed_gbps": d.speed_gbps,
        # only at two speeds, so one-speed plans read as before
        **({"uplink_speed_gbps": d.up_gbps} if d.up_gbps != d.speed_gbps else {}),
        "switch_radix": d.switch.radix(d.speed_gbps),
        "servers": d.servers,
        "gpus": d.gpus,
        "scalable_unit": d.su_size,
        "scalable_units": d.sus or None,
        "rails": d.rails,
        "leaf_ports": {"down": s.leaf.down, "up": s.leaf.up,
                       **({"down_cages": leaf_ports.down_cages(s.leaf.down), "up_cages": leaf_ports.up_cages(s.leaf.up)}
                          if leaf_ports.mixed else {})},
        "leaves_per_pod": s.leaves_per_pod,
        "pods": s.pods,
        "spines_per_pod": s.spines_per_pod,
        "leaf_spine_links_per_pair": s.leaf_spine_links,
        "built_for_servers": d.final_servers,
        # As the spec asks (check/oversubscription.py compares every switch against it).
        "oversubscription": {"leaf": str(d.shape.leaf_ratio),
                             **({"spine": str(d.shape.spine_ratio)} if s.tiers == 3 else {})},
    }
    if d.unit_fill is not None:
        rec["unit_fill"] = d.unit_fill
    if d.hosts is not None:
        rec["hosts"] = d.hosts.record()
    # Per-tier models only where a spec gives them, so single-model plans read as before.
    for key, sw in (("spine_switch", d.spine_switch), ("core_switch", d.core_switch if s.tiers == 3 else None)):
        if sw is not None and sw.id != d.switch.id:
            rec[key] = sw.id
            rec[key.replace("switch", "radix")] = sw.radix(d.up_gbps)
    if d.slg_units is not None:
        rec["spine_leaf_group"] = {"scalable_units": d.slg_units, "spines": s.spines_per_pod,
                                   "cores_per_group": s.cores_per_group}
    if s.tiers == 3:
        rec["spine_ports"] = {"down": s.spine.down, "up": s.spine.up}
        rec["core_groups"] = s.spines_per_pod
        rec["cores_per_group"] = s.cores_per_group
        rec["spine_core_links_per_pair"] = s.spine_core_links
    return rec
