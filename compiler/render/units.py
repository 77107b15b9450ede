"""Figures as a person reads them in the pages we render (report.html)."""

from __future__ import annotations


def rate_text(gbps: float) -> str:
    """A bandwidth as people say it: Gb/s below 1 Tb/s, else Tb/s (800 Gb/s, 204.8 Tb/s)."""
    return f"{gbps:,.4g} Gb/s" if gbps < 1000 else f"{gbps / 1000:,.4g} Tb/s"
