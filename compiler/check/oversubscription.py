"""Oversubscription per tier, measured from the plan: for every switch, bandwidth of its
links to the tier below vs the tier above. Top-tier switches have no uplinks and no ratio.

Where the design records the ratio the spec asked for (`design.oversubscription`, Clos
fabrics), every switch of that role is compared with it: one measuring better or worse
is a warning, never silent. A leaf of a partial SU measures better (its uplinks are
bought for servers that are not there); a leaf without GPU servers (endpoints only) is
not a compute leaf and is not compared."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..topology.records import ClosRecord, PlanesRecord
from .context import CheckContext
from .figures import Figures, to_json
from .findings import Finding


@dataclass(frozen=True)
class TierRatio:
    """down:up bandwidth over the switches of one tier that have uplinks."""

    min: str  # as text, e.g. 1:1
    max: str
    min_ratio: float
    max_ratio: float
    worst_switch: str  # the switch at `max`


@dataclass(frozen=True)
class OversubscriptionFigures(Figures):
    tiers: dict[str, TierRatio]  # by tier: leaf, spine, core; router; tier<N> where two tiers share a role

    def as_json(self) -> dict:
        return to_json(self.tiers)  # checks.json keys the tiers directly


def ratio_text(down: float, up: float) -> str:
    """'1:1', '2:1', '31:32'; a decimal ratio where the fraction would be unreadable."""
    if up == 0:
        return "inf"
    f = Fraction(int(round(down)), int(round(up)))
    if f.numerator <= 1000 and f.denominator <= 1000:
        return f"{f.numerator}:{f.denominator}"
    return f"{down / up:.2f}:1"


def check_oversubscription(ctx: CheckContext) -> tuple[OversubscriptionFigures, list[Finding]]:
    g, tier = ctx.graph, ctx.switch_tier
    down = np.bincount(g.at_switch, weights=g.at_cap_gbps, minlength=g.n)
    up = np.zeros(g.n)
    # A link between switches of one tier (torus, dragonfly local/global) is network-facing
    # at both ends: it counts as "up" for both.
    level = tier[g.a] == tier[g.b]
    lo = np.where(tier[g.a] < tier[g.b], g.a, g.b)
    hi = np.where(tier[g.a] < tier[g.b], g.b, g.a)
    np.add.at(up, lo, g.cap_gbps)
    np.add.at(down, hi[~level], g.cap_gbps[~level])
    np.add.at(up, hi[level], g.cap_gbps[level])
    tiers: dict[str, TierRatio] = {}
    findings = []
    for t in sorted(set(tier.tolist()) - {0}):  # tier 0: chips of a direct network, no up/down
        sel = (tier == t) & (up > 0) & ~ctx.management  # a management leaf's ratio says nothing of GPU traffic
        if not sel.any():
            continue
        ratios = down[sel] / up[sel]
        i_min, i_max = int(np.argmin(ratios)), int(np.argmax(ratios))
        idx = np.nonzero(sel)[0]
        name = str(ctx.switch_role[idx[0]])  # leaf, spine, core; router
        if name in tiers:
            name = f"tier{t}"
        tiers[name] = TierRatio(
            min=ratio_text(down[idx[i_min]], up[idx[i_min]]),
            max=ratio_text(down[idx[i_max]], up[idx[i_max]]),
            min_ratio=round(float(ratios[i_min]), 4),
            max_ratio=round(float(ratios[i_max]), 4),
            worst_switch=ctx.plan.devices[int(g.device_of[idx[i_max]])].name,
        )
        mgmt = int(((tier == t) & ctx.management).sum())
        findings.append(Finding("OVERSUBSCRIPTION", "info",
                                f"{name}: down:up bandwidth {tiers[name].min} to {tiers[name].max} "
                                f"over {int(sel.sum())} switches"
                                + (f" ({mgmt} management leaves of extra endpoints not counted)" if mgmt else ""), name))
    findings += _not_as_requested(ctx, down, up)
    return OversubscriptionFigures(tiers), findings


def _not_as_requested(ctx: CheckContext, down: np.ndarray, up: np.ndarray) -> list[Finding]:
    g = ctx.graph
    has_gpus = np.zeros(g.n, dtype=bool)
    has_gpus[g.at_switch[g.at_is_gpu_server]] = True
    out = []
    for role, text in (ctx.plan.view.design.oversubscription or {}).items():
        want = Fraction(*(int(x) for x in text.split(":")))
        sel = (ctx.switch_role == role) & (up > 0) & (has_gpus if role == "leaf" else True)
        idx = np.nonzero(sel)[0]
        d, u = np.rint(down[idx]).astype(np.int64), np.rint(up[idx]).astype(np.int64)
        off = d * want.denominator != u * want.numerator
        if not off.any():
            continue
        groups: dict[str, list[int]] = {}
        for i in np.nonzero(off)[0]:
            groups.setdefault(ratio_text(d[i], u[i]), []).append(int(idx[i]))
        parts, any_worse = [], False
        for measured, switches in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            first = ctx.plan.devices[int(g.device_of[switches[0]])].name
            better = Fraction(int(d[idx == switches[0]][0]), int(u[idx == switches[0]][0])) < want
            any_worse |= not better
            parts.append(f"{len(switches)} at {measured} ({'better' if better else 'worse'} than asked; e.g. {first})")
        n_off = int(off.sum())
        built = _leaf_built_below(ctx, want) if role == "leaf" else None
        partial = (" A leaf with fewer servers than downlinks (a partial SU or last leaf) has uplinks bought for servers "
                   "that are not there." if role == "leaf" else
                   " A spine of a partial pod has downlinks no leaf uses yet." if role == "spine" else "")
        if built is not None:
            text_built, b_down, b_up, bw_down, bw_up = built
            why = (f" Every leaf is built at {b_down} down : {b_up} up ({text_built}), less oversubscribed than asked, "
                   f"because no leaf at exactly {text} is as cheap or builds the fabric (the design notes say which).")
            if (d * bw_up != u * bw_down)[off].any():
                why += partial
        else:
            why = partial
        # Worse than asked is a warning; only better (uplinks bought for a slot a UFM or an
        # empty last SU does not fill, as in NVIDIA's own 31-DGX SU) is worth knowing, no more.
        out.append(Finding("OVERSUBSCRIPTION_NOT_AS_REQUESTED", "warning" if any_worse else "info",
                           f"{role}: {n_off} of {idx.size} switches do not measure the {text} asked: "
                           + "; ".join(parts) + "." + why, role))
    return out


def _leaf_built_below(ctx: CheckContext, want: Fraction) -> tuple[str, int, int, int, int] | None:
    """(ratio text, downlinks, uplinks, down Gb/s, up Gb/s) of the leaf as designed
    (expand/unit_choice.py) where it is below the ratio asked: the default unit may give a
    leaf more uplinks than the ratio needs where that is cheaper; None where the leaf is
    built at the ratio asked. The ratio is bandwidth (800G uplinks over 400G downlinks)."""
    view = ctx.plan.view
    ports = view.design.leaf_ports if isinstance(view.design, (ClosRecord, PlanesRecord)) else None  # a leaf tier
    if ports is None or not ports.up:
        return None
    down, up = ports.down, ports.up
    down_gbps, up_gbps = view.design.speed_gbps, view.uplink_gbps
    bw_down, bw_up = down * down_gbps, up * up_gbps
    return None if Fraction(bw_down, bw_up) == want else (ratio_text(bw_down, bw_up), down, up, bw_down, bw_up)
