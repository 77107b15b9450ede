"""Oversubscription per tier, measured from the plan: for every switch, bandwidth of its
links to the tier below vs the tier above. Top-tier switches have no uplinks and no ratio."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

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
        sel = (tier == t) & (up > 0)
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
        findings.append(Finding("OVERSUBSCRIPTION", "info",
                                f"{name}: down:up bandwidth {tiers[name].min} to {tiers[name].max} "
                                f"over {int(sel.sum())} switches", name))
    return OversubscriptionFigures(tiers), findings
