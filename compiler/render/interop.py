"""Topology files for Ethernet lab and validation tools (PTM, NVIDIA Air, containerlab), written for
designs whose switches run Ethernet:

- ptm/topology.dot: Cumulus PTM's expected cabling, `"a":"swp1" -- "b":"swp2"`, the
  same file on every switch. Switch-to-switch links only: PTM matches each edge
  against LLDP's ifname, and a server's Linux interface names are not in the plan.
- air/topology.dot: NVIDIA Air's DOT import, the switches as nodes with
  function/os attributes and the same edges; only for a NOS Air has an image of.
- containerlab/<name>.clab.yml: switches as the NOS's kind and image, servers as `linux`;
  links use the container interface names (eth<n>, n = the port's index in panel order
  + 1), not front-panel names, as containerlab requires.

The labs (Air, containerlab) run the design's NOS, so they are written only where the spec
names one (fabric.nos), with the kind, image and Air os of its descriptor (catalog/data/nos.yaml).

The syntax of all three is in templates/ptm/, air/ and containerlab/; nodes and edges are
spelled there once and filled in per row here (render/templates.py row_format).
"""

from __future__ import annotations

import numpy as np

from ..catalog.models import NosLab
from ..catalog.nos import descriptor
from ..check import CheckResults
from ..plan.model import Plan
from ..plan.columns import Coded, text_chunks
from ..plan.views import per_port
from .diagrams import q
from .templates import render_template, row_format, row_pieces
from .writer import OutputDir

SERVER_KIND, SERVER_IMAGE = "linux", "alpine:latest"


def is_ethernet(plan: Plan) -> bool:
    return plan.view.protocol == "ethernet"


def _switch_edges(plan: Plan) -> list[str]:
    """The switch-to-switch edges as ptm/elements.j2 spells them, in chunks of many lines
    joined from columns (plan/columns.py text_chunks)."""
    links = plan.links
    quoted = per_port(plan, {lid: np.array([q(p.name) for p in lay.ports], dtype=object) for lid, lay in plan.layouts.items()})
    offsets = plan.port_offsets()
    tier = np.array([d.tier for d in plan.devices])
    sel = (tier[links.a_dev] >= 1) & (tier[links.b_dev] >= 1)
    dev = np.array([q(d.name) for d in plan.devices], dtype=object)
    a, b = links.a_dev[sel], links.b_dev[sel]
    pieces = row_pieces("ptm/elements.j2", "edge", [Coded(dev, a), quoted[offsets[a] + links.a_port[sel]], Coded(dev, b),
                                                    quoted[offsets[b] + links.b_port[sel]]])
    return list(text_chunks(pieces, int(a.size)))


def ptm_dot(edges: list[str]) -> str:
    """`edges`: _switch_edges(plan), which Air's file shares."""
    return render_template("ptm/topology.dot.j2", edges=edges)


def lab_of(plan: Plan) -> NosLab | None:
    """The lab facts of the NOS the spec names; None where it names none."""
    nos = plan.routing.nos if plan.routing is not None else None
    return descriptor(nos).lab if nos else None


def air_dot(plan: Plan, lab: NosLab, edges: list[str]) -> str:
    assert lab.air_os is not None  # written only for a NOS that Air runs
    fmt = row_format("air/elements.j2", "node", 3)
    nodes = [fmt % (q(d.name), q(d.role), q(lab.air_os)) for d in plan.devices if d.tier >= 1]
    return render_template("air/topology.dot.j2", name=q(plan.name), nodes=nodes, edges=edges)


def clab_yaml(plan: Plan, lab: NosLab) -> str:
    links = plan.links
    node = row_format("containerlab/elements.j2", "node", 3)
    switch = (lab.containerlab_kind, lab.containerlab_image)
    nodes = [node % ((d.name, *switch) if d.tier >= 1 else (d.name, SERVER_KIND, SERVER_IMAGE)) for d in plan.devices]
    names = np.array([d.name for d in plan.devices], dtype=object)
    numbers = np.array([str(p + 1) for p in range(int(max(links.a_port.max(initial=0), links.b_port.max(initial=0))) + 1)],
                       dtype=object)  # 1-based, as the template's ethN
    edges = list(text_chunks(row_pieces("containerlab/elements.j2", "link", [Coded(names, links.a_dev), Coded(numbers, links.a_port),
                                                                             Coded(names, links.b_dev), Coded(numbers, links.b_port)]),
                             len(links)))
    return render_template("containerlab/topology.clab.yml.j2", name=plan.name, nodes=nodes, links=edges)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if not is_ethernet(plan):
        return
    edges = _switch_edges(plan)  # the same edges in PTM's file and Air's: joined once
    out.write_text("ptm/topology.dot", ptm_dot(edges))
    lab = lab_of(plan)
    if lab is None:
        return
    if lab.air_os:
        out.write_text("air/topology.dot", air_dot(plan, lab, edges))
    out.write_text(f"containerlab/{plan.name}.clab.yml", clab_yaml(plan, lab))
