"""Catalog facts a plan carries, so that every output (and `diff`) needs only the plan.

Attached after lowering and independent of topology: the models in use (part
numbers, power, RU), each medium's cable, and the transceiver each end takes.
"""

from __future__ import annotations

from pathlib import Path

from ..catalog import Catalog
from ..catalog.prices import load_prices
from ..plan.model import Plan
from . import media as media_choice


def _model_record(catalog: Catalog, device) -> dict:
    if device.role == "chip":  # an accelerator of a direct network: part of its host server
        host = device.model.split("/")[0]
        return {"kind": "chip", "vendor": "", "model": catalog.servers[host].gpu, "part_number": "", "power_w": None,
                "rack_units": None, "confidence": catalog.servers[host].confidence, "part_of": host}
    if device.model in catalog.switches:
        sw = catalog.switches[device.model]
        return {"kind": "switch", "vendor": sw.vendor, "model": sw.model, "part_number": sw.part_number,
                "power_w": sw.power_w, "rack_units": sw.rack_units, "confidence": sw.confidence,
                # where power_w was read: the vendor's page, or a third party quoting it (secondary)
                "power_confidence": sw.power.confidence, "power_source": sw.power.source,
                "protocol": sw.protocol, "nos": list(sw.nos),  # what it runs: requirements.nos is judged on it
                "infiniband": sw.infiniband.model_dump(mode="json") if sw.infiniband else None,
                # its out-of-band management port (not in the port layout): NetBox's device type lists it
                **({"management_port": {"name": sw.management_port.name, "form_factor": sw.management_port.cage.form_factor,
                                        "gbps": sw.management_port.cage.gbps}} if sw.management_port else {}),
                **({"sonic": {"platform": sw.sonic.platform, "hwsku": {str(k): v for k, v in sorted(sw.sonic.hwsku.items())},
                              **({"port_alias": sw.sonic.port_alias} if sw.sonic.port_alias else {})}}
                   if sw.sonic else {})}
    if device.model in catalog.servers:
        sv = catalog.servers[device.model]
        nics = sv.nic_groups.get("compute")
        return {"kind": "server", "vendor": sv.vendor, "model": sv.model, "part_number": sv.model,
                "power_w": sv.power_w, "rack_units": sv.rack_units, "confidence": sv.confidence,
                "gpus": sv.gpus, "nic": nics.nic if nics else None, "nic_part_number": nics.nic_part_number if nics else None,
                "nics": nics.nics if nics else 0, "nics_built_in": nics.built_in if nics else True,
                "scale_up_kind": sv.scale_up.kind if sv.scale_up else None,
                "scale_up_domain_gpus": sv.scale_up.domain_gpus if sv.scale_up else None,
                "scale_up_gbytes_per_s": sv.scale_up.gbytes_per_s_per_gpu if sv.scale_up else None,
                **({"scale_up_wiring": sv.scale_up.wiring, "scale_up_ports_per_gpu": sv.scale_up.ports_per_gpu,
                    "scale_up_port_gbps": sv.scale_up.port_gbps}
                   if sv.scale_up and sv.scale_up.ports_per_gpu else {})}
    return {"kind": "endpoint", "vendor": "", "model": device.role, "part_number": "", "power_w": None,
            "rack_units": None, "confidence": "unconfirmed"}


def attach(plan: Plan, catalog: Catalog) -> None:
    models: dict[str, dict] = {}
    for dev in plan.devices:
        if dev.model not in models:
            models[dev.model] = _model_record(catalog, dev)
    media: dict[str, dict] = {}
    transceivers: dict[str, dict] = {}
    for media_id in plan.media:
        medium = catalog.media[media_id]
        cable = catalog.cables[medium.cable]
        ends: dict[str, str | None] = {}
        for layout in plan.layouts.values():
            for port in layout.ports:
                key = port.cage_key
                if key in ends:
                    continue
                t = media_choice.transceiver(catalog, media_id, port)
                ends[key] = t.id if t else None
                if t:
                    transceivers[t.id] = {"description": t.description, "fiber": t.fiber, "ports": t.ports,
                                          "reach_m": t.reach_m, "power_w": t.power_w, "connector": t.connector,
                                          "confidence": t.confidence,
                                          # only where it is not the id (null: not published), so plans of
                                          # modules keyed by their number read as before
                                          **({} if t.part_number == t.id else {"part_number": t.part_number})}
        media[media_id] = {"description": medium.description, "fiber": medium.fiber,
                           "cable_part_number": cable.part_number, "cable_description": cable.description,
                           "reach_m": cable.reach_m, "jacket": cable.jacket,
                           "transceivers": dict(sorted(ends.items())),
                           "needs_transceivers": medium.needs_transceivers,
                           "fit": medium.fit, "lengths_m": list(cable.lengths_m),
                           "parts": dict(cable.parts), "cable_power_w": cable.power_w,
                           "cable_confidence": cable.confidence,
                           **({} if medium.field_cable else {"field_cable": False}),
                           # a cable with its own connectors other than OSFP or RJ45 (QSFP28 AOC) names them
                           **({"end_form_factor": cable.end_a.form_factor}
                              if cable.end_a and cable.end_a.form_factor not in ("OSFP", "RJ45") else {}),
                           **({} if cable.lengths_published else {"lengths_published": False})}
    # Host topology (NCCL_TOPO_FILE facts) of each server type in use; None where the catalog has none.
    hosts = {m: (catalog.host_topology[m].model_dump(mode="json") if m in catalog.host_topology else None)
             for m, rec in models.items() if rec["kind"] == "server"}
    plan.drop_view()
    plan.facts = {"models": models, "media": media, "transceivers": dict(sorted(transceivers.items())),
                  "host_topology": hosts}
    # Scale-up fabric parts outside the servers (NVLink switch trays, backplanes): BOM lines.
    parts = {ref: catalog.scale_up_parts[ref].model_dump(mode="json", exclude={"id"})
             for m, rec in models.items() if rec["kind"] == "server"
             for up in (catalog.servers[m].scale_up,) if up
             for ref in (up.switch_tray, up.backplane) if ref}
    if parts:
        plan.facts["scale_up_parts"] = dict(sorted(parts.items()))



def attach_bom(plan: Plan, loaded) -> None:
    """The spec's `bom:` (spares per category, the user's prices) as plan facts, so the BOM,
    `compare` and `explore` need only the plan. Absent key: nothing added (no cost, no spares)."""
    bom = loaded.spec.bom
    if bom is None:
        return
    facts: dict = {"spares_percent": dict(sorted(bom.spares_percent.items()))}
    if bom.prices is not None:
        path = Path(bom.prices)
        if not path.is_absolute():
            path = Path(loaded.file).parent / path
        facts["prices"] = load_prices(path).as_facts(str(path))
    plan.facts["bom"] = facts
    plan.drop_view()
