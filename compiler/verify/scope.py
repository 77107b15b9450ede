"""Which planned cables the input should show (partial bring-up is normal).

- `--scope su1,su2,pod3,<rack>,<device>` (or `all`) names what must already be there:
  a cable is in scope when one of its devices is named and the other is named too,
  belongs to no scalable unit (the spines and cores every SU shares), or hangs below
  it (a named leaf brings its servers). In scope, a cable with no
  reporting end cannot be checked; every other one is expected.
- Without --scope, whatever the input does not show at all is "not seen" rather than
  missing: a whole SU, rack or role (servers that send no LLDP), or a single device.
  A cable is expected when both its devices appear in the input (reporting or as
  someone's neighbour) and one of them reported.

Groups are the plan's: SU for devices that have one, else pod, else rack (with a layout).
Cost: O(devices + cables) numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..diagnostics import Diagnostic, SpecInvalid
from ..plan.model import Plan
from ..diagnostics import nearest


@dataclass
class Scope:
    in_scope: np.ndarray  # per cable
    expected: np.ndarray  # per cable: should be seen
    not_seen: list[dict]  # what the input does not show, with the cables it hides


def _device_groups(plan: Plan) -> list[str | None]:
    racks = None
    if plan.physical is not None:
        names = [r.name for r in plan.physical.racks]
        racks = [names[r] for r in plan.physical.dev_rack.tolist()]
    out: list[str | None] = []
    for i, d in enumerate(plan.devices):
        if d.su is not None:
            out.append(f"su{d.su}")
        elif d.pod is not None and d.tier <= 2:
            out.append(f"pod{d.pod}")
        elif racks is not None and d.tier == 0:
            out.append(racks[i])
        else:
            out.append(None)
    return out


def selected_devices(plan: Plan, tokens: list[str]) -> np.ndarray:
    """Devices named by --scope tokens: all, suN, podN, a rack name, a device name."""
    racks = [r.name for r in plan.physical.racks] if plan.physical is not None else []
    dev_rack = plan.physical.dev_rack if plan.physical is not None else None
    names = {d.name: i for i, d in enumerate(plan.devices)}
    sel = np.zeros(len(plan.devices), dtype=bool)
    unknown = []
    for tok in tokens:
        hit = np.zeros(len(plan.devices), dtype=bool)
        if tok == "all":
            hit[:] = True
        elif tok in names:
            hit[names[tok]] = True
        elif tok in racks:
            hit = np.asarray(dev_rack == racks.index(tok), dtype=bool)
        elif tok[:2] == "su" and tok[2:].isdigit():
            hit = np.array([d.su == int(tok[2:]) for d in plan.devices], dtype=bool)
        elif tok[:3] == "pod" and tok[3:].isdigit():
            hit = np.array([d.pod == int(tok[3:]) for d in plan.devices], dtype=bool)
        if not hit.any():
            unknown.append(tok)
        sel |= hit
    if unknown:
        sus = sorted({f"su{d.su}" for d in plan.devices if d.su is not None})
        pods = sorted({f"pod{d.pod}" for d in plan.devices if d.pod is not None})
        known = ["all"] + sus + pods + racks + list(names)
        raise SpecInvalid([Diagnostic("VERIFY_SCOPE_UNKNOWN", f"no SU, pod, rack or device named {tok!r} in the plan",
                                      path="--scope", hint=nearest(tok, known)) for tok in unknown])
    return sel


def decide(plan: Plan, seen_dev: np.ndarray, reporting_dev: np.ndarray, scope_tokens: list[str] | None) -> Scope:
    links = plan.links
    a, b = links.a_dev, links.b_dev
    roles = np.array([d.role for d in plan.devices], dtype=object)
    role_seen = {r: bool(seen_dev[roles == r].any()) for r in dict.fromkeys(roles.tolist())}
    role_ok = np.array([role_seen[r] for r in roles.tolist()], dtype=bool)
    groups = _device_groups(plan)
    not_seen: list[dict] = []

    if scope_tokens:
        sel = selected_devices(plan, scope_tokens)
        shared = np.array([d.su is None and d.tier > 0 for d in plan.devices], dtype=bool)
        tier = np.array([d.tier for d in plan.devices])
        in_scope = ((sel[a] & (sel[b] | shared[b] | (tier[b] < tier[a])))
                    | (sel[b] & (sel[a] | shared[a] | (tier[a] < tier[b]))))
        visible = role_ok[a] & role_ok[b]
        checkable = reporting_dev[a] | reporting_dev[b]
        expected = in_scope & visible & checkable
        _explain(plan, in_scope & ~(visible & checkable), a, b, roles, role_seen, reporting_dev, seen_dev, not_seen,
                 scoped=True)
        return Scope(in_scope, expected, not_seen)

    in_scope = np.ones(len(links), dtype=bool)
    expected = seen_dev[a] & seen_dev[b] & (reporting_dev[a] | reporting_dev[b])
    hidden = ~expected
    # the coarsest honest explanation first: a role, then a group (SU/pod/rack), then a device
    for role, ok in role_seen.items():
        mask = hidden & ((roles[a] == role) | (roles[b] == role))
        if not ok and mask.any():
            not_seen.append({"what": "role", "name": role, "cables": int(mask.sum()),
                             "reason": f"no {role} appears in the input" + (" (hosts send no LLDP?)" if role == "server" else "")})
            hidden &= ~mask
    g = np.array([x or "" for x in groups], dtype=object)
    group_seen: dict[str, bool] = {}
    for name in dict.fromkeys(x for x in groups if x):
        group_seen[name] = bool(seen_dev[g == name].any())
    for name, ok in group_seen.items():
        if ok:
            continue
        mask = hidden & ((g[a] == name) | (g[b] == name))
        if mask.any():
            not_seen.append({"what": "group", "name": name, "cables": int(mask.sum()),
                             "reason": f"no device of {name} appears in the input"})
            hidden &= ~mask
    _explain(plan, hidden, a, b, roles, role_seen, reporting_dev, seen_dev, not_seen, scoped=False)
    return Scope(in_scope, expected, not_seen)


def _explain(plan, hidden, a, b, roles, role_seen, reporting_dev, seen_dev, not_seen, scoped: bool) -> None:
    if not hidden.any():
        return
    idx = np.flatnonzero(hidden)
    if scoped:
        for role, ok in role_seen.items():
            mask = (roles[a[idx]] == role) | (roles[b[idx]] == role)
            if not ok and mask.any():
                not_seen.append({"what": "role", "name": role, "cables": int(mask.sum()),
                                 "reason": f"no {role} appears in the input" + (" (hosts send no LLDP?)" if role == "server" else "")})
                idx = idx[~mask]
    absent = ~seen_dev
    per_dev = np.bincount(np.concatenate([a[idx][absent[a[idx]]], b[idx][absent[b[idx]]]]), minlength=len(plan.devices))
    for d in np.flatnonzero(per_dev).tolist():
        not_seen.append({"what": "device", "name": plan.devices[d].name, "cables": int(per_dev[d]),
                         "reason": "not in the input (powered off, not cabled, or its discovery output not collected)"})
    silent = ~absent[a[idx]] & ~absent[b[idx]] & ~reporting_dev[a[idx]] & ~reporting_dev[b[idx]]
    if silent.any():
        not_seen.append({"what": "cables", "name": "no reporting end", "cables": int(silent.sum()),
                         "reason": "neither end's own discovery output is in the input (only seen as neighbours)"})
