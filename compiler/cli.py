"""The `clusterc` command: thin. Parses flags, calls the library, prints, sets exit codes.

Exit codes: 0 ok; 1 a check failed (error finding or failed requirement); 2 invalid
spec or usage. A user's input never produces a traceback.
"""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from .diagnostics import Diagnostic, SpecInvalid

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="clusterc: compile a GPU-cluster network spec into cabling, BOM, configs and checks.")
catalog_app = typer.Typer(no_args_is_help=True, help="Show the hardware catalog.")
app.add_typer(catalog_app, name="catalog")

EXIT_OK, EXIT_CHECK_FAILED, EXIT_INVALID = 0, 1, 2


class Format(str, Enum):
    text = "text"
    json = "json"


def _print_diagnostics(diags: list[Diagnostic], fmt: Format) -> None:
    if fmt == Format.json:
        print(json.dumps({"ok": False, "diagnostics": [d.as_dict() for d in diags]}, indent=2))
    else:
        for d in diags:
            print(d.format(), file=sys.stderr)
        print(f"{len(diags)} error(s)", file=sys.stderr)


def _table(rows: list[tuple[str, str]]) -> str:
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"  {k:<{width}}  {v}" for k, v in rows)


def _summary_rows(summary: dict) -> list[tuple[str, str]]:
    rows = [("GPUs", f"{summary['gpus']:,}"), ("servers", f"{summary['servers']:,} x {summary['server']}"),
            ("topology", f"{summary['topology']}, {summary['tiers']} tiers, {summary['speed_gbps']}G")]
    rows += [(f"{role} switches", f"{n:,} x {summary['switch']}") for role, n in summary["switches"].items()]
    rows += [(f"{role}", f"{n:,}") for role, n in summary["endpoints"].items()]
    rows += [(f"{kind} cables", f"{n:,}") for kind, n in summary["cables"].items()]
    rows += [("transceivers", f"{summary['transceivers']:,}")]
    rows += [(f"oversubscription {tier}", r) for tier, r in summary["oversubscription"].items()]
    return rows


@app.command()
def validate(specs: List[Path] = typer.Argument(..., help="spec files"),
             format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Check specs (syntax, catalog ids, feasibility) without writing anything."""
    from .pipeline import build_plan

    failed: list[Diagnostic] = []
    for spec in specs:
        try:
            build_plan(spec)
            if format == Format.text:
                print(f"{spec}: ok")
        except SpecInvalid as exc:
            failed.extend(exc.diagnostics)
    if failed:
        _print_diagnostics(failed, format)
        raise typer.Exit(EXIT_INVALID)
    if format == Format.json:
        print(json.dumps({"ok": True, "diagnostics": []}, indent=2))


@app.command(name="compile")
def compile_(specs: List[Path] = typer.Argument(..., help="spec files"),
             out: Path = typer.Option(Path("out"), "-o", "--out", help="output folder; each spec writes OUT/<name>/"),
             only: Optional[str] = typer.Option(None, "--only", help="comma-separated outputs (default: all)"),
             format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Compile specs into plans and write their outputs (atomically) under OUT/<name>/."""
    from .pipeline import build_plan, write_outputs
    from .plan.summary import summarize
    from .render import RENDERERS

    outputs = None
    if only:
        outputs = [o.strip() for o in only.split(",") if o.strip()]
        unknown = [o for o in outputs if o not in RENDERERS]
        if unknown:
            print(f"error: unknown output(s) {', '.join(unknown)}; known: {', '.join(RENDERERS)}", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID)
    failed: list[Diagnostic] = []
    results = []
    for spec in specs:
        try:
            _, plan = build_plan(spec)
        except SpecInvalid as exc:
            failed.extend(exc.diagnostics)
            continue
        try:
            target = write_outputs(plan, out, outputs)
        except OSError as exc:
            failed.append(Diagnostic("OUTPUT_UNWRITABLE", f"cannot write outputs: {exc.strerror}: {exc.filename}", file=str(spec)))
            continue
        summary = summarize(plan)
        results.append({"spec": str(spec), "out": str(target), "summary": summary})
        if format == Format.text:
            print(f"{spec} -> {target}/")
            print(_table(_summary_rows(summary)))
            for note in summary["notes"]:
                print(f"  note: {note}")
    if format == Format.json:
        print(json.dumps({"ok": not failed, "results": results, "diagnostics": [d.as_dict() for d in failed]}, indent=2))
    elif failed:
        _print_diagnostics(failed, format)
    if failed:
        raise typer.Exit(EXIT_INVALID)


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
        ("servers", cat.servers, lambda s: f"{s.model}: {s.gpus} GPUs, {len(s.nic_groups['compute'].ports)} x {s.nic_groups['compute'].speed_gbps}G"),
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
    for table in (cat.servers, cat.switches, cat.transceivers, cat.cables, cat.media):
        if entry in table:
            print(json.dumps(table[entry].model_dump(mode="json"), indent=2))
            return
    known = [*cat.servers, *cat.switches, *cat.transceivers, *cat.cables, *cat.media]
    print(f"error: no catalog entry '{entry}'; {nearest(entry, known)}", file=sys.stderr)
    raise typer.Exit(EXIT_INVALID)


@app.command()
def twin(spec: Path = typer.Argument(..., help="spec file (a small Ethernet design: up to a few dozen switches)"),
         fail_link: Optional[str] = typer.Option(None, "--fail-link", help="after convergence, cut this cable (e.g. C000042)"),
         fail_switch: Optional[str] = typer.Option(None, "--fail-switch", help="after convergence, cut every cable of this switch"),
         swap: Optional[str] = typer.Option(None, "--swap", help="wire two cables' upper ends swapped (CABLE,CABLE): a recabling mistake"),
         timeout: float = typer.Option(90.0, "--timeout", help="seconds to wait for convergence"),
         format: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """Boot the fabric as real routing daemons (root; FRR in network namespaces) and check it converges as planned."""
    from .pipeline import build_plan
    from .twin import TwinOptions, TwinUnavailable, run_twin

    try:
        _, plan = build_plan(spec)
    except SpecInvalid as exc:
        _print_diagnostics(exc.diagnostics, format)
        raise typer.Exit(EXIT_INVALID)
    pair = None
    if swap:
        pair = tuple(c.strip() for c in swap.split(","))
        if len(pair) != 2 or pair[0] == pair[1]:
            print("error: --swap takes two different cable ids, e.g. C000001,C000002", file=sys.stderr)
            raise typer.Exit(EXIT_INVALID)
    try:
        report = run_twin(plan, TwinOptions(fail_link=fail_link, fail_switch=fail_switch, swap=pair, timeout_s=timeout))
    except TwinUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise typer.Exit(EXIT_INVALID)
    if format == Format.json:
        print(json.dumps(report, indent=2))
    else:
        from .twin.report import text_report

        print(text_report(report))
    raise typer.Exit(EXIT_OK if report["ok"] else EXIT_CHECK_FAILED)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
