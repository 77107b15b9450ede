"""Adding a topology family touches its unit and one registry line per layer: its descriptor
(compiler/topology/ TOPOLOGIES), its lowering (expand/families.py FAMILIES), its closed forms
(check/families/ FAMILIES) and its routes (traffic/routing.py ROUTES). A small fake family,
registered by those lines alone, is taken by the spec, lowered, checked, routed and written
like the family it borrows from: every output of a fake full mesh equals the real one's but
for the topology's name. A stage that compared names instead of reading traits, or a
registry copied at import time, would make them differ or refuse the spec."""

from __future__ import annotations

import dataclasses
import json
import types

import pytest

from compiler import topology
from compiler.check import families as check_families
from compiler.check import run_checks
from compiler.check.bisection import BisectionFigures
from compiler.check.families import direct as direct_checks
from compiler.expand import direct as direct_lowering
from compiler.expand import families as expand_families
from compiler.pipeline import build_plan, write_outputs
from compiler.traffic import routing

from .conftest import SPECS, tree_bytes

FAKE, BORROWED = "fake-mesh", "full-mesh"


@pytest.fixture
def fake_family(monkeypatch):
    """The fake family's four registry lines: a full mesh's traits, lowering, closed forms
    and routes under a family name of its own."""
    descriptor = dataclasses.replace(topology.TOPOLOGIES[BORROWED], name=FAKE, family="fake")
    monkeypatch.setitem(topology.TOPOLOGIES, FAKE, descriptor)
    monkeypatch.setitem(expand_families.FAMILIES, "fake",
                        types.SimpleNamespace(resolve=direct_lowering.resolve, build=direct_lowering.build))
    monkeypatch.setitem(check_families.FAMILIES, "fake", direct_checks)
    monkeypatch.setitem(routing.ROUTES, "fake", routing.ROUTES["direct"])


def _compile(tmp_path, name: str, topology_value: str):
    spec = tmp_path / f"{name}.yaml"
    text = (SPECS / "dgx-h100-4node-mesh.yaml").read_text(encoding="utf-8")
    spec.write_text(text.replace("name: dgx-h100-4node-mesh", "name: mesh")
                    .replace(f"topology: {BORROWED}", f"topology: {topology_value}"), encoding="utf-8")
    _, plan = build_plan(spec)
    checks = run_checks(plan)
    return plan, checks, write_outputs(plan, tmp_path / name, None, checks, workers=1)


def test_a_fake_family_is_its_unit_and_one_registry_line_per_layer(tmp_path, fake_family):
    plan, checks, fake = _compile(tmp_path, "fake", FAKE)
    assert plan.view.design.topology == FAKE and len(plan.links) == 16  # the spec: 4 servers, 16 cables
    assert checks.of(BisectionFigures).analytic_gbps is not None  # the closed form its check line brought
    _, _, real = _compile(tmp_path, "real", BORROWED)
    fake_files, real_files = tree_bytes(fake), tree_bytes(real)
    assert sorted(fake_files) == sorted(real_files) and len(fake_files) > 10
    differ = []
    for rel, data in sorted(real_files.items()):
        ours = fake_files[rel].replace(FAKE.encode(), BORROWED.encode())
        if rel == "manifest.json":  # the plan's digest covers its topology's name
            ours, data = (json.dumps({**json.loads(x), "plan_sha256": None}).encode() for x in (ours, data))
        if ours != data:
            differ.append(rel)
    assert differ == []
    assert json.loads((fake / "plan.json").read_text(encoding="utf-8"))["design"]["topology"] == FAKE


def test_the_spec_refuses_the_fake_family_unless_it_is_registered(tmp_path):
    from compiler.diagnostics import SpecInvalid

    with pytest.raises(SpecInvalid) as exc:
        _compile(tmp_path, "fake", FAKE)
    (diag,) = exc.value.diagnostics
    assert diag.path == "fabric.topology" and "unknown topology 'fake-mesh'" in diag.message
