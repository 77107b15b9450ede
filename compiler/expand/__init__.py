"""Lowering: spec -> design -> plan. One builder per topology family, registered by `kind`."""

from __future__ import annotations

from ..plan.model import Plan
from ..spec.load import LoadedSpec
from . import addressing, clos, facts
from .resolve import resolve

# topology kind -> builder(design) -> Plan. Torus, dragonfly, ... add one line each.
BUILDERS = {
    "fat-tree": clos.build,
    "rail-optimized": clos.build,
}


def expand(loaded: LoadedSpec) -> Plan:
    design = resolve(loaded)
    plan = BUILDERS[loaded.spec.fabric.topology](design)
    facts.attach(plan, design.catalog)
    if design.switch.protocol == "ethernet":
        plan.routing = addressing.plan_routing(loaded, design, plan)
    return plan
