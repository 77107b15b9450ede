"""Digital twins: boot a compiled fabric on this machine with the real control plane
and compare what it does with what the plan predicts. One runner per protocol."""

from __future__ import annotations

from ..plan.model import Plan
from .ethernet import TwinOptions, TwinUnavailable
from . import ethernet


def protocol(plan: Plan) -> str:
    # Only Ethernet plans carry a routing plan (addresses, ASNs); InfiniBand fabrics are
    # routed by the subnet manager.
    return "ethernet" if plan.routing is not None else "infiniband"


def _infiniband(plan: Plan, options: TwinOptions) -> dict:
    raise TwinUnavailable("the InfiniBand twin (ibsim + OpenSM) is not wired into `clusterc twin` yet; "
                          "this command boots Ethernet (RoCE) fabrics")


# protocol -> runner(plan, options) -> report dict
TWINS = {"ethernet": ethernet.run, "infiniband": _infiniband}


def run_twin(plan: Plan, options: TwinOptions) -> dict:
    return TWINS[protocol(plan)](plan, options)


__all__ = ["TwinOptions", "TwinUnavailable", "run_twin", "protocol", "TWINS"]
