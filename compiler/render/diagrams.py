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
diagrams takes minutes), nor for a scope past MAX_SCOPE_SVG_NODES nodes or
MAX_SCOPE_SVG_EDGES edges; the overview is always rendered.
"""

from __future__ import annotations

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from .fontconfig_noise import without_fontconfig_noise
from .writer import OutputDir

SVG_MAX_DEVICES = 5_000


def q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def qlines(*lines: str) -> str:
    """A quoted label of several lines (DOT's \\n escape between escaped lines)."""
    return '"' + "\\n".join(str(t).replace("\\", "\\\\").replace('"', '\\"') for t in lines) + '"'


PLURAL = {"server": "servers", "leaf": "leaves", "spine": "spines", "core": "cores"}


def render_svg(dot: str, prog: str = "dot") -> str:
    import pygraphviz

    with without_fontconfig_noise():  # the wheel's Fontconfig warns about the host's config
        return pygraphviz.AGraph(string=dot).draw(format="svg", prog=prog).decode("utf-8")


def overview_layout(plan: Plan) -> str:
    """Clos overviews are layered (dot, bottom to top). Torus and dragonfly group graphs are
    not, and dot's crossing minimisation on a dense one takes minutes (a 32-group dragonfly
    overview: 144 s); neato lays it out in a fraction of a second, deterministically."""
    return "dot" if plan.design.get("topology") in ("fat-tree", "rail-optimized") else "neato"


def bandwidth(gbps: int) -> str:
    return f"{gbps / 1000:g} Tb/s" if gbps >= 1000 else f"{gbps} Gb/s"


MAX_OVERVIEW_GROUPS = 32
LEAVES_PER_SCOPE = 8
# dot's layout time grows superlinearly: a scope past this many nodes gets its .dot file
# but no SVG (1,216 nodes took 3.5 minutes).
MAX_SCOPE_SVG_NODES = 600
# ... and edges: a pod of 192 ToRs under 16 spines (592 nodes, 3,456 edges) takes dot
# over a minute per pod; the committed examples stay below 1,000 edges.
MAX_SCOPE_SVG_EDGES = 2_000


def group_of(plan: Plan) -> tuple[list[str], np.ndarray, list[str]]:
    """Per device its overview group (index) and the group names. Three tiers: a node
    per pod (its SUs, leaves and spines) and one for all cores; two tiers: a node per
    SU, or per run of SUs where there are more than MAX_OVERVIEW_GROUPS, and one for
    the spines. Servers and endpoints join the group of the first leaf they reach,
    so the overview's size never grows with servers."""
    names: list[str] = []
    index: dict[str, int] = {}
    out = np.full(len(plan.devices), -1, dtype=np.int64)
    three = plan.design["tiers"] == 3
    sus = max((d.su or 0) for d in plan.devices)
    per = -(-sus // MAX_OVERVIEW_GROUPS) if sus > MAX_OVERVIEW_GROUPS else 1

    clos = plan.design.get("topology") in ("fat-tree", "rail-optimized")
    switchless = plan.design.get("node_role") == "server"  # ring / full mesh: the servers are the fabric
    pods = max((d.pod or 0) for d in plan.devices)
    per_pod = -(-pods // MAX_OVERVIEW_GROUPS) if pods > MAX_OVERVIEW_GROUPS else 1

    def key_of(d) -> str | None:
        if not clos:  # torus, dragonfly: a node per group (or run of groups), one for chips/routers
            if d.tier == 0 and d.role in ("server",) and not switchless:
                return None
            if d.pod is not None:
                lo = (d.pod - 1) // per_pod * per_pod + 1
                return f"group{d.pod}" if per_pod == 1 else f"groups{lo}-{min(lo + per_pod - 1, pods)}"
            return PLURAL.get(d.role, d.role)
        if d.role == "leaf":
            if three and d.pod is not None:
                return f"pod{d.pod}"
            if d.su is None:
                return "leaves"
            lo = (d.su - 1) // per * per + 1
            return f"su{d.su}" if per == 1 else f"su{lo}-su{min(lo + per - 1, sus)}"
        if d.role == "spine":
            return f"pod{d.pod}" if three and d.pod is not None else "spines"
        if d.role == "core":
            return "cores"
        if d.role != "server" and d.tier == 0:
            return d.role
        return None

    for i, d in enumerate(plan.devices):
        key = key_of(d)
        if key is not None:
            out[i] = index.setdefault(key, len(names))
            if out[i] == len(names):
                names.append(key)
    links = plan.links
    leaf = np.array([d.role == "leaf" if clos else d.tier >= 1 for d in plan.devices])
    loose = np.nonzero((out[links.a_dev] < 0) & leaf[links.b_dev])[0]
    lower, first = np.unique(links.a_dev[loose], return_index=True)
    out[lower] = out[links.b_dev[loose[first]]]
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
    layout = overview_layout(plan)
    # layout= in the file too, so `dot -Tsvg fabric.dot` draws what we drew
    attrs = "rankdir=BT" if layout == "dot" else f"layout={layout}, overlap=false"
    lines = [f"graph {q(plan.name)} {{", f'  graph [{attrs}, fontname="Helvetica", label=' + q(
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


def scope_index(plan: Plan) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Detailed-diagram scopes: their names, the scope of each device (-1: none; leaves
    by SU/pod, servers and endpoints by the first leaf they reach) and of each link
    (the scope of an end inside one). Vectorised: O(links log links)."""
    names: list[str] = []
    index: dict[str, int] = {}
    dev_scope = np.full(len(plan.devices), -1, dtype=np.int64)
    if plan.design.get("node_role") == "server":  # ring / full mesh (a few servers): one diagram of them all
        dev_scope[:] = 0
        return ["servers"], dev_scope, np.zeros(len(plan.links), dtype=np.int64)
    for i, d in enumerate(plan.devices):
        if d.role == "leaf":
            if d.su is not None:
                key = f"su{d.su}"
            elif d.pod is not None:
                key = f"pod{d.pod}"
            else:  # a fat tree without SUs: runs of LEAVES_PER_SCOPE leaves keep each diagram legible
                lo = (d.index - 1) // LEAVES_PER_SCOPE * LEAVES_PER_SCOPE + 1
                key = f"leaves-{lo:03d}-{lo + LEAVES_PER_SCOPE - 1:03d}"
            dev_scope[i] = index.setdefault(key, len(names))
            if dev_scope[i] == len(names):
                names.append(key)
    links = plan.links
    to_leaf = np.nonzero((dev_scope[links.b_dev] >= 0) & (dev_scope[links.a_dev] < 0))[0]
    lower, first = np.unique(links.a_dev[to_leaf], return_index=True)
    dev_scope[lower] = dev_scope[links.b_dev[to_leaf[first]]]
    link_scope = np.where(dev_scope[links.a_dev] >= 0, dev_scope[links.a_dev], dev_scope[links.b_dev])
    return names, dev_scope, link_scope


def scopes(plan: Plan) -> dict[str, list[int]]:
    """Detailed-diagram scope -> its servers, endpoints and leaves (device indices)."""
    names, dev_scope, _ = scope_index(plan)
    order = np.argsort(dev_scope, kind="stable")
    bounds = np.searchsorted(dev_scope[order], np.arange(len(names) + 1))
    return {name: order[bounds[k]:bounds[k + 1]].tolist() for k, name in enumerate(names)}


def scope_dot(plan: Plan, name: str, members: list[int], link_ids: np.ndarray | None = None) -> str:
    links = plan.links
    if link_ids is None:
        inside = np.zeros(len(plan.devices), dtype=bool)
        inside[members] = True
        link_ids = np.nonzero(inside[links.a_dev] | inside[links.b_dev])[0]
    a, b = links.a_dev[link_ids], links.b_dev[link_ids]
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
    # Ranks by tier; not for a switchless ring or mesh, whose edges all join one tier (dot's
    # mincross aborts on many labelled edges inside one rank=same group).
    for tier in sorted(by_tier) if plan.design.get("node_role") != "server" else ():
        lines.append("  { rank=same; " + " ".join(q(devices[i].name) for i in by_tier[tier]) + " }")
    pairs, counts = np.unique(np.stack([a, b]), axis=1, return_counts=True)
    for x, y, c in zip(pairs[0].tolist(), pairs[1].tolist(), counts.tolist()):
        label = f" [label={q(str(c))}]" if c > 1 else ""
        lines.append(f"  {q(devices[x].name)} -- {q(devices[y].name)}{label};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    dot = overview_dot(plan)
    out.write_text("diagrams/fabric.dot", dot)
    out.write_text("diagrams/fabric.svg", plan.memo("fabric_svg", lambda pl: render_svg(dot, overview_layout(pl))))
    small = len(plan.devices) <= SVG_MAX_DEVICES
    names, _, link_scope = scope_index(plan)
    order = np.argsort(link_scope, kind="stable")
    bounds = np.searchsorted(link_scope[order], np.arange(len(names) + 1))
    for k, (name, members) in enumerate(scopes(plan).items()):
        link_ids = np.sort(order[bounds[k]:bounds[k + 1]])
        dot = scope_dot(plan, name, members, link_ids)
        out.write_text(f"diagrams/{name}.dot", dot)
        nodes = len(set(members) | set(plan.links.b_dev[link_ids].tolist()))
        if small and nodes <= MAX_SCOPE_SVG_NODES and dot.count(" -- ") <= MAX_SCOPE_SVG_EDGES:
            out.write_text(f"diagrams/{name}.svg", render_svg(dot))
