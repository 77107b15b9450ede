"""NVIDIA Cumulus Linux NVUE `nv show interface --output json` (also NVUE's REST
`GET /nvue_v1/interface`).

Format: an object keyed by interface; each has `type` (swp, eth, loopback, bond, ...),
`link` (`speed` such as "400G", `state`) and, where LLDP sees a neighbour,
`lldp.neighbor` keyed by the neighbour's system name with `port.name` (the id),
`port.type` (ifname, mac) and `port.description`. Taken from the NVUE command
reference (nvue-reference/Show-Commands/LLDP: `[neighbor]` under `lldp`) and the shape
of a captured `/interface` response in public cable-validation test fixtures; a sample
following it exactly is in tests/data/verify/lldp/nvue/.
The link speed is the switch's own view of its port, so this input can show `speed`.
"""

from __future__ import annotations

import re

from .discovery import Discovery
from .lldp import neighbour, reporter

FORMAT = "nvue-interface-json"
_SPEED = re.compile(r"^(\d+(?:\.\d+)?)([MGT])$")
_UNIT_GBPS = {"M": 0.001, "G": 1, "T": 1000}


def looks_like(data) -> bool:
    if not isinstance(data, dict) or not data:
        return False
    bodies = [v for v in data.values() if isinstance(v, dict)]
    return bool(bodies) and all(("type" in b or "link" in b or "lldp" in b) for b in bodies[:20])


def speed_gbps(text) -> float | None:
    m = _SPEED.match(str(text or ""))
    return float(m.group(1)) * _UNIT_GBPS[m.group(2)] if m else None


def parse(data: dict, file: str, device: str) -> Discovery:
    disc = Discovery(formats=[FORMAT], files=[file])
    local = reporter(disc, device, file)
    for ifname, body in data.items():
        if not isinstance(body, dict) or body.get("type") not in (None, "swp"):
            continue
        link = body.get("link") or {}
        up = "up" in (link.get("state") or {})
        for system, info in ((body.get("lldp") or {}).get("neighbor") or {}).items():
            port = (info or {}).get("port") or {}
            neighbour(disc, local, ifname, system, port.get("name"), port.get("description") or None,
                      port.get("type") in ("ifname", "local", None), f"{file}: {ifname}",
                      speed_gbps(link.get("speed")) if up else None)
    return disc
