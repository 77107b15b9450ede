"""The spec's lists of what may be bought and run: `requirements.switch_models` (catalog ids
allowed on any tier of any fabric) and `requirements.nos` (switch operating systems).
Judged on the whole plan (every fabric), from the plan's own facts, so a plan.json checks
the same as the spec it came from.
"""

from __future__ import annotations

from ..plan.fabrics import fabric_names, fabric_record
from ..plan.model import Plan
from .findings import Finding


def _switches_by_model(plan: Plan, devices=None) -> dict[str, dict[str, int]]:
    """model -> 'role' (or 'fabric role' off the compute fabric) -> count, in plan order."""
    out: dict[str, dict[str, int]] = {}
    for i in devices if devices is not None else range(len(plan.devices)):
        d = plan.devices[i]
        rec = plan.view.facts.model(d.model)
        if d.tier > 0 and rec is not None and rec.kind == "switch":
            where = d.role if d.fabric == "compute" else f"{d.fabric} {d.role}"
            per = out.setdefault(d.model, {})
            per[where] = per.get(where, 0) + 1
    return out


def _count_text(per: dict[str, int]) -> str:
    return ", ".join(f"{n:,} {where}" for where, n in per.items())


def switch_models_result(plan: Plan, allowed: list[str]) -> tuple[dict, list[Finding]]:
    used = _switches_by_model(plan)
    bad = [m for m in used if m not in allowed]
    findings = [Finding("SWITCH_MODEL_NOT_ALLOWED", "error",
                        f"{m} ({_count_text(used[m])}) is not an allowed switch model; allowed: {', '.join(allowed)}", m)
                for m in bad]
    return {"name": "switch_models", "ok": not bad, "required": allowed, "measured": list(used)}, findings


def nos_result(plan: Plan, allowed: list[str]) -> tuple[dict, list[Finding]]:
    """Per network fabric: the NOS its configs are written for must be allowed; a fabric
    with none named must have switch models that each run an allowed one (catalog `nos:`)."""
    measured: dict[str, str | None] = {}
    findings = []
    for name in fabric_names(plan):
        fab = fabric_record(plan, name)
        nos = fab.routing.nos if fab.routing is not None else None
        measured[name] = nos
        label = "" if len(fabric_names(plan)) == 1 else f"fabric {name}: "
        if nos is not None:
            if nos not in allowed:
                findings.append(Finding("NOS_NOT_ALLOWED", "error",
                                        f"{label}configs are written for {nos}, which is not an allowed NOS "
                                        f"({', '.join(allowed)})", name))
            continue
        for model, per in _switches_by_model(plan, fab.devices).items():
            rec = plan.view.facts.models[model]
            runs = rec.nos
            if runs is None:  # a plan.json from before the facts carried it: unknown, not passed
                findings.append(Finding("NOS_NOT_RECORDED", "error",
                                        f"{label}the plan does not record which NOS {model} runs; recompile it from its spec",
                                        model))
            elif not set(runs) & set(allowed):
                why = (f"its catalog entry lists {', '.join(runs)}" if runs else
                       "it is an InfiniBand switch, configured by its subnet manager" if plan.view.model_protocol(model) == "infiniband"
                       else "its catalog entry lists no NOS")
                findings.append(Finding("NOS_NOT_ALLOWED", "error",
                                        f"{label}{model} ({_count_text(per)}) runs none of the allowed NOS "
                                        f"({', '.join(allowed)}): {why}", model))
    return {"name": "nos", "ok": not findings, "required": allowed, "measured": measured}, findings
