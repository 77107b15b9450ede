"""out/ holds the compiled outputs of the small example specs, committed so a reviewer
sees what the compiler emits. Recompiling must reproduce them byte for byte."""

from __future__ import annotations

import pytest

from .conftest import ROOT, SPECS, run_cli, tree_bytes

EXAMPLES = sorted(p.name for p in (ROOT / "out").iterdir() if p.is_dir() and not p.name.startswith("."))


def test_examples_are_committed():
    assert "b200-superpod-4su" in EXAMPLES


@pytest.fixture(scope="module")
def recompiled(tmp_path_factory):
    """Every example recompiled by one `clusterc compile` in a fresh process (one
    interpreter start for all of them, not one each)."""
    out = tmp_path_factory.mktemp("recompiled")
    r = run_cli("compile", *(str(SPECS / f"{name}.yaml") for name in EXAMPLES), "-o", str(out),
                env={"PYTHONHASHSEED": "7"})
    assert r.returncode == 0, r.stderr
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_recompile_matches_committed(recompiled, name):
    committed = tree_bytes(ROOT / "out" / name)
    fresh = tree_bytes(recompiled / name)
    assert sorted(fresh) == sorted(committed)
    for rel, data in fresh.items():
        assert data == committed[rel], (
            f"out/{name}/{rel} differs from a fresh compile: run "
            f"clusterc compile specs/{name}.yaml -o out, and commit")
