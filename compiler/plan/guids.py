"""Planned InfiniBand GUIDs: 64-bit ids derived from a device's place in the design.

A GUID is built from structure, never from names' hashes or iteration order, so growing
a design (4 SU -> 8 SU) keeps every existing GUID:

    bits 63..56  0x02            locally administered EUI-64: never a factory GUID
    bits 55..52  kind            1 server, 2 extra endpoint, 3 leaf, 4 spine, 5 core, 6 router
    bits 51..32  major (20 bits) SU (servers, leaves), pod (spines), group (dragonfly), endpoint role
                                 (1-based, spec order), 0xFFFFF for management leaves (outside
                                 every SU and pod), 0 where there is none
    bits 31..8   minor (24 bits) the device's 1-based index within that group
    bits  7..0   slot            switches 0; a NIC port is its own single-port CA
                                 (as ConnectX ports are to the subnet manager) with
                                 node GUID slot 2*i and port GUID 2*i + 1

The fields sit on hex digits, so a GUID reads as its place (in hex): 0x02 3 00002 000005 00
is leaf 5 of SU 2; 0x02 1 00002 000011 06 the CA of the fourth NIC port of server 17 of SU 2.

Real hardware has factory GUIDs. These stand in for them where a GUID is needed before
the hardware exists (the simulated fabric, OpenSM's GUID files); cabling validation on
the real fabric goes by names (the ibdiagnet topology file), not by these GUIDs.
Cost: O(devices + NIC ports) with numpy; a million-GPU plan takes well under a second.
"""

from __future__ import annotations

import numpy as np

from .columns import distinct
from .model import Plan, is_management_leaf

PREFIX = 0x02
KIND = {"server": 1, "endpoint": 2, "leaf": 3, "spine": 4, "core": 5, "router": 6}
MAJOR_MAX, MINOR_MAX = (1 << 20) - 1, (1 << 24) - 1
MAX_CA_PORTS = 128  # slot is 8 bits: 2 per NIC port


def _kind(role: str) -> int:
    return KIND.get(role, KIND["endpoint"])


def device_guids(plan: Plan) -> np.ndarray:
    """Per device: its node GUID (uint64); for servers and endpoints, the base of their CAs."""
    endpoint_roles = [r for r in plan.roles() if r not in KIND]
    role_major = {r: i + 1 for i, r in enumerate(endpoint_roles)}
    kind = np.empty(len(plan.devices), dtype=np.uint64)
    major = np.empty(len(plan.devices), dtype=np.uint64)
    minor = np.empty(len(plan.devices), dtype=np.uint64)
    for i, d in enumerate(plan.devices):
        k = _kind(d.role)
        if k == KIND["endpoint"]:
            m = role_major[d.role]
        elif k in (KIND["spine"], KIND["router"]):
            m = d.pod or 0  # pod (Clos) or group (dragonfly)
        elif k == KIND["core"]:
            m = 0
        elif is_management_leaf(d):
            m = MAJOR_MAX  # beside leaf-001 of a fat-tree without SUs, which has no SU or pod either
        else:
            m = d.su or d.pod or 0  # SU; a dragonfly+ group's leaves by group
        if m > MAJOR_MAX or d.index > MINOR_MAX:
            raise ValueError(f"{d.name}: group {m} or index {d.index} does not fit the GUID fields (20 and 24 bits)")
        kind[i], major[i], minor[i] = k, m, d.index
    guids = (np.uint64(PREFIX) << np.uint64(56)) | (kind << np.uint64(52)) | (major << np.uint64(32)) | (minor << np.uint64(8))
    if distinct(guids).size != guids.size:  # two devices in the same structural place: a builder bug
        raise AssertionError("planned GUIDs are not unique")
    return guids


def ca_node_guid(device_guid: np.ndarray | int, port_index: np.ndarray | int):
    """Node GUID of the single-port CA behind 0-based NIC port `port_index` of a server or endpoint."""
    return np.asarray(device_guid, dtype=np.uint64) + np.uint64(2) * np.asarray(port_index, dtype=np.uint64)


def ca_port_guid(device_guid: np.ndarray | int, port_index: np.ndarray | int):
    """Port GUID of that CA's only port (ibsim and ConnectX: node GUID + port number)."""
    return ca_node_guid(device_guid, port_index) + np.uint64(1)
