"""A plan from a compiled output folder or its plan.json (a spec is the pipeline's to
build: pipeline.load_plan)."""

from __future__ import annotations

import json
from pathlib import Path

from ..diagnostics import Diagnostic, SpecInvalid
from .model import Plan
from .serialize import plan_from_json


def read_plan_json(path: str | Path) -> Plan:
    p = Path(path)
    if p.is_dir():
        p = p / "plan.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        return plan_from_json(data)
    except OSError as exc:
        raise SpecInvalid([Diagnostic("PLAN_UNREADABLE", f"cannot read: {exc.strerror}", file=str(p))]) from None
    except (ValueError, KeyError, TypeError, IndexError) as exc:
        raise SpecInvalid([Diagnostic("PLAN_INVALID", f"not a clusterc plan.json: {exc}", file=str(p),
                                      hint="give a spec (.yaml), a compiled output folder or its plan.json")]) from None
