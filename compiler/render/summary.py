"""summary.json: the short contract scripts read (see README, "summary.json")."""

from __future__ import annotations

import json

from ..plan.model import Plan
from ..plan.summary import summarize
from .writer import OutputDir


def render(plan: Plan, out: OutputDir) -> None:
    out.write_text("summary.json", json.dumps(summarize(plan), indent=2) + "\n")
