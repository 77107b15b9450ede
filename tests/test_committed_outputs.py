"""out/ holds the compiled outputs of the small example specs, committed so a reviewer
sees what the compiler emits. Recompiling must reproduce them byte for byte."""

from __future__ import annotations

import pytest

from .conftest import ROOT, SPECS, run_cli

EXAMPLES = sorted(p.name for p in (ROOT / "out").iterdir() if p.is_dir() and not p.name.startswith("."))


def test_examples_are_committed():
    assert "b200-superpod-4su" in EXAMPLES


@pytest.mark.parametrize("name", EXAMPLES)
def test_recompile_matches_committed(tmp_path, name):
    r = run_cli("compile", str(SPECS / f"{name}.yaml"), "-o", str(tmp_path), env={"PYTHONHASHSEED": "7"})
    assert r.returncode == 0, r.stderr
    committed = ROOT / "out" / name
    fresh = tmp_path / name
    files = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())  # configs/<switch>/...
    assert files == sorted(str(p.relative_to(committed)) for p in committed.rglob("*") if p.is_file())
    for rel in files:
        assert (fresh / rel).read_bytes() == (committed / rel).read_bytes(), (
            f"out/{name}/{rel} differs from a fresh compile: run ./dev.sh example or "
            f"clusterc compile specs/{name}.yaml -o out, and commit")
