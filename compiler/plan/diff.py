"""What changes between two plans: devices, cables, BOM, headline figures.

A cable is matched by its two ends (device, port). An old cable whose A end still
carries a cable in the new plan, but to another B end, has *moved* (and likewise for
the B end); only cables with neither end reused are plain removals. This is what a
floor team needs to know: which pulled cables must be re-plugged.

A cable can stay logically the same (same two ends, same speed) and still change
physically: its far end's device now sits in another rack, so it is longer, of another
part number, perhaps another medium, and its labels read differently. Those are their
own category, `physical`, listing every attribute that changed, old -> new
(CABLE_ATTRIBUTES: rack, U and transceiver part of each end, medium, orderable length,
cable part, both labels). Devices likewise: a device in another rack or U has *moved*.
The BOM delta is by exact part and orderable length.

Cost: O(devices + links) Python dict work over both plans.
"""

from __future__ import annotations

from .bom import bill_of_materials
from .model import Plan
from .views import cable_ids, link_physical

# What a cable end or cable physically is, beyond its two ends (device, port) and speed.
CABLE_ATTRIBUTES = ("a_rack", "a_u", "a_transceiver", "b_rack", "b_u", "b_transceiver", "media", "length_m",
                    "part_number", "label_a", "label_b")
DEVICE_ATTRIBUTES = ("rack", "u")
# What `--fail-on` may gate on: cables added, removed, re-plugged (changed), or changed
# physically (a physical cable change or a device moved to another rack or U).
FAIL_ON = ("added", "removed", "changed", "physical")


def _cables(plan: Plan) -> dict[tuple, tuple[dict, tuple]]:
    """(a end, b end) -> (the cable's record, its physical attributes in CABLE_ATTRIBUTES order)."""
    names = [d.name for d in plan.devices]
    layouts = [plan.layouts[d.layout].ports for d in plan.devices]
    phys = link_physical(plan)
    attrs = zip(*(phys[k] for k in CABLE_ATTRIBUTES))
    out = {}
    for cid, a, ap, b, bp, k, s, at in zip(plan.memo("cable_ids", cable_ids), plan.links.a_dev.tolist(),
                                           plan.links.a_port.tolist(), plan.links.b_dev.tolist(), plan.links.b_port.tolist(),
                                           plan.links.kind.tolist(), plan.links.speed_gbps.tolist(), attrs):
        a_end, b_end = (names[a], layouts[a][ap].name), (names[b], layouts[b][bp].name)
        out[(a_end, b_end)] = ({"cable_id": cid, "a": list(a_end), "b": list(b_end), "kind": plan.link_kinds[k],
                                "media": at[6], "speed_gbps": s}, at)
    return out


def _changes(keys: tuple[str, ...], old: tuple, new: tuple) -> dict[str, dict]:
    return {k: {"old": o, "new": n} for k, o, n in zip(keys, old, new) if o != n}


def _places(plan: Plan) -> dict[str, tuple]:
    phys = plan.physical
    if phys is None:
        return {d.name: (None, None) for d in plan.devices}
    racks = [r.name for r in phys.racks]
    return {d.name: (racks[r], u) for d, r, u in zip(plan.devices, phys.dev_rack.tolist(), phys.dev_u.tolist())}


def _bom(plan: Plan) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for line in plan.memo("bom", bill_of_materials):
        key = (line.category, line.part_number, line.length_m)
        out[key] = out.get(key, 0) + line.quantity
    return out


def _bom_order(key: tuple) -> tuple:
    category, part, length = key
    return category, part, -1.0 if length is None else length


def diff_plans(old: Plan, new: Plan) -> dict:
    old_dev = {d.name: d for d in old.devices}
    new_dev = {d.name: d for d in new.devices}
    both = sorted(set(old_dev) & set(new_dev))
    old_place, new_place = _places(old), _places(new)
    devices = {
        "added": sorted(set(new_dev) - set(old_dev)),
        "removed": sorted(set(old_dev) - set(new_dev)),
        "changed": [n for n in both if (old_dev[n].role, old_dev[n].model) != (new_dev[n].role, new_dev[n].model)],
        "moved": [{"name": n, "changes": _changes(DEVICE_ATTRIBUTES, old_place[n], new_place[n])}
                  for n in both if old_place[n] != new_place[n]],
    }
    oc, nc = _cables(old), _cables(new)
    new_by_end = {}
    for key in nc:
        new_by_end[key[0]] = key
        new_by_end[key[1]] = key
    added = [nc[k][0] for k in nc if k not in oc]
    removed, changed, physical = [], [], []
    for key, (cable, attrs) in oc.items():
        if key in nc:
            n, n_attrs = nc[key]
            if n["speed_gbps"] != cable["speed_gbps"]:
                changed.append({"old": cable, "new": n, "what": "speed",
                                "changes": _changes(CABLE_ATTRIBUTES, attrs, n_attrs)})
            elif attrs != n_attrs:
                physical.append({**n, "changes": _changes(CABLE_ATTRIBUTES, attrs, n_attrs)})
            continue
        moved_to = new_by_end.get(key[0]) or new_by_end.get(key[1])
        if moved_to is not None and moved_to not in oc:
            n, n_attrs = nc[moved_to]
            changed.append({"old": cable, "new": n, "what": "an end moved",
                            "changes": _changes(CABLE_ATTRIBUTES, attrs, n_attrs)})
        else:
            removed.append(cable)
    moved_targets = {tuple(map(tuple, (c["new"]["a"], c["new"]["b"]))) for c in changed if c["what"] == "an end moved"}
    added = [c for c in added if (tuple(c["a"]), tuple(c["b"])) not in moved_targets]
    ob, nb = _bom(old), _bom(new)
    bom = [{"category": cat, "part_number": part, "length_m": length, "old": ob.get(key, 0), "new": nb.get(key, 0),
            "delta": nb.get(key, 0) - ob.get(key, 0)}
           for key in sorted(set(ob) | set(nb), key=_bom_order) if ob.get(key, 0) != nb.get(key, 0)
           for cat, part, length in (key,)]
    return {
        "old": old.name, "new": new.name,
        "devices": devices,
        "cables": {"added": added, "removed": removed, "changed": changed, "physical": physical},
        "bom": bom,
        "counts": {"devices_added": len(devices["added"]), "devices_removed": len(devices["removed"]),
                   "devices_moved": len(devices["moved"]),
                   "cables_added": len(added), "cables_removed": len(removed), "cables_changed": len(changed),
                   "cables_physical": len(physical)},
    }


def gate_hits(d: dict, fail_on: set[str]) -> list[str]:
    """Which of the `--fail-on` kinds (FAIL_ON) the diff `d` hits, in FAIL_ON order."""
    c = d["counts"]
    count = {"added": c["cables_added"], "removed": c["cables_removed"], "changed": c["cables_changed"],
             "physical": c["cables_physical"] + c["devices_moved"]}
    return [k for k in FAIL_ON if k in fail_on and count[k]]


def summary_deltas(old_summary: dict, new_summary: dict) -> dict:
    """Headline figures that changed: GPUs, switches, cables, bisection, oversubscription."""
    out = {}
    for key in ("gpus", "servers", "tiers", "transceivers"):
        if old_summary.get(key) != new_summary.get(key):
            out[key] = {"old": old_summary.get(key), "new": new_summary.get(key)}
    for key in ("switches", "cables", "oversubscription", "bisection_gbps"):
        o, n = old_summary.get(key) or {}, new_summary.get(key) or {}
        for k in sorted(set(o) | set(n)):
            if o.get(k) != n.get(k):
                out[f"{key}.{k}"] = {"old": o.get(k), "new": n.get(k)}
    return out
