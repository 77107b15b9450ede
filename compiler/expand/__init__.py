"""Lowering: spec -> design -> plan. One module per topology family, registered in expand/families.py."""

from __future__ import annotations

from .. import cyclic_gc
from ..plan.fabrics import COMPUTE, fabric_plan, seal_views, single_fabric
from ..plan.model import Plan
from ..spec.load import LoadedSpec
from . import addressing, extra_fabrics, facts, layout, management, requirements, scale_up, sonic_platform
from .families import resolve_and_build
from .resolve import ClosDesign


def _routed(design) -> bool:
    """An Ethernet Clos gets an addressing and BGP plan: the Clos families, and multi-plane,
    whose planes are Clos fabrics (expand/planes.py)."""
    clos = isinstance(design, ClosDesign) or getattr(design, "plane", None) is not None
    return clos and design.switch.protocol == "ethernet"


def expand(loaded: LoadedSpec) -> Plan:
    """The plan of a validated spec. With the cyclic GC paused: the devices, layouts and
    catalog records it builds hold no cycles, and at 131,072 GPUs its collections were
    about a third of the stage's CPU (cyclic_gc.py)."""
    with cyclic_gc.paused():
        return _expand(loaded)


def _expand(loaded: LoadedSpec) -> Plan:
    design, plan = resolve_and_build(loaded)
    requirements.check_named_parts(loaded, plan)  # roles and link kinds of the built fabric
    extra_designs: list[tuple[int, ClosDesign]] = []
    if loaded.spec.fabrics:  # storage / in-band / out-of-band fabrics beside the compute one
        plan, extra_designs = extra_fabrics.attach(loaded, design, plan)
    else:
        plan.fabrics = single_fabric(plan)
    if loaded.spec.layout is not None:
        layout.apply(plan, design, loaded, extra_designs)
    facts.attach(plan, design.catalog)
    facts.attach_bom(plan, loaded)
    plan.scale_up = scale_up.scale_up_domains(design.catalog.servers[plan.design_record.server], plan.design_record.servers)
    spec = loaded.spec
    plan.requirements = spec.requirements.model_dump(mode="json", exclude_none=True) if spec.requirements else {}
    if spec.requirements and spec.requirements.max_oversubscription:
        plan.requirements["max_oversubscription"] = {k: str(v) for k, v in spec.requirements.max_oversubscription.items()}
    plan.analysis = {"collectives": spec.collectives.model_dump(mode="json")}
    if _routed(design):
        compute = fabric_plan(plan)  # the plan itself for one fabric
        # sized to the compute fabric, a prefix of the plan's devices and links: no padding
        plan.routing = compute.routing = plan.fabrics[COMPUTE].routing = compute.fabrics[COMPUTE].routing = \
            addressing.plan_routing(loaded, design, compute)
    if extra_designs:
        extra_fabrics.route(loaded, plan, extra_designs, _routed(design))
        for i, _ in extra_designs:  # the management cords' lengths, from the places layout gave
            management.cord_lengths(loaded, i, plan, design.catalog)
    plan.notes += sonic_platform.notes(plan)
    seal_views(plan)  # the typed contract every later stage reads (plan/fabric_view.py), per fabric
    return plan
