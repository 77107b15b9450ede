"""diagrams/: every fabric at a glance and each scalable unit in detail, as SVG and DOT.

- diagrams/fabric.svg|dot: the overview. A Clos is drawn in layers (one box per
  scalable unit or pod, spines and cores above); a torus as a grid of blocks; a
  dragonfly as its groups on a circle; a switchless ring or mesh as its servers.
- diagrams/<scope>.svg|dot: one scalable unit (or pod, or run of leaves): its servers,
  endpoints and leaves and the switches they reach, laid out like the figures of the
  DGX SuperPOD reference architecture (servers in a row, rail leaves above in rail
  order, spines on top), links coloured by rail and bundled with counts.
- Extra fabrics (spec `fabrics:`) get the same under diagrams/<fabric>/.

Every coordinate is computed here and written through templates/diagrams/: no layout
engine runs, so a diagram costs O(boxes + edges), is bounded to one screen whatever
the fabric's size (runs of devices past a row's capacity), and is byte-identical run
to run. The DOT file pins every node where the SVG has it, for Graphviz's tools.
"""

from __future__ import annotations

import numpy as np

from ...plan.fabrics import COMPUTE, fabric_names, fabric_plan
from ...check import CheckResults
from ...plan.model import Plan
from ..writer import OutputDir
from .circle import groups_overview, switchless
from .clos import clos_overview, scope_drawing
from ...topology import topology
from .grid import torus_overview
from .drawing import Drawing, q
from .scopes import scope_index, scope_names, scopes
from .spelled import svg_and_dot

__all__ = ["render", "overview", "scope_drawings", "scopes", "scope_names", "fabric_overviews", "folder_of", "q"]


def overview(plan: Plan) -> Drawing:
    """The overview of one fabric's plan (a fabric_plan). Memoised: the report draws it too."""
    return plan.memo("diagram_overview", _overview)


def _drawing_kind(plan: Plan) -> str:
    """The topology's `diagram` trait (compiler/topology): tiers, grid, circle or servers."""
    return topology(plan.view.design.topology).diagram


def _overview(plan: Plan) -> Drawing:
    kind = _drawing_kind(plan)
    if kind == "servers":  # a switchless ring or mesh: its servers
        return switchless(plan, "fabric")
    if kind == "grid":  # torus or mesh, switched or direct: blocks of nodes
        return torus_overview(plan)
    if kind == "circle":  # dragonfly groups joined by their global links
        return groups_overview(plan)
    return clos_overview(plan)


def folder_of(fabric: str) -> str:
    """Where a fabric's diagrams go: diagrams/ for compute, diagrams/<fabric>/ otherwise."""
    return "diagrams/" if fabric == COMPUTE else f"diagrams/{fabric}/"


def fabric_overviews(plan: Plan) -> list[tuple[str, str, Drawing]]:
    """(fabric, folder, overview) for every fabric of the plan, compute first."""
    return [(name, folder_of(name), overview(fabric_plan(plan, name))) for name in fabric_names(plan)]


def scope_drawings(plan: Plan):
    names, _, link_scope = plan.memo("diagram_scopes", scope_index)
    order = np.argsort(link_scope, kind="stable")
    bounds = np.searchsorted(link_scope[order], np.arange(len(names) + 1))
    for k, (name, members) in enumerate(scopes(plan).items()):
        link_ids = np.sort(order[bounds[k]:bounds[k + 1]])
        if _drawing_kind(plan) == "servers":
            yield name, switchless(plan, name)
        else:
            yield name, scope_drawing(plan, name, members, link_ids)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    """Every fabric of `plan` (this output reads all fabrics: RENDERERS["diagrams"].reads)."""
    for fabric, folder, drawing in fabric_overviews(plan):
        out.write_text(f"{folder}fabric.svg", drawing.svg())
        out.write_text(f"{folder}fabric.dot", drawing.dot())
        for name, d in scope_drawings(fabric_plan(plan, fabric)):
            svg, dot = svg_and_dot(d)  # a scope of an earlier scope's shape: that shape's format, filled
            out.write_text(f"{folder}{name}.svg", svg)
            out.write_text(f"{folder}{name}.dot", dot)
