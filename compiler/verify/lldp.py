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
    return "lldp:" + system_name


def reporter(disc: Discovery, device: str, source: str) -> str:
    key = node_key(device)
    disc.node(key, device, "system", source).reported = True
    return key


def neighbour(disc: Discovery, local_key: str, local_port: str, system_name: str, port_id: str | None,
              port_descr: str | None, id_is_name: bool, source: str, speed_gbps: float | None = None) -> None:
    if not system_name:
        # cannot be placed (e.g. a NIC's firmware agent beside the host's own lldpd): unverified
        # unless the port shows a neighbour that can be (verify.unverified)
        what = f"a neighbour that sends no system name (port id {port_id or port_descr or 'none'})"
        disc.unreadable.append((local_key, (local_port,), what, source))
        return
    key = "lldp:" + system_name
    if key not in disc.nodes:
        disc.node(key, system_name, "system", source)
    # one small tuple per row, spellings in the order they are tried (a 16k-server fabric has ~650k rows)
    if id_is_name:
        spellings = (port_id,) if port_descr in (None, port_id) else ((port_id, port_descr) if port_id else (port_descr,))
    else:
        spellings = (port_descr, port_id) if port_descr and port_id else ((port_descr or port_id),)
    disc.links.append((local_key, (local_port,), key, spellings if spellings[0] else None, speed_gbps, None, source))
