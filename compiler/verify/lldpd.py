"""`lldpcli -f json show neighbors details` (lldpd, the LLDP daemon of SONiC, Cumulus
Linux and Linux hosts).

Format: lldpd 1.0.16's JSON writer, captured from the real daemon here (two network
namespaces, and the twin: tests/data/verify/lldp/lldpcli/). `lldp.interface` is an object
keyed by interface for one neighbour and a list of such one-key objects for several;
`chassis` is keyed by the neighbour's system name (an object with `id` when it sends
none); `port.id` has a `type` (ifname, mac, local) and `value`, `port.descr` the text.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, SpecInvalid
from .discovery import Discovery
from .lldp import neighbour, reporter

FORMAT = "lldpcli-json"


def looks_like(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("lldp"), (dict, list))


def _entries(interfaces):
    if isinstance(interfaces, dict):
        interfaces = [interfaces]
    for item in interfaces or ():
        if isinstance(item, dict):
            yield from item.items()


def parse(data, file: str, device: str) -> Discovery:
    disc = Discovery(formats=[FORMAT], files=[file])
    local = reporter(disc, device, file)
    lldp = data["lldp"]
    if isinstance(lldp, list):  # json0 nests one level deeper; accept it too
        lldp = lldp[0] if lldp else {}
    for ifname, body in _entries(lldp.get("interface")):
        if not isinstance(body, dict):
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", f"interface {ifname}: not an object", file=file,
                                          hint="give `lldpcli -f json show neighbors details` unchanged")])
        chassis = body.get("chassis") or {}
        if "id" in chassis:  # no system name sent: only the chassis id
            name = ""
        else:
            name = next(iter(chassis), "")
        port = body.get("port") or {}
        pid = port.get("id") or {}
        if isinstance(pid, list):
            pid = pid[0] if pid else {}
        neighbour(disc, local, ifname, name, pid.get("value"), port.get("descr"), pid.get("type") in ("ifname", "local"),
                  f"{file}: {ifname}")
    return disc

