"""Several fabrics in one plan: which fabric a device or link belongs to, and a view of
the plan that holds one fabric only.

A plan with extra fabrics (spec `fabrics:`) lists every server once, its ports being the
compute NIC group's followed by each extra fabric's group (recorded in
`design["fabrics"][name]["server_ports"]`); switches carry `Device.fabric`; a link
belongs to the fabric of its upper end (end b is always a switch of that fabric).
The compute devices and links come first, so the compute view keeps every index.
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from .bom import bill_of_materials
from .model import Device, LinkTable, Plan, PortLayout
from .physical import Physical

COMPUTE = "compute"


def fabric_names(plan: Plan) -> list[str]:
    """compute first, then the extra fabrics in spec order; ["compute"] for a single fabric."""
    return list(plan.design.get("fabrics") or {COMPUTE: None})


def is_multi_fabric(plan: Plan) -> bool:
    return len(fabric_names(plan)) > 1


def link_fabric(plan: Plan) -> np.ndarray:
    """Per link, its fabric's index in fabric_names(plan)."""
    names = fabric_names(plan)
    of_device = np.fromiter((names.index(d.fabric) for d in plan.devices), dtype=np.int64, count=len(plan.devices))
    return of_device[plan.links.b_dev]


def fabric_view(plan: Plan, name: str = COMPUTE) -> Plan:
    """The plan of one fabric: the servers (with only that fabric's ports for compute, all
    ports otherwise, so port indices stay) plus that fabric's devices and links. The plan
    itself when it has one fabric. Memoised: every output shares one view per fabric."""
    if not is_multi_fabric(plan):
        return plan
    return plan.memo(f"fabric_view:{name}", lambda p: _view(p, name))


def _view(plan: Plan, name: str) -> Plan:
    rec = plan.design["fabrics"][name]
    keep = [i for i, d in enumerate(plan.devices) if d.fabric == name or d.role == "server"]
    remap = np.full(len(plan.devices), -1, dtype=np.int64)
    remap[keep] = np.arange(len(keep))
    layouts = dict(plan.layouts)
    devices = []
    offset = 0
    fields = attrgetter(*Device.__dataclass_fields__)  # a plain copy; dataclasses.replace is 2x slower
    for i in keep:
        d = Device(*fields(plan.devices[i]))
        if d.role == "server" and name == COMPUTE:
            first, end = rec["server_ports"]
            lid = d.layout.split("+")[0]
            if lid not in layouts:
                layouts[lid] = PortLayout(lid, plan.layouts[d.layout].ports[first:end])
            d.layout = lid
        d.port_offset = offset
        offset += len(layouts[d.layout])
        devices.append(d)
    used = {d.layout for d in devices}
    layouts = {k: v for k, v in layouts.items() if k in used}
    sel = link_fabric(plan) == fabric_names(plan).index(name)
    lt = plan.links
    links = LinkTable(remap[lt.a_dev[sel]].astype(np.int32), lt.a_port[sel], remap[lt.b_dev[sel]].astype(np.int32),
                      lt.b_port[sel], lt.kind[sel], lt.media[sel], lt.speed_gbps[sel])
    design = {k: v for k, v in plan.design.items() if k != "fabrics"}
    if name != COMPUTE:
        design.update({k: v for k, v in rec.items() if k not in ("server_ports", "nic_group")})
        design["fabric"] = name
    kinds, media = plan.link_kinds, plan.media
    if name == COMPUTE:  # the compute fabric's kinds and media are a prefix of the plan's: indices hold
        kinds = [k for k in kinds if ":" not in k]
        media = media[:int(links.media.max()) + 1] if len(links) else []
    view = Plan(name=plan.name, devices=devices, layouts=layouts, links=links, link_kinds=kinds, media=media, design=design, notes=list(plan.notes), facts=plan.facts,
                requirements=plan.requirements if name == COMPUTE else {}, analysis=plan.analysis,
                physical=_physical_view(plan.physical, np.asarray(keep, dtype=np.int64), sel), routing=plan.routing if name == COMPUTE else plan.fabric_routing.get(name),
                scale_up=plan.scale_up)
    return view


def _physical_view(phys: Physical | None, keep: np.ndarray, sel: np.ndarray) -> Physical | None:
    """The physical side of a fabric's view: its devices' places and its links' lengths.
    Every rack stays (same indices); what a rack holds and draws is counted over every
    fabric (Physical.whole), and the physical check and the rack outputs read the whole plan."""
    if phys is None:
        return None
    return Physical(phys.racks, phys.dev_rack[keep], phys.dev_u[keep], phys.dev_height_u[keep], phys.dev_power_w[keep],
                    phys.rack_width_m, phys.row_pitch_m, phys.depth_mm,
                    length_m=None if phys.length_m is None else phys.length_m[sel],
                    order_m=None if phys.order_m is None else phys.order_m[sel], model=phys.model, whole=phys)


def fabric_bom(plan: Plan) -> list[tuple[str, object]]:
    """(fabric, BomLine) for every fabric: the compute fabric's full bill (servers, NICs,
    switches, optics, cables), then each extra fabric's switches, optics and cables
    (its servers are the compute fabric's, counted once)."""
    out = []
    for name in fabric_names(plan):
        view = fabric_view(plan, name)
        for line in view.memo("bom", bill_of_materials):
            if name == COMPUTE or line.category not in ("server", "nic"):
                out.append((name, line))
    return out
