"""Back ends: one module per output family, registered by output name.

Each renderer is `render(plan, out: OutputDir) -> None` and writes only through the
OutputDir, so a compile is all-or-nothing.
"""

from __future__ import annotations

from . import (bom, cable_validation, cabling, checks, diagrams, elevations, graphml, hosts_csv, infiniband, interop, k8s,
               labels, monitoring, nccl, netbox, plan_json, report, slurm, summary, switch_configs, workbook)

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
    "monitoring": monitoring.render,  # monitoring/: Prometheus scrape config, alert rules, the plan as series
    "cable-validation": cable_validation.render,  # cable-validation/: NVIDIA UFM Cable Validation Tool P2P file
}
# Outputs that cover every fabric of a plan (spec `fabrics:`); the rest see the compute fabric.
ALL_FABRICS = {"cabling", "bom", "plan", "graphml", "summary", "configs", "workbook", "labels", "racks"}
