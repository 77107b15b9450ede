"""`clusterc ci`: validate, check and diff specs against a git ref's version of them.

For each spec: build today's plan (exit 2 if invalid), run the checks (fail on an
error finding), and diff against its version at REF. The old version is compiled from
the whole tree as committed at REF (checked out into a temporary folder through a
private index, the repository's own index untouched), so every file it reads (catalog,
price file, any relative path) is the one of REF; a version at REF that does not
compile is an error with its diagnostics, never a silent pass. Renames are followed
with git's rename detection (`git diff --find-renames REF`); a spec deleted since REF
(in a folder of the specs given) is a removal of all it held, a new spec an addition; YAML that is not a spec
(a price file, a catalog beside the specs) is skipped with a note. Everything is
collected into one Markdown summary for a PR comment.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from .check import run_checks
from .diagnostics import Diagnostic, SpecInvalid
from .pipeline import build_plan
from .plan.diff import diff_plans, gate_hits, summary_deltas
from .render.diff_report import diff_markdown
from .render.summary import summarize
from .yaml12 import load_yaml_file

SPEC_SUFFIXES = (".yaml", ".yml")
# A spec has these keys (all required); a YAML file with none of them is something else.
SPEC_KEYS = ("name", "server", "fabric")


@dataclass
class CiResult:
    markdown: str
    invalid: list[Diagnostic] = field(default_factory=list)
    checks_failed: bool = False
    moved_cables: int = 0


def _git(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})


def _top(spec: Path) -> Path:
    top = _git(spec.resolve().parent, "rev-parse", "--show-toplevel")
    if top.returncode != 0:
        raise SpecInvalid([Diagnostic("CI_NOT_A_REPO", "not inside a git repository", file=str(spec))])
    return Path(top.stdout.strip()).resolve()


class _RefTree:
    """The repository's tree at REF in a temporary folder, and how paths changed since."""

    def __init__(self, repo: Path, ref: str, workdir: Path):
        self.repo, self.ref = repo, ref
        if _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").returncode != 0:
            raise SpecInvalid([Diagnostic("CI_UNKNOWN_REF", f"git ref '{ref}' not found", file=str(repo))])
        self.root = workdir / "tree"
        workdir.mkdir(parents=True)
        env = {"GIT_INDEX_FILE": str(workdir / "index")}  # a private index: the user's staging area stays as it is
        for args in (("read-tree", f"{ref}^{{tree}}"), ("checkout-index", "--all", "--force", f"--prefix={self.root}/")):
            done = _git(repo, *args, env=env)
            if done.returncode != 0:
                raise SpecInvalid([Diagnostic("CI_GIT_FAILED", f"git {args[0]} at '{ref}' failed: {done.stderr.strip()}",
                                              file=str(repo))])
        self.root.mkdir(parents=True, exist_ok=True)  # an empty tree checks out nothing
        self.renamed_from: dict[str, tuple[str, str]] = {}  # new path -> (old path, similarity)
        self.renamed_to: dict[str, str] = {}  # old path -> new path
        self.deleted: list[str] = []
        changes = _git(repo, "diff", "--find-renames", "--name-status", "-z", ref, "--")
        if changes.returncode != 0:
            raise SpecInvalid([Diagnostic("CI_GIT_FAILED", f"git diff {ref} failed: {changes.stderr.strip()}", file=str(repo))])
        fields = changes.stdout.split("\0")
        k = 0
        while k < len(fields) and fields[k]:
            status = fields[k]
            if status.startswith(("R", "C")):
                old, new = fields[k + 1], fields[k + 2]
                if status.startswith("R"):
                    self.renamed_from[new] = (old, status[1:].lstrip("0") or "0")
                    self.renamed_to[old] = new
                k += 3
            else:
                if status == "D":
                    self.deleted.append(fields[k + 1])
                k += 2

    def shown(self, path: Path) -> str:
        """A path inside the temporary tree as `REF:path`, for diagnostics."""
        try:
            return f"{self.ref}:{path.resolve().relative_to(self.root.resolve()).as_posix()}"
        except ValueError:
            return str(path)

    def as_of_ref(self, diagnostics: list[Diagnostic]) -> list[Diagnostic]:
        return [replace(d, file=self.shown(Path(d.file))) if d.file else d for d in diagnostics]


def _not_a_spec(path: Path) -> str | None:
    """Why a YAML file is not a spec (a top-level mapping with none of SPEC_KEYS), or None.
    A file that does not even parse is left to the spec loader, which says where."""
    try:
        data = load_yaml_file(path).data
    except SpecInvalid:
        return None
    if isinstance(data, dict) and not any(k in data for k in SPEC_KEYS):
        keys = ", ".join(map(str, list(data)[:6])) or "none"
        return f"not a spec (no {', '.join(SPEC_KEYS)} key; its keys: {keys})"
    return None


def run_ci(specs: list[Path], against: str, fail_on: set[str]) -> CiResult:
    result = CiResult(markdown="")
    parts = [f"## clusterc CI (against `{against}`)", ""]
    with tempfile.TemporaryDirectory(prefix="clusterc-ci-") as tmp:
        trees: dict[Path, _RefTree] = {}

        def tree_of(spec: Path) -> _RefTree:
            top = _top(spec)
            if top not in trees:
                trees[top] = _RefTree(top, against, Path(tmp) / str(len(trees)))
            return trees[top]

        given: set[Path] = set()
        for spec in specs:
            tree = tree_of(spec)  # an unknown ref or no repository fails before the spec is built
            given.add(spec.resolve())
            parts += _one_spec(spec, tree, fail_on, result)
        parts += _deleted_specs(trees, given, fail_on, result)
    result.markdown = "\n".join(parts) + "\n"
    return result


def _old_failed(result: CiResult, tree: _RefTree, label: str, exc: SpecInvalid) -> list[str]:
    diagnostics = tree.as_of_ref(exc.diagnostics)
    result.invalid.extend(diagnostics)
    return [f"**The version at `{tree.ref}` ({label}) does not compile; nothing to diff against:**", "",
            "```", *(d.format() for d in diagnostics), "```", ""]


def _one_spec(spec: Path, tree: _RefTree, fail_on: set[str], result: CiResult) -> list[str]:
    why = _not_a_spec(spec)
    if why is not None:
        return [f"### `{spec}`: skipped", "", f"Skipped: {why}.", ""]
    try:
        _, plan = build_plan(spec)
    except SpecInvalid as exc:
        result.invalid.extend(exc.diagnostics)
        return [f"### `{spec}`: invalid", "", "```", *(d.format() for d in exc.diagnostics), "```", ""]
    checks = run_checks(plan)
    errors = [f for f in checks.findings if f.severity == "error"]
    result.checks_failed |= not checks.ok
    parts = [f"### `{spec}`: checks {'passed' if checks.ok else 'FAILED'}", ""]
    parts += [f"- **{f.code}**: {f.message}" for f in errors]
    if errors:
        parts.append("")
    rel = spec.resolve().relative_to(tree.repo).as_posix()
    old_rel, similarity = tree.renamed_from.get(rel, (rel, None))
    if similarity is not None:
        parts += [f"Renamed from `{old_rel}` ({similarity}% similar, git rename detection): diffed against it.", ""]
    old_spec = tree.root / old_rel
    if not old_spec.is_file() or old_rel in tree.renamed_to and similarity is None:
        parts += ["New spec: nothing to diff against; all of it is added: "
                  f"{len(plan.devices):,} devices, {len(plan.links):,} cables.", ""]
        if "added" in fail_on:  # as a deleted spec is a removal
            result.checks_failed = True
            parts += ["**Gate hit: added.**", ""]
        return parts
    try:
        _, old = build_plan(old_spec)
    except SpecInvalid as exc:
        return parts + _old_failed(result, tree, f"`{old_rel}`", exc)
    d = diff_plans(old, plan)
    d["summary"] = summary_deltas(summarize(old, run_checks(old)), summarize(plan, checks))
    counts = d["counts"]
    result.moved_cables += counts["cables_removed"] + counts["cables_changed"]
    hits = gate_hits(d, fail_on)
    if hits:
        result.checks_failed = True
        parts += [f"**Gate hit: {', '.join(hits)}** (`--fail-on {','.join(sorted(fail_on))}`).", ""]
    parts.append(diff_markdown(d))
    return parts


def _deleted_specs(trees: dict[Path, _RefTree], given: set[Path], fail_on: set[str], result: CiResult) -> list[str]:
    """Specs at REF, in a folder of the specs given, that are gone now (deleted, or renamed
    to a path not given): all they held is removed."""
    folders = {p.parent for p in given}
    parts: list[str] = []
    for tree in trees.values():
        gone = [(p, None) for p in tree.deleted] + [(old, new) for old, new in tree.renamed_to.items()
                                                     if (tree.repo / new).resolve() not in given]
        for old_rel, new_rel in sorted(gone):
            old_path = tree.root / old_rel
            if (not old_rel.endswith(SPEC_SUFFIXES) or (tree.repo / old_rel).resolve().parent not in folders
                    or not old_path.is_file() or _not_a_spec(old_path) is not None):
                continue
            where = "deleted" if new_rel is None else f"renamed to `{new_rel}`, which is not among the specs given"
            parts += [f"### `{old_rel}`: {where}", ""]
            try:
                _, old = build_plan(old_path)
            except SpecInvalid as exc:
                parts += _old_failed(result, tree, f"`{old_rel}`", exc)
                continue
            parts += [f"**All of `{old.name}` is removed: {len(old.devices):,} devices, {len(old.links):,} cables.**", ""]
            result.moved_cables += len(old.links)
            if "removed" in fail_on:
                result.checks_failed = True
                parts += ["**Gate hit: removed.**", ""]
    return parts
