"""The Python API (compiler.build ...) and graph.graphml: the facade returns what the
CLI writes, byte for byte; its networkx graph and the GraphML file hold the plan's
devices and links; networkx algorithms on them agree with the plan's own figures."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from collections import Counter

import networkx as nx
import pytest
import yaml

import compiler
from compiler.plan.fabrics import fabric_plan

from .conftest import ROOT, SPECS, run_cli, tree_bytes

GRAPHML_NS = "{http://graphml.graphdrawing.org/xmlns}"


@pytest.fixture(scope="module")
def superpod():
    """DGX B200 SuperPOD, 4 SUs (README): 32 leaves, 16 spines, 1,024 + 1,024 cables."""
    return compiler.build(SPECS / "b200-superpod-4su.yaml")


def test_exports():
    assert set(compiler.__all__) == {"build", "CompiledPlan", "SpecInvalid", "Diagnostic", "__version__"}
    assert compiler.SpecInvalid is __import__("compiler.diagnostics").diagnostics.SpecInvalid


def test_import_is_light():
    """`import compiler` (every CLI start) loads none of numpy, networkx, scipy, pydantic."""
    import subprocess
    import sys

    code = "import sys, compiler; print(sorted(m for m in ('numpy', 'networkx', 'scipy', 'pydantic') if m in sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=SPECS.parent)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_summary_and_check_equal_the_files(superpod, tmp_path):
    target = superpod.write(tmp_path)
    assert target == tmp_path / "b200-superpod-4su"
    summary = superpod.summary()
    assert summary == json.loads((target / "summary.json").read_text())
    assert (summary["switches"], summary["cables"]) == ({"leaf": 32, "spine": 16}, {"server-leaf": 1024, "leaf-spine": 1024})
    report = superpod.check()
    assert report == json.loads((target / "report" / "checks.json").read_text())
    assert report["ok"] is True
    assert report["figures"]["bisection"]["worst_cut_gbps"] == 204_800


def test_results_are_copies(superpod, tmp_path):
    """Editing what summary()/check() return cannot change what a later write() puts in files."""
    superpod.check()["figures"]["bisection"]["worst_cut_gbps"] = 1
    superpod.summary()["switches"]["leaf"] = 1
    assert superpod.check()["figures"]["bisection"]["worst_cut_gbps"] == 204_800
    target = superpod.write(tmp_path, only=["summary"])
    assert json.loads((target / "summary.json").read_text())["switches"]["leaf"] == 32


@pytest.mark.parametrize("spec", ["roce-2spine-4leaf-frr", "h100-superpod-1su-multi-fabric"])
def test_write_is_byte_identical_to_the_cli(tmp_path, spec):
    r = run_cli("compile", str(SPECS / f"{spec}.yaml"), "-o", str(tmp_path / "cli"))
    assert r.returncode == 0, r.stderr
    compiler.build(SPECS / f"{spec}.yaml").write(tmp_path / "api")
    cli, api = tree_bytes(tmp_path / "cli" / spec), tree_bytes(tmp_path / "api" / spec)
    assert "graph.graphml" in api
    assert sorted(api) == sorted(cli)
    assert all(api[rel] == cli[rel] for rel in cli), [rel for rel in cli if api[rel] != cli[rel]]


def test_write_only(superpod, tmp_path):
    target = superpod.write(tmp_path, only=["cabling", "graphml"])
    # manifest.json records which output wrote which file (render/writer.py)
    assert sorted(tree_bytes(target)) == ["cabling.csv", "graph.graphml", "manifest.json"]
    with pytest.raises(ValueError, match="unknown output.*cabeling.*known: cabling"):
        superpod.write(tmp_path, only=["cabeling"])


def test_path_text_and_mapping_give_the_same_plan(tmp_path):
    path = SPECS / "roce-2spine-4leaf-frr.yaml"
    text = path.read_text()
    by_path, by_str_path = compiler.build(path), compiler.build(str(path))
    by_text, by_mapping = compiler.build(text), compiler.build(yaml.safe_load(text))
    expected = by_path.summary()
    assert expected["switches"] == {"leaf": 4, "spine": 2}
    for other in (by_str_path, by_text, by_mapping):
        assert other.summary() == expected
    by_text.write(tmp_path / "text")
    by_path.write(tmp_path / "path")
    assert tree_bytes(tmp_path / "text") == tree_bytes(tmp_path / "path")


def test_spec_errors_raise_spec_invalid_with_diagnostics(tmp_path):
    text = "name: x\nservers: 4\nserver: dgx-h100\nfabric:\n  topology: fat-tree\n  switch: qm9700x\n"
    with pytest.raises(compiler.SpecInvalid) as exc:
        compiler.build(text)
    (d,) = exc.value.diagnostics
    assert (d.code, d.file, d.line, d.path) == ("SPEC_UNKNOWN_SWITCH", "<spec>", 6, "fabric.switch")
    assert "did you mean qm9700" in d.hint

    with pytest.raises(compiler.SpecInvalid) as exc:  # a mapping has field paths, no lines
        compiler.build({"name": "x", "servers": 4, "server": "dgx-h100", "fabric": {"topology": "fat-tree", "switch": "qm9700", "tiers": 7}})
    (d,) = exc.value.diagnostics
    assert (d.file, d.line, d.path) == ("<dict>", 0, "fabric.tiers")
    assert d.format().startswith("<dict>: error: fabric.tiers: ")

    with pytest.raises(compiler.SpecInvalid) as exc:
        compiler.build({"name": "x", "servers": object()})
    assert exc.value.diagnostics[0].code == "SPEC_NOT_PLAIN"

    with pytest.raises(compiler.SpecInvalid) as exc:
        compiler.build(tmp_path / "missing.yaml")
    assert exc.value.diagnostics[0].code == "SPEC_UNREADABLE"

    with pytest.raises(TypeError, match="path, YAML text or a mapping"):
        compiler.build(42)


def _cabling_rows(target) -> dict[str, dict]:
    return {row["cable_id"]: row for row in csv.DictReader(io.StringIO((target / "cabling.csv").read_text()))}


def test_to_networkx_holds_every_device_and_link(superpod, tmp_path):
    plan = superpod.plan
    g = superpod.to_networkx()
    assert g.is_multigraph() and not g.is_directed()
    assert (g.number_of_nodes(), g.number_of_edges()) == (len(plan.devices), len(plan.links)) == (176, 2048)
    assert Counter(role for _, role in g.nodes(data="role")) == {"server": 128, "leaf": 32, "spine": 16}
    assert Counter(kind for *_, kind in g.edges(data="kind")) == {"server-leaf": 1024, "leaf-spine": 1024}
    assert g.nodes["su2-leaf-r3"] == {"role": "leaf", "model": "qm9700", "tier": 1, "index": 3, "su": 2, "rail": 3,
                                      "fabric": "compute"}
    assert "su" not in g.nodes["spine-01"]  # attributes that do not apply are absent, not None
    # every edge agrees with its cabling.csv row (cable id, both ends, ports, speed)
    rows = _cabling_rows(superpod.write(tmp_path, only=["cabling"]))
    assert len(rows) == g.number_of_edges()
    for u, v, key, d in g.edges(keys=True, data=True):
        row = rows[key]
        assert {u, v} == {row["a_device"], row["b_device"]}
        assert (d["cable"], d["kind"], d["a_device"], d["a_port"], d["b_device"], d["b_port"], str(d["speed_gbps"])) == (
            key, row["kind"], row["a_device"], row["a_port"], row["b_device"], row["b_port"], row["speed_gbps"])


def test_to_networkx_layout_attributes(tmp_path):
    hall = compiler.build(SPECS / "b200-superpod-4su-hall.yaml")
    g = hall.to_networkx()
    rows = _cabling_rows(hall.write(tmp_path, only=["cabling"]))
    by_link = {link: row for row in rows.values() for link in row["links"].split(";")}  # a twin-port cable: two links
    for *_, key, d in g.edges(keys=True, data=True):
        row = by_link[key]
        assert f"{d['length_m']:g}" == row["length_m"]
        if row["links"] == key:  # a cable of several links is as long as its longest
            assert f"{d['modelled_m']:.2f}" == row["modelled_m"]
        assert d["modelled_m"] <= float(row["modelled_m"]) + 0.005
    phys = hall.plan.physical
    for i, (name, d) in enumerate(g.nodes(data=True)):
        assert (d["rack"], d["u"]) == (phys.racks[phys.dev_rack[i]].name, phys.dev_u[i])


def test_to_networkx_one_fabric():
    multi = compiler.build(SPECS / "h100-superpod-1su-multi-fabric.yaml")
    whole, storage = multi.to_networkx(), multi.to_networkx("storage")
    view = fabric_plan(multi.plan, "storage")
    assert (storage.number_of_nodes(), storage.number_of_edges()) == (len(view.devices), len(view.links))
    assert {f for *_, f in storage.edges(data="fabric")} == {"storage"}
    assert whole.number_of_edges() == len(multi.plan.links) > storage.number_of_edges()
    assert Counter(f for *_, f in whole.edges(data="fabric")) == Counter(
        {name: sum(rec["cables"].values()) for name, rec in multi.summary()["fabrics"].items()})
    with pytest.raises(ValueError, match="no fabric .inband.*compute, storage, oob"):
        multi.to_networkx("inband")


def _switch_hops(g: nx.MultiGraph) -> int:
    """Most switches on a shortest path between two GPU servers, by networkx BFS over the
    switch graph between every pair of switches that GPU servers hang off."""
    switches = g.subgraph(n for n, tier in g.nodes(data="tier") if tier > 0)
    edge = {v for u, v in g.edges() if g.nodes[u]["role"] == "server"} | {
        u for u, v in g.edges() if g.nodes[v]["role"] == "server"}
    return max(d for s in edge for t, d in nx.single_source_shortest_path_length(switches, s).items() if t in edge) + 1


@pytest.mark.parametrize("spec,hops,first_to_last", [
    ("b200-superpod-4su", 3, 3),  # SU 1 to SU 4: leaf, spine, leaf
    ("lab-3tier-frr", 5, 5),  # pod 1 to the last pod: leaf, spine, core, spine, leaf
    ("h100-superpod-1su", 3, 1),  # one SU: both servers on every rail leaf; 3 is GPU rail 1 to rail 2
])
def test_networkx_hops_equal_the_plans(spec, hops, first_to_last):
    built = compiler.build(SPECS / f"{spec}.yaml")
    g = built.to_networkx("compute")
    figures = built.check()["figures"]["hops"]
    assert figures["method"].startswith("BFS from all")  # every edge switch: the figure is exact
    assert _switch_hops(g) == figures["max"] == hops
    servers = [n for n, role in g.nodes(data="role") if role == "server"]
    assert nx.shortest_path_length(g, servers[0], servers[-1]) - 1 == first_to_last


def _read_graphml(path) -> nx.MultiGraph:
    return nx.read_graphml(path, edge_key_type=str, force_multigraph=True)


def _edges(g: nx.MultiGraph) -> dict:
    return {key: (frozenset((u, v)), d) for u, v, key, d in g.edges(keys=True, data=True)}


@pytest.mark.parametrize("spec", ["b200-superpod-4su-hall", "h100-superpod-1su-multi-fabric", "dgx-h100-6node-ring"])
def test_graphml_reads_back_as_the_plan(tmp_path, spec):
    built = compiler.build(SPECS / f"{spec}.yaml")
    target = built.write(tmp_path, only=["graphml"])
    back = _read_graphml(target / "graph.graphml")
    g = built.to_networkx()
    assert back.graph["name"] == g.graph["name"] == spec
    assert (back.number_of_nodes(), back.number_of_edges()) == (len(built.plan.devices), len(built.plan.links))
    assert dict(back.nodes(data=True)) == dict(g.nodes(data=True))
    assert list(back.nodes) == [d.name for d in built.plan.devices]  # plan order
    assert _edges(back) == _edges(g)


def test_graphml_structure(superpod, tmp_path):
    """What the GraphML schema requires of the file: keys before the graph, every data
    element naming a declared key of its domain, unique ids, edges between declared nodes."""
    root = ET.parse(superpod.write(tmp_path, only=["graphml"]) / "graph.graphml").getroot()
    assert root.tag == f"{GRAPHML_NS}graphml"
    children = [c.tag.removeprefix(GRAPHML_NS) for c in root]
    assert children == ["key"] * (len(children) - 1) + ["graph"]
    keys = {k.get("id"): k.get("for") for k in root.findall(f"{GRAPHML_NS}key")}
    assert all(k.get("attr.type") in ("int", "double", "string") for k in root.findall(f"{GRAPHML_NS}key"))
    graph = root.find(f"{GRAPHML_NS}graph")
    assert graph.get("edgedefault") == "undirected"
    nodes = [n.get("id") for n in graph.findall(f"{GRAPHML_NS}node")]
    edges = graph.findall(f"{GRAPHML_NS}edge")
    assert len(set(nodes)) == len(nodes) == 176
    assert len({e.get("id") for e in edges}) == len(edges) == 2048
    assert all(e.get("source") in set(nodes) and e.get("target") in set(nodes) for e in edges)
    for element, domain in [(graph, "graph"), *((n, "node") for n in graph.findall(f"{GRAPHML_NS}node")),
                            *((e, "edge") for e in edges)]:
        for data in element.findall(f"{GRAPHML_NS}data"):
            assert keys[data.get("key")] == domain


def test_graphml_escapes_values(superpod, tmp_path):
    """Names cannot hold XML's special characters today (spec and catalog patterns); were
    one to, the file must still parse and hold the very name."""
    from compiler.render import graphml
    from compiler.render.writer import OutputDir

    plan = compiler.build(SPECS / "dgx-h100-4node-mesh.yaml").plan
    odd = 'a<b>&"c\'--d'
    plan.devices[0].name = odd
    with OutputDir(tmp_path / "x") as out:
        graphml.render(plan, None, out)  # graph.graphml reads no check results
    back = _read_graphml(tmp_path / "x" / "graph.graphml")
    assert odd in back.nodes
    assert sum(odd in (d["a_device"], d["b_device"]) for *_, d in back.edges(data=True)) == back.degree(odd) > 0


def test_graphml_bytes_are_deterministic(superpod, tmp_path):
    a = superpod.write(tmp_path / "a", only=["graphml"]) / "graph.graphml"
    b = compiler.build(SPECS / "b200-superpod-4su.yaml").write(tmp_path / "b", only=["graphml"]) / "graph.graphml"
    assert a.read_bytes() == b.read_bytes()


def _leaf_pair_paths(switches: nx.Graph) -> int:
    """Min over leaf pairs of the max-flow over `links` (edge-disjoint paths), by networkx:
    for any fixed leaf t0 the minimum over pairs is the minimum over v of the t0-v flow."""
    leaves = sorted(n for n, tier in switches.nodes(data="tier") if tier == 1)
    return min(nx.maximum_flow_value(switches, leaves[0], v, capacity="links") for v in leaves[1:])


@pytest.mark.parametrize("spec", ["b200-superpod-4su", "h100-superpod-1su", "dragonfly-2k"])
def test_capacity_graph_flows_are_the_tools_figures(spec):
    """networkx on the capacity graph gives the checks' leaf-pair edge-disjoint paths (32,
    32, 46 today); on the MultiGraph, edge_connectivity collapses parallel cables (16, 4, 34)."""
    built = compiler.build(SPECS / f"{spec}.yaml")
    c = built.capacity_graph()
    switches = c.subgraph(n for n, tier in c.nodes(data="tier") if tier > 0)
    figures = built.check()["figures"]["redundancy"]
    assert figures["leaf_pair_method"].startswith("exact")
    assert _leaf_pair_paths(switches) == figures["leaf_pair_edge_disjoint_paths_min"]
    # every cable is in exactly one edge: links and Gb/s add up to the plan's
    assert sum(n for *_, n in c.edges(data="links")) == len(built.plan.links)
    assert sum(g for *_, g in c.edges(data="capacity")) == int(built.plan.links.speed_gbps.sum())
    assert c.number_of_nodes() == len(built.plan.devices) and not c.is_multigraph()


def test_readme_networkx_example_gives_the_tools_figures(superpod):
    """The Python guide's networkx lines (docs/how-to/python.md), run as doctests on the plan they name: 32 edge-disjoint
    paths (the checks' figure) and 12,800 Gb/s between the first and the last leaf."""
    import doctest

    readme = (ROOT / "docs" / "how-to" / "python.md").read_text()
    block = readme.split(">>> import compiler, networkx as nx", 1)[1].split("```", 1)[0]
    start = block.index(">>> c = plan.capacity_graph()")
    end = block.index(">>> compiler.build(")
    test = doctest.DocTestParser().get_doctest(block[start:end], {"plan": superpod, "nx": nx}, "python.md", "docs/how-to/python.md", 0)
    assert len(test.examples) >= 3 and "32\n" in [e.want for e in test.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert superpod.check()["figures"]["redundancy"]["leaf_pair_edge_disjoint_paths_min"] == 32


def test_capacity_graph_one_fabric():
    multi = compiler.build(SPECS / "h100-superpod-1su-multi-fabric.yaml")
    storage = multi.capacity_graph("storage")
    assert sum(n for *_, n in storage.edges(data="links")) == len(fabric_plan(multi.plan, "storage").links)
    with pytest.raises(ValueError, match="no fabric .inband"):
        multi.capacity_graph("inband")
