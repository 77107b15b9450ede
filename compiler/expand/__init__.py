"""Lowering: spec -> design -> plan. One builder per topology family, registered by `kind`."""

from __future__ import annotations

from ..diagnostics import SpecInvalid
from ..plan.fabrics import COMPUTE, fabric_plan, single_fabric
from ..plan.model import Plan
from ..spec.load import LoadedSpec
from ..spec.model import CLOS_TOPOLOGIES
from . import addressing, clos, direct, dragonfly, fabrics, facts, layout, planes, scale_up, torus
from .resolve import ClosDesign, resolve

# topology kind -> resolver(loaded spec) -> that family's design (catalog resolved, sized).
RESOLVERS = {
    "fat-tree": resolve,
    "rail-optimized": resolve,
    "torus": torus.resolve,
    "mesh": torus.resolve,
    "dragonfly": dragonfly.resolve,
    "dragonfly+": dragonfly.resolve,
    "rail-only": planes.resolve,
    "multi-plane": planes.resolve,
    "ring": direct.resolve,
    "full-mesh": direct.resolve,
}

# topology kind -> builder(design) -> Plan.
BUILDERS = {
    "fat-tree": clos.build,
    "rail-optimized": clos.build,
    "torus": torus.build,
    "mesh": torus.build,
    "dragonfly": dragonfly.build,
    "dragonfly+": dragonfly.build,
    "rail-only": planes.build,
    "multi-plane": planes.build,
    "ring": direct.build,
    "full-mesh": direct.build,
}


def expand(loaded: LoadedSpec) -> Plan:
    kind = loaded.spec.fabric.topology
    if loaded.spec.layout is not None and kind not in CLOS_TOPOLOGIES:
        # Placement and cable lengths are built for Clos designs (leaf/spine/core racks).
        raise SpecInvalid([loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("layout",),
            f"physical layout (racks, cable lengths) is not supported on topology '{kind}' yet",
            "remove `layout:`, or use a fat-tree or rail-optimized fabric")])
    if loaded.spec.growth is not None and kind not in CLOS_TOPOLOGIES:
        # Building upper tiers ahead is a Clos idea (a ring's or mesh's matchings even change
        # with n); silently ignoring the key would promise a cable-stable growth nobody planned.
        raise SpecInvalid([loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("growth",), f"growth planning is not supported on topology '{kind}' yet",
            "remove `growth:` (clusterc diff shows what growing would move), or use a fat-tree or rail-optimized fabric")])
    design = RESOLVERS[kind](loaded)
    plan = BUILDERS[kind](design)
    extra_designs = []
    if loaded.spec.fabrics:  # storage / in-band / out-of-band fabrics beside the compute one
        plan, extra_designs = fabrics.attach(loaded, design, plan)
    else:
        plan.fabrics = single_fabric(plan)
    if loaded.spec.layout is not None:
        layout.apply(plan, design, loaded, extra_designs)
    facts.attach(plan, design.catalog)
    facts.attach_bom(plan, loaded)
    plan.scale_up = scale_up.scale_up_domains(design.catalog.servers[plan.design["server"]], plan.design["servers"])
    spec = loaded.spec
    plan.requirements = spec.requirements.model_dump(mode="json", exclude_none=True) if spec.requirements else {}
    if spec.requirements and spec.requirements.max_oversubscription:
        plan.requirements["max_oversubscription"] = {k: str(v) for k, v in spec.requirements.max_oversubscription.items()}
    plan.analysis = {"collectives": spec.collectives.model_dump(mode="json")}
    if isinstance(design, ClosDesign) and design.switch.protocol == "ethernet":
        compute = fabric_plan(plan)  # the plan itself for one fabric
        # sized to the compute fabric, a prefix of the plan's devices and links: no padding
        plan.routing = compute.routing = plan.fabrics[COMPUTE].routing = compute.fabrics[COMPUTE].routing = \
            addressing.plan_routing(loaded, design, compute)
    if extra_designs:
        fabrics.route(loaded, plan, extra_designs, isinstance(design, ClosDesign) and design.switch.protocol == "ethernet")
    return plan
