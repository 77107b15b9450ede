"""Back ends: one module per output family, registered by output name.

Every renderer has one signature, `render(plan, checks, out) -> None`:
- `plan`: the Plan IR; the compute fabric's view (plan/fabrics.py) unless the output is
  in ALL_FABRICS;
- `checks`: the plan's CheckResults, from the check stage that the pipeline runs once,
  before any renderer. A renderer reads figures and findings from it (summary.json,
  report/checks.json, report.html) and never runs a check itself; outputs that need no
  figures ignore it;
- `out`: the OutputDir. A renderer writes only through it, so a compile is all-or-nothing.

Render sits above check in the layers (pyproject.toml, [tool.importlinter]): it may import
the plan and check result types, never expand, pipeline or CLI.
"""

from __future__ import annotations

from . import (bom, cabling, checks, diagrams, elevations, graphml, host_configs, hosts_csv, infiniband, interop, k8s,
               labels, nccl, netbox, plan_json, report, slurm, summary, switch_configs, workbook)

# output name -> renderer. Configs, NCCL, Slurm, diagrams add one line each.
RENDERERS = {
    "cabling": cabling.render,
    "bom": bom.render,
    "plan": plan_json.render,
    "graphml": graphml.render,  # graph.graphml (networkx, Gephi, yEd)
    "summary": summary.render,
    "checks": checks.render,
    "infiniband": infiniband.render,  # InfiniBand designs only
    "nccl": nccl.render,
    "slurm": slurm.render,
    "k8s": k8s.render,
    "hosts": hosts_csv.render,
    "workbook": workbook.render,  # cabling.xlsx (with a physical layout)
    "labels": labels.render,  # labels.csv, labels.html
    "diagrams": diagrams.render,  # diagrams/*.dot|svg (Graphviz)
    "racks": elevations.render,  # racks/<rack>.svg (with a physical layout)
    "report": report.render,  # report.html
    "netbox": netbox.render,  # netbox/*.csv bulk import
    "interop": interop.render,  # ptm/, air/, containerlab/ (Ethernet designs)
    "configs": switch_configs.render,
    "host_configs": host_configs.render,  # host-configs/: netplan, NIC RoCE QoS, nccl.conf (RoCE fabrics)
}
# Outputs that cover every fabric of a plan (spec `fabrics:`); the rest see the compute fabric.
# hosts: BMC addresses are on the oob fabric
ALL_FABRICS = {"cabling", "bom", "plan", "graphml", "summary", "configs", "workbook", "labels", "racks", "hosts"}
