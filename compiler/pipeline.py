"""The library entry points the CLI (and tests) call: validate, build, compile.

The stages run in order, each once: load and expand (build_plan), check (run_checks),
render (write_outputs, which hands every renderer the plan and its check results).
"""

from __future__ import annotations

from pathlib import Path

from .check import CheckResults, check_jobs, run_checks
from .check.invariants import plan_invariants_once
from .expand import expand
from .plan.model import Plan
from .plan.fabrics import fabric_plan
from .plan.load import read_plan_json
from .progress import stage
from .render import ALL, RENDERERS
from .render.parallel import Done, render_at_once, render_workers
from .plan.serialize import plan_digest
from .render.writer import OutputDir
from .diagnostics import SpecInvalid, in_file_order
from .expand.hosts import raw_hosts_diagnostics
from .expand.resolve import raw_catalog_diagnostics
from .spec.load import LoadedSpec, spec_from_source
from .yaml12 import Source, load_yaml_file


def build_plan(spec_path: str | Path) -> tuple[LoadedSpec, Plan]:
    """Load, validate and expand a spec file. Raises SpecInvalid for any user error."""
    with stage("load"):
        source = load_yaml_file(spec_path)
    return plan_from_source(source)


def plan_from_source(source: Source) -> tuple[LoadedSpec, Plan]:
    """Validate and expand a loaded YAML document (a file, text or a mapping: compiler.api)."""
    with stage("validate"):
        try:
            loaded = spec_from_source(source)
        except SpecInvalid as exc:
            exc.diagnostics.extend(raw_catalog_diagnostics(source))
            exc.diagnostics.extend(raw_hosts_diagnostics(source))
            exc.diagnostics[:] = in_file_order(exc.diagnostics)
            raise
    with stage("expand"):
        plan = expand(loaded)
        broken = plan_invariants_once(plan)
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
                  checks: CheckResults | None = None, workers: int | None = None) -> Path:
    """Write `out_dir/<plan name>/` atomically: every output, or with `only` those outputs,
    keeping the folder's other outputs when they are of this same plan (else
    render.writer.OutputConflict, and nothing changes). `checks`: the plan's check results
    (run_checks(plan)); run here when not given. `workers`: processes that render outputs
    at once (render/parallel.py; default: the cores, for a large plan); the files are the
    same whatever the number."""
    return check_and_write(plan, out_dir, only, checks, workers)[0]


def check_and_write(plan: Plan, out_dir: str | Path, only: list[str] | None = None,
                    checks: CheckResults | None = None, workers: int | None = None) -> tuple[Path, CheckResults]:
    """write_outputs, and the check results it wrote them with: run here when not given, on
    a large plan as jobs that every core takes from the render's queue, before the outputs
    that read none (render/parallel.py)."""
    target = Path(out_dir) / plan.name
    names = list(dict.fromkeys(only)) if only else list(RENDERERS)
    results: list[CheckResults] = [] if checks is None else [checks]

    def checked() -> CheckResults:
        if not results:
            results.append(run_checks(plan))
        return results[0]

    def renderer_call(name: str, checks: object):
        renderer = RENDERERS[name]
        return lambda: renderer.render(plan if renderer.reads == ALL else fabric_plan(plan), checks, out)

    n_workers = render_workers(plan, workers)
    with OutputDir(target, plan_digest=lambda: plan_digest(plan), keep_others=bool(only)) as out:
        if n_workers > 1 and len(names) > 1:
            jobs = check_jobs(plan) if checks is None else Done(checks)
            found = render_at_once(plan, out, names, n_workers, renderer_call, jobs,
                                   {n for n in names if RENDERERS[n].reads_checks}, _here(names))
            assert isinstance(found, CheckResults)
            results[:] = [found]
        else:
            checked()
            for name in names:
                with stage(f"render {name}"), out.output(name):
                    renderer_call(name, checked())()
    return target, checked()


# Outputs that read the bill of materials or the physical cables it counts (2.0 s of CPU
# at 524,288 GPUs, most of it the physical cables).
_READS_BOM = {"summary", "report", "workbook", "bom", "cabling", "floor", "labels"}


def _here(names: list[str]) -> set[str]:
    """The outputs the compile's own process renders, besides those that read the checks:
    where some of those read the bill of materials, every other output that reads it, so
    that it is computed once, after the fork (the workers start that much earlier, taking
    check jobs and outputs meanwhile), and no worker computes it again."""
    if not _READS_BOM & {n for n in names if RENDERERS[n].reads_checks}:
        return set()
    return {n for n in names if n in _READS_BOM and not RENDERERS[n].reads_checks}
