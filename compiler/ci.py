"""`clusterc ci`: validate, check and diff specs against a git ref's version of them.

For each spec: build today's plan (exit 2 if invalid), run the checks (fail on an
error finding), and diff against the same file at REF (a new spec diffs against
nothing). Everything is collected into one Markdown summary for a PR comment.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .check import run_checks
from .diagnostics import Diagnostic, SpecInvalid
from .pipeline import build_plan
from .plan.diff import diff_plans, gate_hits, summary_deltas
from .render.summary import summarize
from .render.diff_report import diff_markdown
from .spec.yaml_source import load_yaml_text


@dataclass
class CiResult:
    markdown: str
    invalid: list[Diagnostic] = field(default_factory=list)
    checks_failed: bool = False
    moved_cables: int = 0


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def _spec_at_ref(spec: Path, ref: str, workdir: Path) -> Path | None:
    """The spec (and the catalog file it names) as committed at `ref`, copied under `workdir`."""
    top = _git(spec.parent, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise SpecInvalid([Diagnostic("CI_NOT_A_REPO", "not inside a git repository", file=str(spec))])
    repo = Path(top.stdout.strip())
    rel = spec.resolve().relative_to(repo.resolve())
    shown = _git(repo, "show", f"{ref}:{rel.as_posix()}")
    if shown.returncode != 0:
        if _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
            raise SpecInvalid([Diagnostic("CI_UNKNOWN_REF", f"git ref '{ref}' not found", file=str(spec))])
        return None  # the spec is new in this change
    target = workdir / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(shown.stdout)
    try:
        data = load_yaml_text(shown.stdout, f"{ref}:{rel.as_posix()}").data
    except SpecInvalid:
        data = None  # the old spec is broken; diffing against it reports that
    catalog = data.get("catalog") if isinstance(data, dict) else None
    if isinstance(catalog, str):
        cat_rel = (rel.parent / catalog).as_posix()
        cat = _git(repo, "show", f"{ref}:{cat_rel}")
        if cat.returncode == 0:
            (workdir / cat_rel).parent.mkdir(parents=True, exist_ok=True)
            (workdir / cat_rel).write_text(cat.stdout)
    return target


def run_ci(specs: list[Path], against: str, fail_on: set[str]) -> CiResult:
    result = CiResult(markdown="")
    parts = [f"## clusterc CI (against `{against}`)", ""]
    for spec in specs:
        try:
            _, plan = build_plan(spec)
        except SpecInvalid as exc:
            result.invalid.extend(exc.diagnostics)
            parts += [f"### `{spec}`: invalid", "", "```", *(d.format() for d in exc.diagnostics), "```", ""]
            continue
        checks = run_checks(plan)
        errors = [f for f in checks.findings if f.severity == "error"]
        result.checks_failed |= not checks.ok
        parts += [f"### `{spec}`: checks {'passed' if checks.ok else 'FAILED'}", ""]
        parts += [f"- **{f.code}**: {f.message}" for f in errors]
        if errors:
            parts.append("")
        with tempfile.TemporaryDirectory() as tmp:
            old_spec = _spec_at_ref(spec, against, Path(tmp))
            if old_spec is None:
                parts += ["New spec: nothing to diff against.", ""]
                continue
            try:
                _, old = build_plan(old_spec)
            except SpecInvalid:
                parts += [f"The version at `{against}` does not compile; no diff.", ""]
                continue
        d = diff_plans(old, plan)
        d["summary"] = summary_deltas(summarize(old, run_checks(old)), summarize(plan, checks))
        counts = d["counts"]
        moved = counts["cables_removed"] + counts["cables_changed"]
        result.moved_cables += moved
        if gate_hits(d, fail_on):
            result.checks_failed = True
        parts.append(diff_markdown(d))
    result.markdown = "\n".join(parts) + "\n"
    return result
