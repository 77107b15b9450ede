"""compiler/cyclic_gc.py: the cyclic GC paused around work that builds many objects (the
spec -> plan expansion), and left as the caller had it."""

from __future__ import annotations

import gc

import pytest

from compiler import cyclic_gc
from compiler import expand as expand_package
from compiler.pipeline import build_plan

from .conftest import ROOT


@pytest.fixture
def gc_restored():
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_paused_turns_the_gc_off_inside_and_on_again_after(gc_restored):
    gc.enable()
    with cyclic_gc.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_paused_leaves_a_gc_the_caller_turned_off_off(gc_restored):
    gc.disable()
    with cyclic_gc.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_paused_turns_the_gc_on_again_when_the_work_raises(gc_restored):
    gc.enable()
    with pytest.raises(RuntimeError), cyclic_gc.paused():
        raise RuntimeError("the work failed")
    assert gc.isenabled()


def test_expand_builds_the_plan_with_the_gc_paused_and_restores_it(gc_restored, monkeypatch):
    """At 131,072 GPUs the collections were about a third of the expansion's CPU."""
    seen: list[bool] = []
    real = expand_package.resolve_and_build

    def spy(loaded):
        seen.append(gc.isenabled())
        return real(loaded)

    monkeypatch.setattr(expand_package, "resolve_and_build", spy)
    gc.enable()
    _, plan = build_plan(ROOT / "specs" / "h100-superpod-1su.yaml")
    assert seen == [False]
    assert gc.isenabled()
    assert len(plan.devices) > 0
