"""Structural invariants every plan must hold, whatever its topology.

A violation here is a compiler bug, not a user error: compile refuses to write a
plan that fails them. O(ports) with numpy.
"""

from __future__ import annotations

import numpy as np

from ..plan.fabrics import fabric_names
from ..plan.model import Plan
from .findings import Finding


# Findings after which a link end's global port id names no port (the offsets leave ports
# out, or a port index is past its device's): per-port tables cannot be read for the links.
PORT_IDS_BROKEN = frozenset({"PORT_OFFSET_GAP", "PORT_OUT_OF_RANGE"})


def plan_invariants_once(plan: Plan) -> tuple[Finding, ...]:
    """plan_invariants, computed once per plan: the pipeline checks a plan as expand builds
    it, and the budgets check reports the same findings (0.1 s at 524,288 GPUs, which a
    compile paid twice)."""
    return plan.memo("plan_invariants", lambda p: tuple(plan_invariants(p)))


def plan_invariants(plan: Plan) -> list[Finding]:
    out: list[Finding] = []
    links = plan.links
    names = [d.name for d in plan.devices]
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = next(n for n in names if n in seen or seen.add(n))  # type: ignore[func-returns-value]  # add() records n
        out.append(Finding("DEVICE_NAME_REUSED", "error", f"device name {dup} used twice", dup))
    # per device the index of its layout (one dict lookup each): the ports' counts and speeds
    # are then looked up per layout in numpy, never per device or per port in Python
    layout_ids = list(plan.layouts)
    layout_at = {lid: i for i, lid in enumerate(layout_ids)}
    device_layout = np.fromiter((layout_at[d.layout] for d in plan.devices), dtype=np.int64, count=len(plan.devices))
    sizes = np.array([len(plan.layouts[lid]) for lid in layout_ids], dtype=np.int64)[device_layout]
    offsets = plan.port_offsets()
    if not np.array_equal(offsets, np.cumsum(sizes) - sizes):  # global port ids tile the devices' ports
        i = int(np.argmax(offsets != np.cumsum(sizes) - sizes))
        out.append(Finding("PORT_OFFSET_GAP", "error", f"{names[i]}'s ports start at global port {int(offsets[i])}; "
                           f"the devices before it have {int(sizes[:i].sum())}", names[i]))
        return out
    for end in ("a", "b"):
        dev, port = getattr(links, f"{end}_dev"), getattr(links, f"{end}_port")
        bad = np.nonzero((port < 0) | (port >= sizes[dev]))[0]
        if bad.size:
            i = int(bad[0])
            out.append(Finding("PORT_OUT_OF_RANGE", "error",
                               f"link {i + 1} uses port index {int(port[i])} of {names[int(dev[i])]}, which has {int(sizes[dev[i]])} ports",
                               names[int(dev[i])]))
    if out:
        return out
    gids = np.concatenate([offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port])
    counts = np.bincount(gids)  # links per global port: O(ports), where np.unique would sort every link end
    if (counts > 1).any():
        gid = int(np.argmax(counts > 1))
        dev = int(np.searchsorted(offsets, gid, side="right") - 1)
        port = plan.layouts[plan.devices[dev].layout].ports[gid - int(offsets[dev])]
        out.append(Finding("PORT_REUSED", "error", f"port {port.name} of {names[dev]} carries more than one link",
                           f"{names[dev]}:{port.name}"))
    if (links.a_dev == links.b_dev).any():
        i = int(np.argmax(links.a_dev == links.b_dev))
        out.append(Finding("LINK_LOOP", "error", f"link {i + 1} connects {names[int(links.a_dev[i])]} to itself"))
    # Speeds must match at both ends (a breakout is a different layout, never a mismatch here).
    # (layout, port) -> speed, padded to the largest layout (every link's port is in range: above);
    # not views.per_port_table: reading it by global port doubled this at 524,288 GPUs (0.24 -> 0.49 s)
    speed_at = np.zeros((len(layout_ids), max((len(plan.layouts[lid]) for lid in layout_ids), default=0)), dtype=np.int64)
    for i, lid in enumerate(layout_ids):
        speed_at[i, :len(plan.layouts[lid])] = [p.speed_gbps for p in plan.layouts[lid].ports]
    a_speed = speed_at[device_layout[links.a_dev], links.a_port]
    b_speed = speed_at[device_layout[links.b_dev], links.b_port]
    if (a_speed != b_speed).any():
        i = int(np.argmax(a_speed != b_speed))
        out.append(Finding("SPEED_MISMATCH", "error",
                           f"link {i + 1}: {int(a_speed[i])} Gb/s at {names[int(links.a_dev[i])]} "
                           f"vs {int(b_speed[i])} Gb/s at {names[int(links.b_dev[i])]}"))
    return out + cage_invariants(plan) + fabric_invariants(plan)


def cage_invariants(plan: Plan) -> list[Finding]:
    """A cage runs one breakout mode: its ports share one speed and together carry at most the
    cage's bandwidth (2 x 400G or 1 x 800G in an 800G OSFP cage, never 400G beside 800G).
    Per layout, so O(ports of the layouts), not of the plan."""
    out: list[Finding] = []
    for lid, layout in plan.layouts.items():
        cages: dict[str, list] = {}
        for p in layout.ports:
            cages.setdefault(p.cage, []).append(p)
        for cage, ports in cages.items():
            speeds = sorted({p.speed_gbps for p in ports})
            total = sum(p.speed_gbps for p in ports)
            if len(speeds) > 1 or total > ports[0].cage_gbps:
                users = [d.name for d in plan.devices if d.layout == lid][:1]
                out.append(Finding("CAGE_OVER_BUDGET", "error",
                                   f"cage {cage} of {lid} ({users[0] if users else 'no device'}) holds {len(ports)} port(s) "
                                   f"at {'/'.join(f'{s}G' for s in speeds)} = {total} Gb/s; the cage carries "
                                   f"{ports[0].cage_gbps} Gb/s in one breakout mode", f"{lid}:{cage}"))
                break
    return out


def fabric_invariants(plan: Plan) -> list[Finding]:
    """The fabric records (plan/fabric_record.py) tile the plan: the network fabrics' own devices
    and links are consecutive ranges covering every device and link, in record order; a
    link's upper end is a device of its own fabric, its lower end one of that fabric's or a
    server; Device.fabric agrees; routing arrays are sized to their fabric."""
    if not plan.fabrics:
        return []
    out: list[Finding] = []
    records = [plan.fabrics[name] for name in fabric_names(plan)]
    first = records[0]
    # an extra fabric's own plan (plan/fabrics.py fabric_plan) lists the shared servers first
    dev_end = 0 if first.devices.start <= first.servers.start else first.servers.stop
    link_end = 0
    for f in records:
        if f.devices.start != dev_end or f.links.start != link_end:
            out.append(Finding("FABRIC_RANGES", "error", f"fabric {f.name}: devices from {f.devices.start}, links from "
                               f"{f.links.start}; the fabric before it ends at {dev_end}, {link_end}", f.name))
        dev_end, link_end = f.devices.stop, f.links.stop
    if dev_end != len(plan.devices) or link_end != len(plan.links):
        out.append(Finding("FABRIC_RANGES", "error", f"the fabrics hold {dev_end} devices and {link_end} links; "
                           f"the plan has {len(plan.devices)} and {len(plan.links)}"))
    if out:
        return out
    links = plan.links
    for f in records:
        a, b = links.a_dev[f.links.start:f.links.stop], links.b_dev[f.links.start:f.links.stop]
        own_b = (b >= f.devices.start) & (b < f.devices.stop)
        own_a = ((a >= f.devices.start) & (a < f.devices.stop)) | ((a >= f.servers.start) & (a < f.servers.stop))
        if not (own_a & own_b).all():
            i = f.links.start + int(np.argmin(own_a & own_b))
            out.append(Finding("FABRIC_LINK_OUTSIDE", "error", f"link {i + 1} of fabric {f.name} ends at "
                               f"{plan.devices[int(links.a_dev[i])].name} and {plan.devices[int(links.b_dev[i])].name}", f.name))
        strays = [plan.devices[i].name for i in f.devices if plan.devices[i].fabric != f.name]
        if strays:
            out.append(Finding("FABRIC_DEVICE_MISLABELLED", "error", f"{strays[0]} is in fabric {f.name}'s range "
                               f"but labelled {plan.devices[plan.device_index(strays[0])].fabric}", strays[0]))
        r = f.routing
        if r is not None and (r.loopback.size != f.device_ids().size or r.link_net.size != len(f.links)):
            out.append(Finding("FABRIC_ROUTING_SIZE", "error", f"fabric {f.name}'s routing covers {r.loopback.size} devices "
                               f"and {r.link_net.size} links; the fabric has {f.device_ids().size} and {len(f.links)}", f.name))
    return out
