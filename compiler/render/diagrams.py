"""Diagrams (Graphviz): the fabric at a glance and each scalable unit in detail.

- diagrams/fabric.dot|svg: one node per group (an SU's servers and leaves, a pod's
  spines, a core group, an endpoint role), edges labelled with link count and
  bandwidth. Its size grows with the number of SUs, never with servers, so it stays
  readable at any scale.
- diagrams/<scope>.dot|svg: every server, endpoint and leaf of one SU (or pod, or the
  whole fabric where there are neither), the spines they reach, one edge per
  server-leaf link and one labelled edge per leaf-spine pair.

SVG comes from pygraphviz (it bundles Graphviz: no system package, the same layout
engine everywhere, so the SVG is byte-identical run to run). Above SVG_MAX_DEVICES
devices only the DOT of the detailed diagrams is written (rendering hundreds of SU
diagrams takes minutes); the overview is always rendered.
"""

from __future__ import annotations

import numpy as np

from ..plan.model import Plan
from .writer import OutputDir

SVG_MAX_DEVICES = 5_000


def q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def qlines(*lines: str) -> str:
    """A quoted label of several lines (DOT's \\n escape between escaped lines)."""
    return '"' + "\\n".join(str(t).replace("\\", "\\\\").replace('"', '\\"') for t in lines) + '"'


PLURAL = {"server": "servers", "leaf": "leaves", "spine": "spines", "core": "cores"}


def render_svg(dot: str) -> str:
    import pygraphviz

    return pygraphviz.AGraph(string=dot).draw(format="svg", prog="dot").decode("utf-8")


def bandwidth(gbps: int) -> str:
    return f"{gbps / 1000:g} Tb/s" if gbps >= 1000 else f"{gbps} Gb/s"


def group_of(plan: Plan) -> tuple[list[str], np.ndarray, list[str]]:
    """Per device its overview group (index), the group names and labels' role words."""
    names: list[str] = []
    index: dict[str, int] = {}
    out = np.empty(len(plan.devices), dtype=np.int64)
    for i, d in enumerate(plan.devices):
        if d.role in ("server", "leaf"):
            key = f"su{d.su}" if d.su is not None else (f"pod{d.pod}" if d.pod is not None else "leaves")
            if d.role == "server" and d.su is None:
                key = "servers"
        elif d.role == "spine":
            key = f"pod{d.pod}-spines" if d.pod is not None else "spines"
        elif d.role == "core":
            key = f"core-group{d.group}"
        else:
            key = d.role
        out[i] = index.setdefault(key, len(names))
        if out[i] == len(names):
            names.append(key)
    return names, out, []


def overview_dot(plan: Plan) -> str:
    names, group, _ = group_of(plan)
    counts: dict[int, dict[str, int]] = {}
    for d, g in zip(plan.devices, group.tolist()):
        counts.setdefault(g, {})
        counts[g][d.role] = counts[g].get(d.role, 0) + 1
    links = plan.links
    ga, gb = group[links.a_dev], group[links.b_dev]
    n = len(names)
    key = ga * n + gb
    pairs, inverse = np.unique(key, return_inverse=True)
    n_links = np.bincount(inverse)
    gbps = np.bincount(inverse, weights=links.speed_gbps.astype(np.float64))
    lines = [f"graph {q(plan.name)} {{", '  graph [rankdir=BT, fontname="Helvetica", label=' + q(
        f"{plan.name}: {plan.design['gpus']:,} GPUs, {plan.design['tiers']} tiers") + ", labelloc=t];",
             '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=9];']
    inner = {divmod(p, n)[0]: c for p, c in zip(pairs.tolist(), n_links.tolist()) if divmod(p, n)[0] == divmod(p, n)[1]}
    for g, name in enumerate(names):
        parts = ", ".join(f"{c:,} {PLURAL.get(role, role) if c > 1 else role}" for role, c in counts[g].items())
        extra = [f"{inner[g]:,} links inside"] if g in inner else []
        lines.append(f"  {q(name)} [label={qlines(name, parts, *extra)}];")
    for p, c, bw in zip(pairs.tolist(), n_links.tolist(), gbps.tolist()):
        a, b = divmod(p, n)
        if a == b:
            continue
        lines.append(f"  {q(names[a])} -- {q(names[b])} [label={q(f'{c:,} links, {bandwidth(int(bw))}')}, penwidth={1 + min(4, c / 256):.2f}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def scopes(plan: Plan) -> dict[str, list[int]]:
    """Detailed-diagram scope -> its servers, endpoints and leaves (device indices)."""
    out: dict[str, list[int]] = {}
    leaf_scope: dict[int, str] = {}
    for i, d in enumerate(plan.devices):
        if d.role == "leaf":
            key = f"su{d.su}" if d.su is not None else (f"pod{d.pod}" if d.pod is not None else "fabric")
            leaf_scope[i] = key
            out.setdefault(key, []).append(i)
    links = plan.links
    # servers and endpoints go to the scope of the first leaf they reach
    first_leaf: dict[int, int] = {}
    for a, b in zip(links.a_dev.tolist(), links.b_dev.tolist()):
        if b in leaf_scope and a not in first_leaf:
            first_leaf[a] = b
    for a, b in sorted(first_leaf.items()):
        out[leaf_scope[b]].append(a)
    return {k: sorted(v) for k, v in out.items()}


def scope_dot(plan: Plan, name: str, members: list[int]) -> str:
    links = plan.links
    inside = np.zeros(len(plan.devices), dtype=bool)
    inside[members] = True
    sel = inside[links.a_dev] | inside[links.b_dev]
    a, b = links.a_dev[sel], links.b_dev[sel]
    devices = plan.devices
    shown = sorted(set(members) | set(b.tolist()) | set(a.tolist()))
    colours = {"server": "#e8f5e9", "leaf": "#eef3fb", "spine": "#fff3e0", "core": "#fce4ec"}
    lines = [f"graph {q(plan.name + ' ' + name)} {{",
             '  graph [rankdir=BT, fontname="Helvetica", ranksep=1.2, label=' + q(f"{plan.name}: {name}") + ", labelloc=t];",
             '  node [shape=box, style=filled, fontname="Helvetica", fontsize=10];', '  edge [color="#607d8b"];']
    by_tier: dict[int, list[int]] = {}
    for i in shown:
        by_tier.setdefault(devices[i].tier, []).append(i)
        lines.append(f"  {q(devices[i].name)} [fillcolor={q(colours.get(devices[i].role, '#f5f5f5'))}];")
    for tier in sorted(by_tier):
        lines.append("  { rank=same; " + " ".join(q(devices[i].name) for i in by_tier[tier]) + " }")
    pairs, counts = np.unique(np.stack([a, b]), axis=1, return_counts=True)
    for x, y, c in zip(pairs[0].tolist(), pairs[1].tolist(), counts.tolist()):
        label = f" [label={q(str(c))}]" if c > 1 else ""
        lines.append(f"  {q(devices[x].name)} -- {q(devices[y].name)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(plan: Plan, out: OutputDir) -> None:
    dot = overview_dot(plan)
    out.write_text("diagrams/fabric.dot", dot)
    out.write_text("diagrams/fabric.svg", plan.memo("fabric_svg", lambda pl: render_svg(dot)))
    small = len(plan.devices) <= SVG_MAX_DEVICES
    for name, members in scopes(plan).items():
        dot = scope_dot(plan, name, members)
        out.write_text(f"diagrams/{name}.dot", dot)
        if small:
            out.write_text(f"diagrams/{name}.svg", render_svg(dot))
