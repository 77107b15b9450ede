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

import numpy as np

from .order import order_lines
from .model import Plan
from .views import cable_ids, link_physical, port_table

# What a cable end or cable physically is, beyond its two ends (device, port) and speed.
CABLE_ATTRIBUTES = ("a_rack", "a_u", "a_transceiver", "b_rack", "b_u", "b_transceiver", "media", "length_m",
                    "part_number", "label_a", "label_b")
DEVICE_ATTRIBUTES = ("rack", "u")
# What `--fail-on` may gate on: cables added, removed, re-plugged (changed), or changed
# physically (a physical cable change or a device moved to another rack or U).
FAIL_ON = ("added", "removed", "changed", "physical")


class _Cables:
    """A plan's cables as columns: each end's device and port names, a text key per end
    and per cable (strings: at 400k links, tuples and dicts per cable would cost more in
    garbage collection than the diff itself), kind, speed and the physical attributes."""

    def __init__(self, plan: Plan):
        links = plan.links
        names = np.array([d.name for d in plan.devices], dtype=object)
        ports = plan.memo("port_table", port_table)["name"]
        offsets = plan.port_offsets()
        self.ids = plan.memo("cable_ids", cable_ids)
        self.a_dev, self.b_dev = names[links.a_dev], names[links.b_dev]
        self.a_port, self.b_port = ports[offsets[links.a_dev] + links.a_port], ports[offsets[links.b_dev] + links.b_port]
        self.a_key = (self.a_dev + "\t" + self.a_port).tolist()
        self.b_key = (self.b_dev + "\t" + self.b_port).tolist()
        self.key = [a + "\n" + b for a, b in zip(self.a_key, self.b_key)]
        self.kind = np.array(plan.link_kinds, dtype=object)[links.kind]
        self.speed = links.speed_gbps
        phys = link_physical(plan)
        self.attrs = {k: np.array(phys[k], dtype=object) for k in CABLE_ATTRIBUTES}

    def record(self, i: int) -> dict:
        return {"cable_id": self.ids[i], "a": [self.a_dev[i], self.a_port[i]], "b": [self.b_dev[i], self.b_port[i]],
                "kind": self.kind[i], "media": self.attrs["media"][i], "speed_gbps": int(self.speed[i])}

    def changes(self, i: int, other: "_Cables", j: int) -> dict[str, dict]:
        return {k: {"old": _plain(self.attrs[k][i]), "new": _plain(other.attrs[k][j])} for k in CABLE_ATTRIBUTES
                if self.attrs[k][i] != other.attrs[k][j]}


def _plain(value):
    """numpy scalars (U positions) as JSON-ready Python values."""
    return value.item() if isinstance(value, np.generic) else value


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
    for _, line in order_lines(plan):  # the whole order, spares by the one rule (plan/order.py)
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
    oc, nc = _Cables(old), _Cables(new)
    new_index = {key: j for j, key in enumerate(nc.key)}
    new_by_end = dict(zip(nc.a_key, range(len(nc.key))))
    new_by_end.update(zip(nc.b_key, range(len(nc.key))))
    old_keys = set(oc.key)
    same_i, same_j = [], []
    removed, changed = [], []
    moved_to_new: set[int] = set()
    for i, key in enumerate(oc.key):
        j = new_index.get(key)
        if j is not None:
            same_i.append(i)
            same_j.append(j)
            continue
        j = new_by_end.get(oc.a_key[i])
        if j is None:
            j = new_by_end.get(oc.b_key[i])
        if j is not None and nc.key[j] not in old_keys:
            changed.append({"old": oc.record(i), "new": nc.record(j), "what": "an end moved", "changes": oc.changes(i, nc, j)})
            moved_to_new.add(j)
        else:
            removed.append(oc.record(i))
    si, sj = np.array(same_i, dtype=np.int64), np.array(same_j, dtype=np.int64)
    speed = oc.speed[si] != nc.speed[sj]
    differs = np.zeros(si.size, dtype=bool)
    for k in CABLE_ATTRIBUTES:
        differs |= oc.attrs[k][si] != nc.attrs[k][sj]
    physical = []
    for i, j in zip(si[speed].tolist(), sj[speed].tolist()):
        changed.append({"old": oc.record(i), "new": nc.record(j), "what": "speed", "changes": oc.changes(i, nc, j)})
    for i, j in zip(si[differs & ~speed].tolist(), sj[differs & ~speed].tolist()):
        physical.append({**nc.record(j), "changes": oc.changes(i, nc, j)})
    matched = np.zeros(len(nc.key), dtype=bool)
    matched[sj] = True
    matched[list(moved_to_new)] = True
    added = [nc.record(j) for j in np.nonzero(~matched)[0].tolist()]
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
