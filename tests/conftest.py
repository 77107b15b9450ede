from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
sys.path.insert(0, str(ROOT))

from compiler.pipeline import plan_from_source  # noqa: E402
from compiler.plan.model import Plan  # noqa: E402
from compiler.yaml12 import load_yaml_text  # noqa: E402

from .sonic_models import reference_yang  # noqa: E402


def tree_bytes(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by relative path."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def plan_from_text(text: str, file: str = "<test>") -> Plan:
    """The plan of a spec given as text, built as `clusterc compile` builds it: validated,
    expanded, and refused (AssertionError) when it breaks the plan invariants
    (compiler/check/invariants.py) the pipeline holds every plan to."""
    return plan_from_source(load_yaml_text(text, file))[1]


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "compiler.cli", *args], cwd=cwd or ROOT, env=full_env,
                          capture_output=True, text=True, timeout=600)


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


def cli_in_process(*args: str) -> CliResult:
    """The CLI run in this process (fast); use run_cli where a fresh interpreter matters."""
    from typer.testing import CliRunner

    from compiler.cli import app

    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return CliResult(result.exit_code, result.stdout, result.stderr)


@pytest.fixture
def sonic_yang(request):
    """SONiC's YANG models through libyang (tests/sonic_models.py: the reference set, plus
    CLUSTERC_SONIC_YANG_EXTRA). A test that passes while some emitted table had no model
    (or libyang is missing) is reported as xfail naming those tables (conftest.py)."""
    checker = reference_yang()
    request.node.sonic_yang = checker
    return checker


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test that passed while validating SONiC config_db tables no YANG model covers
    (tests/sonic_models.py) is an xfail naming those tables: it checked less than it says."""
    outcome = yield
    report = outcome.get_result()
    checker = getattr(item, "sonic_yang", None)
    if report.when == "call" and report.passed and checker is not None:
        reason = checker.xfail_reason()
        if reason:
            report.outcome = "skipped"
            report.wasxfail = reason
