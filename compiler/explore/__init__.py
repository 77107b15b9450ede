"""clusterc explore: search a design space for the fabric that meets the requirements best.

A requirements file is an ordinary spec in which `server` and any `fabric` key may be a list
of choices (choices.py). Every combination is compiled to a plan and checked (evaluate.py);
those that fail a requirement or a check are dropped with the reason; the rest form a
Pareto front, and the objective picks the winner (front.py). Every figure shown is from a
compiled plan: nothing is estimated in closed form.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..diagnostics import Diagnostic, SpecInvalid
from ..executor import Executor, LocalExecutor
from ..yaml12 import load_yaml_file
from ..plan.order import DEFAULT_SCOPE
from .choices import candidates, design_space
from .evaluate import Evaluated, Failures, evaluate_one
from .front import AT, METRICS, OBJECTIVES, at_step, pareto_front, ranked, value, why_loses

MAX_CANDIDATES = 1000


@dataclass
class Exploration:
    file: str
    objective: str
    evaluated: list[Evaluated]
    feasible: list[Evaluated]
    front: list[Evaluated]
    front_metrics: list[str]
    ranking: list[Evaluated]  # feasible, best first
    duplicates: int
    at: str = "target"  # the step ranked: "target" (the growth target) or "day-one" (front.py)
    failures: Failures | None = None  # how candidates were weighed under failures (--objective resilience)

    @property
    def grows(self) -> bool:
        """Some feasible candidate has a growth target beyond day one."""
        return any(e.final is not None for e in self.feasible)

    @property
    def ranked_at(self) -> str:
        """What the ranking used: the growth target only where there is one."""
        return "target" if self.at == "target" and self.grows else "day-one"

    @property
    def best(self) -> Evaluated | None:
        return self.ranking[0] if self.ranking else None

    def why(self, ev: Evaluated) -> str | None:
        if self.best is None or ev is self.best or ev.rejected:
            return None
        return why_loses(ev, self.best, self.objective, self.front_metrics, self.ranked_at)

    def caveats(self) -> list[str]:
        """What a reader must know before trusting the winner."""
        out = []
        unsure = [e.candidate.name for e in self.feasible if e.unconfirmed]
        if unsure:
            out.append(f"rack power not confirmed for {len(unsure)} feasible design(s) ({', '.join(unsure[:5])}"
                       + (", ..." if len(unsure) > 5 else "") + "): racks hold parts without a published power")
        unknown = sorted({p for e in self.feasible for p in e.power_unknown_for})
        if unknown:
            out.append("power is a floor: no published power for " + ", ".join(unknown)
                       + (" (so the power objective ranks on optics and cables only)" if self.objective == "power" else ""))
        secondary = sorted({m for e in self.feasible for m in e.power_secondary_for})
        if secondary:
            out.append(f"power of {', '.join(secondary)} is from a secondary source (a third party quoting the vendor page)")
        if any(e.currency is None for e in self.feasible):
            out.append("no cost: the spec has no bom.prices file")
        elif any(e.cost_unpriced for e in self.feasible):
            parts = sorted({p for e in self.feasible for p in e.cost_unpriced})
            unknown = [e.candidate.name for e in self.feasible if e.cost is None]
            out.append(f"{DEFAULT_SCOPE} cost unknown for {len(unknown)} design(s) ({', '.join(unknown[:5])}"
                       + (", ..." if len(unknown) > 5 else "") + "), ranked after every priced one on cost: "
                       "the price file lacks " + ", ".join(parts))
        return out


def explore(path: str | Path, objective: str = "switches", max_candidates: int = MAX_CANDIDATES,
            at: str = "target", executor: Executor | None = None, failures: Failures | None = None) -> Exploration:
    """Enumerate, compile, check and rank. Raises SpecInvalid for a bad requirements file.
    `at`: with `growth:`, rank and draw the front on the figures at the growth target (the
    default: a design is lived with at its full size, and its upper tiers are bought for
    it on day one) or on day one's. The candidates run on `executor` (default: here, one
    after another), one task each, results in candidate order: the same figures and ranking
    on any executor and worker count. `failures`: weigh each feasible candidate under
    sampled failures (the resilience objective needs it; default 200 states, seed 1)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective {objective!r}; one of {', '.join(OBJECTIVES)}")
    if at not in AT:
        raise ValueError(f"at {at!r}; one of {', '.join(AT)}")
    if objective == "resilience" and failures is None:
        failures = Failures(samples=200, seed=1)
    source = load_yaml_file(path)
    cands = candidates(source, max_candidates)
    evaluated = (executor or LocalExecutor()).map(evaluate_one, (str(path), source, failures), cands)
    _same_mistake_everywhere(evaluated)
    feasible = [e for e in evaluated if e.rejected is None]
    if objective == "cost" and feasible and any(at_step(e, at).currency is None for e in feasible):
        raise SpecInvalid([Diagnostic("EXPLORE_NO_PRICES", "--objective cost needs a price file", file=str(path),
                                      line=1, column=1, hint="add bom: {prices: prices.yaml} (currency and unit price "
                                                             "by part number); clusterc ships no prices")])
    step = "target" if at == "target" and any(e.final is not None for e in feasible) else "day-one"
    front, metrics = pareto_front(feasible, step)
    ranking = ranked(feasible, objective, step)
    combos = 1
    for v in design_space(source)[1].values():
        combos *= len(v)
    return Exploration(str(path), objective, evaluated, feasible, front, metrics, ranking, combos - len(cands), at,
                       failures)


def _same_mistake_everywhere(evaluated: list[Evaluated]) -> None:
    """A mistake every candidate makes (an unknown switch, a misspelt key) is the file's,
    not a finding about designs: report it as invalid input (exit 2), with its line."""
    if not evaluated or not all(e.invalid for e in evaluated):
        return
    first = [(d.code, d.path, d.message) for d in evaluated[0].invalid]
    if all([(d.code, d.path, d.message) for d in e.invalid] == first for e in evaluated):
        raise SpecInvalid(list(evaluated[0].invalid))


def _number(value):
    """A decimal amount as a JSON number (exact to the cent; the sum itself is decimal)."""
    return None if value is None else float(value)


def candidate_json(ev: Evaluated, front: set[int]) -> dict:
    return {
        "name": ev.candidate.name, "choices": ev.candidate.choices, "left_out": list(ev.candidate.left_out),
        "spec": ev.candidate.spec,
        "switches": ev.switches_total, "switches_by_role": ev.switches, "switch_models": ev.switch_models,
        "tiers": ev.tiers, "cables": ev.cables, "transceivers": ev.transceivers,
        "scope": ev.scope, "power_w": ev.power_w, "power_unknown_for": ev.power_unknown_for,
        "cost": _number(ev.cost), "priced_cost": _number(ev.priced_cost), "currency": ev.currency,
        "cost_unpriced_parts": ev.cost_unpriced,
        "bisection_gbps": ev.bisection_gbps, "bisection_per_gpu_gbps": ev.bisection_per_gpu_gbps,
        "oversubscription": ev.oversubscription, "max_hops": ev.max_hops,
        "collective_time_s": ev.collective_time_s, "collective_bytes": ev.collective_bytes,
        "worst_single_failure": ev.worst_single_failure, "resilience": ev.resilience, "unconfirmed": ev.unconfirmed,
        "growth": None if ev.final is None else _growth_json(ev),
        "pareto": ev.candidate.index in front, "rejected": ev.rejected,
    }


def _growth_json(ev: Evaluated) -> dict:
    """Day one (the figures above) and the growth target: what the choice costs at each step."""
    f = ev.final
    assert f is not None  # called only for a candidate with a growth target

    def step(e: Evaluated) -> dict:
        return {"gpus": e.gpus, "switches": e.switches_total, "switches_by_role": e.switches, "cables": e.cables,
                "transceivers": e.transceivers, "power_w": e.power_w, "cost": _number(e.cost),
                "bisection_gbps": e.bisection_gbps, "collective_time_s": e.collective_time_s,
                "worst_single_failure": e.worst_single_failure, "resilience": e.resilience}

    day_one, final = step(ev), step(f)
    added = {k: None if day_one[k] is None or final[k] is None else round(final[k] - day_one[k], 2)
             for k in ("gpus", "switches", "cables", "transceivers", "power_w")}
    added["cost"] = None if ev.cost is None or f.cost is None else _number(f.cost - ev.cost)  # decimal difference
    return {"day_one": day_one, "final": final, "added_by_growth": added}


def as_json(x: Exploration) -> dict:
    """The JSON contract (explore.schema.json beside this file)."""
    front = {e.candidate.index for e in x.front}
    best = x.best
    return {
        "file": Path(x.file).name, "objective": x.objective, "ranked_at": x.ranked_at,
        "evaluated": len(x.evaluated), "feasible": len(x.feasible), "duplicates_skipped": x.duplicates,
        "front_metrics": x.front_metrics,
        "caveats": x.caveats(),
        "candidates": [candidate_json(e, front) | {"why_not_best": x.why(e)} for e in x.evaluated],
        "best": None if best is None else candidate_json(best, front),
    }


def write_specs(x: Exploration, out_dir: str | Path, top: int) -> list[Path]:
    """The best `top` designs and every front member as ordinary specs (compile each with
    clusterc compile to get exactly the figures shown). Returns the files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    chosen = list(dict.fromkeys(x.ranking[:top] + x.front))
    written = []
    for ev in chosen:
        spec = _rebased(ev.candidate.spec, Path(x.file).parent, out)
        header = [f"# {ev.candidate.name}: written by clusterc explore from {Path(x.file).name}",
                  "# chosen: " + ", ".join(f"{k}={v}" for k, v in ev.candidate.choices.items())]
        steps = [("", ev)] if ev.final is None else [("day one: ", ev), (f"at the growth target ({ev.final.gpus:,} GPUs): ", ev.final)]
        header += [f"# {label}switches {e.switches_total:,}, cables {e.cables:,}, transceivers {e.transceivers:,}, "
                   f"bisection {e.bisection_gbps:,} Gb/s" + (f", {e.scope} cost {e.cost:,.2f} {e.currency}" if e.cost is not None else "")
                   for label, e in steps]
        path = out / f"{ev.candidate.name}.yaml"
        path.write_text("\n".join(header) + "\n" + yaml.safe_dump(spec, sort_keys=False, allow_unicode=True))
        written.append(path)
    return written


def _rebased(spec: dict, old_dir: Path, new_dir: Path) -> dict:
    """The spec with its relative file references (catalog:, bom.prices) pointing at the
    same files from the new folder."""
    spec = {**spec}

    def move(p: str) -> str:
        return p if Path(p).is_absolute() else os.path.relpath((old_dir / p).resolve(), new_dir.resolve())
    if isinstance(spec.get("catalog"), str):
        spec["catalog"] = move(spec["catalog"])
    if isinstance(spec.get("bom"), dict) and isinstance(spec["bom"].get("prices"), str):
        spec["bom"] = {**spec["bom"], "prices": move(spec["bom"]["prices"])}
    return spec


__all__ = ["Exploration", "explore", "as_json", "write_specs", "METRICS", "OBJECTIVES", "value"]
