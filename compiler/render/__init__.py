"""Back ends: one module per output family, registered by output name.

Every renderer has one signature, `render(plan, checks, out) -> None`, and is registered
with the fabrics it reads (`Renderer.reads`):
- `plan`: the Plan IR: with reads=ALL the whole plan (every fabric record, Plan.fabrics),
  with reads=COMPUTE the compute fabric's plan (plan/fabrics.py fabric_plan; the plan
  itself when it has one fabric);
- `checks`: the plan's CheckResults, from the check stage that the pipeline runs once.
  A renderer reads figures and findings from it (summary.json, report/checks.json,
  report.html, cabling.xlsx's summary sheet: registered with reads_checks=True, and rendered after the checks) and never
  runs a check itself; outputs that need no figures ignore it, and may render while the
  checks run;
- `out`: the OutputDir. A renderer writes only through it, so a compile is all-or-nothing.

Render sits above check in the layers (pyproject.toml, [tool.importlinter]): it may import
the plan and check result types, never expand, pipeline or CLI.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal
from collections.abc import Callable

COMPUTE: Literal["compute"] = "compute"  # the compute fabric: GPU traffic (NCCL, Slurm, InfiniBand, diagrams, ...)
ALL: Literal["all"] = "all"  # every fabric of the plan (spec `fabrics:`): cabling, BOM, racks, ...


@dataclass(frozen=True, slots=True)
class Renderer:
    render: Callable  # render(plan, checks, out) -> None
    reads: Literal["compute", "all"]  # which fabrics' plan the pipeline hands it
    # Whether it reads the check results. Those that do not may render while the checks run
    # (render/parallel.py) and are handed a stand-in that refuses to be read.
    reads_checks: bool = False


class Lazy:
    """The `render` function of a module of this package, imported at its first call: a
    process imports the renderers it runs and no other (a compile's workers are forked
    before any is imported, and each imports those it renders, on its own core)."""

    def __init__(self, module: str):
        self.__module__ = f"{__name__}.{module}"  # where the function is: what a reader (and docs/gen_reference.py) looks up

    def __call__(self, plan: Any, checks: Any, out: Any) -> None:
        importlib.import_module(self.__module__).render(plan, checks, out)

    def __repr__(self) -> str:
        return f"{self.__module__}.render"


# output name -> renderer and the fabrics it reads. A new output adds one line.
RENDERERS = {
    "cabling": Renderer(Lazy("cabling"), ALL),
    "bom": Renderer(Lazy("bom"), ALL),
    "plan": Renderer(Lazy("plan_json"), ALL),
    "graphml": Renderer(Lazy("graphml"), ALL),  # graph.graphml (networkx, Gephi, yEd)
    "summary": Renderer(Lazy("summary"), ALL, reads_checks=True),  # the compute fabric's figures, then every fabric's
    "checks": Renderer(Lazy("checks"), COMPUTE, reads_checks=True),
    "infiniband": Renderer(Lazy("infiniband"), COMPUTE),  # InfiniBand designs only
    "nccl": Renderer(Lazy("nccl"), COMPUTE),
    "slurm": Renderer(Lazy("slurm"), COMPUTE),
    "k8s": Renderer(Lazy("k8s"), COMPUTE),
    "hosts": Renderer(Lazy("hosts_csv"), ALL),  # BMC addresses are on the oob fabric
    "workbook": Renderer(Lazy("workbook"), ALL, reads_checks=True),  # cabling.xlsx (with a physical layout)
    "labels": Renderer(Lazy("labels"), ALL),  # labels.csv, labels.html
    "floor": Renderer(Lazy("floor"), ALL),  # floor/<rack>.html pull sheets, floor/index.html (with a physical layout)
    "diagrams": Renderer(Lazy("diagrams"), ALL),  # diagrams/*.svg|dot, each fabric's under diagrams/<fabric>/
    "racks": Renderer(Lazy("elevations"), ALL),  # racks/<rack>.svg (with a physical layout)
    "report": Renderer(Lazy("report"), ALL, reads_checks=True),  # report.html: every fabric's figures, BOM and overview
    "netbox": Renderer(Lazy("netbox"), ALL),  # netbox/: NetBox bulk import of every fabric
    "interop": Renderer(Lazy("interop"), COMPUTE),  # ptm/, air/, containerlab/ (Ethernet designs)
    "configs": Renderer(Lazy("switch_configs"), ALL),  # each Ethernet fabric's switch configs
    "monitoring": Renderer(Lazy("monitoring"), COMPUTE),  # monitoring/: Prometheus scrape config, alert rules, the plan as series
    "cable-validation": Renderer(Lazy("cable_validation"), COMPUTE),  # cable-validation/: NVIDIA Cable Validation Tool P2P file
    "host-configs": Renderer(Lazy("host_configs"), ALL),  # host-configs/: netplan, NIC RoCE QoS, nccl.conf (compute, storage, in-band)
}
