"""Budgets: ports within radix and per-cage breakout rules, matched speeds. Reach and
rack power, which need a physical layout, are in physical.py."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..plan.views import cage_table, link_end_cages, link_ends
from .context import CheckContext
from .figures import Figures
from .findings import Finding
from .invariants import PORT_IDS_BROKEN, plan_invariants_once


@dataclass(frozen=True)
class BudgetsFigures(Figures):
    ports_used: int  # link ends
    ports_total: int


def check_budgets(ctx: CheckContext) -> tuple[BudgetsFigures, list[Finding]]:
    plan = ctx.plan
    findings = list(plan_invariants_once(plan))  # radix, port reuse, speed match: errors if broken
    links = plan.links
    figures = BudgetsFigures(ports_used=2 * len(links), ports_total=plan.port_count())
    if any(f.code in PORT_IDS_BROKEN for f in findings):
        return figures, findings  # the cage table would be read at ports no device holds
    if len(plan.media) < 2:
        return figures, findings  # one medium: no cage can carry two
    cage = plan.memo("cage_table", cage_table)[0]
    offsets = plan.port_offsets()
    ends, cages = link_ends(plan), link_end_cages(plan)
    # A twin-port module is one medium: both ports of a cage must use the same one. Each cage
    # keeps the medium of one of its link ends (the last written); an end of another medium
    # marks its cage mixed. Linear: a sort of every link end would grow n log n.
    kept = np.zeros(int(cage.max(initial=-1)) + 1, dtype=links.media.dtype)
    for c in cages:
        kept[c] = links.media
    mixed = [c[links.media != kept[c]] for c in cages]
    if any(m.size for m in mixed):
        first = min(int(m.min()) for m in mixed if m.size)  # the lowest mixed cage: the finding names one, the same every run
        # its first link end, a ends before b ends
        gid = next(int(g[np.argmax(c == first)]) for g, c in zip(ends, cages, strict=True) if (c == first).any())
        dev = int(np.searchsorted(offsets, gid, side="right") - 1)
        port = plan.layouts[plan.devices[dev].layout].ports[gid - int(offsets[dev])]
        findings.append(Finding("CAGE_MIXED_MEDIA", "error",
                                f"cage {port.cage} of {plan.devices[dev].name} carries two media; one module serves the whole cage",
                                f"{plan.devices[dev].name}:{port.cage}"))
    return figures, findings
