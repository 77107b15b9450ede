"""The resilience report: sampled distribution, criticality, spares, and a given state."""

from __future__ import annotations

import json
import math
from typing import Any
from pathlib import Path

import numpy as np
from scipy.stats import poisson

from ..check.context import CheckContext
from ..executor import Executor, ExecutorError, LocalExecutor, make_executor
from ..plan.fabrics import COMPUTE, fabric_names, fabric_plan
from ..plan.model import Plan
from .collective import collective_setup
from .components import CLASSES, components_of
from .errors import ResilienceError
from .rates import load_rates
from .state import Model, evaluate, run_chunk

CHUNK = 64  # samples per task: fixed, so chunks (and figures) do not depend on the worker count
DOWN_KINDS = ("missing", "swapped", "wrong-port", "wrong-device")  # verify mismatches that take a link down
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


def _stats(x: np.ndarray, worse_high: bool) -> dict:
    """Mean and percentiles with their sampling error. pNN is the value NN % of states are no
    worse than (for a fraction where lower is worse: the (100-NN)th percentile). The
    percentile's error is half the spread of the order statistics one binomial standard
    deviation either side."""
    n = x.size
    s = np.sort(x)
    out = {"mean": float(x.mean()), "stderr": float(x.std(ddof=1) / math.sqrt(n)) if n > 1 else None}
    for name, p in PERCENTILES.items():
        q = p / 100 if worse_high else 1 - p / 100
        k = q * n
        sd = math.sqrt(n * q * (1 - q))
        lo, hi = max(0, math.floor(k - sd)), min(n - 1, math.ceil(k + sd))
        out[name] = float(s[min(n - 1, max(0, math.ceil(k) - 1))])
        out[f"{name}_stderr"] = float(s[hi] - s[lo]) / 2
    return out


def _switches_by_role(plan: Plan) -> dict[str, int]:
    """As summary.json's `switches`: per switch role (tier > 0), in plan order."""
    counts = plan.count_by_role()
    return {role: counts[role] for role in dict.fromkeys(d.role for d in plan.devices if d.tier > 0)}


def _criticality(model: Model, rates: dict) -> dict:
    """First order: per position, units x unavailability x what one unit of it down costs
    (measured exactly on the first, middle and last unit of the position, averaged: a partial
    scalable unit's leaf costs other than a full one's; `example` is the costliest of them).
    The classes sum their positions."""
    gpus = max(model.gpus, 1)
    positions = []
    for cls in CLASSES:
        grp = model.comps.groups[cls]
        if cls not in rates:
            continue
        u = rates[cls]["unavailability"]
        counts = np.bincount(grp.position, minlength=len(grp.positions))
        for p, label in enumerate(grp.positions):
            members = np.nonzero(grp.position == p)[0]
            units = sorted({int(members[0]), int(members[members.size // 2]), int(members[-1])})
            outs = [evaluate(model, {cls: np.array([unit])}, exact=True) for unit in units]
            cut = float(np.mean([o.gpus_cut_off for o in outs]))
            lost = float(np.mean([1 - o.bisection_fraction for o in outs]))
            worst = max(range(len(units)), key=lambda i: (outs[i].gpus_cut_off / gpus + 1 - outs[i].bisection_fraction, -i))
            positions.append({"class": cls, "position": label, "units": int(counts[p]), "example": grp.names[units[worst]],
                              "one_down_gpus_cut_off": round(cut, 6),
                              "one_down_bisection_lost": round(lost, 6),
                              "expected_gpus_cut_off": int(counts[p]) * u * cut,
                              "expected_gpu_share_lost": int(counts[p]) * u * cut / gpus,
                              "expected_bisection_lost": int(counts[p]) * u * lost})
    positions.sort(key=lambda r: (-r["expected_gpu_share_lost"] - r["expected_bisection_lost"], r["class"], r["position"]))
    classes: dict[str, dict[str, float]] = {}
    for r in positions:
        c = classes.setdefault(r["class"], {"expected_gpus_cut_off": 0.0, "expected_bisection_lost": 0.0})
        c["expected_gpus_cut_off"] += r["expected_gpus_cut_off"]
        c["expected_bisection_lost"] += r["expected_bisection_lost"]
    return {"method": "first order: units x unavailability x the cost of one unit down", "classes": classes,
            "positions": positions}


def _spares(counts: dict, rates: dict, window_days: float, confidence: float) -> dict:
    out = {}
    for cls, r in rates.items():
        mean = counts[cls] * r["afr"] * window_days / 365.0
        out[cls] = {"units": counts[cls], "expected_failures": round(mean, 4),
                    "stock": int(poisson.ppf(confidence, mean)) if mean > 0 else 0}
    return {"window_days": window_days, "confidence": confidence, "method": "Poisson quantile of failures in the window",
            "classes": out}


def _names_from(down: str) -> list[str]:
    """--down: comma-separated names, or a file of names (one a line) or `verify --format json` output."""
    p = Path(down)
    if not p.is_file():
        return [t.strip() for t in down.split(",") if t.strip()]
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except ValueError:
        return [t.strip() for t in text.splitlines() if t.strip() and not t.startswith("#")]
    # A planned cable that is missing or plugged elsewhere does not carry its link: down.
    # Speed and width mismatches degrade a link without taking it down: not counted.
    names: list[str] = []
    for m in data.get("mismatches", []) if isinstance(data, dict) else []:
        if m.get("kind") in DOWN_KINDS:
            names.extend(str(c) for c in m.get("cables") or [])
    if not names:
        raise ResilienceError(f"{down}: no missing or miswired planned cable in this verify output "
                              f"(kinds read: {', '.join(DOWN_KINDS)})")
    return names


def _resolve(model: Model, names: list[str]) -> dict[str, list[int]]:
    """Names to units: a switch, a cable id, a NIC (server:nicN), a transceiver (device:cage<label>),
    or a server (all its NICs)."""
    index: dict[str, tuple[str, int]] = {}
    for cls in CLASSES:
        for i, nm in enumerate(model.comps.groups[cls].names):
            index.setdefault(nm, (cls, i))
    nic = model.comps.groups["nic"]
    servers: dict[str, list[int]] = {}
    for i, nm in enumerate(nic.names):
        servers.setdefault(nm.split(":")[0], []).append(i)
    down: dict[str, list[int]] = {}
    unknown = []
    for nm in names:
        if nm in index:
            cls, i = index[nm]
            down.setdefault(cls, []).append(i)
        elif nm in servers:
            down.setdefault("nic", []).extend(servers[nm])
        else:
            unknown.append(nm)
    if unknown:
        raise ResilienceError(f"--down: not in the plan: {', '.join(unknown[:10])}"
                              f"{' ...' if len(unknown) > 10 else ''} (give switch, server or NIC names, or cable ids)")
    return down


def _delivery(model: Model, o) -> float:
    """What a state delivers to a job, as a fraction of the intact fabric: the share of GPU
    ports still reached times the bisection fraction left."""
    gpus = max(model.gpus, 1)
    return (1 - o.gpus_cut_off / gpus) * o.bisection_fraction


def _given_state(model: Model, names: list[str]) -> dict:
    """One state, measured exactly (with the cuts through the damage), and each repair alone:
    ordered by the delivery it restores (then GPUs, then name)."""
    down = _resolve(model, names)
    arr = {c: np.array(sorted(set(v)), dtype=np.int64) for c, v in down.items()}
    base = evaluate(model, arr, exact=True)
    repairs = []
    for cls, units in arr.items():
        for u in units.tolist():
            rest = dict(arr)
            rest[cls] = units[units != u]
            o = evaluate(model, rest, exact=True)
            repairs.append({"repair": model.comps.groups[cls].names[u], "class": cls,
                            "delivery_restored": round(_delivery(model, o) - _delivery(model, base), 6),
                            "gpus_restored": base.gpus_cut_off - o.gpus_cut_off,
                            "bisection_restored": round(o.bisection_fraction - base.bisection_fraction, 6)})
    repairs.sort(key=lambda r: (-r["delivery_restored"], -r["gpus_restored"], r["repair"]))
    return {"down": sorted(model.comps.groups[c].names[u] for c, us in arr.items() for u in us.tolist()),
            **({"collective_fraction": round(base.collective_fraction, 6)} if base.collective_fraction is not None else {}),
            "gpus_cut_off": base.gpus_cut_off, "bisection_fraction": round(base.bisection_fraction, 6),
            "delivery": round(_delivery(model, base), 6),
            "meets_availability_fraction": base.meets, "repairs": repairs}


def sampled_rows(model: Model, samples: int, seed: int, ex: Executor | None = None) -> np.ndarray:
    """`samples` states seeded from `seed` (one child seed per sample, chunks fixed by the
    count alone), run on `ex` (here, serially, without one) and reduced in sample order:
    rows of run_chunk's (gpus cut off, bisection fraction, meets, collective fraction)."""
    children = np.random.SeedSequence(seed).spawn(samples)
    chunks = [children[i:i + CHUNK] for i in range(0, samples, CHUNK)]
    return np.concatenate((ex or LocalExecutor()).map(run_chunk, model, chunks))


def sampled_metrics(model: Model, rows: np.ndarray) -> dict:
    """The sampled distribution's figures: GPUs cut off (count and share), bisection fraction,
    and delivery (per state the share of GPUs still reached times the bisection fraction)."""
    gpus = max(model.gpus, 1)
    return {"gpus_cut_off": _stats(rows[:, 0], True),
            "gpus_cut_off_share": _stats(rows[:, 0] / gpus, True),
            "bisection_fraction": _stats(rows[:, 1], False),
            "delivery": _stats((1 - rows[:, 0] / gpus) * rows[:, 1], False)}


def failure_figures(plan: Plan, samples: int, seed: int, rates_file: str | Path | None = None) -> dict:
    """What `compare` and `explore` weigh designs on: the compute fabric's sampled delivery,
    bisection fraction and GPUs cut off under the rates (mean and p99), run serially (explore
    spreads its candidates, not their samples). The same seed and rates give the same figures."""
    ctx = CheckContext(fabric_plan(plan), whole=plan)
    comps = components_of(ctx)
    rates = load_rates(rates_file, comps.counts)
    model = Model.build(comps, rates, 0.0)
    m = sampled_metrics(model, sampled_rows(model, samples, seed))
    return {"samples": samples, "seed": seed, "rates": "defaults" if rates_file is None else Path(rates_file).name,
            **{f"{k}_{stat}": round(m[k][stat], 6) for k in ("delivery", "bisection_fraction", "gpus_cut_off_share")
               for stat in ("mean", "p99")},
            "delivery_mean_stderr": round(m["delivery"]["stderr"] or 0.0, 6)}


def _other_fabric(plan: Plan, name: str, rates_file: str | Path | None, samples: int, seed: int,
                  ex: Executor) -> dict:
    """A storage, in-band or management fabric under the same rates and seed: GPUs whose
    server reaches none of the fabric's switches (through any of its NICs there), and the
    fabric's own bisection fraction."""
    ctx = CheckContext(fabric_plan(plan, name), whole=plan)
    comps = components_of(ctx)
    rates = load_rates(rates_file, comps.counts, strict=False)
    model = Model.build(comps, rates, 0.0, per_server=True)
    m = sampled_metrics(model, sampled_rows(model, samples, seed, ex))
    return {"switches": _switches_by_role(ctx.plan), "components": comps.counts,
            "intact_bisection_gbps": model.intact_gbps,
            "gpus_cut_off_means": "GPUs whose server reaches no switch of this fabric", "metrics": m}


def resilience_report(plan: Plan, rates_file: str | Path | None = None, samples: int = 1000, seed: int = 1,
                      window_days: float = 30.0, confidence: float = 0.95, down: str | None = None,
                      executor: str = "local", workers: int = 1, address: str | None = None,
                      pattern: str | None = None, routing: str | None = None) -> dict:
    if samples < 1:
        raise ResilienceError(f"--samples must be at least 1; got {samples}")
    if not 0 < confidence < 1:
        raise ResilienceError(f"--confidence must be between 0 and 1; got {confidence}")
    if window_days <= 0:
        raise ResilienceError(f"--window-days must be positive; got {window_days}")
    try:  # before any work: an engine that is missing fails first
        ex = make_executor(executor, workers, address)
    except ExecutorError as exc:
        raise ResilienceError(str(exc)) from None
    ctx = CheckContext(fabric_plan(plan), whole=plan)
    comps = components_of(ctx)
    counts = comps.counts
    rates = load_rates(rates_file, counts)
    avail = plan.requirements.get("availability") or {}
    min_fraction = float(avail.get("min_bisection_fraction", 0.9))
    share = float(avail.get("share", 0.99))
    if routing and not pattern:
        raise ResilienceError("--routing needs --pattern (the collective whose throughput to measure)")
    collective = collective_setup(ctx.plan, ctx.graph, pattern, routing, seed) if pattern else None
    model = Model.build(comps, rates, min_fraction, collective)
    report: dict[str, Any] = {"name": plan.name, "gpus": plan.view.design.gpus, "gpu_ports": model.gpu_ports,
              "switches": _switches_by_role(ctx.plan), "components": counts,
              "rates": rates, "intact_bisection_gbps": model.intact_gbps, "seed": seed, "samples": samples,
              "executor": {"name": ex.name, "workers": ex.workers}}
    if down is not None:
        report["state"] = _given_state(model, _names_from(down))
    rows = sampled_rows(model, samples, seed, ex)
    met = rows[:, 2]
    report["metrics"] = sampled_metrics(model, rows)
    if collective is not None:
        report["collective"] = {"pattern": pattern, "routing": collective.routing,
                                "intact_fraction": round(collective.intact_fraction, 6),
                                "of": "the NIC line rate, as `clusterc traffic` reports it"}
        report["metrics"]["collective_fraction"] = _stats(rows[:, 3], False)
    meet_share = float(met.mean())
    report["availability"] = {"min_bisection_fraction": min_fraction, "share_required": share,
                              "share_meeting": meet_share,
                              "stderr": float(math.sqrt(meet_share * (1 - meet_share) / samples)),
                              "required_in_spec": bool(avail), "ok": meet_share >= share}
    report["fabrics"] = {name: _other_fabric(plan, name, rates_file, samples, seed, ex)
                         for name in fabric_names(plan) if name != COMPUTE}
    report["criticality"] = _criticality(model, rates)
    report["spares"] = _spares(counts, rates, window_days, confidence)
    return report
