"""Extra endpoints of a Clos fabric (UFM appliances, storage targets, service nodes): where
they attach, whether they fit, and the ports they take.

`attach` (spec `extra_endpoints[].attach`):
- leaf (default): free leaf downlinks, in (SU, port, rail) order, so an endpoint's ports
  land on different leaves. This is what NVIDIA's DGX SuperPOD RA does ("a DGX system must
  be removed to accommodate for UFM connectivity": 31 DGX + UFM per 32-node SU), and what
  the UFM-SDN manual asks of a multi-tier fabric (primary and standby appliance on
  different switches of the outermost tier). The default unit (unit_choice.py) leaves room.
- spine / core: spare ports of that tier, port-major over its switches, so consecutive
  ports land on different switches, from the top of the panel down, so the fabric still
  grows into the ports below (the growth note says where it stops). Spare means no link
  uses the port now or at the growth target: at three tiers a spine's downlinks wait for
  the leaves of its pod.
- management-leaf: leaves of their own (`mgmt-leaf-01`, ...), two as soon as the endpoints
  have two ports (one lost switch leaves the fabric managed), each cut like a compute
  leaf and linked once to every spine (of pod 1 at three tiers) on the top spare ports.
  They are leaves to every output (configs, addressing); the checks leave them out of the
  compute leaves' figures, as they carry no GPU.

Whether the endpoints fit is counted in closed form at resolve time (`problems`), so a
spec that does not fit is an error at the entry's file:line listing what would fit; the
builder (`place`) then only places. Placement never moves under planned growth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..diagnostics import Diagnostic
from ..plan import naming
from ..plan.model import Device
from . import ports

TIER_SERVER, TIER_LEAF = 0, 1


def attach_of(e) -> str:
    return e.spec.attach


def leaf_ports_wanted(endpoints) -> int:
    """Endpoint ports that take leaf downlinks (the unit choice keeps room for them)."""
    return sum(e.spec.count * e.spec.ports for e in endpoints if attach_of(e) == "leaf")


@dataclass(frozen=True)
class Room:
    """Spare ports per tier of a sized design, in closed form."""

    leaf_free: int  # free leaf downlinks (not taken by servers now or at the growth target)
    spines: int  # spines that exist
    spine_first_spare: int  # first spare port on every spine
    spine_radix: int
    cores: int
    core_first_spare: int
    core_radix: int
    mgmt_spines: int  # spines a management leaf links to (all; pod 1's at three tiers)

    @property
    def spine_spare(self) -> int:
        return max(0, self.spine_radix - self.spine_first_spare)

    @property
    def core_spare(self) -> int:
        return max(0, self.core_radix - self.core_first_spare)


def room(d) -> Room:
    s = d.sizing
    spine_radix = (d.spine_switch or d.switch).radix(d.up_gbps)  # spines and cores run at the uplink speed
    core_radix = (d.core_switch or d.spine_switch or d.switch).radix(d.up_gbps)
    if s.tiers == 3:
        spine_first = s.spine.down + s.spine.up  # downlinks wait for their pod's leaves; uplinks go to cores
        final_pods = math.ceil(d.final_leaves / s.leaves_per_pod)
        core_first = final_pods * s.spine_core_links
        mgmt_spines = s.spines_per_pod
    else:
        spine_first = d.final_leaves * s.leaf_spine_links
        core_first = core_radix
        mgmt_spines = s.spines
    return Room(free_leaf_downlinks_count(d), s.spines, spine_first, spine_radix, s.cores, core_first, core_radix,
                mgmt_spines)


def _slots(d) -> tuple[int, int]:
    """(server slots on today's leaves, slots servers take there at the growth target)."""
    return slots(d.servers, d.final_servers, d.su_size or d.servers_per_leaf)


def slots(servers: int, final_servers: int, unit: int) -> tuple[int, int]:
    total = math.ceil(servers / unit) * unit
    return total, min(total, max(servers, final_servers))


def free_leaf_downlinks_count(d) -> int:
    if d.rail_optimized:
        total, taken = _slots(d)
        return (total - taken) * d.rails
    return int(free_leaf_downlinks(d, 0)[0].size)


def free_leaf_downlinks(d, leaf_first: int) -> tuple[np.ndarray, np.ndarray]:
    return free_downlinks(d.rail_optimized, d.su_size or d.servers_per_leaf, d.servers_per_leaf, d.servers,
                          d.final_servers, d.rails, leaf_first, d.sizing.leaf.down)


def free_downlinks(rail: bool, unit: int, spl: int, servers: int, final_servers: int, rails: int,
                   leaf_first: int = 0, down: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(leaf device, port) of leaf downlinks no server uses now or at the growth target, in
    allocation order: the last server slots first, so servers still grow into the slots
    below before they meet an endpoint (NVIDIA's SuperPOD gives UFM the 32nd slot).
    Rail-optimized: (SU, slot) descending, rails ascending (an endpoint's ports on
    different rail leaves); fat-tree: port-major over the leaves with free downlinks,
    from the last port and leaf down. `down`: a fat-tree leaf's downlinks (default: its
    servers' ports; a one-switch extra fabric's leaf has its endpoints' ports too)."""
    total, taken = slots(servers, final_servers, unit)
    if rail:
        g = np.arange(total - 1, taken - 1, -1, dtype=np.int64)  # free server slots, last first
        su0, slot = np.divmod(g, unit)
        dev = (leaf_first + su0 * rails)[:, None] + np.arange(rails)
        return dev.ravel(), np.repeat(slot, rails)
    down = spl * rails if down is None else down
    first = 0 if down > spl * rails else taken // spl  # else leaves before this one are full
    leaves = np.arange(first, total // spl, dtype=np.int64)
    used = np.clip(taken - leaves * spl, 0, spl) * rails  # downlinks servers take per leaf
    port, li = np.nonzero(np.arange(down, dtype=np.int64)[:, None] >= used[None, :])
    return (leaf_first + leaves[li])[::-1], port[::-1].astype(np.int64)


def growth_cap(rail: bool, unit: int, spl: int, servers: int, rails: int, leaf_ports: int) -> int | None:
    """Without planned growth: servers the design holds before the next server slot is one
    an endpoint took (None: no endpoint on a leaf)."""
    if not leaf_ports:
        return None
    dev, port = free_downlinks(rail, unit, spl, servers, servers, rails)
    dev, port = dev[:leaf_ports], port[:leaf_ports]
    if rail:
        slot = (dev // rails) * unit + port  # leaf index -> SU, port = slot in the SU
    else:
        slot = dev * spl + port // rails
    return int(slot.min()) if slot.size else None


def held_top_ports(endpoint_list, switches: int, mode: str, management: int = 0) -> int:
    """Ports at the top of every spine (mode spine) or core (mode core) that endpoints
    hold: the management uplinks, then the endpoint ports spread port-major."""
    n = sum(e.spec.count * e.spec.ports for e in endpoint_list if attach_of(e) == mode)
    return management + (math.ceil(n / switches) if n and switches else 0)


def management_leaves(d) -> int:
    """Leaves the management-leaf endpoints get: enough downlinks, and two for two or more ports."""
    return management_leaf_count(d.endpoints, d.sizing.leaf.down)


def management_leaf_count(endpoint_list, leaf_down: int) -> int:
    need = sum(e.spec.count * e.spec.ports for e in endpoint_list if attach_of(e) == "management-leaf")
    if not need:
        return 0
    return max(2 if need >= 2 else 1, math.ceil(need / leaf_down))


def notes(d) -> list[str]:
    """What the summary says about management leaves (they count as leaves in every table)."""
    k = management_leaves(d)
    if not k:
        return []
    r = room(d)
    names = naming.management_leaf(1) + (f"..{naming.management_leaf(k)}" if k > 1 else "")
    return [f"{k} management lea{'ves' if k > 1 else 'f'} ({names}) hold the extra endpoints attached to management-leaf: "
            f"counted with the leaves, {k * r.mgmt_spines} of the leaf-spine cables are theirs (one to each of "
            f"{r.mgmt_spines} spines{' of pod 1' if d.sizing.tiers == 3 else ''}, on spare spine ports)"]


def problems(d, diagnostic, path: tuple, unit_keys: tuple[str, ...] = ("scalable_unit", "servers_per_leaf")
             ) -> list[Diagnostic]:
    """Endpoint entries that do not fit where they attach, each at its spec entry with the
    options that would fit. `diagnostic(code, path, message, hint)` makes a Diagnostic;
    `unit_keys`: the unit keys the spec section can set (an extra fabric has no
    servers_per_leaf)."""
    if not d.endpoints:
        return []
    r = room(d)
    want = {mode: sum(e.spec.count * e.spec.ports for e in d.endpoints if attach_of(e) == mode)
            for mode in ("leaf", "spine", "core", "management-leaf")}
    k = management_leaves(d)
    # management uplinks take the first k spare ports of every spine (place() skips them on all spines)
    free = {"leaf": r.leaf_free, "spine": r.spines * max(0, r.spine_spare - k), "core": r.cores * r.core_spare}
    out = []
    for i, e in enumerate(d.endpoints):
        mode = attach_of(e)
        need = e.spec.count * e.spec.ports
        where = path + (i,)
        if mode == "management-leaf":
            why = _management_problem(d, r, k)
            if why:
                out.append(diagnostic("DESIGN_NO_FREE_PORTS", where + ("attach",), why, _options(d, r, need, mode, unit_keys)))
            continue
        if mode == "core" and d.sizing.tiers != 3:
            out.append(diagnostic("DESIGN_NO_FREE_PORTS", where + ("attach",),
                                  f"attach: core needs a core tier; this design has {d.sizing.tiers}",
                                  _options(d, r, need, mode, unit_keys)))
            continue
        if want[mode] > free[mode]:
            tier = "leaf downlinks" if mode == "leaf" else f"spare {mode} ports"
            grown = mode == "leaf" and d.final_servers > d.servers
            out.append(diagnostic(
                "DESIGN_NO_FREE_PORTS", where,
                f"extra endpoints attached to {'leaves' if mode == 'leaf' else mode + 's'} need {want[mode]} ports "
                f"but only {free[mode]} {tier} are free"
                + (f" on today's leaves once {d.final_servers:,} servers (growth) are placed" if grown else ""),
                _options(d, r, need, mode, unit_keys)))
    return out


def _management_problem(d, r: Room, k: int) -> str:
    if r.mgmt_spines > d.sizing.leaf.up:  # cannot happen with the sizing rules; say it if it does
        return f"a management leaf has {d.sizing.leaf.up} uplinks but there are {r.mgmt_spines} spines to reach"
    if r.spine_spare < k:
        return (f"{k} management leaves need {k} spare port(s) on every spine; spines have {r.spine_spare} "
                f"(ports {r.spine_first_spare + 1}-{r.spine_radix} of {r.spine_radix} are the spare ones)"
                if r.spine_spare else
                f"{k} management leaves need {k} spare port(s) on every spine; every spine port is taken by "
                f"leaves{' and cores' if d.sizing.tiers == 3 else ''}{' (at the growth target)' if d.final_servers > d.servers else ''}")
    return ""


def _options(d, r: Room, need: int, mode: str, unit_keys: tuple[str, ...]) -> str:
    """Every other place these `need` ports could go: those that fit first, then why the
    others do not (a user picks knowing the whole picture)."""
    fits: list[str] = []
    not_fit: list[str] = []
    k = max(2 if need >= 2 else 1, math.ceil(need / d.sizing.leaf.down))
    spine_ports = r.spines * r.spine_spare
    choices = [
        ("leaf", r.leaf_free >= need, f"attach: leaf ({r.leaf_free} free leaf downlinks)"),
        ("spine", spine_ports >= need, f"attach: spine ({spine_ports} spare spine ports)"),
        ("core", d.sizing.tiers == 3 and r.cores * r.core_spare >= need,
         f"attach: core ({r.cores * r.core_spare} spare core ports)" if d.sizing.tiers == 3 else
         f"attach: core (no core tier at {d.sizing.tiers} tiers)"),
        ("management-leaf", r.spine_spare >= k,
         f"attach: management-leaf ({k} leaves of their own, each on {r.mgmt_spines} spines; "
         f"{r.spine_spare} spare port(s) per spine)"),
    ]
    for m, ok, text in choices:
        if m != mode:
            (fits if ok else not_fit).append(text)
    roomy = (d.unit_fill or {}).get("with_room")
    key = "scalable_unit" if d.rail_optimized else "servers_per_leaf"
    if mode == "leaf" and roomy and key in unit_keys:
        cost = d.unit_fill["cost"]
        ratio = f" with oversubscription: '{roomy['oversubscription']}'" if roomy.get("oversubscription") else ""
        fits.append(f"{key}: {roomy['size']}{ratio} leaves room ({roomy['switches']:,} switches and {roomy['cables']:,} "
                    f"cables, against {cost['switches']:,} and {cost['cables']:,})")
    give_up = math.ceil(max(0, need - r.leaf_free) / d.rails)
    if d.final_servers > d.servers:
        fits.append(f"lower growth.max_servers by {give_up} so that slots stay free on today's leaves, attach: leaf")
    elif d.servers - give_up >= 1:  # never offer a cluster of no servers
        field = d.shape.size_path[0]
        fewer = d.servers - give_up
        fits.append(f"give up {give_up} server slot(s) ({field}: {fewer if field == 'servers' else fewer * d.server.gpus}) "
                    f"with attach: leaf, as NVIDIA's SuperPOD does for UFM")
    return "; or ".join(fits) + (f". Does not fit: {'; '.join(not_fit)}" if not_fit else "")


def place(b, d, leaf_first: int, spine_first: int, core_first: int, leaf_layout: str) -> int | None:
    """Endpoint devices and their links, and any management leaves (devices only: their
    uplinks come after the compute fabric's, `management_uplinks`); a management leaf has
    the compute leaves' port layout `leaf_layout`. Returns the first management leaf's
    device index, or None. `problems` has refused every design that does not fit, so this
    only places."""
    if not d.endpoints:
        return None
    r = room(d)
    k = management_leaves(d)
    mgmt_first = len(b.devices)
    if k:
        pod = 1 if d.sizing.tiers == 3 else None
        for i in range(1, k + 1):
            b.add(Device(naming.management_leaf(i), "leaf", d.switch.id, leaf_layout, TIER_LEAF, i, pod=pod, group=i))
    # Spare spine and core ports are taken from the top of the panel down (the management
    # uplinks the top k of every spine), so leaves and pods still grow into the ports below.
    spare = {
        "leaf": free_leaf_downlinks(d, leaf_first),
        "spine": _port_major(spine_first, r.spines, r.spine_radix - k - 1, r.spine_first_spare - 1),
        "core": _port_major(core_first, r.cores, r.core_radix - 1, r.core_first_spare - 1),
        "management-leaf": _port_major(mgmt_first, k, 0, d.sizing.leaf.down),
    }
    cursor = dict.fromkeys(spare, 0)
    upper_role = {"leaf": "leaf", "spine": "spine", "core": "core", "management-leaf": "leaf"}
    # the model each attach point is (spine and core may be other models: fabric.spine_switch)
    attached_switch = {"leaf": d.switch, "management-leaf": d.switch, "spine": d.spine_switch or d.switch,
                       "core": d.core_switch or d.spine_switch or d.switch}
    for e in d.endpoints:
        mode = attach_of(e)
        layout = b.layout(ports.endpoint_layout(e.spec.role, e.spec.ports, e.speed_gbps, e.spec.form_factor,
                                                attached_switch[mode].cage.serdes_gbps))
        first = len(b.devices)
        for i in range(1, e.spec.count + 1):
            b.add(Device(naming.endpoint(e.spec.role, i), e.spec.role, e.spec.role, layout, TIER_SERVER, i))
        n = e.spec.count * e.spec.ports
        dev, port = spare[mode]
        lo = cursor[mode]
        cursor[mode] += n
        upper = upper_role[mode]
        b.link_block(f"{e.spec.role}-{upper}", np.repeat(np.arange(first, first + e.spec.count), e.spec.ports),
                     np.tile(np.arange(e.spec.ports), e.spec.count), dev[lo:lo + n], port[lo:lo + n],
                     medium=d.media_requested.get(f"endpoint-{upper}"))
    return mgmt_first if k else None


def management_uplinks(b, d, mgmt_first: int | None, spine_first: int) -> None:
    """Management leaf i, uplink j -> spine j (pod 1's at three tiers), on that spine's
    spare port radix - 1 - i (the top of the panel): one link to every spine, after the
    compute leaves' links."""
    if mgmt_first is None:
        return
    r = room(d)
    k = management_leaves(d)
    spines = np.tile(np.arange(r.mgmt_spines, dtype=np.int64), k)
    leaf = np.repeat(np.arange(k, dtype=np.int64), r.mgmt_spines)
    b.link_block("leaf-spine", mgmt_first + leaf, d.leaf_ports.first_uplink(d.sizing.leaf.down) + spines, spine_first + spines,
                 r.spine_radix - 1 - leaf, medium=d.media_requested.get("leaf-spine"))


def _port_major(first_dev: int, devices: int, first_port: int, end_port: int) -> tuple[np.ndarray, np.ndarray]:
    """Ports first_port, first_port +- 1, ... up to (not including) end_port of `devices`
    switches (counting down where end_port < first_port), port-major (one per switch in turn)."""
    step = 1 if end_port >= first_port else -1
    if devices <= 0 or end_port == first_port:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    p = np.arange(first_port, end_port, step, dtype=np.int64)
    return np.tile(first_dev + np.arange(devices, dtype=np.int64), p.size), np.repeat(p, devices)
