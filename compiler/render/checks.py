"""report/checks.json: every check's figures and findings (the same data `clusterc check --format json` prints)."""

from __future__ import annotations

import json

from ..check import report_for
from ..plan.model import Plan
from .writer import OutputDir


def render(plan: Plan, out: OutputDir) -> None:
    out.write_text("report/checks.json", json.dumps(report_for(plan), indent=2) + "\n")
