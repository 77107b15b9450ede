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

from dataclasses import dataclass
from typing import Literal
from collections.abc import Callable

from . import (bom, cable_validation, cabling, checks, diagrams, elevations, floor, graphml, host_configs, hosts_csv, infiniband,
               interop, k8s, labels, monitoring, nccl, netbox, plan_json, report, slurm, summary, switch_configs, workbook)

COMPUTE: Literal["compute"] = "compute"  # the compute fabric: GPU traffic (NCCL, Slurm, InfiniBand, diagrams, ...)
ALL: Literal["all"] = "all"  # every fabric of the plan (spec `fabrics:`): cabling, BOM, racks, ...


@dataclass(frozen=True, slots=True)
class Renderer:
    render: Callable  # render(plan, checks, out) -> None
    reads: Literal["compute", "all"]  # which fabrics' plan the pipeline hands it
    # Whether it reads the check results. Those that do not may render while the checks run
    # (render/parallel.py) and are handed a stand-in that refuses to be read.
    reads_checks: bool = False


# output name -> renderer and the fabrics it reads. A new output adds one line.
RENDERERS = {
    "cabling": Renderer(cabling.render, ALL),
    "bom": Renderer(bom.render, ALL),
    "plan": Renderer(plan_json.render, ALL),
    "graphml": Renderer(graphml.render, ALL),  # graph.graphml (networkx, Gephi, yEd)
    "summary": Renderer(summary.render, ALL, reads_checks=True),  # the compute fabric's figures, then every fabric's
    "checks": Renderer(checks.render, COMPUTE, reads_checks=True),
    "infiniband": Renderer(infiniband.render, COMPUTE),  # InfiniBand designs only
    "nccl": Renderer(nccl.render, COMPUTE),
    "slurm": Renderer(slurm.render, COMPUTE),
    "k8s": Renderer(k8s.render, COMPUTE),
    "hosts": Renderer(hosts_csv.render, ALL),  # BMC addresses are on the oob fabric
    "workbook": Renderer(workbook.render, ALL, reads_checks=True),  # cabling.xlsx (with a physical layout)
    "labels": Renderer(labels.render, ALL),  # labels.csv, labels.html
    "floor": Renderer(floor.render, ALL),  # floor/<rack>.html pull sheets, floor/index.html (with a physical layout)
    "diagrams": Renderer(diagrams.render, ALL),  # diagrams/*.svg|dot, each fabric's under diagrams/<fabric>/
    "racks": Renderer(elevations.render, ALL),  # racks/<rack>.svg (with a physical layout)
    "report": Renderer(report.render, ALL, reads_checks=True),  # report.html: every fabric's figures, BOM and overview
    "netbox": Renderer(netbox.render, ALL),  # netbox/: NetBox bulk import of every fabric
    "interop": Renderer(interop.render, COMPUTE),  # ptm/, air/, containerlab/ (Ethernet designs)
    "configs": Renderer(switch_configs.render, ALL),  # each Ethernet fabric's switch configs
    "monitoring": Renderer(monitoring.render, COMPUTE),  # monitoring/: Prometheus scrape config, alert rules, the plan as series
    "cable-validation": Renderer(cable_validation.render, COMPUTE),  # cable-validation/: NVIDIA Cable Validation Tool P2P file
    "host-configs": Renderer(host_configs.render, ALL),  # host-configs/: netplan, NIC RoCE QoS, nccl.conf (compute, storage, in-band)
}
