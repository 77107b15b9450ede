"""Port layouts: every logical port of a device model at the fabric's speed, in panel order."""

from __future__ import annotations

from ..catalog.models import NicGroup, Switch
from ..catalog.nos import descriptor
from ..plan.model import Port, PortLayout


def _port_fields(switch: Switch, ports_per_cage: int, cage: int, lane: int, index: int) -> dict:
    serdes = switch.serdes_per_cage or ports_per_cage
    per_port = serdes // ports_per_cage
    return {"cage": cage, "lane": lane, "lane0": lane - 1, "index": index,
            "serdes0": (cage - 1) * serdes + (lane - 1) * per_port, "cage_serdes1": (lane - 1) * per_port + 1}


def mode_of(switch: Switch, speed_gbps: int):
    """The port mode of `speed_gbps`: of the main cages, or of the uplink cage group."""
    if speed_gbps in switch.modes or switch.uplink_cages is None:
        return switch.modes[speed_gbps]
    return switch.uplink_cages.modes[speed_gbps]


def port_lanes(switch: Switch, layout: PortLayout) -> list[list[int]]:
    """Per port of a switch layout (panel order), its 0-based SerDes lanes on the switch: each
    port's cage split as its own speed's mode says, so a layout of two speeds (400G cages of
    2 x 4 lanes beside 800G cages of 1 x 8) gets each port's own lanes."""
    out = []
    for port in layout.ports:
        mode = mode_of(switch, port.speed_gbps)
        per_port = (switch.serdes_per_cage or mode.ports_per_cage) // mode.ports_per_cage
        first = _port_fields(switch, mode.ports_per_cage, int(port.cage), port.lane, 0)["serdes0"]
        out.append(list(range(first, first + per_port)))
    return out


def nos_port_names(switch: Switch, layout: PortLayout, nos: str) -> tuple[str, ...]:
    """Port names of a switch layout as the NOS spells them, in panel order: the switch model's
    format under the NOS's naming key, or the panel name of the port's speed where the model has
    none; each port by its own speed's mode (SONiC Ethernet0 for an 800G cage 1, Ethernet8 and
    Ethernet12 for the two 400G ports of cage 2)."""
    key = descriptor(nos).port_names
    out = []
    for index, port in enumerate(layout.ports, start=1):
        mode = mode_of(switch, port.speed_gbps)
        fmt = switch.nos_port_names.get(key, mode.name)
        out.append(fmt.format(**_port_fields(switch, mode.ports_per_cage, int(port.cage), port.lane, index)))
    return tuple(out)


def panel_layout(switch: Switch, host_gbps: int, uplink_gbps: int) -> PortLayout:
    """A switch with an uplink cage group (a management switch: 48 x 1G RJ45, then 4 x 100G
    QSFP28): every host cage at `host_gbps`, then every uplink cage at `uplink_gbps`, its
    cages numbered on (49-52), in panel order."""
    group = switch.uplink_cages
    assert group is not None  # called only for a switch with an uplink cage group
    ports = list(switch_layout(switch, host_gbps, grouped=False).ports)
    mode = group.modes[uplink_gbps]
    for cage in range(switch.cages + 1, switch.cages + group.cages + 1):
        for lane in range(1, mode.ports_per_cage + 1):
            name = mode.name.format(**_port_fields(switch, mode.ports_per_cage, cage, lane, len(ports) + 1))
            ports.append(Port(name, str(cage), lane, uplink_gbps, group.cage.form_factor, group.cage.top, group.cage.gbps,
                              group.cage.serdes_gbps))
    return PortLayout(f"{switch.id}@{host_gbps}+{uplink_gbps}", tuple(ports))


def first_port_at(switch: Switch, speed_gbps: int) -> int:
    """0-based index of the first port of a switch's layout at `speed_gbps`: past every host
    port for the speed of an uplink cage group, else 0."""
    group = switch.uplink_cages
    if group is not None and speed_gbps in group.modes and speed_gbps not in switch.modes:
        return switch.radix(min(switch.modes))
    return 0


def switch_layout(switch: Switch, speed_gbps: int, grouped: bool = True) -> PortLayout:
    """Every port of a switch model at one speed, in panel order; a switch with an uplink cage
    group gets its whole panel (host ports at their lowest speed, uplinks at theirs) unless
    `grouped` is False."""
    group = switch.uplink_cages
    if grouped and group is not None:
        if speed_gbps in group.modes:
            return panel_layout(switch, min(switch.modes), speed_gbps)
        return panel_layout(switch, speed_gbps, min(group.modes))
    mode = switch.modes[speed_gbps]
    ports: list[Port] = []
    for cage in range(1, switch.cages + 1):
        for lane in range(1, mode.ports_per_cage + 1):
            name = mode.name.format(**_port_fields(switch, mode.ports_per_cage, cage, lane, len(ports) + 1))
            ports.append(Port(name, str(cage), lane, speed_gbps, switch.cage.form_factor, switch.cage.top, switch.cage.gbps,
                              switch.cage.serdes_gbps))
    return PortLayout(f"{switch.id}@{speed_gbps}", tuple(ports))


def leaf_layout(switch: Switch, down_gbps: int, up_gbps: int, down_cages: int) -> PortLayout:
    """A Clos leaf's ports: at one speed the switch's layout at that speed; at two, the first
    `down_cages` cages split for the downlink speed and the rest for the uplink speed
    (sizing.LeafPorts decides how many)."""
    if down_gbps == up_gbps:
        return switch_layout(switch, down_gbps)
    if switch.uplink_cages is not None and up_gbps in switch.uplink_cages.modes:
        return panel_layout(switch, down_gbps, up_gbps)
    return mixed_switch_layout(switch, [(down_cages, down_gbps), (switch.cages - down_cages, up_gbps)])


def server_layout(server_id: str, group_name: str, group: NicGroup) -> PortLayout:
    ports = tuple(
        Port(p.name, p.cage, p.lane, group.speed_gbps, group.cage.form_factor, group.cage.top, group.cage.gbps,
             group.cage.serdes_gbps)
        for p in group.ports
    )
    return PortLayout(f"{server_id}/{group_name}", ports)


def endpoint_layout(role: str, ports: int, speed_gbps: int, form_factor: str, serdes_gbps: int) -> PortLayout:
    # Fabric managers and storage nodes carry single-port HCAs (e.g. ConnectX-7 OSFP,
    # flat top) unless the spec says QSFP112 (BlueField-3 class), at the signalling of the
    # switch they attach to (`serdes_gbps`: an HCA on an XDR fabric is an XDR one).
    # The id names everything that differs between endpoints of one role: a compute fabric's
    # 2-port `vast` and a storage fabric's 1-port `vast` shared one layout before, and the
    # second's ports were cut to the first's count (the common 1-port OSFP keeps `role@speed`).
    layout_id = (f"{role}@{speed_gbps}" + (f"x{ports}" if ports != 1 else "")
                 + (f"-{form_factor}" if form_factor != "OSFP" else "") + (f"-s{serdes_gbps}" if serdes_gbps != 100 else ""))
    return PortLayout(
        layout_id,
        tuple(Port(f"p{i}", f"p{i}", 1, speed_gbps, form_factor, "flat", speed_gbps, serdes_gbps) for i in range(1, ports + 1)),
    )


def mixed_switch_layout(switch: Switch, groups: list[tuple[int, int]]) -> PortLayout:
    """A switch whose cages run at different speeds, e.g. a 51.2T ToR with host ports at
    200G and uplinks at 400G. `groups`: (cages, speed_gbps) in panel order from cage 1;
    each cage splits as that speed's mode says (64 x 800G OSFP: 4 x 200G or 2 x 400G per
    cage). Cages left over after the groups run at the last group's speed."""
    speeds: list[int] = []
    for cages, speed in groups:
        speeds += [speed] * cages
    if len(speeds) > switch.cages:
        raise ValueError(f"{switch.id}: {len(speeds)} cages asked for, the switch has {switch.cages}")
    speeds += [groups[-1][1]] * (switch.cages - len(speeds))
    ports: list[Port] = []
    for cage, speed in enumerate(speeds, start=1):
        mode = switch.modes[speed]
        for lane in range(1, mode.ports_per_cage + 1):
            name = mode.name.format(**_port_fields(switch, mode.ports_per_cage, cage, lane, len(ports) + 1))
            ports.append(Port(name, str(cage), lane, speed, switch.cage.form_factor, switch.cage.top, switch.cage.gbps,
                              switch.cage.serdes_gbps))
    return PortLayout(f"{switch.id}@" + "+".join(f"{n}x{s}" for n, s in groups), tuple(ports))
