"""clusterc resilience: sampled failure states against exact enumeration and closed forms,
monotonicity, determinism over workers, bad input.

Modules exercised here: resilience/components.py, resilience/rates.py, resilience/collective.py,
resilience/executor.py, resilience/report.py, resilience/text.py, resilience/errors.py."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from compiler.check.context import CheckContext
from compiler.pipeline import build_plan
from compiler.plan.fabrics import fabric_plan
from compiler.resilience import ResilienceError, components_of, load_rates, resilience_report
from compiler.resilience.state import Model, evaluate

from .conftest import ROOT, cli_in_process, run_cli

CLOS = ROOT / "specs" / "roce-2spine-4leaf-frr.yaml"  # 4 leaves, 2 spines, 256 GPUs
RAIL_ONLY = ROOT / "specs" / "rail-only-h100-64.yaml"  # one switch per rail, no spine
SCHEMA = json.loads((ROOT / "compiler" / "resilience" / "resilience.schema.json").read_text())


@pytest.fixture(scope="module")
def clos():
    return build_plan(CLOS)[1]


@pytest.fixture(scope="module")
def rail_only():
    return build_plan(RAIL_ONLY)[1]


def _switches_only(tmp_path: Path, afr: float, mttr_hours: float = 8760.0) -> Path:
    """Rates with only switches failing: unavailability afr x mttr / 8760 (= afr at a year's repair)."""
    p = tmp_path / f"rates-{afr}.yaml"
    p.write_text(f"switch: {{afr: {afr}, mttr_hours: {mttr_hours}}}\n"
                 "transceiver: {afr: 0, mttr_hours: 1}\ncable: {afr: 0, mttr_hours: 1}\nnic: {afr: 0, mttr_hours: 1}\n")
    return p


def test_exact_enumeration_equals_sampled_distribution(clos, tmp_path):
    """Every one of the 2^6 switch states of a 4-leaf, 2-spine fabric, weighted by its
    probability, against 3,000 sampled states: mean GPUs cut off and bisection fraction agree
    within 4 standard errors, and so does the share of states with any GPU cut off."""
    u = 0.1
    rates_file = _switches_only(tmp_path, u)
    r = resilience_report(clos, rates_file, samples=3000, seed=11)
    ctx = CheckContext(fabric_plan(clos), whole=clos)
    comps = components_of(ctx)
    model = Model.build(comps, load_rates(rates_file, comps.counts), 0.9)
    n = comps.groups["switch"].count
    assert n == 6
    mean_cut = mean_bis = p_any = 0.0
    for bits in itertools.product([0, 1], repeat=n):
        down = np.nonzero(bits)[0]
        w = u ** len(down) * (1 - u) ** (n - len(down))
        o = evaluate(model, {"switch": down})
        mean_cut += w * o.gpus_cut_off
        mean_bis += w * o.bisection_fraction
        p_any += w * (o.gpus_cut_off > 0)
    m = r["metrics"]
    assert abs(m["gpus_cut_off"]["mean"] - mean_cut) <= 4 * m["gpus_cut_off"]["stderr"]
    assert abs(m["bisection_fraction"]["mean"] - mean_bis) <= 4 * m["bisection_fraction"]["stderr"]
    # a leaf down cuts off its 64 GPUs: P(any) = 1 - (1-u)^4 leaves (+ both spines, already counted by then)
    assert mean_cut > 0.3 * 64 * 4 * u


def test_rail_only_switch_unavailability_is_share_cut_off(rail_only, tmp_path):
    """Only switches failing at unavailability u, each GPU NIC on one rail switch and nothing
    else: the mean share of GPUs cut off is u."""
    u = 0.2
    r = resilience_report(rail_only, _switches_only(tmp_path, u), samples=2000, seed=5)
    s = r["metrics"]["gpus_cut_off_share"]
    assert r["rates"]["switch"]["unavailability"] == pytest.approx(u)
    assert abs(s["mean"] - u) <= 4 * s["stderr"]
    assert s["stderr"] < 0.01


def test_one_spine_down_costs_one_over_s(clos):
    """One spine of 2 down: exactly half the bisection, no GPU cut off; its repair restores it all."""
    r = resilience_report(clos, samples=10, down="spine-01")
    st = r["state"]
    assert st["bisection_fraction"] == 0.5
    assert st["gpus_cut_off"] == 0
    assert st["repairs"] == [{"repair": "spine-01", "class": "switch", "delivery_restored": 0.5, "gpus_restored": 0,
                              "bisection_restored": 0.5}]
    spine = next(p for p in r["criticality"]["positions"] if p["position"] == "spine")
    assert spine["one_down_bisection_lost"] == 0.5


def test_down_orders_repairs_by_what_they_restore(clos):
    """A leaf, a spine and a NIC down: delivery (GPUs reached x bisection) is 191/256 x 1/4;
    the leaf's repair gives 255/256 x 1/2, the spine's 191/256 x 1/2, the NIC's 192/256 x 1/4."""
    r = resilience_report(clos, samples=10, down="spine-01,leaf-002,gpu-0001:nic1")
    st = r["state"]
    assert st["gpus_cut_off"] == 64 + 1
    assert st["bisection_fraction"] == 0.25
    assert [x["repair"] for x in st["repairs"]] == ["leaf-002", "spine-01", "gpu-0001:nic1"]
    base = 191 / 256 * 0.25
    assert [x["delivery_restored"] for x in st["repairs"]] == pytest.approx(
        [255 / 256 * 0.5 - base, 191 / 256 * 0.5 - base, 192 / 256 * 0.25 - base], abs=1e-6)


def test_higher_afr_never_improves(clos, tmp_path):
    low = resilience_report(clos, _switches_only(tmp_path, 0.02), samples=800, seed=3)["metrics"]
    high = resilience_report(clos, _switches_only(tmp_path, 0.2), samples=800, seed=3)["metrics"]
    assert high["gpus_cut_off"]["mean"] > low["gpus_cut_off"]["mean"]
    assert high["bisection_fraction"]["mean"] < low["bisection_fraction"]["mean"]
    assert high["bisection_fraction"]["p99"] <= low["bisection_fraction"]["p99"]


def test_spares_are_the_poisson_quantile(clos):
    r = resilience_report(clos, samples=10, window_days=365, confidence=0.95)
    t = r["spares"]["classes"]["transceiver"]
    # 640 transceivers x 0.01 per year: 6.4 expected; the 95 % Poisson quantile of 6.4 is 11
    assert r["components"]["transceiver"] == 640
    assert t["expected_failures"] == pytest.approx(6.4)
    assert t["stock"] == 11


def test_json_follows_schema_and_is_identical_over_workers(tmp_path):
    out = []
    for workers in ("1", "2"):
        p = run_cli("resilience", str(CLOS), "--samples", "200", "--seed", "9", "--workers", workers, "--format", "json")
        assert p.returncode == 0, p.stderr
        data = json.loads(p.stdout)
        jsonschema.validate(data, SCHEMA)
        assert data["executor"] == {"name": "local", "workers": int(workers)}
        data.pop("executor")
        out.append(data)
    assert out[0] == out[1]
    assert out[0]["switches"] == {"leaf": 4, "spine": 2}
    assert out[0]["samples"] == 200


@pytest.mark.parametrize("text, message", [
    ("switch: {afr: -0.1, mttr_hours: 4}\n", "negative"),
    ("switch: {afr: lots, mttr_hours: 4}\n", "is not a number"),
    ("gpu: {afr: 0.1, mttr_hours: 4}\n", "the plan has no component of class 'gpu'"),
    ("switch: {afr: 0.1, mtbf: 4}\n", "unknown field"),
])
def test_bad_rates_exit_2(tmp_path, text, message):
    p = tmp_path / "rates.yaml"
    p.write_text(text)
    r = cli_in_process("resilience", str(CLOS), "--rates", str(p), "--samples", "5")
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr
    assert f"{p}:1:" in r.stderr  # file:line:column


def test_class_the_plan_lacks(tmp_path):
    """A switchless mesh of servers has no switch to give a rate to."""
    _, plan = build_plan(ROOT / "specs" / "dgx-h100-4node-mesh.yaml")
    p = tmp_path / "rates.yaml"
    p.write_text("switch: {afr: 0.1, mttr_hours: 4}\n")
    with pytest.raises(ResilienceError, match="no component of class 'switch'"):
        resilience_report(plan, p, samples=5)


@pytest.mark.parametrize("args, message", [
    (["--down", "spine-99,leaf-001"], "not in the plan: spine-99"),
    (["--executor", "ray"], "--executor ray: not installed"),
    (["--executor", "slurm"], "unknown executor"),
    (["--samples", "0"], "--samples must be at least 1"),
    (["--confidence", "1.5"], "--confidence must be between 0 and 1"),
    (["--window-days", "-3"], "--window-days must be positive"),
    (["--workers", "0"], "--workers must be at least 1"),
])
def test_bad_down_and_executor_exit_2(args, message):
    r = cli_in_process("resilience", str(CLOS), *(["--samples", "5"] if "--samples" not in args else []), *args)
    assert r.returncode == 2
    assert message in r.stderr and "Traceback" not in r.stderr


def test_down_reads_verify_json(clos, tmp_path):
    p = tmp_path / "verify.json"
    p.write_text(json.dumps({"ok": False, "mismatches": [
        {"kind": "missing", "cable_id": "leaf-001:65", "cables": ["leaf-001:65"]},
        {"kind": "speed", "cable_id": "leaf-001:66", "cables": ["leaf-001:66"]}]}))
    st = resilience_report(clos, samples=5, down=str(p))["state"]
    assert st["down"] == ["leaf-001:65"]
    assert st["bisection_fraction"] < 1.0


def test_dask_local_cluster_of_2_workers_gives_the_local_figures():
    """The distributed engine for real: a dask LocalCluster of 2 worker processes, the same
    seed, the same JSON as one local process."""
    pytest.importorskip("distributed")
    out = []
    for args in (["--executor", "dask", "--workers", "2"], ["--executor", "local", "--workers", "1"]):
        p = run_cli("resilience", str(CLOS), "--samples", "150", "--seed", "4", "--format", "json", *args)
        assert p.returncode == 0, p.stderr
        data = json.loads(p.stdout)
        out.append((data.pop("executor"), data))
    assert out[0][0] == {"name": "dask", "workers": 2}
    assert out[0][1] == out[1][1]


def test_dask_scheduler_not_reachable_exits_2():
    pytest.importorskip("distributed")
    r = run_cli("resilience", str(CLOS), "--samples", "5", "--executor", "dask", "--address", "tcp://127.0.0.1:9")
    assert r.returncode == 2
    assert "no scheduler reachable at tcp://127.0.0.1:9" in r.stderr and "Traceback" not in r.stderr


def test_availability_requirement_judged_here_not_by_check(tmp_path):
    """requirements.availability: `check` lists it as judged by `clusterc resilience`;
    resilience judges it (exit 1 when the share of states meeting the fraction is short)."""
    spec = tmp_path / "avail.yaml"
    spec.write_text(CLOS.read_text().replace("name: roce-2spine-4leaf-frr", "name: avail") +
                    "requirements:\n  availability: {min_bisection_fraction: 0.9, share: 0.99}\n")
    _, plan = build_plan(spec)
    assert plan.requirements["availability"] == {"min_bisection_fraction": 0.9, "share": 0.99}
    from compiler.check import run_checks
    from compiler.check.requirements import RequirementsFigures
    req = run_checks(plan).of(RequirementsFigures)
    entry = next(r for r in req.results if r["name"] == "availability")
    assert "judged by `clusterc resilience`" in entry["examined"]
    shown = run_cli("check", str(spec))
    assert shown.returncode == 0 and "requirement availability: judged by `clusterc resilience`" in shown.stdout
    rates = _switches_only(tmp_path, 0.05)  # a switch down 5 % of the time: a spine or leaf down in ~26 % of states
    p = run_cli("resilience", str(spec), "--rates", str(rates), "--samples", "300", "--format", "json")
    assert p.returncode == 1, p.stderr
    a = json.loads(p.stdout)["availability"]
    assert a["required_in_spec"] and not a["ok"]
    assert 0.6 < a["share_meeting"] < 0.9
    assert run_cli("resilience", str(spec), "--samples", "50").returncode == 0  # the default rates meet it


def test_collective_fraction_is_traffics_on_the_same_failure(clos):
    """--pattern: the state's collective throughput is what `clusterc traffic --fail` reports
    for the same elements down, and the intact figure is traffic's intact one."""
    from compiler.traffic import traffic_report

    r = resilience_report(clos, samples=20, down="spine-01,leaf-001:65", pattern="ring-allreduce", routing="ecmp")
    t = traffic_report(clos, ["ring-allreduce"], ["ecmp"], fail="spine-01,leaf-001:65")
    intact, failed = (next(x["fraction"] for x in t["results"] if bool(x["failure"]) == f) for f in (False, True))
    assert r["collective"]["intact_fraction"] == pytest.approx(intact, abs=1e-4)
    assert r["state"]["collective_fraction"] == pytest.approx(failed, abs=1e-4)
    assert failed < intact
    m = r["metrics"]["collective_fraction"]
    assert m["p50"] <= r["collective"]["intact_fraction"] + 1e-12
    jsonschema.validate(r, SCHEMA)


def test_routing_without_pattern_is_an_error(clos):
    with pytest.raises(ResilienceError, match="--routing needs --pattern"):
        resilience_report(clos, samples=5, routing="ecmp")


@pytest.mark.parametrize("spec, servers, links_per_nic", [
    ("hgx-b300-dual-plane", 32, 2),  # ConnectX-8: one cage, one port per plane: a NIC takes 2 links
    ("h100-superpod-1su-multi-fabric", 31, 1),  # DGX H100: two single-port ConnectX-7 behind each twin-port cage
])
def test_nics_are_the_servers_nics(spec, servers, links_per_nic):
    """8 NICs per server, as the catalog and the BOM count them, whatever the cages hold."""
    _, plan = build_plan(ROOT / "specs" / f"{spec}.yaml")
    comps = components_of(CheckContext(fabric_plan(plan), whole=plan))
    nic = comps.groups["nic"]
    assert nic.count == servers * 8
    assert set(np.diff(nic.indptr).tolist()) == {links_per_nic}


def test_dual_plane_gpu_is_cut_off_only_when_both_planes_are():
    """HGX B300 dual-plane: each GPU's ConnectX-8 reaches both planes. One plane's leaf down cuts
    no GPU off; the NIC down cuts off its one GPU (not its two ports)."""
    _, plan = build_plan(ROOT / "specs" / "hgx-b300-dual-plane.yaml")
    r = resilience_report(plan, samples=5, down="b300-0001:nic1")
    assert r["gpus"] == 256 and r["gpu_ports"] == 512
    assert r["state"]["gpus_cut_off"] == 1
    leaf = next(p for p in r["criticality"]["positions"] if p["position"] == "leaf")
    assert leaf["one_down_gpus_cut_off"] == 0
    nic = r["state"]["down"][0]
    assert nic == "b300-0001:nic1"


def test_markdown_and_text_formats(tmp_path):
    md = run_cli("resilience", str(CLOS), "--samples", "50", "--format", "markdown", "--down", "spine-01")
    assert md.returncode == 0, md.stderr
    assert "| metric | mean | p50 | p90 | p99 | p99.9 |" in md.stdout
    assert "- repair spine-01 (switch): restores 0.5000 delivery" in md.stdout
    text = run_cli("resilience", str(CLOS), "--samples", "50")
    assert "(local, 1 worker)" in text.stdout and "switch: 6 units, afr 0.026/year, mttr 24 h" in text.stdout


def test_criticality_is_units_times_unavailability_times_one_down(clos):
    """A leaf of 4 down cuts off its 64 GPUs: expected 4 x (0.026 x 24 / 8760) x 64 GPUs at the
    default switch rate; the leaves lead the ranking, and a switch costs more than a cable."""
    r = resilience_report(clos, samples=5)
    c = r["criticality"]
    leaf = c["positions"][0]
    assert (leaf["position"], leaf["units"], leaf["one_down_gpus_cut_off"]) == ("leaf", 4, 64)
    assert leaf["expected_gpus_cut_off"] == pytest.approx(4 * 0.026 * 24 / 8760 * 64)
    assert c["classes"]["switch"]["expected_gpus_cut_off"] > c["classes"]["cable"]["expected_gpus_cut_off"]
