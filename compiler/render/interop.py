"""Topology files for Ethernet lab and validation tools (formats.md 5), written for
designs whose switches run Ethernet:

- ptm/topology.dot: Cumulus PTM's expected cabling, `"a":"swp1" -- "b":"swp2"`, the
  same file on every switch. Switch-to-switch links only: PTM matches each edge
  against LLDP's ifname, and a server's Linux interface names are not in the plan.
- air/topology.dot: NVIDIA Air's DOT import, the switches as nodes with
  function/os attributes and the same edges.
- containerlab/<name>.clab.yml: switches as `sonic-vs`, servers as `linux`; links use
  the container interface names (eth<n>, n = the port's index in panel order + 1),
  not front-panel names, as containerlab requires.

The syntax of all three is in templates/ptm/, air/ and containerlab/; nodes and edges are
spelled there once and filled in per row here (render/templates.py row_format).
"""

from __future__ import annotations

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.views import fabric_protocol
from ..plan.views import port_table
from .diagrams import q
from .templates import render_template, row_format
from .writer import OutputDir

AIR_OS = "cumulus-vx-5.x"  # formats.md 5.2; Air picks the exact image at import
SWITCH_KIND, SWITCH_IMAGE = "sonic-vs", "docker-sonic-vs:latest"
SERVER_KIND, SERVER_IMAGE = "linux", "alpine:latest"


def is_ethernet(plan: Plan) -> bool:
    return fabric_protocol(plan) == "ethernet"


def _switch_edges(plan: Plan) -> list[str]:
    links = plan.links
    names = plan.memo("port_table", port_table)["name"]
    offsets = plan.port_offsets()
    tier = np.array([d.tier for d in plan.devices])
    sel = (tier[links.a_dev] >= 1) & (tier[links.b_dev] >= 1)
    dev = np.array([q(d.name) for d in plan.devices], dtype=object)
    a, b = links.a_dev[sel], links.b_dev[sel]
    pa, pb = names[offsets[a] + links.a_port[sel]], names[offsets[b] + links.b_port[sel]]
    fmt = row_format("ptm/elements.j2", "edge", 4)
    return [fmt % (x, q(p), y, q(r)) for x, p, y, r in zip(dev[a].tolist(), pa.tolist(), dev[b].tolist(), pb.tolist())]


def ptm_dot(plan: Plan) -> str:
    return render_template("ptm/topology.dot.j2", edges=_switch_edges(plan))


def air_dot(plan: Plan) -> str:
    fmt = row_format("air/elements.j2", "node", 3)
    nodes = [fmt % (q(d.name), q(d.role), q(AIR_OS)) for d in plan.devices if d.tier >= 1]
    return render_template("air/topology.dot.j2", name=q(plan.name), nodes=nodes, edges=_switch_edges(plan))


def clab_yaml(plan: Plan) -> str:
    links = plan.links
    node = row_format("containerlab/elements.j2", "node", 2)
    link = row_format("containerlab/elements.j2", "link", 4)
    nodes = [node % (d.name, SWITCH_KIND if d.tier >= 1 else SERVER_KIND) for d in plan.devices]
    names = np.array([d.name for d in plan.devices], dtype=object)
    edges = [link % row for row in zip(names[links.a_dev].tolist(), (links.a_port + 1).tolist(),
                                       names[links.b_dev].tolist(), (links.b_port + 1).tolist())]
    return render_template("containerlab/topology.clab.yml.j2", name=plan.name, switch_kind=SWITCH_KIND,
                           switch_image=SWITCH_IMAGE, server_kind=SERVER_KIND, server_image=SERVER_IMAGE,
                           nodes=nodes, links=edges)


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if not is_ethernet(plan):
        return
    out.write_text("ptm/topology.dot", ptm_dot(plan))
    out.write_text("air/topology.dot", air_dot(plan))
    out.write_text(f"containerlab/{plan.name}.clab.yml", clab_yaml(plan))
