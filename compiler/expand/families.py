"""The lowering of each topology family, registered by family name (compiler/topology/
maps each `fabric.topology` value to its family). A family module has
`resolve(loaded) -> design` (catalog resolved, sized) and `build(design) -> Plan`."""

from __future__ import annotations

from types import ModuleType

from ..diagnostics import Diagnostic, SpecInvalid
from ..plan.model import Plan
from ..spec.load import LoadedSpec
from ..topology import Topology, topologies_where, topology
from . import clos, direct, dragonfly, planes, torus

# family name -> its module (resolve, build). The one registry line a new family adds here.
FAMILIES: dict[str, ModuleType] = {
    "clos": clos,
    "torus": torus,
    "dragonfly": dragonfly,
    "planes": planes,
    "direct": direct,
}


def _use(trait: str) -> str:
    return " or ".join(topologies_where(trait))


def unsupported(loaded: LoadedSpec, t: Topology) -> list[Diagnostic]:
    """Spec sections the topology has no support for: a clear error each, never a key
    silently ignored (a layout nobody placed, a growth nobody planned, configs not written)."""
    spec, kind, out = loaded.spec, t.name, []
    if spec.layout is not None and not t.supports_layout:
        out.append(loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("layout",),
            f"physical layout (racks, cable lengths) is not supported on topology '{kind}' yet",
            f"remove `layout:`, or use a {_use('supports_layout')} fabric"))
    if spec.growth is not None and not t.supports_growth:
        # A ring's or mesh's matchings even change with n: there is no cable-stable growth.
        out.append(loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("growth",), f"growth planning is not supported on topology '{kind}' yet",
            f"remove `growth:` (clusterc diff shows what growing would move), or use a {_use('supports_growth')} fabric"))
    if spec.extra_endpoints and not t.supports_extra_endpoints:
        out.append(loaded.diagnostic(
            "SPEC_UNSUPPORTED", ("extra_endpoints",), f"extra_endpoints are not supported on topology '{kind}' yet",
            "remove `extra_endpoints:`"))
    if spec.fabric.nos is not None and not t.supports_nos:
        if t.switch == "none":
            message, hint = f"topology '{kind}' has no switches, so there is no switch OS to configure", "remove fabric.nos"
        else:
            message = f"switch configs (fabric.nos) are not generated for topology '{kind}' yet"
            hint = "remove fabric.nos; the plan, cabling and checks do not need it"
        out.append(loaded.diagnostic("SPEC_UNSUPPORTED", ("fabric", "nos"), message, hint))
    req = spec.requirements
    if req is not None and req.rack_power_kw is not None and spec.layout is None:
        out.append(loaded.diagnostic(
            "SPEC_REQUIREMENT_NEEDS_LAYOUT", ("requirements", "rack_power_kw"),
            "requirements.rack_power_kw judges what each rack draws, and racks exist only with a physical layout",
            "add layout: {rows: N, racks_per_row: M} (the hall), or remove rack_power_kw"))
    return out


def resolve_and_build(loaded: LoadedSpec):
    """The compute fabric's design and plan, by its family. Raises SpecInvalid with the
    unsupported sections and the family's own problems together."""
    t = topology(loaded.spec.fabric.topology)
    family = FAMILIES[t.family]
    refused = unsupported(loaded, t)
    try:
        design = family.resolve(loaded)
    except SpecInvalid as e:
        raise SpecInvalid(refused + e.diagnostics) from None
    if refused:
        raise SpecInvalid(refused)
    plan: Plan = family.build(design)
    return design, plan
