"""Lowering: spec -> design -> plan. One builder per topology family, registered by `kind`."""

from __future__ import annotations

from ..plan.model import Plan
from ..spec.load import LoadedSpec
from . import clos, facts, layout
from .resolve import resolve

# topology kind -> builder(design) -> Plan. Torus, dragonfly, ... add one line each.
BUILDERS = {
    "fat-tree": clos.build,
    "rail-optimized": clos.build,
}


def expand(loaded: LoadedSpec) -> Plan:
    design = resolve(loaded)
    plan = BUILDERS[loaded.spec.fabric.topology](design)
    if loaded.spec.layout is not None:
        layout.apply(plan, design, loaded)
    facts.attach(plan, design.catalog)
    spec = loaded.spec
    plan.requirements = spec.requirements.model_dump(mode="json", exclude_none=True) if spec.requirements else {}
    if spec.requirements and spec.requirements.max_oversubscription:
        plan.requirements["max_oversubscription"] = {k: str(v) for k, v in spec.requirements.max_oversubscription.items()}
    plan.analysis = {"collectives": spec.collectives.model_dump(mode="json")}
    return plan
