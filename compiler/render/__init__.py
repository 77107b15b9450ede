"""Back ends: one module per output family, registered by output name.

Each renderer is `render(plan, out: OutputDir) -> None` and writes only through the
OutputDir, so a compile is all-or-nothing.
"""

from __future__ import annotations

from . import bom, cabling, checks, hosts_csv, infiniband, k8s, nccl, plan_json, slurm, summary

# output name -> renderer. Configs, NCCL, Slurm, diagrams add one line each.
RENDERERS = {
    "cabling": cabling.render,
    "bom": bom.render,
    "plan": plan_json.render,
    "summary": summary.render,
    "checks": checks.render,
    "infiniband": infiniband.render,  # InfiniBand designs only
    "nccl": nccl.render,
    "slurm": slurm.render,
    "k8s": k8s.render,
    "hosts": hosts_csv.render,
}
