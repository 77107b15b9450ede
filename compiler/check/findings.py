"""Findings: what a check reports about a plan."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finding:
    code: str  # stable, e.g. PORT_REUSED, BISECTION_BELOW_REQUIREMENT
    severity: str  # error | warning | info
    message: str  # human text with numbers and units
    where: str = ""  # device, device:port, or tier
    fabric: str = "compute"  # the fabric judged: compute, or an extra fabric's name (storage, oob, ...)

    def as_dict(self) -> dict:
        return {"code": self.code, "severity": self.severity, "message": self.message, "where": self.where,
                "fabric": self.fabric}
