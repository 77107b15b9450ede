"""plan.json (the whole plan) and plan.schema.json (its JSON Schema)."""

from __future__ import annotations

import hashlib
from importlib import resources

from ..catalog.nos import plan_schema_text
from ..check import CheckResults
from ..plan.model import Plan
from ..plan.serialize import plan_digest, plan_json_parts
from .writer import OutputDir


def schema_text() -> str:
    """The plan's JSON Schema, its NOS enum filled from the NOS registry."""
    return plan_schema_text((resources.files("compiler.plan") / "plan.schema.json").read_text(encoding="utf-8"))


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    digest = hashlib.sha256()
    out.write_chunks("plan.json", plan_json_parts(plan), also=digest.update)  # each part hashed as it is written
    plan_digest(plan, digest.hexdigest())  # the manifest's plan identity, from the text written
    out.write_text("plan.schema.json", schema_text())
