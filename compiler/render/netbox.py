"""netbox/: the design as NetBox's own bulk import takes it (dcim/forms/bulk_import.py), every fabric
of the plan, imported in the order netbox/README.md gives: sites, racks, manufacturers,
device roles, device types (YAML, with an interface template per port, so each device's
interfaces are created with it), devices, cables. Manufacturers, roles and types are shared
by designs on the same hardware, so each is its own file (a NetBox that has one refuses
that file, the rest import).

Rules from NetBox's dcim/forms/bulk_import.py, object_import.py and choices.py at the
release the tests pin (tests/data/netbox/): related objects are named, not numbered;
`device_type` is the device type's model; device names are unique per site, so the site is
the design's name and every cable names the site of both ends (side_a_site, side_b_site)
and two designs live in one NetBox; interface types are NetBox's choices (INTERFACE_TYPES:
a speed and cage NetBox has no type for takes the closest one, and the folder's README says
which); a cable `length` always comes with `length_unit`; `color` is 6 hex digits.
Cables are the ones pulled on the floor, as in cabling.csv (board traces are not).

Headers, row layouts and the YAML are spelled in templates/netbox/; each row macro is
rendered once and filled in per row here (render/templates.py row_format).
"""

from __future__ import annotations

import functools
import itertools
import re

import numpy as np

from ..check import CheckResults
from ..plan.fabrics import CORD_MEDIUM, management_cord_labels, management_cords
from ..plan.model import Plan
from ..plan.columns import Coded, Piece, concat, text_chunks
from ..plan.views import cable_ends, cable_id_array, label_pieces, link_ends, nos_port_table
from .csvtext import csv_column, csv_field
from .templates import environment, render_template, row_format, row_pieces
from .writer import OutputDir

CABLE_TYPE = {"mmf": "mmf-om4", "smf": "smf-os2", "dac": "dac-passive", "lacc": "dac-active", "aec": "dac-active",
              "aoc": "aoc", "cat6": "cat6"}
COLOR = {"aqua": "00ffff", "yellow": "ffeb3b", "black": "000000", "blue": "2196f3"}  # NetBox ColorChoices hex
GENERIC_MANUFACTURER = "Generic"  # a catalog part without a vendor (a UFM appliance, a customer server)

# (speed Gb/s, cage form factor) -> NetBox InterfaceTypeChoices value. NetBox names pluggable
# types by speed and cage; where it has no type of that cage at that speed, the closest one of the
# same speed (CLOSEST says so in the folder's README).
INTERFACE_TYPES = {
    (1, "RJ45"): "1000base-t",
    (100, "QSFP28"): "100gbase-x-qsfp28", (100, "QSFP-DD"): "100gbase-x-qsfpdd",
    (200, "QSFP-DD"): "200gbase-x-qsfpdd",
    (400, "OSFP"): "400gbase-x-osfp", (400, "QSFP-DD"): "400gbase-x-qsfpdd", (400, "QSFP112"): "400gbase-x-qsfp112",
    (800, "OSFP"): "800gbase-x-osfp", (800, "QSFP-DD"): "800gbase-x-qsfpdd",
    (1600, "OSFP"): "1.6tbase-x-osfp1600",
}
# No NetBox type of the cage at that speed: the 100G and 200G QSFP-family pluggables
# (QSFP28, QSFP56) are NetBox's nearest for a port of that speed in an OSFP or QSFP112 cage.
CLOSEST = {
    (100, "OSFP"): "100gbase-x-qsfp28", (100, "QSFP112"): "100gbase-x-qsfp28",
    (200, "OSFP"): "200gbase-x-qsfp56", (200, "QSFP112"): "200gbase-x-qsfp56",
}
INFINIBAND_TYPES = {200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}


def interface_type(protocol: str, speed_gbps: int, form_factor: str) -> str:
    if protocol == "infiniband":
        return INFINIBAND_TYPES.get(speed_gbps, "other")
    key = (speed_gbps, form_factor)
    return INTERFACE_TYPES.get(key) or CLOSEST.get(key) or "other"


TABLES = "netbox/tables.j2"


def _header(table: str) -> str:
    return str(getattr(environment().get_template(TABLES).module, f"{table}_header")())


def _csv(value) -> str:
    """A field as csv.writer writes it (None as empty)."""
    return "" if value is None else csv_field(value)


def slug(text: str) -> str:
    """NetBox's slug alphabet ([-a-zA-Z0-9_]), lower case."""
    return re.sub(r"[^a-z0-9_]+", "-", text.lower()).strip("-")


def pulled_links(plan: Plan) -> np.ndarray:
    """Per link: a cable pulled on the floor (not a board trace or backplane), as cabling.csv counts them."""
    pulled = np.array([plan.view.facts.media[m].field_cable for m in plan.media], dtype=bool)
    return pulled[plan.links.media] if len(plan.links) else np.zeros(0, dtype=bool)


def port_protocols(plan: Plan) -> dict[str, list[str]]:
    """Per port layout, each port's protocol: a switch's own, a server's by the switch its cable
    reaches in any device of the layout (a DGX's compute NICs InfiniBand, its storage NICs
    Ethernet); RJ45 is Ethernet; a port no cable reaches takes its device's protocol, else the
    compute fabric's, else "other" (a direct network: TPU ICI)."""
    view = plan.view
    default = view.protocol or "other"
    proto_of = {m: view.model_protocol(m) or "" for m in {d.model for d in plan.devices}}  # per model, not per device
    dev_proto = np.array([proto_of[d.model] for d in plan.devices], dtype=object)
    lids = list(plan.layouts)
    lid_code = {lid: k for k, lid in enumerate(lids)}
    code = np.array([lid_code[d.layout] for d in plan.devices], dtype=np.int64)
    out = {lid: [""] * len(lay.ports) for lid, lay in plan.layouts.items()}
    width = max((len(lay.ports) for lay in plan.layouts.values()), default=1)
    links = plan.links
    for dev, port, peer in ((links.a_dev, links.a_port, links.b_dev), (links.b_dev, links.b_port, links.a_dev)):
        # one (layout, port) at a time: its first end in link order, the least link index
        # per (layout, port) key (np.minimum.at: exact whatever order numpy writes in; a
        # sort of every link end, np.unique, was n log n)
        key_of_end = code[dev] * width + port.astype(np.int64)
        first = np.full(len(lids) * width, key_of_end.size, dtype=np.int64)
        np.minimum.at(first, key_of_end, np.arange(key_of_end.size, dtype=np.int64))
        keys = np.flatnonzero(first < key_of_end.size)
        at = first[keys]
        proto = np.where(dev_proto[dev[at]] != "", dev_proto[dev[at]], dev_proto[peer[at]])
        for key, pr in zip(keys.tolist(), proto.tolist(), strict=True):
            row = out[lids[key // width]]
            if not row[key % width] and pr:
                row[key % width] = pr
    model_of: dict[str, str] = {}
    for d in plan.devices:
        model_of.setdefault(d.layout, d.model)
    for lid, model in model_of.items():
        fallback = view.model_protocol(model) or default
        row = out[lid]
        for k, p in enumerate(plan.layouts[lid].ports):
            if p.form_factor == "RJ45":
                row[k] = "ethernet"
            elif not row[k]:
                row[k] = fallback
    return out


def device_types(plan: Plan) -> dict[str, dict]:
    """Per port layout in use, its NetBox device type: manufacturer, model (the catalog model and
    the layout, so each port split is its own type), slug, height and one interface per port."""
    models = plan.view.facts.models
    phys = plan.physical
    first: dict[str, int] = {}
    for i, d in enumerate(plan.devices):
        first.setdefault(d.layout, i)
    protocols = port_protocols(plan)
    out = {}
    for layout, i in sorted(first.items()):
        d = plan.devices[i]
        rec = models[d.model]
        ports = plan.layouts[layout].ports
        height = int(phys.dev_height_u[i]) if phys is not None else (rec.rack_units or 1)
        kinds = [interface_type(pr, p.speed_gbps, p.form_factor) for p, pr in zip(ports, protocols[layout], strict=True)]
        mgmt = rec.management_port  # not in the layout: an Ethernet port of its own, mgmt_only
        out[layout] = {
            "manufacturer": rec.vendor or GENERIC_MANUFACTURER,
            "model": f"{rec.model} ({layout})", "slug": slug(layout), "part_number": rec.part_number or "",
            "u_height": height,
            "interfaces": [(p.name, k, False) for p, k in zip(ports, kinds, strict=True)]
            + ([(mgmt.name, interface_type("ethernet", mgmt.gbps, mgmt.form_factor), True)] if mgmt else []),
            "closest": sorted({(p.speed_gbps, p.form_factor) for p, k in zip(ports, kinds, strict=True)
                               if CLOSEST.get((p.speed_gbps, p.form_factor)) == k}),
        }
    return out


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    site = _csv(plan.name)
    phys = plan.physical
    row = functools.partial(row_format, TABLES)
    out.write_text("netbox/sites.csv", _header("sites") + row("sites", 2) % (site, _csv(slug(plan.name))))
    if phys is not None:
        fmt = row("racks", 5)
        out.write_text("netbox/racks.csv", _header("racks") + "".join(
            fmt % (site, _csv(r.name), 19, r.height_u, phys.depth_mm) for r in phys.racks))
    types = device_types(plan)
    makers = sorted({t["manufacturer"] for t in types.values()})
    fmt = row("manufacturers", 2)
    # Records the same hardware shares between designs: one file each, so that on a NetBox
    # holding an earlier design the files of records it has are refused whole ("already
    # exists") and the others import, with no file edited by hand.
    for m in makers:
        out.write_text(f"netbox/manufacturers/{slug(m)}.csv", _header("manufacturers") + fmt % (_csv(m), _csv(slug(m))))
    roles = sorted({d.role for d in plan.devices})
    fmt = row("roles", 2)
    for r in roles:
        out.write_text(f"netbox/device-roles/{slug(r)}.csv", _header("roles") + fmt % (_csv(r), _csv(slug(r))))
    for t in types.values():
        out.write_text(f"netbox/device-types/{t['slug']}.yaml", render_template("netbox/device-types.yaml.j2", types=[t]))

    fmt = row("devices", 8)
    # each role, type and rack escaped once; the names in one scan (csv_column)
    role_text = {r: _csv(r) for r in {d.role for d in plan.devices}}
    type_text = {lid: (_csv(t["manufacturer"]), _csv(t["model"])) for lid, t in types.items()}
    places: list[tuple[str, str | int, str]] = [("", "", "")] * len(plan.devices)
    if phys is not None:
        rack_text = [_csv(r.name) for r in phys.racks]
        places = [(rack_text[r], u, "front") for r, u in zip(phys.dev_rack.tolist(), phys.dev_u.tolist(), strict=True)]
    dev_rows = [fmt % (name, role_text[d.role], *type_text[d.layout], site, *place)
                for name, d, place in zip(csv_column([d.name for d in plan.devices]), plan.devices, places, strict=True)]
    out.write_text("netbox/devices.csv", _header("devices") + "".join(dev_rows))

    pulled = pulled_links(plan)
    cords = _cord_rows(plan, site)
    out.write_chunks("netbox/cables.csv", itertools.chain(
        [_header("cables")], text_chunks(_cable_pieces(plan, site, np.nonzero(pulled)[0]), int(pulled.sum())),
        [row("cables", 12) % r for r in cords]))
    closest = sorted({(s, f, CLOSEST[(s, f)]) for t in types.values() for s, f in t["closest"]})
    out.write_text("netbox/README.md", render_template(
        "netbox/README.md.j2", name=plan.name, racks=len(phys.racks) if phys is not None else 0, manufacturers=len(makers), roles=len(roles),
        types=len(types), devices=len(plan.devices), interfaces=sum(len(types[d.layout]["interfaces"]) for d in plan.devices),
        per_type={t["model"]: len(t["interfaces"]) for t in types.values()}, cables=int(pulled.sum()) + len(cords),
        closest=closest))


def _cable_pieces(plan: Plan, site: str, kept: np.ndarray) -> list[Piece]:
    """The rows of cables.csv for the links `kept` (pulled_links), as pieces of the `cables`
    row (templates.row_pieces): every value escaped once per distinct value or per device."""
    links = plan.links

    def take(column: np.ndarray) -> np.ndarray:  # every link pulled: the column itself, no gather
        return column if kept.size == len(links) else column[kept]

    dev_names = np.array([csv_field(d.name) for d in plan.devices], dtype=object)
    media = [plan.view.facts.media[m] for m in plan.media]
    cable_type = Coded(np.array([CABLE_TYPE.get(m.fiber, "") for m in media], dtype=object), take(links.media))
    color = Coded(np.array([COLOR.get(m.jacket or "", "") for m in media], dtype=object), take(links.media))
    ids = take(plan.memo("cable_id_array", cable_id_array))
    near, far = ([take(piece) for piece in end] for end in plan.memo("cable_ends", cable_ends))
    label: tuple[Piece, ...] = tuple(label_pieces([ids], near, far))
    id_list = ids.tolist()
    id_fields = csv_column(id_list)  # the cable_id column, and whether any id needs quoting
    if id_fields is not id_list or any(_needs_quoting(c) for c in (*near, *far)):  # a name that needs quoting: escape whole labels
        label = (np.array(csv_column(concat(list(label)).tolist()), dtype=object),)
    length: Piece = ""
    unit: Piece = ""
    phys = plan.physical
    if phys is not None and phys.order_m is not None:
        values, code = np.unique(take(phys.order_m), return_inverse=True)
        length = Coded(np.array(["" if x != x else f"{x:g}" for x in values.tolist()], dtype=object), code.reshape(-1))
        unit = Coded(np.array(["" if x != x else "m" for x in values.tolist()], dtype=object), code.reshape(-1))
    # panel port names escaped once per port of the used layouts, each end's drawn by its place there
    panel, place = nos_port_table(plan, None)
    names = np.array(csv_column(panel.tolist()), dtype=object)
    a_name, b_name = (Coded(names, place[take(g)]) for g in link_ends(plan))
    return row_pieces(TABLES, "cables", [Coded(dev_names, take(links.a_dev)), a_name, Coded(dev_names, take(links.b_dev)), b_name, cable_type,
                                         np.array(id_fields, dtype=object), color, length, unit, label, site, site])


def _needs_quoting(column: np.ndarray) -> bool:
    values = column.tolist()
    return csv_column(values) is not values


def _cord_rows(plan: Plan, site: str) -> list[tuple]:
    """The management cords (plan/fabrics.py management_cords: a switch's management port to
    its management leaf), as cables of the management ports the device types list; their
    orderable length where a layout gives one."""
    media = plan.view.facts.media.get(CORD_MEDIUM)
    if media is None:
        return []
    rows = []
    for c, label in zip(management_cords(plan), management_cord_labels(plan)[0], strict=True):
        length = (f"{c.order_m:g}", "m") if c.order_m is not None else ("", "")
        rows.append((csv_field(c.switch), csv_field(c.port), csv_field(c.leaf), csv_field(c.leaf_port),
                     CABLE_TYPE[media.fiber], csv_field(c.cable_id), COLOR.get(media.jacket or "", ""), *length,
                     csv_field(label), site, site))
    return rows
