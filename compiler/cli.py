"""The `clusterc` command: thin. Parses flags, calls the library, prints, sets exit codes.

Exit codes: 0 ok; 1 a check failed (error finding or failed requirement); 2 invalid
spec or usage. A user's input never produces a traceback.
"""

from __future__ import annotations

import ctypes
import functools
import json
import sys
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from .diagnostics import Diagnostic, SpecInvalid, in_file_order

if TYPE_CHECKING:  # the library is imported where a command needs it: `--help` stays fast
    from .check import CheckResults

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="clusterc: compile a GPU-cluster network spec into cabling, BOM, configs and checks.")
catalog_app = typer.Typer(no_args_is_help=True, help="Show the hardware catalog.")
app.add_typer(catalog_app, name="catalog")

EXIT_OK, EXIT_CHECK_FAILED, EXIT_INVALID = 0, 1, 2


class Format(str, Enum):
    text = "text"
    json = "json"


class DiffFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"



def _fail_on(value: str | None) -> set[str]:
    from .plan.diff import FAIL_ON  # `diff` and `ci` gate on the same kinds

    kinds = {v.strip() for v in (value or "").split(",") if v.strip()}
    unknown = kinds - set(FAIL_ON)
    if unknown:
        print(f"error: --fail-on takes {','.join(FAIL_ON)}; got {', '.join(sorted(unknown))}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID)
    return kinds


def _print_diagnostics(diags: list[Diagnostic], fmt: Format) -> None:
    diags = in_file_order(diags)
    if fmt == Format.json:
        print(json.dumps({"ok": False, "diagnostics": [d.as_dict() for d in diags]}, indent=2))
    else:
        for d in diags:
            print(d.format(), file=sys.stderr)
        print(f"{len(diags)} error(s)", file=sys.stderr)


def _table(rows: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)


def _tiers_text(tiers: int) -> str:
    return "direct (no switches)" if tiers == 0 else f"{tiers} tier{'' if tiers == 1 else 's'}"


def _summary_rows(summary: dict) -> list[tuple[str, str]]:
    from .render.summary import speed_text

    rows = [("GPUs", f"{summary['gpus']:,}"), ("servers", f"{summary['servers']:,} x {summary['server']}"),
            ("topology", f"{summary['topology']}, {_tiers_text(summary['tiers'])}, {speed_text(summary)}")]
    models = summary.get("switch_models", {})
    rows += [(f"{role} switches", f"{n:,} x {models.get(role, summary['switch'])}") for role, n in summary["switches"].items()]
    rows += [(f"{role}", f"{n:,}") for role, n in summary["endpoints"].items()]
    rows += [(f"{kind} cables", f"{n:,}") for kind, n in summary["cables"].items()]
    rows += [("transceivers", f"{summary['transceivers']:,}")]
    up = summary.get("scale_up")
    if up and up["gbytes_per_s_per_gpu"]:
        rows += [("scale-up", f"{up['domains']:,} x {up['kind']} domain of {up['gpus_per_domain']} GPUs, "
                              f"{up['gbytes_per_s_per_gpu']:,} GB/s per GPU, {up['domain_gbytes_per_s']:,} GB/s per domain")]
    rows += [(f"oversubscription {tier}", r) for tier, r in summary["oversubscription"].items()]
    b = summary.get("bisection_gbps")
    if b:
        rows += [("bisection", f"{b['worst_cut']:,} Gb/s worst cut, {b['analytic']:,} Gb/s closed form")
                 if b["analytic"] is not None else ("bisection", f"{b['worst_cut']:,} Gb/s worst cut")]
    for name, f in list(summary.get("fabrics", {}).items())[1:]:  # extra fabrics: storage, in-band, out-of-band
        switches = " + ".join(f"{n:,} {role}" for role, n in f["switches"].items())
        rows += [(f"{name} fabric", f"{switches} x {f['switch']}, {sum(f['cables'].values()):,} cables, {f['speed_gbps']}G")]
    return rows


def _print_findings(checks: CheckResults, verbose: bool) -> None:
    for f in checks.findings:
        if verbose or f.severity != "info":
            where = f" [{f.where}]" if f.where else ""
            print(f"  {f.severity}: {f.code}: {f.message}{where}")


def _shows_progress(command):
    """Stages on stderr while a long command runs in a terminal (text output only; compiler/progress.py)."""
    @functools.wraps(command)
    def run(*args, **kwargs):
        from .progress import terminal_progress

        with terminal_progress(enabled=kwargs.get("format") != Format.json):
            return command(*args, **kwargs)
    return run


def _plans(specs: list[Path], failed: list[Diagnostic]):
    """(spec, plan) for every spec that compiles, one at a time (a big plan is not kept
    while the next builds); the diagnostics of the others go into `failed`."""
    from .pipeline import build_plan

    for spec in specs:
        try:
            yield spec, build_plan(spec)[1]
        except SpecInvalid as exc:
            failed.extend(exc.diagnostics)


@app.command()
def validate(specs: list[Path] = typer.Argument(..., help="spec files"),
             format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Check specs (syntax, catalog ids, feasibility) without writing anything."""

    failed: list[Diagnostic] = []
    for spec, _plan in _plans(specs, failed):
        if format == Format.text:
            print(f"{spec}: ok")
    if failed:
        _print_diagnostics(failed, format)
        raise typer.Exit(EXIT_INVALID)
    if format == Format.json:
        print(json.dumps({"ok": True, "diagnostics": []}, indent=2))


@app.command(name="compile")
@_shows_progress
def compile_(specs: list[Path] = typer.Argument(..., help="spec files"),
             out: Path = typer.Option(Path("out"), "-o", "--out", help="output folder; each spec writes OUT/<name>/"),
             only: str | None = typer.Option(None, "--only", help="comma-separated outputs (default: all)"),
             format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Compile specs into plans and write their outputs (atomically) under OUT/<name>/."""
    from .pipeline import check_and_write
    from .progress import stage
    from .render.summary import summarize
    from .render import RENDERERS
    from .render.writer import OutputConflict

    outputs = None
    if only:
        outputs = [o.strip() for o in only.split(",") if o.strip()]
        unknown = [o for o in outputs if o not in RENDERERS]
        if unknown:
            print(f"error: unknown output(s) {', '.join(unknown)}; known: {', '.join(RENDERERS)}", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID)

    failed: list[Diagnostic] = []
    results = []
    checks_failed = False
    for spec, plan in _plans(specs, failed):
        try:  # the checks run while other cores render the outputs that read none
            target, checks = check_and_write(plan, out, outputs)
        except OutputConflict as exc:
            failed.append(Diagnostic("OUTPUT_FOLDER_CONFLICT", exc.message, file=str(spec), hint=exc.hint))
            continue
        except OSError as exc:
            failed.append(Diagnostic("OUTPUT_UNWRITABLE", f"cannot write outputs: {exc.strerror}: {exc.filename}", file=str(spec)))
            continue
        with stage("summary"):
            summary = summarize(plan, checks)
        checks_failed = checks_failed or not checks.ok
        results.append({"spec": str(spec), "out": str(target), "summary": summary, "checks_ok": checks.ok})
        if format == Format.text:
            print(f"{spec} -> {target}/")
            print(_table(_summary_rows(summary)))
            for note in summary["notes"]:
                print(f"  note: {note}")
            _print_findings(checks, verbose=False)
    if format == Format.json:
        print(json.dumps({"ok": not failed, "results": results, "diagnostics": [d.as_dict() for d in failed]}, indent=2))
    elif failed:
        _print_diagnostics(failed, format)
    if failed:
        raise typer.Exit(EXIT_INVALID)
    if checks_failed:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
@_shows_progress
def check(specs: list[Path] = typer.Argument(..., help="spec files"),
          format: Format = typer.Option(Format.text, "--format", help="text or json"),
          verbose: bool = typer.Option(False, "-v", "--verbose", help="also print info findings")) -> None:
    """Check specs' plans: bisection, oversubscription, redundancy, failures, budgets, hops,
    collective estimates and the spec's requirements. Exit 1 on an error finding."""
    from .check import run_checks
    from .check.bisection import BisectionFigures
    from .check.requirements import RequirementsFigures

    failed: list[Diagnostic] = []
    reports = []
    for spec, plan in _plans(specs, failed):
        checks = run_checks(plan)
        reports.append({"spec": str(spec), **checks.as_json()})
        if format == Format.text:
            b = checks.of(BisectionFigures)
            errors = sum(f.severity == "error" for f in checks.findings)
            status = "ok" if checks.ok else f"FAILED ({errors} error(s))"
            print(f"{spec}: {status}")
            bound = "" if b.worst_cut_is == "exact" else ", an upper bound"
            print(f"  bisection {b.worst_cut_gbps:,} Gb/s (worst cut: {b.worst_cut}{bound}; {b.convention})")
            for r in checks.of(RequirementsFigures).results:
                verdict = f"judged by `{r['judged_by']}`" if r.get("judged_by") else "ok" if r["ok"] else "VIOLATED"
                print(f"  requirement {r['name']}: {verdict}")
            _print_findings(checks, verbose)
    if format == Format.json:
        print(json.dumps({"ok": not failed and all(r["ok"] for r in reports), "reports": reports,
                          "diagnostics": [d.as_dict() for d in failed]}, indent=2))
    elif failed:
        _print_diagnostics(failed, format)
    if failed:
        raise typer.Exit(EXIT_INVALID)
    if not all(r["ok"] for r in reports):
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
def diff(old: Path = typer.Argument(..., help="spec, compiled output folder, or plan.json"),
         new: Path = typer.Argument(..., help="spec, compiled output folder, or plan.json"),
         format: DiffFormat = typer.Option(DiffFormat.text, "--format", help="text, json or markdown"),
         fail_on: str | None = typer.Option(None, "--fail-on", help="exit 1 if cables or devices were: added,removed,changed,physical,relabeled "
                                                                      "(changed: re-plugged, another speed, or a device of another model; "
                                                                      "physical: same ends, another rack/U/length/part/label, or a device moved; "
                                                                      "relabeled: a device renamed, its cables' labels)")) -> None:
    """What changes from OLD to NEW: devices (added, removed, changed, moved, relabeled), cables (added, removed,
    re-plugged, changed physically, relabeled), BOM by exact part and length, cost with prices, figures."""
    from .check import run_checks
    from .plan.diff import diff_plans, gate_hits, summary_deltas
    from .pipeline import load_plan
    from .render.summary import summarize
    from .render.diff_report import diff_markdown, diff_text

    kinds = _fail_on(fail_on)
    try:
        old_plan, new_plan = load_plan(old), load_plan(new)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, Format.text)
        raise typer.Exit(EXIT_INVALID) from None
    d = diff_plans(old_plan, new_plan)
    d["summary"] = summary_deltas(summarize(old_plan, run_checks(old_plan)), summarize(new_plan, run_checks(new_plan)))
    if format == DiffFormat.json:
        print(json.dumps(d, indent=2))
    elif format == DiffFormat.markdown:
        print(diff_markdown(d), end="")
    else:
        print(diff_text(d), end="")
    if gate_hits(d, kinds):
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
def ci(specs: list[Path] = typer.Argument(..., help="spec files"),
       against: str = typer.Option("origin/main", "--against", help="git ref to diff against"),
       markdown: Path | None = typer.Option(None, "--markdown", help="write the Markdown summary here (default: stdout)"),
       fail_on: str | None = typer.Option(None, "--fail-on", help="also fail if cables or devices were: added,removed,changed,physical,relabeled "
                                                                    "(a deleted spec is removed)")) -> None:
    """validate + check + diff against a git ref (built from the whole tree at the ref, renames followed), with a
    Markdown summary for the pull request."""
    from .ci import run_ci

    try:
        result = run_ci(specs, against, _fail_on(fail_on))
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, Format.text)
        raise typer.Exit(EXIT_INVALID) from None
    if markdown:
        markdown.write_text(result.markdown)
    else:
        print(result.markdown, end="")
    if result.invalid:
        _print_diagnostics(result.invalid, Format.text)
        raise typer.Exit(EXIT_INVALID)
    if result.checks_failed:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
def schema(plan: bool = typer.Option(False, "--plan", help="print plan.json's schema instead of the spec's")) -> None:
    """Print the JSON Schema of the spec language (for editors), or of plan.json."""
    if plan:
        from .render.plan_json import schema_text

        print(schema_text(), end="")
        return
    from .spec.schema import spec_schema

    print(json.dumps(spec_schema(), indent=2))


@catalog_app.command("list")
def catalog_list() -> None:
    """List servers, switches, transceivers and media in the built-in catalog."""
    from .catalog import load_catalog

    cat = load_catalog()
    for title, table, describe in (
        ("servers", cat.servers, lambda s: f"{s.model}: {s.gpus} GPUs, " + (
            f"{len(s.nic_groups['compute'].ports)} x {s.nic_groups['compute'].speed_gbps}G" if "compute" in s.nic_groups
            else f"{s.scale_up.ports_per_gpu} x {s.scale_up.port_gbps}G {s.scale_up.kind} per chip" if s.scale_up else "no fabric ports")),
        ("switches", cat.switches, lambda s: f"{s.model}: " + ", ".join(f"{s.radix(sp)} x {sp}G" for sp in sorted(s.modes, reverse=True))),
        ("transceivers", cat.transceivers, lambda t: t.description),
        ("media", cat.media, lambda m: m.description),
    ):
        print(f"{title}:")
        for key in sorted(table):
            print(f"  {key:<44} {describe(table[key])}")


@catalog_app.command("show")
def catalog_show(entry: str = typer.Argument(..., help="a server, switch, transceiver or media id")) -> None:
    """Show one catalog entry as YAML-like JSON, with its sources."""
    from .catalog import load_catalog
    from .diagnostics import nearest

    cat = load_catalog()
    for table in (cat.servers, cat.switches, cat.transceivers, cat.cables, cat.media, cat.host_topology):
        if entry in table:
            record = table[entry].model_dump(mode="json")
            if table is cat.servers and entry in cat.host_topology:
                record["host_topology"] = cat.host_topology[entry].model_dump(mode="json")
            print(json.dumps(record, indent=2))
            return
    known = [*cat.servers, *cat.switches, *cat.transceivers, *cat.cables, *cat.media, *cat.host_topology]
    print(f"error: no catalog entry '{entry}'; {nearest(entry, known)}", file=sys.stderr)
    raise typer.Exit(EXIT_INVALID)


@app.command("lint-nccl")
def lint_nccl(files: list[Path] = typer.Argument(..., help="NCCL topology XML files (NCCL_TOPO_FILE)"),
              strict: bool = typer.Option(False, "--strict", help="fail on warnings too"),
              format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Check NCCL topology files against NCCL's parser rules and the checklist (exit 1 on errors)."""
    from .nccl.lint import lint

    report, failed = [], False
    for path in files:
        try:
            text = path.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            print(f"error: cannot read {path}: {exc.strerror}", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID) from None
        findings = lint(text)
        failed |= any(f.severity == "error" or strict for f in findings)
        report.append({"file": str(path), "findings": [f.__dict__ for f in findings]})
        if format == Format.text:
            for f in findings:
                print(f.format(str(path)))
            errors = sum(f.severity == "error" for f in findings)
            print(f"{path}: {errors} error(s), {len(findings) - errors} warning(s)")
    if format == Format.json:
        print(json.dumps({"ok": not failed, "files": report}, indent=2))
    if failed:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command("nccl-xml")
def nccl_xml(server: str = typer.Argument(..., help="a server or VM type with a host topology in the catalog"),
             style: str = typer.Option("skeleton", "--style", help="skeleton (cpu and pci only) or full (gpu, nic, net too)")) -> None:
    """Print the NCCL topology file (NCCL_TOPO_FILE) of a catalog server or VM type."""
    from .catalog import load_catalog
    from .diagnostics import nearest
    from .nccl.build import STYLES, StyleUnavailable, topology_tree
    from .nccl.write import write

    if style not in STYLES:
        print(f"error: --style must be one of {', '.join(STYLES)}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID)
    cat = load_catalog()
    topo = cat.host_topology.get(server)
    if topo is None:
        why = cat.servers[server].no_host_topology if server in cat.servers else ""
        print(f"error: no host topology for '{server}'" + (f": {why}" if why else f"; {nearest(server, cat.host_topology)}"),
              file=sys.stderr)
        raise typer.Exit(EXIT_INVALID)
    try:
        print(write(topology_tree(topo, style)), end="")
    except StyleUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None


@app.command()
def compare(specs: list[Path] = typer.Argument(..., help="two or more spec files"),
            format: Format = typer.Option(Format.text, "--format", help="text or json"),
            samples: int = typer.Option(0, "--samples", min=0, help="also each design under this many sampled failure "
                                        "states (delivery, bisection, GPUs cut off: p99 and mean, as clusterc resilience); 0: not"),
            seed: int = typer.Option(1, "--seed", help="with --samples: the same seed gives the same figures"),
            rates: Path | None = typer.Option(None, "--rates", help="with --samples: failure rates YAML, as "
                                                 "`clusterc resilience --rates` (default: the built-in rates)")) -> None:
    """Compare designs side by side: one column per spec (switches, cables, transceivers,
    power, bisection, oversubscription, hops, worst single failure; with --samples, what each
    delivers under sampled failures)."""
    from .check import run_checks
    from .compare import comparison_text, design_figures
    from .resilience import ResilienceError

    failed: list[Diagnostic] = []
    try:
        figures = [design_figures(plan, run_checks(plan), samples, seed, None if rates is None else str(rates))
                   for _spec, plan in _plans(specs, failed)]
    except ResilienceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    if failed:
        _print_diagnostics(failed, format)
        raise typer.Exit(EXIT_INVALID)
    if format == Format.json:
        print(json.dumps({"ok": True, "designs": figures}, indent=2))
    else:
        print(comparison_text(figures), end="")


class ExploreFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


class RankAt(str, Enum):
    target = "target"
    day_one = "day-one"


class Objective(str, Enum):
    cost = "cost"
    power = "power"
    switches = "switches"
    cables = "cables"
    collective_time = "collective_time"
    resilience = "resilience"


@app.command()
def explore(requirements: Path = typer.Argument(..., help="a spec in which `server` and any `fabric` key may be a list of choices"),
            objective: Objective = typer.Option(Objective.switches, "--objective", help="what the winner minimises"),
            top: int = typer.Option(10, "--top", min=1, help="candidates shown (the Pareto front is always shown)"),
            write_specs: Path | None = typer.Option(None, "--write-specs", help="write the shown designs here as ordinary specs"),
            format: ExploreFormat = typer.Option(ExploreFormat.text, "--format",
                                                 help="text, json, markdown, or html (a page with the front plotted)"),
            max_candidates: int = typer.Option(1000, "--max-candidates", min=1, help="refuse a larger design space"),
            at: RankAt = typer.Option(RankAt.target, "--at", help="with growth: rank on the figures at the growth target "
                                                                  "(default: the design is lived with at its full size) "
                                                                  "or at day one"),
            samples: int = typer.Option(200, "--samples", min=1, help="--objective resilience: failure states sampled per candidate"),
            seed: int = typer.Option(1, "--seed", help="--objective resilience: the same seed gives the same ranking"),
            rates: Path | None = typer.Option(None, "--rates", help="--objective resilience: failure rates YAML, "
                                                 "as `clusterc resilience --rates` (default: the built-in rates)"),
            executor: str = typer.Option("local", "--executor", help="where candidates run: local (a process pool) or dask "
                                         "(dask.distributed; the `resilience` extra)"),
            workers: int = typer.Option(1, "--workers", help="worker processes (local, or dask's local cluster)"),
            address: str | None = typer.Option(None, "--address", help="dask: an existing cluster's scheduler, "
                                                  "e.g. tcp://scheduler:8786 (default: a local cluster)")) -> None:
    """Search a design space: compile and check every combination of choices, drop those that
    fail (with the reason), show the Pareto front, the winner for the objective and why the
    runners-up lose. Exit 1 when no candidate is feasible."""
    from .executor import ExecutorError, make_executor
    from .explore import as_json, explore as run_explore, write_specs as write
    from .explore.evaluate import Failures
    from .explore.plot import html
    from .explore.report import markdown, text
    from .resilience import ResilienceError

    failures = Failures(samples, seed, None if rates is None else str(rates)) \
        if objective == Objective.resilience else None
    try:
        result = run_explore(requirements, objective.value, max_candidates, at=at.value,
                             executor=make_executor(executor, workers, address), failures=failures)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, Format.json if format == ExploreFormat.json else Format.text)
        raise typer.Exit(EXIT_INVALID) from None
    except (ExecutorError, ResilienceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    if write_specs is not None:
        written = write(result, write_specs, top)
        print(f"wrote {len(written)} spec(s) to {write_specs}", file=sys.stderr)
    if format == ExploreFormat.json:
        print(json.dumps(as_json(result), indent=2))
    else:
        print({ExploreFormat.markdown: markdown, ExploreFormat.html: html, ExploreFormat.text: text}[format](result, top), end="")
    if not result.feasible:
        raise typer.Exit(EXIT_CHECK_FAILED)


@app.command()
def traffic(spec: Path = typer.Argument(..., help="spec file"),
            pattern: str | None = typer.Option(None, "--pattern", help="comma-separated: ring-allreduce, hierarchical, all-to-all, "
                                                                           "permutation, shift[:K|:switch|:group] "
                                                                           "(default ring-allreduce,all-to-all,permutation)"),
            routing: str | None = typer.Option(None, "--routing", help="comma-separated: ecmp, adaptive, ftree (InfiniBand Clos); "
                                                                           "minimal, valiant, ugal (dragonfly). Default: all that apply"),
            fail: str | None = typer.Option(None, "--fail", help="also analyse after losing: spine:1, leaf:1, core:1, link:2 "
                                                                     "(uplinks of the first leaf), or device names / cable ids"),
            servers: str | None = typer.Option(None, "--servers", help="job placement: all (default), first:N, random:N, or names"),
            order: str = typer.Option("plan", "--order", help="rank order: plan, or random (a scattered job)"),
            qps: int = typer.Option(1, "--qps", help="queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION): ECMP hashes each"),
            seed: int = typer.Option(1, "--seed", help="seed of the ECMP hash, permutations, random placement and sampled phases"),
            phases: int | None = typer.Option(None, "--phases", help="all-to-all: analyse at most this many of its phases, a seeded "
                                                                          "sample (default 16; above 16,384 GPUs 16 x 16,384 / GPUs, at least 4)"),
            export: str | None = typer.Option(None, "--export", help="also write simulator topologies: FORMAT[,FORMAT]:DIR "
                                                                         "(htsim, astra-sim, simai)"),
            format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """What the fabric delivers to collectives: each pattern under each routing, calibrated max-min
    sharing of links, Gb/s per GPU, the slowest connection, collective times and hot links."""
    from .pipeline import build_plan
    from .traffic import TrafficError, traffic_report
    from .traffic.text import traffic_text

    try:
        _, plan = build_plan(spec)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, format)
        raise typer.Exit(EXIT_INVALID) from None
    split = lambda v: [x.strip() for x in v.split(",") if x.strip()] if v else None  # noqa: E731
    try:
        report = traffic_report(plan, split(pattern), split(routing), fail=fail, servers=servers, order=order,
                                qps=qps, seed=seed, max_phases=phases)
        if export:
            from .traffic.exports import write_exports

            report["simulator_exports"] = write_exports(plan, export, patterns=split(pattern), routings=split(routing),
                                                        servers=servers, order=order, seed=seed, fail=fail)
    except TrafficError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    if format == Format.json:
        print(json.dumps(report, indent=2))
    else:
        print(traffic_text(report), end="")


@app.command()
def twin(spec: Path = typer.Argument(..., help="spec file (a small Ethernet design: up to a few dozen switches)"),
         fail_link: str | None = typer.Option(None, "--fail-link", help="after convergence, cut this cable (e.g. leaf-001:5)"),
         fail_switch: str | None = typer.Option(None, "--fail-switch", help="after convergence, cut every cable of this switch"),
         swap: str | None = typer.Option(None, "--swap", help="wire two cables' upper ends swapped (CABLE,CABLE): a recabling mistake"),
         timeout: float = typer.Option(90.0, "--timeout", help="seconds to wait for convergence"),
         lldp_out: Path | None = typer.Option(None, "--lldp-out", help="also run lldpd in every namespace and write each "
                                                 "switch's `lldpcli -f json show neighbors details` into this folder "
                                                 "(input for clusterc verify)"),
         format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Boot the fabric as real routing daemons (root; FRR in network namespaces) and check it converges as planned."""
    from .pipeline import build_plan
    from .twin import TwinOptions, TwinUnavailable, run_twin

    try:
        _, plan = build_plan(spec)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, format)
        raise typer.Exit(EXIT_INVALID) from None
    pair: tuple[str, str] | None = None
    if swap:
        cables = [c.strip() for c in swap.split(",")]
        if len(cables) != 2 or cables[0] == cables[1]:
            print("error: --swap takes two different cable ids, e.g. leaf-001:5,leaf-002:6", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID)
        pair = (cables[0], cables[1])
    try:
        report = run_twin(plan, TwinOptions(fail_link=fail_link, fail_switch=fail_switch, swap=pair, timeout_s=timeout,
                                            lldp_out=lldp_out))
    except TwinUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    if format == Format.json:
        print(json.dumps(report, indent=2))
    elif report.get("protocol") == "infiniband":
        print(f"twin (ibsim + OpenSM): routing engine {report.get('engine_used') or report.get('engine')}, "
              f"SM {report.get('sm_state')}, {'ok' if report['ok'] else 'FAILED'}")
        for line in report.get("engine_lines", []) + report.get("errors", []):
            print(f"  {line}")
    else:
        from .twin.report import text_report

        print(text_report(report))
    raise typer.Exit(EXIT_OK if report["ok"] else EXIT_CHECK_FAILED)


@app.command()
def resilience(spec: Path = typer.Argument(..., help="spec, compiled output folder, or plan.json"),
               rates: Path | None = typer.Option(None, "--rates", help="YAML: per class (switch, transceiver, cable, nic) "
                                                    "afr (failures per component-year) and mttr_hours; others take the defaults"),
               samples: int = typer.Option(1000, "--samples", help="failure states to sample"),
               seed: int = typer.Option(1, "--seed", help="the same seed gives the same figures on any executor"),
               window_days: float = typer.Option(30.0, "--window-days", help="spares: the replenishment window, days"),
               confidence: float = typer.Option(0.95, "--confidence", help="spares: the stock covers the window's failures "
                                                "with this probability"),
               down: str | None = typer.Option(None, "--down", help="evaluate this state exactly: comma-separated switch, "
                                                  "server or NIC names and cable ids, or a file of them, or `verify --format json` output"),
               executor: str = typer.Option("local", "--executor", help="where samples run: local (a process pool) or dask "
                                            "(dask.distributed; the `resilience` extra)"),
               workers: int = typer.Option(1, "--workers", help="worker processes (local, or dask's local cluster)"),
               address: str | None = typer.Option(None, "--address", help="dask: an existing cluster's scheduler, "
                                                     "e.g. tcp://scheduler:8786 (default: a local cluster)"),
               pattern: str | None = typer.Option(None, "--pattern", help="also the throughput of this collective "
                                                     "per state (as `clusterc traffic`: ring-allreduce, all-to-all, ...)"),
               routing: str | None = typer.Option(None, "--routing", help="its routing (default: the fabric's first)"),
               format: DiffFormat = typer.Option(DiffFormat.text, "--format", help="text, json or markdown")) -> None:
    """What the fabric delivers on a normal day of failures (GPUs cut off, bisection: mean and percentiles), which
    components cost most, what spares to stock; with --down, what a given state loses and which repair restores most."""
    from .pipeline import load_plan
    from .resilience import ResilienceError, resilience_report
    from .resilience.text import resilience_text

    try:
        report = resilience_report(load_plan(spec), rates, samples=samples, seed=seed, window_days=window_days,
                                   confidence=confidence, down=down, executor=executor, workers=workers,
                                   address=address, pattern=pattern, routing=routing)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, Format.text)
        raise typer.Exit(EXIT_INVALID) from None
    except ResilienceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID) from None
    if format == DiffFormat.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(resilience_text(report, markdown=format == DiffFormat.markdown), end="")
    raise typer.Exit(EXIT_OK if report["availability"]["ok"] or not report["availability"]["required_in_spec"]
                     else EXIT_CHECK_FAILED)


@app.command()
def verify(plan: Path = typer.Argument(..., help="the plan: a compiled output folder, its plan.json, or the spec"),
           as_built: list[Path] = typer.Option([], "--as-built", help="discovery output or as-built sheet: files or folders "
                                               "(ibnetdiscover, lldpcli/NVUE/EOS JSON or SONiC `show lldp table` named "
                                               "<switch>.*, cabling CSV, NetBox cable CSV); more may follow as arguments"),
           more: list[Path] | None = typer.Argument(None, help="more --as-built files or folders", show_default=False),
           marks: list[Path] = typer.Option([], "--marks", help="a technician's marks: CSV of cable_id and status "
                                            "(done/problem; floor/marks.csv) or a cabling.xlsx rack sheet saved as CSV"),
           format: DiffFormat = typer.Option(DiffFormat.text, "--format", help="text, json or markdown"),
           scope: str | None = typer.Option(None, "--scope", help="what must already be there: su1,su2,pod1,<rack>,<device> "
                                               "or all (default: whatever the input shows)"),
           ignore: str | None = typer.Option(None, "--ignore", help="kinds not to report, e.g. speed,width on a simulated fabric"),
           write_guids: Path | None = typer.Option(None, "--write-guids", help="write OpenSM's GUID files and node-name map "
                                                      "with the GUIDs ibnetdiscover found, by plan name, into this folder")) -> None:
    """Check the fabric as built against the plan, port by port: swapped, wrong-port, wrong-device, missing and
    unplanned cables, link speed and width, device names. Exit 0 as planned, 1 if anything differs."""
    from .pipeline import load_plan
    from .verify import KINDS, markdown_report, text_report
    from .verify import verify as run_verify

    kinds = {k.strip() for k in (ignore or "").split(",") if k.strip()}
    if kinds - set(KINDS):
        print(f"error: --ignore takes {','.join(KINDS)}; got {', '.join(sorted(kinds - set(KINDS)))}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID)
    tokens = [t.strip() for t in (scope or "").split(",") if t.strip()] or None
    try:
        loaded = load_plan(plan)
        result = run_verify(loaded, list(as_built) + list(more or []), marks=list(marks), scope=tokens, ignore=kinds,
                            plan_source=str(plan), write_guids=write_guids)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, Format.json if format == DiffFormat.json else Format.text)
        raise typer.Exit(EXIT_INVALID) from None
    if format == DiffFormat.json:
        print(json.dumps(result, indent=2))
    elif format == DiffFormat.markdown:
        print(markdown_report(result), end="")
    else:
        print(text_report(result), end="")
    raise typer.Exit(EXIT_OK if result["ok"] else EXIT_CHECK_FAILED)


# glibc malloc serves allocations above 128 KiB with mmap and returns freed heap tops to the
# kernel soon, so every numpy temporary of a large plan (a per-link array is 3 MB at 131,072
# GPUs) maps fresh pages and faults them in: a fifth of a traffic analysis's CPU time went to
# the kernel. Arrays up to 64 MiB come from the heap and freed memory stays for the next one;
# larger ones still map (and unmap), so the peak resident set does not grow.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD_BYTES = 64 << 20
TRIM_THRESHOLD_BYTES = 256 << 20


def tune_allocator() -> None:
    """Set glibc's thresholds (above) for this process and the workers it forks; nothing
    where the C library is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)


def main() -> None:
    from .progress import trace_line, usage

    tune_allocator()
    since = usage()
    try:
        app()
    finally:  # the whole command's line of the trace ($CLUSTERC_TRACE), after every stage's
        trace_line("clusterc " + " ".join(sys.argv[1:2]), since)


if __name__ == "__main__":
    main()
