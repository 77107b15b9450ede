"""Cross-check of the bisection max-flow: scipy's Dinic on the checks' compact arrays
(compiler/check/flows.py) against networkx's preflow-push on a flow network built from
`to_networkx()`, a separate path from the plan to the graph. Every balanced cut of each
small design, intact and with one top-tier switch (or node) lost, must agree exactly.

The networkx graph is plan/multigraph.py's (to_networkx)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import compiler
from compiler.check.context import CheckContext
from compiler.plan.fabrics import fabric_plan
from compiler.plan.views import cable_ids

from .conftest import SPECS
from .synthetic import catalog_yaml, fat_tree_spec

SOURCE, SINK = ("cut", "A"), ("cut", "B")  # tuples: no device name can collide


def _dragonfly(tmp_path, k: int, hosts: int) -> str:
    (tmp_path / f"k{k}.yaml").write_text(catalog_yaml(k))
    path = tmp_path / "dragonfly.yaml"
    path.write_text(f"name: df\nservers: {hosts}\nserver: host1\ncatalog: k{k}.yaml\n"
                    f"fabric:\n  topology: dragonfly\n  switch: k{k}\n")
    return path


def _torus(tmp_path, dims: list[int]) -> str:
    path = tmp_path / "torus.yaml"
    path.write_text(f"name: t\ngpus: {int(np.prod(dims))}\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: {dims}\n")
    return path


DESIGNS = {
    # name: (spec path maker, hand-computed worst cut in Gb/s, or None where only agreement is asserted)
    "fat-tree 2-tier k=8, 32 hosts": (lambda t: fat_tree_spec(t, 8, 32, tiers=2), 16 * 400),
    "fat-tree 3-tier k=4, 16 hosts": (lambda t: fat_tree_spec(t, 4, 16, tiers=3), 8 * 400),
    "fat-tree 2:1 k=12, 48 hosts": (lambda t: fat_tree_spec(t, 12, 48, tiers=2, ratio="2:1"), 12 * 400),
    "rail-optimized SuperPOD 4 SU": (lambda t: SPECS / "b200-superpod-4su.yaml", 204_800),
    "direct torus 4x4x2": (lambda t: _torus(t, [4, 4, 2]), None),
    "switched torus 4x4x4": (lambda t: SPECS / "torus-switched-512.yaml", 2 * 16 * 4 * 400),
    "dragonfly k=8, 4 groups": (lambda t: _dragonfly(t, 8, 32), None),
    "switchless ring of 6": (lambda t: SPECS / "dgx-h100-6node-ring.yaml", None),
}


def _flow_network(plan, graph: nx.MultiGraph, ctx: CheckContext, cut, lost: str | None) -> nx.DiGraph:
    """Nodes are switches (or a direct network's nodes); each link gives capacity both
    ways; the source feeds side A's GPU ports at their switch, side B's drain to the sink."""
    direct = bool(plan.design.get("direct"))
    node_role = plan.design.get("node_role", "chip")

    def is_node(n):
        return graph.nodes[n]["role"] == node_role if direct else graph.nodes[n]["tier"] > 0

    net = nx.DiGraph()
    for u, v, d in graph.edges(data=True):
        if is_node(u) and is_node(v) and lost not in (u, v):
            for x, y in ((u, v), (v, u)):
                before = net.get_edge_data(x, y, {"capacity": 0})["capacity"]
                net.add_edge(x, y, capacity=before + d["speed_gbps"])
    by_cable = {key: d for *_, key, d in graph.edges(keys=True, data=True)}
    ids = cable_ids(plan)
    g = ctx.graph
    for i in range(g.at_switch.size):
        side = SOURCE if cut.side_a[i] else SINK if cut.side_b[i] else None
        if side is None:
            continue
        if direct:  # a node injects up to the sum of its links, read from the networkx graph
            node = plan.devices[int(g.at_device[i])].name
            cap = graph.degree(node, weight="speed_gbps")
        else:  # a GPU port: the cable's upper end is its switch
            d = by_cable[ids[int(g.at_link[i])]]
            node, cap = d["b_device"], d["speed_gbps"]
        if node == lost:
            continue
        x, y = (SOURCE, node) if side == SOURCE else (node, SINK)
        before = net.get_edge_data(x, y, {"capacity": 0})["capacity"]
        net.add_edge(x, y, capacity=before + cap)
    return net


def _networkx_flow(net: nx.DiGraph) -> int:
    if SOURCE not in net or SINK not in net:
        return 0
    return int(nx.maximum_flow_value(net, SOURCE, SINK))


@pytest.mark.parametrize("design", list(DESIGNS))
def test_scipy_max_flow_equals_networkx(tmp_path, design):
    make, expected_worst = DESIGNS[design]
    built = compiler.build(make(tmp_path))
    plan = fabric_plan(built.plan)
    graph = built.to_networkx("compute")
    ctx = CheckContext(plan)
    assert len(ctx.cuts) >= 5
    flows = {cut.name: ctx.cut_gbps(cut) for cut in ctx.cuts}
    assert flows == {cut.name: _networkx_flow(_flow_network(plan, graph, ctx, cut, None)) for cut in ctx.cuts}
    worst = built.check()["figures"]["bisection"]["worst_cut_gbps"]
    assert worst == min(flows.values()) > 0
    if expected_worst is not None:
        assert worst == expected_worst

    # one top-tier switch (a direct network: its first node) lost: the failure analyses' flows
    tiers = ctx.switch_tier
    top = int(np.nonzero(tiers == tiers.max())[0][0])
    keep = np.ones(ctx.graph.n, dtype=bool)
    keep[top] = False
    lost = plan.devices[int(ctx.graph.device_of[top])].name
    for cut in ctx.cuts:
        assert ctx.cut_gbps(cut, keep_switch=keep) == _networkx_flow(_flow_network(plan, graph, ctx, cut, lost)), (cut.name, lost)
