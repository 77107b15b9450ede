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
"""

from __future__ import annotations

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.views import fabric_protocol
from ..plan.views import port_table
from .diagrams import q
from .writer import OutputDir

AIR_OS = "cumulus-vx-5.x"  # formats.md 5.2; Air picks the exact image at import
SWITCH_IMAGE = "docker-sonic-vs:latest"
SERVER_IMAGE = "alpine:latest"


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
    return [f"  {x}:{q(p)} -- {y}:{q(r)}\n" for x, p, y, r in zip(dev[a].tolist(), pa.tolist(), dev[b].tolist(), pb.tolist())]


def ptm_dot(plan: Plan) -> str:
    return "graph G {\n" + "".join(_switch_edges(plan)) + "}\n"


def air_dot(plan: Plan) -> str:
    nodes = [f'  {q(d.name)} [function={q(d.role)} os={q(AIR_OS)}]\n' for d in plan.devices if d.tier >= 1]
    return f"graph {q(plan.name)} {{\n" + "".join(nodes) + "".join(_switch_edges(plan)) + "}\n"


def clab_yaml(plan: Plan) -> str:
    links = plan.links
    lines = [f"name: {plan.name}", "topology:", "  kinds:", f"    sonic-vs: {{image: {SWITCH_IMAGE}}}",
             f"    linux: {{image: {SERVER_IMAGE}}}", "  nodes:"]
    lines += [f"    {d.name}: {{kind: {'sonic-vs' if d.tier >= 1 else 'linux'}}}" for d in plan.devices]
    lines.append("  links:")
    names = np.array([d.name for d in plan.devices], dtype=object)
    body = [f'    - endpoints: ["{x}:eth{p + 1}", "{y}:eth{r + 1}"]'
            for x, p, y, r in zip(names[links.a_dev].tolist(), links.a_port.tolist(), names[links.b_dev].tolist(), links.b_port.tolist())]
    return "\n".join(lines + body) + "\n"


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if not is_ethernet(plan):
        return
    out.write_text("ptm/topology.dot", ptm_dot(plan))
    out.write_text("air/topology.dot", air_dot(plan))
    out.write_text(f"containerlab/{plan.name}.clab.yml", clab_yaml(plan))
