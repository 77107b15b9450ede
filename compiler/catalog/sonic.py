"""SONiC's names for a switch model (DEVICE_METADATA platform and hwsku) and for its ports
(PORT alias and index), from the model's catalog facts (switches.yaml `sonic:`, as the plan
carries them: hwsku keys are text).

An hwsku is the port split SONiC boots with (sonic-buildimage device/<vendor>/<platform>/
<hwsku>/port_config.ini: every port's lanes, alias, index and speed), so a switch gets one
only when every port it uses runs one speed and the catalog names the hwsku of that split.
Elsewhere config_db.json leaves the field out and the box's own value stands (SONiC writes
platform and hwsku at first boot: ONIE's platform, that platform's `default_sku` file).
"""

from __future__ import annotations

from typing import NamedTuple


def hwsku(sonic: dict | None, speeds_gbps) -> str | None:
    """The hwsku for a switch whose ports in use run `speeds_gbps`; None for several speeds,
    or where no hwsku of that speed's split is evidenced."""
    speeds = set(speeds_gbps)
    if not sonic or len(speeds) != 1:
        return None
    return sonic["hwsku"].get(str(speeds.pop()))


class SonicPorts(NamedTuple):
    """PORT alias and index of every port of a switch layout, in panel order."""
    alias: list[str]
    # The port's cage, from 1: port_config.ini's index, by which xcvrd and sfputil find a port's
    # transceiver, so every port of a split cage has the same one (O128: Ethernet0 and Ethernet4 are 1).
    index: list[int]


def sonic_ports(port_alias: str | None, ports) -> SonicPorts:
    """`ports`: a switch layout's ports (cage label, 1-based lane in the cage, panel name).
    `port_alias`: the platform's alias format (switches.yaml sonic.port_alias), None for the panel
    name. The breakout letter follows the port's place in its cage; a cage of one port has none."""
    per_cage: dict[str, int] = {}
    for p in ports:
        per_cage[p.cage] = per_cage.get(p.cage, 0) + 1
    index = [int(p.cage) for p in ports]
    if port_alias is None:
        return SonicPorts([p.name for p in ports], index)
    alias = [port_alias.format(cage=c, breakout=chr(ord("a") + p.lane - 1) if per_cage[p.cage] > 1 else "")
             for p, c in zip(ports, index)]
    return SonicPorts(alias, index)
