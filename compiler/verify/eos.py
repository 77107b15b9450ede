"""Arista EOS `show lldp neighbors detail | json`.

Format (EOS eAPI JSON as captured in arista-netdevops-community/anta's unit-test data
for VerifyLLDPNeighbors, and in other public eAPI fixtures): `lldpNeighbors` keyed by
local interface, each with a `lldpNeighborInfo` list; an entry has `systemName` and
`neighborInterfaceInfo` with `interfaceIdType` (interfaceName, macAddress, local),
`interfaceId` (quoted, e.g. "\"Ethernet1\""), `interfaceId_v2` (unquoted, newer EOS)
and `interfaceDescription`. A sample following it exactly is in tests/data/verify/lldp/eos/.
"""

from __future__ import annotations

from .discovery import Discovery
from .lldp import neighbour, reporter

FORMAT = "eos-lldp-json"


def looks_like(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("lldpNeighbors"), dict)


def parse(data: dict, file: str, device: str) -> Discovery:
    disc = Discovery(formats=[FORMAT], files=[file])
    local = reporter(disc, device, file)
    for ifname, body in data["lldpNeighbors"].items():
        entries = body if isinstance(body, list) else [body]
        for entry in entries:
            infos = (entry or {}).get("lldpNeighborInfo") or []
            for info in infos if isinstance(infos, list) else [infos]:
                nii = info.get("neighborInterfaceInfo") or {}
                port_id = nii.get("interfaceId_v2") or str(nii.get("interfaceId") or "").strip('"') or None
                neighbour(disc, local, ifname, info.get("systemName") or "", port_id,
                          nii.get("interfaceDescription") or None,
                          nii.get("interfaceIdType") in ("interfaceName", "local", None), f"{file}: {ifname}")
    return disc
