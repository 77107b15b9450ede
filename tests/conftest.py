from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
sys.path.insert(0, str(ROOT))

from compiler.check import CheckResults, run_checks  # noqa: E402
from compiler.pipeline import build_plan, plan_from_source, write_outputs  # noqa: E402
from compiler.plan.model import Plan  # noqa: E402
from compiler.plan.serialize import plan_json_text  # noqa: E402
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


# --- compiled plans shared by the test session ---------------------------------------------------
# Compiling an example (and checking it) is most of what many tests cost, and dozens of tests
# read the same few examples. shared_plan() compiles each spec once per session (keyed by its
# path and text), shared_checks() checks each shared plan once, shared_outputs() writes each
# (spec, outputs) folder once. Shared objects are a bug factory unless guarded, so: a shared
# plan's numpy columns are read-only (an in-place write raises in the test that makes it);
# when the session ends every shared plan is serialised again, its checks and folders read
# again, and each must be what it was when made (else the run fails naming it). A test that
# changes a plan takes plan_copy(), which it owns; a test that changes a folder copies it.


@dataclass
class _Shared:
    plan: Plan
    plan_sha256: str  # plan.json's text when compiled
    checks: CheckResults | None = None
    checks_sha256: str = ""
    folders: dict[tuple[str, ...], tuple[Path, str]] = dataclasses.field(default_factory=dict)


_SHARED: dict[tuple[str, str], _Shared] = {}  # (spec path, spec text) -> its shared plan
_SHARED_DIR: list[Path] = []  # the session's folder for shared outputs, made on first use


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _spec_path(spec: str | Path) -> Path:
    """specs/<spec>.yaml for an example's name, else the path given."""
    return SPECS / f"{spec}.yaml" if isinstance(spec, str) and not spec.endswith((".yaml", ".yml")) else Path(spec)


def _arrays(obj: object, seen: set[int]) -> list[np.ndarray]:
    """Every numpy array held by a plan's records (links, physical, routing, fabrics), not
    walking its device list or memo (no arrays there; long)."""
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, dict):
        return [a for v in obj.values() for a in _arrays(v, seen)]
    if isinstance(obj, (list, tuple)) and obj and not dataclasses.is_dataclass(obj[0]):
        return [a for v in obj for a in _arrays(v, seen)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [a for f in dataclasses.fields(obj) if f.name not in ("devices", "_memo", "_by_name")
                for a in _arrays(getattr(obj, f.name), seen)]
    return []


def _shared_entry(spec: str | Path) -> _Shared:
    path = _spec_path(spec).resolve()
    key = (str(path), path.read_text(encoding="utf-8"))
    if key not in _SHARED:
        plan = build_plan(path)[1]
        for array in _arrays(plan, set()):
            array.flags.writeable = False
        _SHARED[key] = _Shared(plan, _sha256(plan_json_text(plan)))
    return _SHARED[key]


def shared_plan(spec: str | Path) -> Plan:
    """The plan of `spec` (an example's name, or a spec file), compiled once per test session
    and shared: read it, never change it (take plan_copy for that)."""
    return _shared_entry(spec).plan


def plan_copy(plan: Plan) -> Plan:
    """A plan of the test's own, equal to `plan` (a shared one): its arrays writable, nothing
    derived from the original carried over (the memo of views, BOM, digest)."""
    own = copy.deepcopy(plan)
    own._memo.clear()
    own._by_name = None
    for array in _arrays(own, set()):
        array.flags.writeable = True
    return own


def _checks_text(checks: CheckResults) -> str:
    import json

    return json.dumps(checks.as_json(), sort_keys=True, default=str)


def shared_checks(spec_or_plan: str | Path | Plan) -> CheckResults:
    """run_checks of a shared plan (by its spec, or the plan shared_plan returned), once per
    session. Any other plan is checked here and now."""
    if isinstance(spec_or_plan, Plan):
        entry = next((e for e in _SHARED.values() if e.plan is spec_or_plan), None)
        if entry is None:
            return run_checks(spec_or_plan)
    else:
        entry = _shared_entry(spec_or_plan)
    if entry.checks is None:
        entry.checks = run_checks(entry.plan)
        entry.checks_sha256 = _sha256(_checks_text(entry.checks))
    return entry.checks


def _tree_sha256(folder: Path) -> str:
    digest = hashlib.sha256()
    for rel, data in tree_bytes(folder).items():
        digest.update(rel.encode("utf-8") + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def shared_outputs(spec: str | Path, only: list[str] | None = None) -> Path:
    """The folder write_outputs makes of a shared plan (every output, or `only` those), with
    its shared check results, written once per session: read it, never change it."""
    entry = _shared_entry(spec)
    key = tuple(only or ())
    if key not in entry.folders:
        if not _SHARED_DIR:
            _SHARED_DIR.append(Path(tempfile.mkdtemp(prefix="clusterc-shared-outputs-")))
        out = _SHARED_DIR[0] / f"{len(_SHARED)}-{sum(len(e.folders) for e in _SHARED.values())}"
        folder = write_outputs(entry.plan, out, list(only) if only else None, checks=shared_checks(entry.plan))
        entry.folders[key] = (folder, _tree_sha256(folder))
    return entry.folders[key][0]


def outputs_of(plan: Plan, out_dir: str | Path, only: list[str] | None = None, workers: int | None = None) -> Path:
    """write_outputs with the plan's check results from shared_checks (a shared plan's are
    run once per session), as the pipeline hands them to every renderer."""
    return write_outputs(plan, out_dir, only, checks=shared_checks(plan), workers=workers)


@pytest.fixture(scope="session", autouse=True)

def _shared_plans_unchanged():
    """At the end of the session: every shared plan, its checks and folders are what they
    were when made (a test that changed one would have made the others' results depend on
    the order tests run in)."""
    yield
    changed = []
    for (path, _), entry in _SHARED.items():
        if _sha256(plan_json_text(entry.plan)) != entry.plan_sha256:
            changed.append(f"the shared plan of {path}")
        if entry.checks is not None and _sha256(_checks_text(entry.checks)) != entry.checks_sha256:
            changed.append(f"the shared check results of {path}")
        changed += [f"the shared outputs {list(only) or 'all'} of {path}"
                    for only, (folder, digest) in entry.folders.items() if _tree_sha256(folder) != digest]
    for folder in _SHARED_DIR:
        shutil.rmtree(folder, ignore_errors=True)
    assert not changed, "a test changed what the session shares (take plan_copy): " + "; ".join(changed)


# --- scratch folders -------------------------------------------------------------------------------
# Tests that write many small files (generated specs, output folders) into one folder of their
# module's take it from here: a folder below pytest's temporary folder of this session (per
# xdist worker), which pytest prunes, rather than one made in /tmp at import and never removed.
_TMP_FACTORY: list[pytest.TempPathFactory] = []
_SCRATCH: dict[str, Path] = {}


@pytest.fixture(scope="session", autouse=True)
def _session_tmp(tmp_path_factory: pytest.TempPathFactory):
    _TMP_FACTORY.append(tmp_path_factory)
    yield
    _TMP_FACTORY.clear()
    _SCRATCH.clear()


def scratch_dir(name: str) -> Path:
    """The session's folder `name` (made on first use, shared by every test that asks for it)."""
    if name not in _SCRATCH:
        _SCRATCH[name] = _TMP_FACTORY[0].mktemp(name, numbered=False)
    return _SCRATCH[name]


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
