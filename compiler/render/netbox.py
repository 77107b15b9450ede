"""netbox/*.csv: bulk-import files for NetBox (formats.md 6.1, rules from NetBox's
dcim/forms/bulk_import.py and choices.py at 4.x).

Import order: sites, racks, devices, interfaces, cables. Related objects are named,
not numbered; `device_type` is the device type's model; interface `speed` is in Kbps;
a cable `length` always comes with `length_unit`; `color` is 6 hex digits without '#'.
Version-sensitive columns (side_x_site, profile, bundle) are left out so older
servers take the files. Interfaces: the logical (breakout) ports in use; device types
should not define them too (NetBox auto-creates a type's interfaces).
"""

from __future__ import annotations

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.views import fabric_protocol
from ..plan.views import cable_ids, cable_labels, port_table
from .csvtext import csv_field, csv_text
from .writer import OutputDir

CABLE_TYPE = {"mmf": "mmf-om4", "smf": "smf-os2", "dac": "dac-passive", "lacc": "dac-active", "aec": "dac-active", "aoc": "aoc"}
COLOR = {"aqua": "00ffff", "yellow": "ffeb3b", "black": "000000"}


def interface_type(protocol: str, speed_gbps: int, form_factor: str) -> str:
    if protocol == "infiniband":
        return {200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}.get(speed_gbps, "other")
    suffix = {"OSFP": "osfp", "QSFP-DD": "qsfpdd", "QSFP112": "qsfp112"}.get(form_factor)
    return f"{speed_gbps}gbase-x-{suffix}" if suffix and speed_gbps in (100, 200, 400, 800) else "other"


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    site = plan.name
    phys = plan.physical
    out.write_text("netbox/sites.csv", csv_text(["name", "slug", "status"], [[site, site, "planned"]]))
    if phys is not None:
        out.write_text("netbox/racks.csv", csv_text(
            ["site", "name", "status", "width", "u_height", "outer_depth", "outer_unit"],
            [[site, r.name, "planned", 19, r.height_u, phys.depth_mm, "mm"] for r in phys.racks]))
    models = plan.facts["models"]
    # Direct networks (TPU ICI) have no switch: their ports are NetBox type "other".
    protocol = fabric_protocol(plan) or "other"
    dev_rows = []
    for i, d in enumerate(plan.devices):
        rec = models[d.model]
        manufacturer = rec["vendor"] or "customer"
        device_type = rec["model"] if rec["kind"] != "endpoint" else d.role
        row = [d.name, d.role, manufacturer, device_type, site, "", "", "", "planned"]
        if phys is not None:
            row[5:8] = [phys.racks[int(phys.dev_rack[i])].name, int(phys.dev_u[i]), "front"]
        dev_rows.append(row)
    out.write_text("netbox/devices.csv", csv_text(
        ["name", "role", "manufacturer", "device_type", "site", "rack", "position", "face", "status"], dev_rows))

    links = plan.links
    ports = plan.memo("port_table", port_table)
    offsets = plan.port_offsets()
    dev_names = np.array([csv_field(d.name) for d in plan.devices], dtype=object)
    # Per layout, the pre-joined "name,type,speed" of each port.
    port_piece = {}
    for lid, lay in plan.layouts.items():
        port_piece[lid] = [f"{csv_field(p.name)},{interface_type(protocol, p.speed_gbps, p.form_factor)},{p.speed_gbps * 1_000_000}"
                           for p in lay.ports]
    ends = np.concatenate([offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port])
    used = np.zeros(plan.port_count(), dtype=bool)
    used[ends] = True
    rows = []
    for i, d in enumerate(plan.devices):
        lay = port_piece[d.layout]
        for k in np.nonzero(used[d.port_offset:d.port_offset + len(lay)])[0].tolist():
            rows.append(f"{dev_names[i]},{lay[k]}\n")
    out.write_text("netbox/interfaces.csv", "device,name,type,speed\n" + "".join(rows))

    names = ports["name"]
    media = [plan.facts["media"][m] for m in plan.media]
    kind_piece = np.array([f"{CABLE_TYPE.get(m['fiber'], '')},planned" for m in media], dtype=object)[links.media]
    color = np.array([COLOR.get(m["jacket"], "") for m in media], dtype=object)[links.media]
    label_a, _ = plan.memo("cable_labels", cable_labels)
    ids = plan.memo("cable_ids", cable_ids)
    if phys is not None and phys.order_m is not None:
        lengths = [f"{x:g},m" if x == x else "," for x in phys.order_m.tolist()]
    else:
        lengths = [","] * len(links)
    a_name = names[offsets[links.a_dev] + links.a_port]
    b_name = names[offsets[links.b_dev] + links.b_port]
    body = "".join(
        f"{da},dcim.interface,{csv_field(pa)},{db},dcim.interface,{csv_field(pb)},{k},{csv_field(cid)},{c},{ln},{csv_field(lab)}\n"
        for da, pa, db, pb, k, cid, c, ln, lab in zip(dev_names[links.a_dev].tolist(), a_name.tolist(),
                                                      dev_names[links.b_dev].tolist(), b_name.tolist(), kind_piece.tolist(),
                                                      ids, color.tolist(), lengths, label_a))
    out.write_text("netbox/cables.csv", "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,"
                                        "type,status,label,color,length,length_unit,description\n" + body)

