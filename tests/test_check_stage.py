"""Checks as a stage (compiler/check/stage.py): every check declares the figures it reads,
runs once in dependency order, returns a typed record that serialises to checks.json,
and the results reach the renderers explicitly."""

from __future__ import annotations

import inspect
import json
from dataclasses import is_dataclass

import pytest

from compiler.check import CHECKS, Check, CheckOrderError, check_order, run_checks
from compiler.check.figures import Figures
from compiler.check.hops import HopsFigures
from compiler.check.oversubscription import OversubscriptionFigures
from compiler.check.redundancy import RedundancyFigures
from compiler.check.scale_up import MODEL, ScaleUpFigures
from compiler.pipeline import build_plan
from compiler.render import RENDERERS

from .conftest import ROOT, SPECS, shared_checks, shared_plan



@pytest.fixture(scope="module")
def plan():
    return shared_plan("h100-superpod-1su")


def test_every_check_declares_exactly_the_figures_it_reads():
    for name, check in CHECKS.items():
        params = list(inspect.signature(check.run).parameters)
        assert params[0] == "ctx", name
        assert tuple(params[1:]) == check.needs, f"{name}: run() reads {params[1:]}, the registry says {check.needs}"
        assert issubclass(check.figures, Figures) and is_dataclass(check.figures), name


def test_dependencies_run_first_and_each_check_once(plan):
    """A registry listed backwards must still run bisection before what needs it, and every
    check exactly once; the figures and findings are those of the normal registry (findings
    in another order: they follow the registry's)."""
    calls: list[str] = []

    def counted(name, run):
        def wrapper(ctx, **needs):
            calls.append(name)
            assert set(needs) == set(CHECKS[name].needs)
            return run(ctx, **needs)
        return wrapper

    backwards = {name: Check(counted(name, c.run), c.figures, c.needs, c.per_fabric)
                 for name, c in reversed(list(CHECKS.items()))}
    results = run_checks(plan, checks=backwards)
    assert sorted(calls) == sorted(CHECKS)
    for name, check in CHECKS.items():
        assert all(calls.index(need) < calls.index(name) for need in check.needs), calls
    normal = shared_checks(plan)
    assert results.as_json()["figures"] == normal.as_json()["figures"]
    assert sorted(map(repr, results.findings)) == sorted(map(repr, normal.findings))


def test_a_cycle_or_an_unknown_need_is_our_bug():
    def run(ctx, **_):
        raise AssertionError("never runs")

    with pytest.raises(CheckOrderError, match="cycle: a, b"):
        check_order({"a": Check(run, Figures, needs=("b",)), "b": Check(run, Figures, needs=("a",)),
                     "c": Check(run, Figures)})
    with pytest.raises(CheckOrderError, match="needs bisection, which is not registered"):
        check_order({"a": Check(run, Figures, needs=("bisection",))})
    assert check_order({"a": Check(run, Figures, needs=("b",)), "b": Check(run, Figures), "c": Check(run, Figures)}) \
        == ["b", "a", "c"]


def test_a_check_returning_another_record_is_our_bug(plan):
    wrong = dict(CHECKS)
    wrong["hops"] = Check(lambda ctx: (ScaleUpFigures(MODEL), []), HopsFigures)
    with pytest.raises(TypeError, match="check hops returned ScaleUpFigures, not HopsFigures"):
        run_checks(plan, checks=wrong)


def test_typed_figures_serialise_to_the_committed_checks_json():
    """checks.json is the typed figures' JSON, byte for byte (out/ is what compile wrote)."""
    for name in ("b200-superpod-4su", "gb200-nvl72-su", "h100-superpod-1su-multi-fabric"):
        committed = (ROOT / "out" / name / "report" / "checks.json").read_text()
        results = shared_checks(name)

        assert json.dumps(results.as_json(), indent=2) + "\n" == committed, name


def test_figures_only_some_designs_have_stay_out_of_the_json():
    assert HopsFigures().as_json() == {}
    assert HopsFigures(method="m", max=3).as_json() == {"method": "m", "max": 3}
    assert ScaleUpFigures(MODEL).as_json() == {"model": MODEL, "kind": None}
    red = RedundancyFigures(1, "exact", 0, {}, monte_carlo=None).as_json()
    assert red == {"leaf_pair_edge_disjoint_paths_min": 1, "leaf_pair_method": "exact", "single_homed_servers": 0,
                   "single_failures": {}, "monte_carlo": {}}


def test_extra_fabrics_are_measured_on_their_own_switches(tmp_path):
    """Two-tier extra fabrics (tests/test_fabrics.py: test_two_tier_extra_fabric_by_hand),
    storage single-homed: storage leaf 62 server ports down : 62 uplinks = 1:1 (cut for its
    servers' ports); OOB leaf 31 x 1G BMCs : 2 x 100G uplinks = 31:200. Every per-fabric check runs there
    (budgets, physical, bisection, oversubscription, redundancy), not the GPU-path ones;
    the compute fabric keeps its own figures."""
    text = (SPECS / "h100-superpod-1su-multi-fabric.yaml").read_text()
    text = text.replace("switch: sn5600", "switch: sn5600\n    tiers: 2\n    homing: single").replace(
        "switch: sn2201", "switch: sn2201\n    tiers: 2")
    path = tmp_path / "two.yaml"
    path.write_text(text)
    checks = run_checks(build_plan(path)[1])
    assert set(checks.fabric_figures) == {"storage", "oob"}
    assert all(list(f) == ["budgets", "physical", "bisection", "oversubscription", "redundancy"]
               for f in checks.fabric_figures.values())
    assert checks.of(OversubscriptionFigures, fabric="storage").tiers["leaf"].max == "1:1"
    assert checks.of(OversubscriptionFigures, fabric="oob").tiers["leaf"].max == "31:200"
    assert checks.of(OversubscriptionFigures).tiers["leaf"].max == "1:1"
    assert checks.of(OversubscriptionFigures, fabric="compute") is checks.figures["oversubscription"]


def test_results_belong_to_the_run_not_the_plan(plan):
    """Nothing is cached on the plan: a second run with another seed draws other failure
    samples and random cuts, even on the same plan object."""
    one, two = run_checks(plan, seed=1), run_checks(plan, seed=2)
    assert one.of(RedundancyFigures).monte_carlo.seed == 1 and two.of(RedundancyFigures).monte_carlo.seed == 2
    assert one.as_json()["figures"]["bisection"]["cuts"] != two.as_json()["figures"]["bisection"]["cuts"]


def test_every_renderer_takes_the_plan_its_check_results_and_the_output():
    for name, renderer in RENDERERS.items():
        assert list(inspect.signature(renderer.render).parameters) == ["plan", "checks", "out"], name
        assert renderer.reads in ("compute", "all"), name


@pytest.mark.parametrize("spec", ["meta-llama3-24k", "h100-superpod-1su-multi-fabric-hall", "roce-2spine-4leaf-sonic"])
def test_check_jobs_in_any_order_give_run_checks_results(spec):
    """The checks split into jobs (a parallel compile hands them to whichever process is
    free): run in reverse order, each on its own, `finish` gives exactly run_checks's
    figures and findings (requirements reads figures of three other jobs; the multi-fabric
    plan has a job per extra fabric)."""
    from compiler.check import check_jobs
    plan = shared_plan(spec)
    jobs = check_jobs(plan)
    assert len(jobs) >= 3 and jobs.last == ("requirements",)
    results: list = [None] * len(jobs)
    for k in reversed(range(len(jobs))):
        results[k] = jobs.run(k)
    assert jobs.finish(results).as_json() == shared_checks(plan).as_json()


def test_a_failed_check_job_raises_what_run_checks_raises_first(plan, monkeypatch):
    """Two failing jobs: finish raises the one of the check that comes first in check
    order, as run_checks (which stops at it) does."""
    from compiler.check import check_jobs
    jobs = check_jobs(plan)
    boom = {name: RuntimeError(name) for name in ("collectives", "bisection")}
    results = [next((boom[n] for n in group if n in boom), None) for group in jobs.groups]
    with pytest.raises(RuntimeError, match="^bisection$"):
        jobs.finish(results)
