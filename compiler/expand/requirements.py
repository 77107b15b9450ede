"""Requirements that name parts of the design, checked against the built plan: a `survive`
or `max_oversubscription` role, or a link kind, the compute fabric does not have would pass
without being examined, so it is a spec error at its line, listing what the fabric has."""

from __future__ import annotations

import numpy as np

from ..diagnostics import Diagnostic, SpecInvalid, nearest
from ..plan.fabrics import fabric_plan
from ..plan.graph import fabric_graph
from ..plan.model import Plan
from ..spec.load import LoadedSpec
from ..topology import switch_roles, topology


def fabric_roles(plan: Plan) -> list[str]:
    """The switch roles the compute fabric has, in plan order."""
    known = set(topology(plan.design_record.topology).switch_roles)
    return [r for r in fabric_plan(plan).roles() if r in known]


def fabric_link_kinds(plan: Plan) -> list[str]:
    """The kinds of the compute fabric's own links (between switches, chips or the servers
    of a switchless fabric): the links `survive.link` fails."""
    compute = fabric_plan(plan)
    g = fabric_graph(compute)
    return sorted(compute.link_kinds[int(k)] for k in np.unique(compute.links.kind[g.link]))


def check_named_parts(loaded: LoadedSpec, plan: Plan) -> None:
    """Raises SpecInvalid for each survive or max_oversubscription key naming a switch role
    or link kind the compute fabric lacks."""
    req = loaded.spec.requirements
    if req is None:
        return
    name = plan.design_record.topology
    errors: list[Diagnostic] = []
    have = fabric_roles(plan)
    listed = ", ".join(have) if have else "none (its links are the only fabric elements: use link)"
    for role in req.max_oversubscription or {}:
        if role not in have:
            errors.append(loaded.diagnostic(
                "SPEC_OVERSUBSCRIPTION_UNKNOWN_ROLE", ("requirements", "max_oversubscription", role),
                f"this {name} fabric has no {role} switches, so the limit would pass unmeasured; its switch roles: {listed}",
                "remove it" if not have else f"its roles: {listed}"))
    survive = req.survive
    if survive is None:
        if errors:
            raise SpecInvalid(errors)
        return
    if not survive.link and not any(getattr(survive, role) for role in switch_roles()):
        errors.append(loaded.diagnostic(
            "SPEC_SURVIVE_NOTHING", ("requirements", "survive"),
            "survive names no switch and no link to lose, so it would pass without examining anything",
            f"name what must be survived, e.g. {have[-1] if have else 'link'}: 1"))
    for survive_role in switch_roles():
        if getattr(survive, survive_role) and survive_role not in have:
            errors.append(loaded.diagnostic(
                "SPEC_SURVIVE_UNKNOWN_ROLE", ("requirements", "survive", survive_role),
                f"this {name} fabric has no {survive_role} switches, so the requirement would pass unexamined; "
                f"its switch roles: {listed}", nearest(survive_role, have) if have else "use link: N for the fabric's links"))
    kinds = fabric_link_kinds(plan) if (survive.link or survive.link_kind) else []
    if survive.link and not kinds:
        errors.append(loaded.diagnostic(
            "SPEC_SURVIVE_UNKNOWN_ROLE", ("requirements", "survive", "link"),
            f"this {name} fabric has no links between its switches", "remove link"))
    if survive.link_kind is not None and survive.link_kind not in kinds:
        errors.append(loaded.diagnostic(
            "SPEC_SURVIVE_UNKNOWN_LINK_KIND", ("requirements", "survive", "link_kind"),
            f"link kind '{survive.link_kind}': this {name} fabric's links are of kind(s) {', '.join(kinds) or 'none'}",
            nearest(survive.link_kind, kinds)))
    if survive.link_kind is not None and not survive.link:
        errors.append(loaded.diagnostic(
            "SPEC_SURVIVE_LINK_KIND_ALONE", ("requirements", "survive", "link_kind"),
            "survive.link_kind names which links fail, but link (how many) is 0", "add link: 1"))
    if errors:
        raise SpecInvalid(errors)
