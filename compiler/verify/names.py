"""How the plan names what discovery tools print: cable ids, devices and every spelling
of a port (front panel, each NOS, InfiniBand port number, the host's RDMA device).

The one place `verify` looks names up, so that when naming moves (plan/naming.py) or
NOS descriptors become a registry, one import here changes:

- `cable_id_list(plan)`: every link's cable id (the label on the cable);
- `port_spellings(plan)`: per port layout, each spelling -> 0-based port index;
- `ib_port_numbers(plan)`: per switch layout, IB port number -> port index.

Spellings come from the catalog's port naming (compiler/catalog/data/switches.yaml:
`modes.<speed>.name` is the front panel and the NOS that keeps it, `nos_port_names`
the others, expanded by `expand.ports.nos_port_names`; SONiC's PORT alias, which its LLDP sends
as port id, from the plan's facts, `catalog.sonic.sonic_ports`) and from the servers' NIC ports
(catalog.nics: `nic_groups.*.ports[].device`, the mlx5 name a host's node description carries).
Cost: one pass per layout (a few hundred ports each), independent of the plan's size.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from ..catalog.nics import nic_devices
from ..plan.model import Plan
from ..plan.views import cable_ids, floor_port_names
from ..catalog import load_catalog
from ..catalog.sonic import sonic_ports
from ..expand.ports import nos_port_names

_MIXED = re.compile(r"^(?P<switch>[^@]+)@(?P<groups>\d+x\d+(?:\+\d+x\d+)*)$")
_UNIFORM = re.compile(r"^(?P<switch>[^@]+)@(?P<speed>\d+)$")


def cable_id_list(plan: Plan) -> list[str]:
    return plan.memo("cable_ids", cable_ids)


@lru_cache(maxsize=1)
def _catalog():
    return load_catalog()


def _switch_of(layout_id: str):
    """The catalog switch behind a switch layout id (`sn5600@400`, `sn5600@32x200+32x400`)."""
    m = _UNIFORM.match(layout_id) or _MIXED.match(layout_id)
    if not m:
        return None
    return _catalog().switches.get(m.group("switch"))


def _nos_names(switch, layout) -> dict[str, list[str]]:
    """Per NOS the catalog names this switch for, the name of every port of `layout` (a
    layout at a speed the model lacks, e.g. from another catalog's plan.json, has none)."""
    if any(p.speed_gbps not in switch.modes for p in layout.ports):
        return {}
    return {nos: list(nos_port_names(switch, layout, nos)) for nos in sorted({*switch.nos_port_names, *switch.nos, "frr"})}


def port_spellings(plan: Plan) -> dict[str, dict[str, int]]:
    """Per layout id: every spelling of every port (exact and lower-case) -> port index.
    A spelling two ports share is dropped: it names neither."""
    return plan.memo("verify_port_spellings", _port_spellings)


def _port_spellings(plan: Plan) -> dict[str, dict[str, int]]:
    routing_names: dict[str, list[list[str]]] = {}
    if plan.routing is not None:  # built from a spec: the names the configs were written with
        for by_layout in plan.routing.port_names.values():
            for lid, names in by_layout.items():
                routing_names.setdefault(lid, []).append(list(names))
    out: dict[str, dict[str, int]] = {}
    for lid, layout in plan.layouts.items():
        lists: list[Sequence[str | None]] = [[p.name for p in layout.ports]]
        switch = _switch_of(lid)
        if switch is not None:
            lists += list(_nos_names(switch, layout).values())
            rec = plan.view.facts.model(switch.id)
            alias = rec.sonic_port_alias if rec is not None else None
            if alias:
                lists.append(sonic_ports(alias, layout.ports).alias)
        else:
            devices = nic_devices(lid)
            if devices and len(devices) == len(layout.ports):
                lists.append(devices)
        lists += routing_names.get(lid, [])
        table: dict[str, int] = {}
        clash: set[str] = set()
        for spelled in lists:
            for i, name in enumerate(spelled):
                if not name:
                    continue
                for key in {name, name.lower()}:
                    if table.get(key, i) != i:
                        clash.add(key)
                    table[key] = i
        for key in clash:
            del table[key]
        out[lid] = table
    return out


def ib_port_numbers(plan: Plan) -> dict[str, dict[int, int]]:
    """Per switch layout of an InfiniBand fabric: IB port number (what ibnetdiscover
    prints) -> port index, where the catalog establishes the numbering
    (`infiniband.ports_per_cage`); empty where it does not."""
    out: dict[str, dict[int, int]] = {}
    for d in plan.devices:
        if d.tier == 0 or d.layout in out:
            continue
        rec = plan.view.facts.model(d.model)
        numbers = rec.ib_port_numbers(plan.layouts[d.layout].ports) if rec is not None else None
        out[d.layout] = {number: i for i, number in enumerate(numbers or ())}
    return out


def floor_name(plan: Plan, device: int, port: int) -> tuple[str, str | None]:
    """A port as the cabling sheet and labels name it (its NOS's name, plan.views.floor_port_names),
    and the cage number printed on the panel where that name is not the panel's own, else None."""
    floor = plan.memo("floor_port_names", floor_port_names)
    p = plan.layouts[plan.devices[device].layout].ports[port]
    name = floor[plan.devices[device].port_offset + port]
    return name, (p.cage if name != p.name else None)
