"""Adding an output touches its renderer and one registry line (compiler/render/__init__.py
RENDERERS): a small fake output, registered by that one line, is written by the pipeline,
named in the manifest, and selectable with the CLI's --only, with no other change."""

from __future__ import annotations

import json

from compiler import render
from compiler.check import CheckResults
from compiler.pipeline import write_outputs
from compiler.plan.model import Plan
from compiler.render.writer import OutputDir

from .conftest import SPECS, cli_in_process


def _fake(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    """fake/servers.txt: one line per server, read from the typed view (its server range)."""
    view = plan.view
    out.write_text("fake/servers.txt", "".join(f"{plan.devices[i].name} {view.design.server}\n" for i in view.servers))


def test_a_fake_output_is_its_renderer_and_one_registry_line(tmp_path, monkeypatch):
    monkeypatch.setitem(render.RENDERERS, "fake", render.Renderer(_fake, render.COMPUTE))  # the one line

    r = cli_in_process("compile", str(SPECS / "roce-2spine-4leaf-frr.yaml"), "-o", str(tmp_path), "--only", "fake,summary")
    assert r.returncode == 0, r.stderr
    folder = tmp_path / "roce-2spine-4leaf-frr"
    lines = (folder / "fake" / "servers.txt").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 32 and lines[0].endswith(" hgx-h100")  # the spec: 32 servers of one model
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert "fake" in manifest["outputs"]


def test_a_full_compile_writes_the_registered_fake_too(tmp_path, monkeypatch):
    from compiler.pipeline import build_plan

    monkeypatch.setitem(render.RENDERERS, "fake", render.Renderer(_fake, render.COMPUTE))
    _, plan = build_plan(SPECS / "roce-2spine-4leaf-frr.yaml")
    target = write_outputs(plan, tmp_path, workers=1)
    assert (target / "fake" / "servers.txt").is_file()
    assert sorted(json.loads((target / "manifest.json").read_text(encoding="utf-8"))["outputs"]) == sorted(render.RENDERERS)
