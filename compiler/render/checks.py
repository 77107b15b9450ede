"""report/checks.json: every check's figures and findings (the same data `clusterc check --format json` prints)."""

from __future__ import annotations

import json

from ..check import CheckResults
from ..plan.model import Plan
from .writer import OutputDir


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    out.write_text("report/checks.json", json.dumps(checks.as_json(), indent=2) + "\n")
