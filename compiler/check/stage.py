"""Checks as a stage: what a check declares, the order checks run in, and what the stage
returns.

A check is a function `run(ctx, **needed) -> (figures, findings)`: `ctx` is the fabric's
CheckContext, and each name in `needs` arrives as a keyword argument holding that check's
figures (so `needs=("bisection",)` means `run(ctx, bisection=BisectionFigures(...))`).
Nothing else passes between checks. The runner (check/__init__.py) runs every check once,
dependencies first, and returns CheckResults, which the pipeline hands to the renderers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar
from collections.abc import Callable

from ..plan.fabrics import COMPUTE
from .bisection import CONVENTION
from .figures import Figures
from .findings import Finding

F = TypeVar("F", bound=Figures)


@dataclass(frozen=True)
class Check:
    run: Callable[..., tuple[Figures, list[Finding]]]
    figures: type[Figures]  # the record `run` returns
    needs: tuple[str, ...] = ()  # checks whose figures `run` reads, by registry name
    # Also run on each extra fabric (storage, in-band, out-of-band): its figures go under
    # checks.json's `fabrics.<name>` (and summary.json), its findings name the fabric.
    per_fabric: bool = False


class CheckOrderError(RuntimeError):
    """A check needs one that is not registered, or checks need each other: our bug."""


def check_order(checks: dict[str, Check]) -> list[str]:
    """Names in an order where every check comes after the ones it needs (Kahn's algorithm;
    among checks ready together, registry order). O(checks^2), for a dozen checks."""
    for name, check in checks.items():
        unknown = [n for n in check.needs if n not in checks]
        if unknown:
            raise CheckOrderError(f"check {name} needs {', '.join(unknown)}, which is not registered")
    order: list[str] = []
    done: set[str] = set()
    while len(order) < len(checks):
        ready = [n for n, c in checks.items() if n not in done and all(d in done for d in c.needs)]
        if not ready:
            stuck = [n for n in checks if n not in done]
            raise CheckOrderError(f"checks need each other in a cycle: {', '.join(stuck)}")
        order.append(ready[0])
        done.add(ready[0])
    return order


def with_needs(checks: dict[str, Check], names: set[str]) -> set[str]:
    """`names` and every check they need, directly or through others."""
    out: set[str] = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n not in out:
            out.add(n)
            todo.extend(checks[n].needs)
    return out


@dataclass(frozen=True)
class CheckResults:
    """Every check's figures and findings for one plan, from one run."""

    name: str  # the plan's
    figures: dict[str, Figures]  # compute fabric, by check name in registry order
    findings: tuple[Finding, ...]  # every fabric's (Finding.fabric), errors first, then warnings, then info
    seconds: dict[str, float] = field(default_factory=dict)  # per check, for benchmarks; never written to files
    # extra fabric name -> figures of the per-fabric checks measured on it
    fabric_figures: dict[str, dict[str, Figures]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def of(self, kind: type[F], fabric: str = COMPUTE) -> F:
        """The figures record of type `kind` (e.g. BisectionFigures), of the compute fabric
        or of an extra fabric (per-fabric checks only)."""
        figures = self.figures if fabric == COMPUTE else self.fabric_figures[fabric]
        for record in figures.values():
            if type(record) is kind:
                return record
        raise KeyError(f"no {kind.__name__} measured on the {fabric} fabric")

    def as_json(self) -> dict:
        """report/checks.json (also what `clusterc check --format json` prints): the compute
        fabric's figures under `figures` (where they always were), each extra fabric's
        under `fabrics.<name>.figures`, every fabric's findings in one list."""
        out = {
            "name": self.name,
            "ok": self.ok,
            "convention": CONVENTION,
            "figures": {name: record.as_json() for name, record in self.figures.items()},
            "findings": [f.as_dict() for f in self.findings],
        }
        if self.fabric_figures:
            out["fabrics"] = {fabric: {"figures": {name: record.as_json() for name, record in figures.items()},
                                       "ok": not any(f.severity == "error" for f in self.findings if f.fabric == fabric)}
                              for fabric, figures in self.fabric_figures.items()}
        return out
