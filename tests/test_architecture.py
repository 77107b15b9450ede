"""The stages stay layers: import-linter's contracts (pyproject.toml, [tool.importlinter])
hold, and no import of our own modules hides inside a function to dodge a cycle."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "compiler"

# Function-level imports of our modules that are there on purpose, by file, with the reason.
LAZY_IMPORTS_ALLOWED = {
    # The top layer: nothing imports the CLI, so no cycle can hide here (the layers contract
    # says so). Each command imports the library it runs, so `clusterc --help` and the small
    # commands (schema, lint-nccl, catalog) start in ~0.1 s instead of the ~0.6 s that
    # numpy, scipy, pydantic and Jinja2 take to import for the pipeline.
    "compiler/cli.py": "command-level imports keep --help fast",
}


def _lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    # --no-cache: no cache folder left in the repository; the graph takes about a second.
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
                           "--no-cache", "--no-logo"], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_import_contracts_hold():
    r = _lint_imports(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout and "Stages are layers" in r.stdout, r.stdout


def test_import_contracts_catch_an_upward_import_even_inside_a_function(tmp_path):
    """The same contracts on a copy of the package where the plan reaches up to the
    pipeline from inside a function (the old plan/load.py): lint-imports fails and names it."""
    shutil.copytree(PACKAGE, tmp_path / "compiler", symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    load = tmp_path / "compiler" / "plan" / "load.py"
    load.write_text(load.read_text() + "\n\ndef _from_spec(path):\n    from ..pipeline import build_plan\n\n"
                    "    return build_plan(path)[1]\n")
    r = _lint_imports(tmp_path)
    assert r.returncode != 0
    assert "compiler.plan is not allowed to import compiler.pipeline" in r.stdout, r.stdout
    assert "compiler.plan.load -> compiler.pipeline" in r.stdout, r.stdout


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a compiler module inside a function body."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] == "compiler"):
                found.append((node.lineno, "." * node.level + (node.module or "")))
            elif isinstance(node, ast.Import):
                found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "compiler"]
    return sorted(set(found))


def test_no_import_of_our_modules_hides_in_a_function():
    hidden = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in LAZY_IMPORTS_ALLOWED:
            continue
        found = _function_level_imports(path)
        if found:
            hidden[rel] = found
    assert not hidden, f"move these imports to the top of their module (a cycle means a layer is wrong): {hidden}"


def test_the_function_level_import_scan_sees_relative_and_absolute_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import json\nfrom . import top\n\ndef f():\n    import os\n    from ..plan import naming\n"
                      "    import compiler.pipeline\n\nclass C:\n    def g(self):\n        from .x import y\n")
    assert _function_level_imports(sample) == [(6, "..plan"), (7, "compiler.pipeline"), (11, ".x")]


def test_allowed_lazy_imports_are_still_lazy():
    """An allowance that is no longer needed goes: every listed file still has such imports."""
    for rel in LAZY_IMPORTS_ALLOWED:
        assert _function_level_imports(ROOT / rel), f"{rel} has no function-level imports left: drop its allowance"
