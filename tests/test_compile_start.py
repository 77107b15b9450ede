"""The serial start of a compile: what `clusterc compile` imports before it forks its render
workers (compiler/render/parallel.py). Everything imported before the fork runs on one
core while the others wait; what only some outputs or the checks need is imported after
it, by the process that needs it (scipy through compiler/plan/sparse.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from compiler.plan import sparse
from compiler.render import RENDERERS

from .conftest import ROOT, SPECS

# A `clusterc compile` that writes, at its process's first fork, the modules it has imported.
_AT_FORK = """
import json, os, sys
fork, path = os.fork, sys.argv.pop(1)
def recording_fork():
    if not os.path.exists(path):
        with open(path, "w") as f:
            json.dump(sorted(sys.modules), f)
    return fork()
os.fork = recording_fork
from compiler.cli import main
sys.argv[0] = "clusterc"
main()
"""


def _modules_at_fork(tmp_path, spec: str, *args: str) -> list[str]:
    record = tmp_path / "modules.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT), CLUSTERC_RENDER_WORKERS="2")
    proc = subprocess.run([sys.executable, "-c", _AT_FORK, str(record), "compile", str(SPECS / spec),
                           "-o", str(tmp_path / "out"), *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    assert record.exists(), "the compile forked no render worker"
    return json.loads(record.read_text())


def test_a_compile_forks_its_workers_before_it_imports_scipy_or_a_renderer(tmp_path):
    """scipy (~0.3 s of imports) is for the checks, which a worker runs, and each renderer's
    module (~0.15 s for all) is imported by the process that renders it: the compile's own
    process forks without them, and the outputs are still complete."""
    modules = _modules_at_fork(tmp_path, "roce-2spine-4leaf-frr.yaml")
    assert "compiler.pipeline" in modules and "compiler.expand" in modules
    assert not [m for m in modules if m == "scipy" or m.startswith("scipy.")]
    renderers = {r.render.__module__ for r in RENDERERS.values()} - {"compiler.render.summary"}  # the CLI prints it
    assert len(renderers) > 20 and not renderers & set(modules)
    assert (tmp_path / "out" / "roce-2spine-4leaf-frr" / "report" / "checks.json").exists()


@pytest.mark.parametrize("name", ["csr_matrix", "coo_matrix", "block_diag", "connected_components", "dijkstra",
                                  "maximum_flow", "shortest_path"])
def test_the_lazy_scipy_names_call_scipys_own(name, monkeypatch):
    import scipy.sparse
    import scipy.sparse.csgraph

    calls = []
    owner = scipy.sparse if hasattr(scipy.sparse, name) and name in ("csr_matrix", "coo_matrix", "block_diag") \
        else scipy.sparse.csgraph
    monkeypatch.setattr(owner, name, lambda *a, **k: calls.append((a, k)) or "scipy's")
    assert getattr(sparse, name)(1, two=2) == "scipy's"
    assert calls == [((1,), {"two": 2})]
