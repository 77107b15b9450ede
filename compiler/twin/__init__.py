"""Digital twins: boot a compiled fabric on this machine with the real control plane
and compare what it does with what the plan predicts. One runner per protocol."""

from __future__ import annotations

import tempfile

from ..pipeline import write_outputs
from ..plan.model import Plan
from .ethernet import TwinOptions, TwinUnavailable
from . import ethernet, infiniband


def protocol(plan: Plan) -> str:
    """The fabric's switch protocol; a direct network (chips wired to chips) has no twin."""
    proto = plan.view.protocol
    if proto is None:
        raise TwinUnavailable("a direct network (accelerators wired to each other, no switches) has no routing "
                              "daemons or subnet manager to boot")
    return proto


def _infiniband(plan: Plan, options: TwinOptions) -> dict:
    """Render the subnet manager's files (through the pipeline, which also runs the checks:
    seconds on a fabric small enough for a twin), then route the simulated fabric with
    ibsim + OpenSM."""
    if options.fail_link or options.fail_switch or options.swap or options.lldp_out:
        raise TwinUnavailable("--fail-link, --fail-switch, --swap and --lldp-out drive the Ethernet twin; the InfiniBand twin "
                              "routes the fabric as compiled (use compiler.twin.infiniband.run(fabric=...) for as-built cabling)")
    with tempfile.TemporaryDirectory(prefix="clusterc-ib-twin-") as tmp:
        folder = write_outputs(plan, tmp, ["infiniband"])
        try:
            report = infiniband.run(folder / "infiniband", timeout_s=max(options.timeout_s, 60.0))
        except infiniband.TwinUnavailable as exc:
            raise TwinUnavailable(str(exc)) from None
    report["protocol"] = "infiniband"
    return report


# protocol -> runner(plan, options) -> report dict
TWINS = {"ethernet": ethernet.run, "infiniband": _infiniband}


def run_twin(plan: Plan, options: TwinOptions) -> dict:
    return TWINS[protocol(plan)](plan, options)


__all__ = ["TwinOptions", "TwinUnavailable", "run_twin", "protocol", "TWINS"]
