"""Back ends: one module per output family, registered by output name.

Each renderer is `render(plan, out: OutputDir) -> None` and writes only through the
OutputDir, so a compile is all-or-nothing.
"""

from __future__ import annotations

from . import bom, cabling, plan_json, summary, switch_configs

# output name -> renderer. Configs, NCCL, Slurm, diagrams add one line each.
RENDERERS = {
    "cabling": cabling.render,
    "bom": bom.render,
    "plan": plan_json.render,
    "summary": summary.render,
    "configs": switch_configs.render,
}
