"""What every LLDP neighbour table has in common, whatever prints it: on the reporting
switch's port, a neighbour system name and a port (id and description).

The reporting device is the input file's name (`leaf-001.json`, `leaf-001.txt`): none
of these commands prints the local hostname. Neighbour port spellings are tried id
first when the id is an interface name, then the description (lldpd on a Linux host
sends its MAC as the port id and the interface name as the description).
"""

from __future__ import annotations

from .discovery import Discovery


def node_key(system_name: str) -> str:
    return f"lldp:{system_name}"


def reporter(disc: Discovery, device: str, source: str) -> str:
    key = node_key(device)
    disc.node(key, device, "system", source).reported = True
    return key


def neighbour(disc: Discovery, local_key: str, local_port: str, system_name: str, port_id: str | None,
              port_descr: str | None, id_is_name: bool, source: str, speed_gbps: float | None = None) -> None:
    if not system_name:
        return  # a neighbour without a system name cannot be placed (e.g. a NIC's firmware agent)
    key = node_key(system_name)
    disc.node(key, system_name, "system", source)
    spellings = tuple(dict.fromkeys(s for s in ((port_id if id_is_name else None), port_descr, port_id) if s))
    disc.link(local_key, (local_port,), key, spellings or None, source, speed_gbps, None)
