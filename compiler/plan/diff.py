"""What changes physically between two plans: devices, cables, BOM, headline figures.

A cable is matched by its two ends (device, port). An old cable whose A end still
carries a cable in the new plan, but to another B end, has *moved* (and likewise for
the B end); only cables with neither end reused are plain removals. This is what a
floor team needs to know: which pulled cables must be re-plugged.
"""

from __future__ import annotations

from .bom import bill_of_materials
from .model import Plan
from .views import cable_ids


def _cables(plan: Plan) -> dict[tuple, dict]:
    names = [d.name for d in plan.devices]
    layouts = [plan.layouts[d.layout].ports for d in plan.devices]
    out = {}
    for cid, a, ap, b, bp, k, m, s in zip(plan.memo("cable_ids", cable_ids), plan.links.a_dev.tolist(),
                                           plan.links.a_port.tolist(), plan.links.b_dev.tolist(), plan.links.b_port.tolist(),
                                           plan.links.kind.tolist(), plan.links.media.tolist(), plan.links.speed_gbps.tolist()):
        a_end, b_end = (names[a], layouts[a][ap].name), (names[b], layouts[b][bp].name)
        out[(a_end, b_end)] = {"cable_id": cid, "a": list(a_end), "b": list(b_end), "kind": plan.link_kinds[k],
                               "media": plan.media[m], "speed_gbps": s}
    return out


def _bom(plan: Plan) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for line in plan.memo("bom", bill_of_materials):
        key = (line.category, line.part_number)
        out[key] = out.get(key, 0) + line.quantity
    return out


def diff_plans(old: Plan, new: Plan) -> dict:
    old_dev = {d.name: d for d in old.devices}
    new_dev = {d.name: d for d in new.devices}
    devices = {
        "added": sorted(set(new_dev) - set(old_dev)),
        "removed": sorted(set(old_dev) - set(new_dev)),
        "changed": sorted(n for n in set(old_dev) & set(new_dev)
                          if (old_dev[n].role, old_dev[n].model) != (new_dev[n].role, new_dev[n].model)),
    }
    oc, nc = _cables(old), _cables(new)
    new_by_end = {}
    for key in nc:
        new_by_end[key[0]] = key
        new_by_end[key[1]] = key
    added = [nc[k] for k in nc if k not in oc]
    removed, changed = [], []
    for key, cable in oc.items():
        if key in nc:
            n = nc[key]
            if (n["media"], n["speed_gbps"]) != (cable["media"], cable["speed_gbps"]):
                changed.append({"old": cable, "new": n, "what": "media or speed"})
            continue
        moved_to = new_by_end.get(key[0]) or new_by_end.get(key[1])
        if moved_to is not None and moved_to not in oc:
            changed.append({"old": cable, "new": nc[moved_to], "what": "an end moved"})
        else:
            removed.append(cable)
    moved_targets = {tuple(map(tuple, (c["new"]["a"], c["new"]["b"]))) for c in changed if c["what"] == "an end moved"}
    added = [c for c in added if (tuple(c["a"]), tuple(c["b"])) not in moved_targets]
    ob, nb = _bom(old), _bom(new)
    bom = [{"category": cat, "part_number": part, "old": ob.get((cat, part), 0), "new": nb.get((cat, part), 0),
            "delta": nb.get((cat, part), 0) - ob.get((cat, part), 0)}
           for cat, part in sorted(set(ob) | set(nb)) if ob.get((cat, part), 0) != nb.get((cat, part), 0)]
    return {
        "old": old.name, "new": new.name,
        "devices": devices,
        "cables": {"added": added, "removed": removed, "changed": changed},
        "bom": bom,
        "counts": {"devices_added": len(devices["added"]), "devices_removed": len(devices["removed"]),
                   "cables_added": len(added), "cables_removed": len(removed), "cables_changed": len(changed)},
    }


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
