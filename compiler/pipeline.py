"""The library entry points the CLI (and tests) call: validate, build, compile.

The stages run in order, each once: load and expand (build_plan), check (run_checks),
render (write_outputs, which hands every renderer the plan and its check results).
"""

from __future__ import annotations

from pathlib import Path

from .check import CheckResults, run_checks
from .check.invariants import plan_invariants
from .expand import expand
from .plan.model import Plan
from .plan.fabrics import fabric_view
from .plan.load import read_plan_json
from .render import ALL_FABRICS, RENDERERS
from .render.writer import OutputDir
from .diagnostics import SpecInvalid
from .expand.resolve import raw_catalog_diagnostics
from .spec.load import LoadedSpec, spec_from_source
from .spec.yaml_source import load_yaml_file


def build_plan(spec_path: str | Path) -> tuple[LoadedSpec, Plan]:
    """Load, validate and expand a spec. Raises SpecInvalid for any user error."""
    source = load_yaml_file(spec_path)
    try:
        loaded = spec_from_source(source)
    except SpecInvalid as exc:
        exc.diagnostics.extend(raw_catalog_diagnostics(source))
        raise
    plan = expand(loaded)
    broken = plan_invariants(plan)
    if broken:  # the builder produced an impossible plan: our bug, never the user's
        raise AssertionError("plan invariants violated:\n" + "\n".join(f.message for f in broken))
    return loaded, plan


def load_plan(path: str | Path) -> Plan:
    """A plan from whatever a user points at: a spec (built here), a compiled output folder, or plan.json."""
    p = Path(path)
    if p.suffix in (".yaml", ".yml") and not p.is_dir():
        return build_plan(p)[1]
    return read_plan_json(p)


def write_outputs(plan: Plan, out_dir: str | Path, only: list[str] | None = None,
                  checks: CheckResults | None = None) -> Path:
    """Render the plan's outputs (all, or `only`) atomically into out_dir/<plan name>/.
    `checks`: the plan's check results (run_checks(plan)); run here when not given."""
    if checks is None:
        checks = run_checks(plan)
    target = Path(out_dir) / plan.name
    names = only or list(RENDERERS)
    with OutputDir(target) as out:
        for name in names:
            # Outputs of one fabric's tools (NCCL, Slurm, InfiniBand, configs, ...) see the compute fabric.
            RENDERERS[name](plan if name in ALL_FABRICS else fabric_view(plan), checks, out)
    return target
