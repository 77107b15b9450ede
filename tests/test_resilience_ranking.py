"""compare and explore weigh designs under sampled failures (clusterc resilience's figures),
and explore runs its candidates through the executor: the same seed gives the same
figures and ranking on any executor and worker count."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from compiler.executor import LocalExecutor
from compiler.explore import as_json, explore
from compiler.explore.evaluate import Failures
from compiler.pipeline import build_plan
from compiler.resilience.report import failure_figures

from .conftest import ROOT, run_cli

SCHEMA = json.loads((ROOT / "compiler" / "explore" / "explore.schema.json").read_text())

# 256 H100 GPUs on a 1:1 fat tree: Spectrum-4 SN5600 (128 x 400G) builds 4 leaves and 2
# spines, SN5400 (64 x 400G) 8 leaves and 4 spines: half the fabric in each leaf and each
# spine against a quarter and an eighth.
SPACE = """name: roce
servers: 32
server: hgx-h100
fabric:
  topology: fat-tree
  switch: {switch}
  speed_gbps: 400
  oversubscription: "1:1"
"""
# Switches only, each down 5 % of the time (2 a year, 219 h to repair): enough that 200
# states see single and double failures, so the tail tells the designs apart.
RATES = ("switch: {afr: 2, mttr_hours: 219}\ntransceiver: {afr: 0, mttr_hours: 1}\n"
         "cable: {afr: 0, mttr_hours: 1}\nnic: {afr: 0, mttr_hours: 1}\n")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("ranking")
    out = {"rates": d / "rates.yaml", "space": d / "space.yaml", "two": d / "two-spines.yaml", "four": d / "four-spines.yaml"}
    out["rates"].write_text(RATES)
    out["space"].write_text(SPACE.format(switch="[sn5600, sn5400]"))
    out["two"].write_text(SPACE.format(switch="sn5600"))
    out["four"].write_text(SPACE.format(switch="sn5400"))
    return out


def test_explore_ranks_the_more_redundant_design_first_under_failures(files):
    x = explore(files["space"], "resilience", failures=Failures(200, 1, str(files["rates"])))
    by_switch = {e.candidate.choices["fabric.switch"]: e for e in x.evaluated}
    two, four = by_switch["sn5600"], by_switch["sn5400"]
    assert two.switches == {"leaf": 4, "spine": 2} and four.switches == {"leaf": 8, "spine": 4}
    # one switch down of a 2-spine fabric halves its spine layer; of a 4-spine one, a quarter:
    # the 1-in-100 state of the finer design delivers more
    assert four.resilience["delivery_p99"] > two.resilience["delivery_p99"]
    assert x.best is four
    # on switches (the default objective) the same space picks the 2-spine design
    assert explore(files["space"], "switches").best.candidate.choices["fabric.switch"] == "sn5600"
    # the figures are clusterc resilience's on the compiled spec, with the same seed
    assert two.resilience == failure_figures(build_plan(files["two"])[1], 200, 1, str(files["rates"]))
    assert "delivery p99 under failures 0.1875 vs 0.3125" in x.why(two)
    jsonschema.validate(as_json(x), SCHEMA)


def test_explore_same_ranking_for_the_same_seed_on_any_worker_count(files):
    """Byte-identical JSON with 1 and 2 local worker processes."""
    runs = [run_cli("explore", str(files["space"]), "--objective", "resilience", "--rates", str(files["rates"]),
                    "--seed", "3", "--format", "json", "--workers", w) for w in ("1", "2")]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    assert runs[0].stdout == runs[1].stdout
    data = json.loads(runs[0].stdout)
    assert data["objective"] == "resilience" and "delivery_p99" in data["front_metrics"]
    assert data["best"]["resilience"]["seed"] == 3


def test_explore_through_an_executor_in_process_pool(files):
    """The executor itself: candidates mapped over 2 processes come back in candidate order."""
    a = explore(files["space"], "resilience", failures=Failures(64, 5, str(files["rates"])))
    b = explore(files["space"], "resilience", executor=LocalExecutor(2), failures=Failures(64, 5, str(files["rates"])))
    assert as_json(a) == as_json(b)


def test_explore_bad_executor_or_rates_exit_2(files, tmp_path):
    r = run_cli("explore", str(files["space"]), "--executor", "ray")
    assert r.returncode == 2 and "--executor ray: not installed" in r.stderr and "Traceback" not in r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("switch: {afr: -1, mttr_hours: 4}\n")
    r = run_cli("explore", str(files["space"]), "--objective", "resilience", "--rates", str(bad), "--samples", "5")
    assert r.returncode == 2 and "negative" in r.stderr and "Traceback" not in r.stderr


def test_compare_shows_the_same_figures_under_failures(files):
    r = run_cli("compare", str(files["two"]), str(files["four"]), "--samples", "200", "--rates", str(files["rates"]),
                "--format", "json")
    assert r.returncode == 0, r.stderr
    two, four = json.loads(r.stdout)["designs"]
    assert two["resilience"] == failure_figures(build_plan(files["two"])[1], 200, 1, str(files["rates"]))
    assert four["resilience"]["delivery_p99"] > two["resilience"]["delivery_p99"]
    text = run_cli("compare", str(files["two"]), str(files["four"]), "--samples", "200", "--rates", str(files["rates"]))
    assert "delivery under failures, p99/mean (200 states)" in text.stdout
    assert "0.1875/" in text.stdout and "0.3125/" in text.stdout
    plain = run_cli("compare", str(files["two"]), str(files["four"]), "--format", "json")
    assert all(d["resilience"] is None for d in json.loads(plain.stdout)["designs"])


MULTI = ROOT / "specs" / "h100-superpod-1su-multi-fabric.yaml"  # compute + storage (dual-homed) + oob
RESILIENCE_SCHEMA = json.loads((ROOT / "compiler" / "resilience" / "resilience.schema.json").read_text())


def test_every_fabric_is_sampled_and_dual_homed_storage_never_loses_more(tmp_path):
    """Storage dual-homed (each DGX's two storage NICs on two leaves) against the same cluster
    single-homed (both on one leaf), under the same rates and seed: a server is cut off from
    storage only when every path it has is down, so dual homing is never worse, at the mean
    and at every percentile."""
    from compiler.resilience import resilience_report

    rates = tmp_path / "rates.yaml"
    rates.write_text("switch: {afr: 2, mttr_hours: 219}\ntransceiver: {afr: 1, mttr_hours: 219}\n"
                     "cable: {afr: 1, mttr_hours: 219}\nnic: {afr: 1, mttr_hours: 219}\n")
    single_spec = tmp_path / "single.yaml"
    single_spec.write_text(MULTI.read_text().replace("    nos: sonic\n", "    nos: sonic\n    homing: single\n", 1))
    dual = resilience_report(build_plan(MULTI)[1], rates, samples=300, seed=2)
    single = resilience_report(build_plan(single_spec)[1], rates, samples=300, seed=2)
    jsonschema.validate(dual, RESILIENCE_SCHEMA)
    assert sorted(dual["fabrics"]) == ["oob", "storage"]
    d, s = dual["fabrics"]["storage"], single["fabrics"]["storage"]
    assert d["switches"] == {"leaf": 2} and s["switches"] == {"leaf": 1}
    assert d["components"]["nic"] == s["components"]["nic"] == 62  # 31 DGX x 2 storage NICs
    for stat in ("mean", "p50", "p90", "p99", "p999"):
        assert d["metrics"]["gpus_cut_off"][stat] <= s["metrics"]["gpus_cut_off"][stat], stat
    # single-homed, the one storage switch down cuts every GPU off storage; dual-homed, a leaf
    # down leaves every server its other NIC
    assert s["metrics"]["gpus_cut_off"]["p99"] == 248 and d["metrics"]["gpus_cut_off"]["p99"] < 248
    assert d["metrics"]["gpus_cut_off"]["mean"] < s["metrics"]["gpus_cut_off"]["mean"]
    # the compute fabric is the same in both: the same figures
    assert dual["metrics"] == single["metrics"]


def test_explore_on_a_dask_cluster_of_2_workers_gives_the_local_json(files):
    """The distributed engine for real: explore's candidates on a dask LocalCluster of 2
    worker processes, byte-identical JSON to one local process."""
    pytest.importorskip("distributed")
    runs = [run_cli("explore", str(files["space"]), "--objective", "resilience", "--rates", str(files["rates"]),
                    "--samples", "64", "--format", "json", *args)
            for args in (["--executor", "dask", "--workers", "2"], ["--executor", "local"])]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    assert runs[0].stdout == runs[1].stdout
