"""The Python API for notebooks and other tools: a thin facade over the pipeline.

    import compiler
    plan = compiler.build("specs/b200-superpod-4su.yaml")  # or YAML text, or a dict
    plan.summary()           # the dict summary.json holds
    plan.check()             # the dict report/checks.json holds (figures, findings, ok)
    plan.write("out/")       # every output, byte-identical to `clusterc compile`
    g = plan.to_networkx()   # networkx MultiGraph: device nodes, link edges
    c = plan.capacity_graph()  # networkx Graph: parallel cables summed (links, capacity), for flows and cuts

Everything here calls what the CLI calls (pipeline.plan_from_source, check.run_checks,
render.summary.summarize, pipeline.write_outputs), so the two cannot drift apart, and a
later restructuring of those internals leaves this surface as it is. A spec error
raises SpecInvalid carrying every diagnostic (file, line, field path, hint); nothing
here prints or exits.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from .check import CheckResults, run_checks
from .diagnostics import Diagnostic, SpecInvalid
from .pipeline import plan_from_source, write_outputs
from .plan.fabrics import fabric_names, fabric_plan
from .plan.model import Plan
from .plan.multigraph import to_capacity_graph, to_networkx
from .render import RENDERERS
from .render.summary import summarize
from .spec.load import LoadedSpec
from .yaml12 import Source, load_yaml_file, load_yaml_text

if TYPE_CHECKING:
    import networkx

    from .spec.model import Spec

TEXT_FILE = "<spec>"  # the file diagnostics name for a spec given as YAML text
MAPPING_FILE = "<dict>"  # ... and for a spec given as a mapping (no lines to point at)


class CompiledPlan:
    """A compiled spec: the plan IR (`.plan`), the validated spec (`.spec`) and what the
    CLI derives from them. Results are computed once per plan and shared (checks run on
    the first `summary()`, `check()` or `write()`); each call returns a fresh copy."""

    def __init__(self, loaded: LoadedSpec, plan: Plan):
        self._loaded = loaded
        self.plan = plan
        self._checks: CheckResults | None = None

    def _check_results(self) -> CheckResults:
        if self._checks is None:  # the check stage, once per plan (as the CLI runs it once)
            self._checks = run_checks(self.plan)
        return self._checks

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def spec(self) -> Spec:
        return self._loaded.spec

    def summary(self) -> dict:
        """What summary.json holds (the README's contract), as the JSON file decodes."""
        return _as_json(summarize(self.plan, self._check_results()))

    def check(self) -> dict:
        """What report/checks.json holds: `ok`, `figures` by check, `findings` (code,
        severity, message, where), as the JSON file decodes."""
        return _as_json(self._check_results().as_json())

    def write(self, out_dir: str | os.PathLike, only: list[str] | None = None) -> Path:
        """Write outputs into `out_dir/<name>/` atomically (all or nothing), exactly as
        `clusterc compile -o out_dir [--only ...]`; returns that folder."""
        unknown = [o for o in only or [] if o not in RENDERERS]
        if unknown:
            raise ValueError(f"unknown output(s) {', '.join(unknown)}; known: {', '.join(RENDERERS)}")
        return write_outputs(self.plan, Path(out_dir), only, self._check_results())

    def to_networkx(self, fabric: str | None = None) -> networkx.MultiGraph:
        """A networkx MultiGraph: a node per device (role, model, tier, index, su, pod,
        rail, group, fabric, rack, u), an edge per link keyed by cable id (kind, fabric,
        speed_gbps, media, length_m, modelled_m, a_device, a_port, b_device, b_port;
        end a is the lower tier). Attributes that do not apply are absent. `fabric`
        keeps one fabric (its switches and links, and the servers); default: all.

        Cost O(devices + links), ~11 us and ~600 B per link (49k links: 0.5 s, 29 MB);
        for 100k+ GPU analyses use `compiler.plan.graph.fabric_graph` (scipy arrays).
        A new graph on every call.

        networkx's connectivity and cut functions read a MultiGraph's parallel cables as
        one edge (and its flow functions refuse it): use `capacity_graph()` for those."""
        return to_networkx(self._fabric_plan(fabric))

    def capacity_graph(self, fabric: str | None = None) -> networkx.Graph:
        """A networkx Graph of the same nodes with one edge per pair of devices joined by
        cables: `links` (how many), `capacity` (summed Gb/s), `kind`. A max-flow over
        `links` between two leaves is the checks' edge-disjoint path count
        (`redundancy.leaf_pair_edge_disjoint_paths_min` is its minimum over leaf pairs); over
        `capacity` (networkx's default) it is Gb/s. A new graph on every call."""
        return to_capacity_graph(self._fabric_plan(fabric))

    def _fabric_plan(self, fabric: str | None) -> Plan:
        if fabric is None:
            return self.plan
        names = fabric_names(self.plan)
        if fabric not in names:
            raise ValueError(f"no fabric '{fabric}' in {self.name}; fabrics: {', '.join(names)}")
        return fabric_plan(self.plan, fabric)

    def __repr__(self) -> str:
        d = self.plan.view.design
        return (f"<CompiledPlan {self.name}: {d.gpus:,} GPUs, {d.topology}, {len(self.plan.devices):,} devices, "
                f"{len(self.plan.links):,} links>")


def build(spec: str | os.PathLike | Mapping) -> CompiledPlan:
    """Load, validate and expand a spec into a CompiledPlan.

    `spec` is a path (a `Path`, or a `str` without a newline), YAML text (a `str` with
    at least one newline) or a mapping of the same keys. A relative `catalog:` is read
    relative to the spec file, or to the working directory for text and mappings.
    Raises SpecInvalid (its `.diagnostics` lists every problem) for invalid input."""
    loaded, plan = plan_from_source(_source(spec))
    return CompiledPlan(loaded, plan)


def _source(spec) -> Source:
    if isinstance(spec, os.PathLike):
        return load_yaml_file(spec)
    if isinstance(spec, str):
        return load_yaml_text(spec, TEXT_FILE) if "\n" in spec else load_yaml_file(spec)
    if isinstance(spec, Mapping):
        return _mapping_source(spec)
    raise TypeError(f"compiler.build takes a path, YAML text or a mapping, not {type(spec).__name__}")


def _mapping_source(spec: Mapping) -> Source:
    """A mapping goes through the YAML loader too (its limits, plain values only, a copy
    the caller's later edits cannot reach); its diagnostics name field paths, not lines."""
    try:
        text = yaml.safe_dump(dict(spec), sort_keys=False, allow_unicode=True)
    except yaml.YAMLError as exc:  # RepresenterError: a value YAML cannot hold (an object, a set)
        culprit = exc.args[1] if len(exc.args) > 1 else exc
        raise SpecInvalid([Diagnostic(
            "SPEC_NOT_PLAIN", f"a spec holds plain values only, not {type(culprit).__name__} ({culprit!r})",
            file=MAPPING_FILE, hint="use str, int, float, bool, None, lists and dicts")]) from None
    source = load_yaml_text(text, MAPPING_FILE)
    return Source(MAPPING_FILE, source.data, positions={(): (0, 0)})  # line 0: no line to show


def _as_json(value: dict) -> dict:
    """The value as its JSON file decodes (string keys, lists), and a copy: editing it
    cannot change what a later write() puts in the files."""
    return json.loads(json.dumps(value))
