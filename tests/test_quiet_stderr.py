"""A compile prints nothing on stderr that is not about the design: no library noise
(Fontconfig's warnings about the host's font configuration came from the Graphviz that
pygraphviz bundles, when diagrams were laid out by Graphviz; the compiler now lays them
out itself and loads no Graphviz at all)."""

from __future__ import annotations

from .conftest import SPECS, run_cli


def test_compiling_the_readme_example_prints_nothing_on_stderr(tmp_path):
    # A fresh interpreter, as a user runs it.
    r = run_cli("compile", str(SPECS / "b200-superpod-4su.yaml"), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "Fontconfig" not in r.stderr
    assert r.stderr == "", r.stderr
    assert "<svg" in (tmp_path / "b200-superpod-4su" / "diagrams" / "fabric.svg").read_text()[:400]
