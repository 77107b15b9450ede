"""`clusterc verify`: the fabric as built against the plan.

inputs (one module per format) -> Discovery -> resolve (names to plan devices and
ports) -> match (found vs planned, each difference explained) -> scope (what the input
should show) -> report (JSON contract verify.schema.json, text, Markdown). What the
input shows but verify cannot check is an input error or an `unverified` finding
(unverified.py), never OK.

    result = verify(plan, [Path("lldp/")], scope=["su1"], ignore={"speed"})
    result["ok"], result["mismatches"]
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..plan.model import Plan
from .discovery import Discovery
from .inputs import FORMATS, read_inputs
from .marks import marks_discovery
from .match import KINDS, compare
from .report import build, markdown_report, text_report
from .resolve import resolve
from .scope import decide
from .guids import write_guid_files
from .unverified import check_technology

SCHEMA = Path(__file__).with_name("verify.schema.json")


def verify_discovery(plan: Plan, disc: Discovery, *, scope: list[str] | None = None,
                     ignore: frozenset[str] | set[str] = frozenset(), plan_source: str = "",
                     write_guids: Path | None = None) -> dict:
    res = resolve(plan, disc)
    check_technology(plan, disc, res)
    outcome = compare(plan, disc, res, frozenset(ignore))
    known = res.node_dev >= 0
    seen_dev = np.zeros(len(plan.devices), dtype=bool)
    seen_dev[res.node_dev[known]] = True
    reported = np.array([disc.nodes[k].reported for k in res.keys], dtype=bool)
    reporting_dev = np.zeros(len(plan.devices), dtype=bool)
    reporting_dev[res.node_dev[known & reported]] = True
    if disc.complete:  # a subnet sweep: every device of the fabrics it reached reports, present or not
        swept = known & np.array([disc.nodes[k].kind in ("switch", "ca") for k in res.keys], dtype=bool)
        fabrics = {plan.devices[d].fabric for d in res.node_dev[swept].tolist()}
        reporting_dev |= np.array([d.fabric in fabrics for d in plan.devices], dtype=bool)
    sc = decide(plan, seen_dev, reporting_dev, scope)
    result = build(plan, disc, res, outcome, sc, plan_source)
    if ignore:
        result["mismatches"] = [m for m in result["mismatches"] if m["kind"] not in ignore]
        result["ok"] = not result["mismatches"]
        result["ignored"] = sorted(ignore)
    if write_guids is not None:
        result["guid_files"] = write_guid_files(plan, disc, res, write_guids)
    return result


def verify(plan: Plan, paths: list[Path], marks: list[Path] | None = None, **options) -> dict:
    """Verify discovery output and as-built sheets (`paths`) and a technician's marks
    (`marks`, marks.py), together."""
    disc = read_inputs(paths) if paths or not marks else Discovery()
    if marks:
        disc.merge(marks_discovery(plan, marks))
    return verify_discovery(plan, disc, **options)


__all__ = ["verify", "verify_discovery", "read_inputs", "FORMATS", "KINDS", "SCHEMA", "text_report", "markdown_report"]
