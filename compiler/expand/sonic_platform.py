"""Notes on SONiC switches whose DEVICE_METADATA platform or hwsku the catalog cannot give
(and, with no platform, whose PORT alias and index follow no platform's port_config.ini).

config_db.json names the platform and hwsku only where the catalog evidences them (switches.yaml
`sonic:`, catalog/sonic.py picks the hwsku of a switch's one port speed); elsewhere it leaves
the field out, and the compile says so here, once per switch model and port-speed set, with
where the value comes from instead.

Cost: one pass over each SONiC fabric's link table (numpy), then one entry per switch.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..catalog.nos import descriptor
from ..plan.fabrics import fabric_names, fabric_plan
from ..plan.facts import PlanFacts
from ..plan.model import Plan
from ..plan.naming import SWITCH_ROLES


def notes(plan: Plan) -> list[str]:
    out = []
    facts = PlanFacts.from_json(plan.facts)  # expand's last step: the view is sealed after it
    for name in fabric_names(plan):
        view = fabric_plan(plan, name)
        if view.routing is None or view.routing.nos != "sonic":
            continue
        devices = view.devices
        links = view.links
        dev = np.concatenate([links.a_dev, links.b_dev]).astype(np.int64)
        speed = np.concatenate([links.speed_gbps, links.speed_gbps]).astype(np.int64)
        is_switch = np.fromiter((d.role in SWITCH_ROLES for d in devices), dtype=bool, count=len(devices))
        keep = is_switch[dev]
        pairs = np.unique(np.stack([dev[keep], speed[keep]]), axis=1)  # (switch, speed), sorted by switch
        speeds: dict[int, list[int]] = {}
        for d, s in zip(*pairs.tolist(), strict=True):
            speeds.setdefault(d, []).append(s)
        out += _beyond_lookup(view, name)
        groups = Counter((devices[d].model, tuple(s)) for d, s in speeds.items())
        for (model, split), count in sorted(groups.items()):
            rec = facts.model(model)
            sonic = rec.sonic if rec is not None else None
            if sonic is not None and sonic.hwsku_for(split):
                continue
            what = f"{count} {model} switch{'es' if count > 1 else ''} ({'/'.join(f'{s}G' for s in split)} ports)"
            keeps = ("so the switch keeps its own (set at first boot from its platform's default_sku in sonic-buildimage "
                     "device/<vendor>/<platform>/), whose port split may differ from this file's PORT table: choose the "
                     "platform's hwsku of this split, or break the ports out to it, before loading the file")
            if not sonic:
                # PORT index is what xcvrd maps to a transceiver cage: a wrong one is silent
                out.append(f"sonic: {what}: the catalog names no SONiC platform for {model} (switches.yaml sonic:): "
                           f"config_db.json leaves DEVICE_METADATA platform and hwsku out, {keeps}; it writes no buffer tables "
                           f"(BUFFER_*: the platform's buffer templates are not in the catalog, catalog/data/sonic_buffers.yaml), "
                           f"so the RoCE priority is lossless only once `config qos reload` has written the box's own; the file's PORT alias is the "
                           f"panel name and its PORT index the cage counted from 1, where a platform's port_config.ini may "
                           f"differ (UfiSpace S9321-64EO counts cages from 0): match both to the box's before loading")
            elif len(split) > 1:
                out.append(f"sonic: {what}: no one hwsku of {sonic.platform} is known to hold ports of several "
                           f"speeds: config_db.json leaves DEVICE_METADATA hwsku out, {keeps}")
            else:
                out.append(f"sonic: {what}: no hwsku of {sonic.platform} is known with {split[0]}G ports "
                           f"(switches.yaml sonic.hwsku): config_db.json leaves DEVICE_METADATA hwsku out, {keeps}")
    return out


def _beyond_lookup(view: Plan, fabric: str) -> list[str]:
    """A cable longer than the last row of SONiC's headroom lookup (pg_profile_lookup.ini) gets
    no lossless PG: neither config_db.json nor buffermgrd has a size for it."""
    phys = view.physical
    classes = descriptor("sonic").cable_length_classes_m
    if phys is None or phys.order_m is None or not classes or not len(view.links):
        return []
    longest = max(classes)
    over = np.nan_to_num(phys.order_m, nan=0.0) > longest
    if not over.any():
        return []
    return [f"sonic: {fabric} fabric: {int(over.sum())} cable(s) longer than {longest} m, the longest row of SONiC's "
            f"lossless headroom lookup (pg_profile_lookup.ini): their switch ports get no lossless priority group in "
            f"config_db.json (buffermgrd has no size for them either), so the RoCE priority is lossy there; "
            f"shorten the run or size the headroom by hand"]
