"""Axis ticks for the plots (report.html's bars, explore.html's front): round values
1, 2 or 5 times a power of ten apart, and their text."""

from __future__ import annotations

import math


def nice_ticks(lo: float, hi: float, count: int = 5) -> tuple[list[float], float]:
    """Round tick values inside [lo, hi], 1, 2 or 5 times a power of ten apart, about
    `count` of them, and that step. The axis spans [lo, hi] itself: no empty margin to
    reach a round end."""
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    raw = (hi - lo) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    v = first
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v = first + len(ticks) * step
    return ticks, step


def tick_text(v: float, step: float) -> str:
    if step >= 1:
        return f"{v:,.0f}"
    decimals = max(0, -math.floor(math.log10(step)))
    return f"{v:,.{decimals}f}"
