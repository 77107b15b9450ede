"""What changes between two plans: devices, cables, BOM, cost, headline figures.

Devices are matched by name; a server only in the old plan and one only in the new plan
with the same place in the design (fabric, SU, pod, rail, group, index) are the same
server *relabeled* (the hostname pattern changed), not one removed and one added.

A cable is matched by its two ends (device, port), reading old names through the
relabels. Matching is one-to-one: an old cable whose A end (else B end) now carries a
new cable of the same kind that no other old cable matches has been *re-plugged* to it; only cables
with neither end reusable are plain removals, and new cables nothing matched are
additions. This is what a floor team needs to know: which pulled cables must be
re-plugged. `reconcile` checks on every diff that each old cable and each new cable is
counted exactly once, and that every cable of a removed (added) device is removed (added)
or re-plugged; a diff that does not add up raises instead of printing wrong counts.

A cable can stay logically the same (same two ends, same speed) and still change
physically: its far end's device now sits in another rack, so it is longer, of another
part number, perhaps another medium, and its labels read differently. Those are their
own category, `physical`, listing every attribute that changed, old -> new
(CABLE_ATTRIBUTES: rack, U and transceiver part of each end, medium, orderable length,
cable part, both labels). A cable whose ports all stay but an end's device was relabeled
(and nothing else physical changed but the labels) is `relabeled`: new labels, no work
on the cable. Devices likewise: a device in another rack or U has *moved*; another role
or model (a switch swapped for another product) has *changed*. The BOM delta is by exact
part and orderable length; with a price file on either side, the cost change (order_totals).

Cost: O(devices + links) Python dict work over both plans.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np

from .model import Device, Plan
from .order import order_lines, order_totals
from .views import cable_ids, link_physical, port_table

# What a cable end or cable physically is, beyond its two ends (device, port) and speed.
CABLE_ATTRIBUTES = ("a_rack", "a_u", "a_transceiver", "b_rack", "b_u", "b_transceiver", "media", "length_m",
                    "part_number", "label_a", "label_b")
LABELS = ("label_a", "label_b")
DEVICE_ATTRIBUTES = ("rack", "u")
# What makes a server itself, whatever it is called: its place in the design.
DEVICE_IDENTITY = ("fabric", "role", "tier", "su", "pod", "rail", "group", "index")
RELABELED_ROLE = "server"  # the devices a spec names by a pattern (hosts.hostname)
# What `--fail-on` may gate on: cables added, removed, re-plugged or re-specified (changed;
# also a device of another model or role), changed physically (a physical cable change or
# a device moved to another rack or U), relabeled (a device renamed, its cables' labels).
FAIL_ON = ("added", "removed", "changed", "physical", "relabeled")


class DiffInconsistent(RuntimeError):
    """A diff whose matching is not one-to-one or whose counts do not reconcile: a bug."""


class _Cables:
    """A plan's cables as columns: each end's device and port names, a text key per end
    and per cable (strings: at 400k links, tuples and dicts per cable would cost more in
    garbage collection than the diff itself), kind, speed and the physical attributes.
    `rename` (old name -> new name) builds the keys under the new names, for matching."""

    def __init__(self, plan: Plan, rename: dict[str, str] | None = None):
        links = plan.links
        names = np.array([d.name for d in plan.devices], dtype=object)
        keyed = names if not rename else np.array([rename.get(n, n) for n in names.tolist()], dtype=object)
        ports = plan.memo("port_table", port_table)["name"]
        offsets = plan.port_offsets()
        self.ids = plan.memo("cable_ids", cable_ids)
        self.a_idx, self.b_idx = links.a_dev.astype(np.int64), links.b_dev.astype(np.int64)
        self.a_dev, self.b_dev = names[links.a_dev], names[links.b_dev]
        self.a_port, self.b_port = ports[offsets[links.a_dev] + links.a_port], ports[offsets[links.b_dev] + links.b_port]
        self.a_key = (keyed[links.a_dev] + "\t" + self.a_port).tolist()
        self.b_key = (keyed[links.b_dev] + "\t" + self.b_port).tolist()
        self.key = [a + "\n" + b for a, b in zip(self.a_key, self.b_key, strict=True)]
        self.kind = np.array(plan.link_kinds, dtype=object)[links.kind]
        self.speed = links.speed_gbps
        phys = link_physical(plan)
        self.attrs = {k: np.array(phys[k], dtype=object) for k in CABLE_ATTRIBUTES}

    def __len__(self) -> int:
        return len(self.key)

    def record(self, i: int) -> dict:
        return {"cable_id": self.ids[i], "a": [self.a_dev[i], self.a_port[i]], "b": [self.b_dev[i], self.b_port[i]],
                "kind": self.kind[i], "media": self.attrs["media"][i], "speed_gbps": int(self.speed[i])}

    def changes(self, i: int, other: _Cables, j: int, keys=CABLE_ATTRIBUTES) -> dict[str, dict]:
        return {k: {"old": _plain(self.attrs[k][i]), "new": _plain(other.attrs[k][j])} for k in keys
                if self.attrs[k][i] != other.attrs[k][j]}


def _plain(value):
    """numpy scalars (U positions) as JSON-ready Python values."""
    return value.item() if isinstance(value, np.generic) else value


def _changes(keys: tuple[str, ...], old: tuple, new: tuple) -> dict[str, dict]:
    return {k: {"old": o, "new": n} for k, o, n in zip(keys, old, new, strict=True) if o != n}


def _places(plan: Plan) -> dict[str, tuple]:
    phys = plan.physical
    if phys is None:
        return {d.name: (None, None) for d in plan.devices}
    racks = [r.name for r in phys.racks]
    return {d.name: (racks[r], u) for d, r, u in zip(plan.devices, phys.dev_rack.tolist(), phys.dev_u.tolist(), strict=True)}


def _bom(plan: Plan) -> dict[tuple, int]:
    out: dict[tuple, int] = {}
    for _, line in order_lines(plan):  # the whole order, spares by the one rule (plan/order.py)
        key = (line.category, line.part_number, line.length_m)
        out[key] = out.get(key, 0) + line.quantity
    return out


def _bom_order(key: tuple) -> tuple:
    category, part, length = key
    return category, part, -1.0 if length is None else length


def _identity(d: Device) -> tuple:
    return tuple(getattr(d, k) for k in DEVICE_IDENTITY)


def relabels(old: list[Device], new: list[Device]) -> dict[str, str]:
    """old name -> new name for servers that only changed name: each side holds exactly one
    server of that identity among the servers whose names it alone has. Only servers: their
    names come from a pattern (`hosts.hostname`); a switch's name is its place (a torus
    router's coordinates), so a switch under another name is another switch."""
    new_names = {d.name for d in new}
    old_names = {d.name for d in old}
    gone = [d for d in old if d.name not in new_names and d.role == RELABELED_ROLE]
    came = [d for d in new if d.name not in old_names and d.role == RELABELED_ROLE]

    def unique(devs):
        seen: dict[tuple, list[str]] = {}
        for d in devs:
            seen.setdefault(_identity(d), []).append(d.name)
        return {k: v[0] for k, v in seen.items() if len(v) == 1}

    before, after = unique(gone), unique(came)
    return {before[k]: after[k] for k in sorted(set(before) & set(after), key=repr)}


def _money(value) -> str | None:
    """An amount as a decimal string (exact in JSON; floats would not be)."""
    return None if value is None else f"{Decimal(str(value)):.2f}"


def cost_delta(old: Plan, new: Plan) -> dict | None:
    """The bill's total cost before and after (the BOM's own totals, spares included), when
    either plan has a price file; None when neither has. Amounts are decimal strings."""
    priced = [p.view.facts.prices for p in (old, new)]
    if priced == [None, None]:
        return None
    # The whole order (cluster scope, spares by the one rule); where parts are unpriced the
    # priced parts' sum, with the unpriced ones named beside it.
    totals = [order_totals(p, "cluster") if prices else None for p, prices in zip((old, new), priced, strict=True)]
    costs = [t.priced if t is not None else None for t in totals]
    currencies = [p.currency if p else None for p in priced]
    same = currencies[0] == currencies[1] and None not in costs
    return {"currency": currencies[1] or currencies[0], "old_currency": currencies[0], "new_currency": currencies[1],
            "old": _money(costs[0]), "new": _money(costs[1]),
            "delta": _money(Decimal(str(costs[1])) - Decimal(str(costs[0]))) if same else None,
            "unpriced_old": list(totals[0].unpriced) if totals[0] else [],
            "unpriced_new": list(totals[1].unpriced) if totals[1] else []}


def diff_plans(old: Plan, new: Plan) -> dict:
    rename = relabels(old.devices, new.devices)
    old_dev = {rename.get(d.name, d.name): d for d in old.devices}  # keyed by the new name
    new_dev = {d.name: d for d in new.devices}
    both = sorted(set(old_dev) & set(new_dev))
    old_place = {rename.get(k, k): v for k, v in _places(old).items()}
    new_place = _places(new)
    devices: dict[str, list] = {
        "added": sorted(set(new_dev) - set(old_dev)),
        "removed": sorted(set(old_dev) - set(new_dev)),
        "changed": [{"name": n, "changes": _changes(("role", "model"), (old_dev[n].role, old_dev[n].model),
                                                    (new_dev[n].role, new_dev[n].model))}
                    for n in both if (old_dev[n].role, old_dev[n].model) != (new_dev[n].role, new_dev[n].model)],
        "moved": [{"name": n, "changes": _changes(DEVICE_ATTRIBUTES, old_place[n], new_place[n])}
                  for n in both if old_place[n] != new_place[n]],
        "relabeled": [{"old": o, "new": n} for o, n in sorted(rename.items())],
    }
    oc, nc = _Cables(old, rename), _Cables(new)
    # 1. the same two ends (under the new names)
    new_index = {key: j for j, key in enumerate(nc.key)}
    same_i, same_j = [], []
    for i, key in enumerate(oc.key):
        j = new_index.get(key)
        if j is not None:
            same_i.append(i)
            same_j.append(j)
    si, sj = np.array(same_i, dtype=np.int64), np.array(same_j, dtype=np.int64)
    # 2. re-plugs, one-to-one: an unmatched old cable takes the unmatched new cable of its kind at its
    #    A end, else its B end (a server cable does not become a spine uplink: that is one removed, one added)
    taken = np.zeros(len(nc), dtype=bool)
    taken[sj] = True
    old_done = np.zeros(len(oc), dtype=bool)
    old_done[si] = True
    new_by_end = dict(zip(nc.a_key, range(len(nc)), strict=True))
    new_by_end.update(zip(nc.b_key, range(len(nc)), strict=True))
    plug_i, plug_j, removed_i = [], [], []
    for i in np.nonzero(~old_done)[0].tolist():
        for end in (oc.a_key[i], oc.b_key[i]):
            j = new_by_end.get(end)
            if j is not None and not taken[j] and nc.kind[j] == oc.kind[i]:
                taken[j] = True
                plug_i.append(i)
                plug_j.append(j)
                break
        else:
            removed_i.append(i)
    added_j = np.nonzero(~taken)[0].tolist()
    reconcile(old, new, oc, nc, rename, si, sj, plug_i, plug_j, removed_i, added_j)
    # 3. what the matched cables are now
    changed = [{"old": oc.record(i), "new": nc.record(j), "what": "an end moved", "changes": oc.changes(i, nc, j)}
               for i, j in zip(plug_i, plug_j, strict=True)]
    speed = oc.speed[si] != nc.speed[sj]
    phys_differs = np.zeros(si.size, dtype=bool)
    for k in CABLE_ATTRIBUTES:
        if k not in LABELS:
            phys_differs |= oc.attrs[k][si] != nc.attrs[k][sj]
    labels_differ = np.zeros(si.size, dtype=bool)
    for k in LABELS:
        labels_differ |= oc.attrs[k][si] != nc.attrs[k][sj]
    renamed_dev = np.array([d.name in rename for d in old.devices] or [False], dtype=bool)
    renamed = renamed_dev[oc.a_idx[si]] | renamed_dev[oc.b_idx[si]] if si.size else np.zeros(0, dtype=bool)
    physical, relabeled = [], []
    for i, j in zip(si[speed].tolist(), sj[speed].tolist(), strict=True):
        changed.append({"old": oc.record(i), "new": nc.record(j), "what": "speed", "changes": oc.changes(i, nc, j)})
    is_physical = ~speed & (phys_differs | (labels_differ & ~renamed))
    for i, j in zip(si[is_physical].tolist(), sj[is_physical].tolist(), strict=True):
        physical.append({**nc.record(j), "changes": oc.changes(i, nc, j)})
    is_relabel = ~speed & ~is_physical & renamed
    for i, j in zip(si[is_relabel].tolist(), sj[is_relabel].tolist(), strict=True):
        relabeled.append({**nc.record(j), "old_cable_id": oc.ids[i], "old_a": [oc.a_dev[i], oc.a_port[i]],
                          "old_b": [oc.b_dev[i], oc.b_port[i]], "changes": oc.changes(i, nc, j, LABELS)})
    removed = [oc.record(i) for i in removed_i]
    added = [nc.record(j) for j in added_j]
    ob, nb = _bom(old), _bom(new)
    bom = [{"category": cat, "part_number": part, "length_m": length, "old": ob.get(key, 0), "new": nb.get(key, 0),
            "delta": nb.get(key, 0) - ob.get(key, 0)}
           for key in sorted(set(ob) | set(nb), key=_bom_order) if ob.get(key, 0) != nb.get(key, 0)
           for cat, part, length in (key,)]
    out: dict[str, Any] = {
        "old": old.name, "new": new.name,
        "devices": devices,
        "cables": {"added": added, "removed": removed, "changed": changed, "physical": physical,
                   "relabeled": relabeled},
        "bom": bom,
        "counts": {"devices_added": len(devices["added"]), "devices_removed": len(devices["removed"]),
                   "devices_changed": len(devices["changed"]), "devices_moved": len(devices["moved"]),
                   "devices_relabeled": len(devices["relabeled"]),
                   "cables_added": len(added), "cables_removed": len(removed), "cables_changed": len(changed),
                   "cables_physical": len(physical), "cables_relabeled": len(relabeled),
                   "cables_unchanged": int(si.size - speed.sum() - is_physical.sum() - is_relabel.sum())},
    }
    cost = cost_delta(old, new)
    if cost is not None:
        out["cost"] = cost
    c = out["counts"]
    _require(c["cables_removed"] + c["cables_changed"] + c["cables_physical"] + c["cables_relabeled"]
             + c["cables_unchanged"] == len(oc), f"old cables {len(oc)} != the sum of their categories {c}")
    _require(c["cables_added"] + c["cables_changed"] + c["cables_physical"] + c["cables_relabeled"]
             + c["cables_unchanged"] == len(nc), f"new cables {len(nc)} != the sum of their categories {c}")
    return out


def _require(ok: bool, message: str) -> None:
    if not ok:  # not `assert`: python -O must not turn a wrong diff into a printed one
        raise DiffInconsistent(f"plan diff does not reconcile: {message}")


def reconcile(old: Plan, new: Plan, oc: _Cables, nc: _Cables, rename: dict[str, str], si, sj,
              plug_i: list[int], plug_j: list[int], removed_i: list[int], added_j: list[int]) -> None:
    """The matching is one-to-one and covers both plans: every old cable is matched, re-plugged
    or removed exactly once, every new cable matched, re-plugged to or added exactly once, and
    every cable of a removed (added) device is removed (added) or re-plugged."""
    old_seen = np.bincount(np.concatenate([si, np.array(plug_i + removed_i, dtype=np.int64)]), minlength=len(oc))
    new_seen = np.bincount(np.concatenate([sj, np.array(plug_j + added_j, dtype=np.int64)]), minlength=len(nc))
    _require(old_seen.size == len(oc) and bool((old_seen == 1).all()),
             f"{int((old_seen != 1).sum())} old cable(s) not counted exactly once")
    _require(new_seen.size == len(nc) and bool((new_seen == 1).all()),
             f"{int((new_seen != 1).sum())} new cable(s) not claimed exactly once")
    new_names = {d.name for d in new.devices}
    gone = np.array([rename.get(d.name, d.name) not in new_names for d in old.devices] or [False], dtype=bool)
    old_names = {rename.get(d.name, d.name) for d in old.devices}
    came = np.array([d.name not in old_names for d in new.devices] or [False], dtype=bool)
    kept_old = np.zeros(len(oc), dtype=bool)
    kept_old[si] = True
    kept_new = np.zeros(len(nc), dtype=bool)
    kept_new[sj] = True
    stray = kept_old & (gone[oc.a_idx] | gone[oc.b_idx]) if len(oc) else kept_old
    _require(not stray.any(), f"{int(stray.sum())} cable(s) of removed devices neither removed nor re-plugged")
    stray = kept_new & (came[nc.a_idx] | came[nc.b_idx]) if len(nc) else kept_new
    _require(not stray.any(), f"{int(stray.sum())} cable(s) of added devices neither added nor re-plugged")


def gate_hits(d: dict, fail_on: set[str]) -> list[str]:
    """Which of the `--fail-on` kinds (FAIL_ON) the diff `d` hits, in FAIL_ON order."""
    c = d["counts"]
    count = {"added": c["cables_added"] + c["devices_added"], "removed": c["cables_removed"] + c["devices_removed"],
             "changed": c["cables_changed"] + c["devices_changed"],
             "physical": c["cables_physical"] + c["devices_moved"],
             "relabeled": c["cables_relabeled"] + c["devices_relabeled"]}
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
