"""What each topology family brings to the checks, registered by family name
(compiler/topology/ maps each `fabric.topology` value to its family). A family module has
`bisection_gbps(plan, graph) -> (Gb/s or None, formula)`, its closed form, and
`cuts(plan, graph, servers, first_at) -> [Cut]`, the balanced cuts its structure suggests
beyond the generic ones (check/cuts.py), optionally `cuts_through(plan, graph, servers, first_at, u, v)`, its cuts across a lost
link u-v beyond the generic ones, `exhaustive(plan, graph)`, whether those cuts try
every balanced split (the worst is then exact, not an upper bound), and `max_hops(plan, edge_switches)`, the longest
GPU-to-GPU path in the hops check's unit from the structure (None where it has none)."""

from __future__ import annotations

from types import ModuleType

from ...plan.model import Plan
from ...topology import topology
from . import clos, direct, dragonfly, planes, torus

# family name -> its module. The one registry line a new family adds here.
FAMILIES: dict[str, ModuleType] = {
    "clos": clos,
    "torus": torus,
    "dragonfly": dragonfly,
    "planes": planes,
    "direct": direct,
}


def family_of(plan: Plan) -> ModuleType:
    return FAMILIES[topology(plan.view.design.topology).family]
