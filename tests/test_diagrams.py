"""Diagrams stay readable at any size and cover every fabric; the report shows every
fabric's bill and overview.

- one screen: every SVG at most 2,000 x 1,400 px, at 16,384 GPUs and 1,536 servers too;
- order: rail leaves left to right in rail order, spines and servers in index order;
- bounded: edges per diagram bounded by the row capacities, whatever the fabric's size;
- complete: every device of a scope is a box or listed in a run's box (<desc>);
- the .dot of each diagram is Graphviz's: it parses and neato keeps the pinned layout;
- report.html's BOM rows are bom.csv's rows, and it draws each fabric's overview.

Modules exercised here: render/diagrams/groups.py, render/diagrams/clos.py,
render/diagrams/circle.py, render/diagrams/drawing.py, render/diagrams/spelled.py."""

from __future__ import annotations

import csv
import io
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from compiler.pipeline import build_plan
from compiler.plan.fabrics import fabric_names, fabric_plan
from compiler.render.diagrams import folder_of, overview, scope_drawings, scopes

from .conftest import SPECS, run_cli, shared_outputs, shared_plan, tree_bytes


SVG = "{http://www.w3.org/2000/svg}"
MAX_W, MAX_H = 2000, 1400
MAX_EDGES = 400  # the row budgets allow 64 + 128 + 128 between four rows, plus a few endpoint lines

# 1,536 DGX H100 on SN5600 at 400G: the size at which diagrams took 2.7 s of a 3.3 s compile
SPEC_1536 = """name: bench-1536
servers: 1536
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: sn5600
  speed_gbps: 400
  tiers: auto
  oversubscription: "1:1"
"""


def _svg_nodes(svg: str) -> list[dict]:
    """Boxes of an SVG diagram in document order: title, members, x, y, width."""
    root = ET.fromstring(svg)
    out = []
    for g in root.iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        rect = g.find(f"{SVG}rect")
        desc = g.find(f"{SVG}desc")
        out.append({"title": g.find(f"{SVG}title").text, "members": desc.text.split() if desc is not None else [],
                    "x": float(rect.get("x")), "y": float(rect.get("y")), "w": float(rect.get("width")),
                    "h": float(rect.get("height")),
                    "text": [t.text for t in g.findall(f"{SVG}text")]})
    return out


def _size(svg: str) -> tuple[float, float]:
    root = ET.fromstring(svg)
    return float(root.get("width")), float(root.get("height"))


def _edges(svg: str) -> int:
    return sum(1 for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == "edge")


def _rows(nodes: list[dict]) -> dict[float, list[dict]]:
    """Boxes by row (same y), each row left to right."""
    rows: dict[float, list[dict]] = {}
    for n in nodes:
        rows.setdefault(n["y"], []).append(n)
    return {y: sorted(r, key=lambda n: n["x"]) for y, r in rows.items()}


@pytest.fixture(scope="module")
def large_plans(tmp_path_factory):
    path = tmp_path_factory.mktemp("spec") / "bench-1536.yaml"
    path.write_text(SPEC_1536)
    return {"16,384 GPUs": build_plan(SPECS / "b200-superpod-64su.yaml")[1], "1,536 servers": build_plan(path)[1]}


@pytest.mark.parametrize("size", ["16,384 GPUs", "1,536 servers"])
def test_large_fabric_diagrams_fit_one_screen_in_index_and_rail_order(large_plans, size):
    plan = large_plans[size]
    devices = {d.name: d for d in plan.devices}
    index = {d.name: i for i, d in enumerate(plan.devices)}
    drawings = [("fabric", overview(plan))] + list(scope_drawings(plan))
    assert len(drawings) == 1 + len(scopes(plan)) > 20
    for name, d in drawings:
        svg = d.svg()
        w, h = _size(svg)
        assert w <= MAX_W and h <= MAX_H, f"{name}: {w} x {h} px"
        assert _edges(svg) <= MAX_EDGES, name
        for row in _rows(_svg_nodes(svg)).values():
            first = [(n["members"] or [n["title"]])[0] for n in row]
            if name == "fabric" and first[0] not in devices:  # the units: su1, su5, ... in order
                numbers = [int(re.match(r"su(\d+)", f).group(1)) for f in first]
                assert numbers == sorted(numbers), numbers
                continue
            roles = {devices[f].role for f in first}
            assert len(roles) == 1, roles
            if roles == {"leaf"}:  # rail order
                rails = [devices[f].rail for f in first]
                assert rails == sorted(rails) and rails == list(range(1, 9)), rails
            else:  # spines, servers: index (plan) order
                assert [index[f] for f in first] == sorted(index[f] for f in first)
    # the overview: one box per pod's SUs at three tiers (16 of them at 64 SUs), not a 4,374 px strip
    ov = _svg_nodes(overview(plan).svg())
    assert 4 <= len(ov) <= 48


def test_three_tier_overview_is_pods_and_core_groups_with_hand_counted_bundles(large_plans):
    """B200 SuperPOD, 64 SU: 16 pods of 4 SUs (32 leaves x 32 uplinks = 1,024 links to the
    pod's 32 spines each), 256 cores in 8 boxes of 32: 16 + 16 x 8 lines."""
    svg = overview(large_plans["16,384 GPUs"]).svg()
    rows = list(_rows(_svg_nodes(svg)).values())
    assert [len(r) for r in rows] == [8, 16, 16]  # cores, pod spines, units
    assert [n["text"][0] for n in rows[1][:2]] == ["pod1", "pod2"] and rows[2][0]["text"][:3] == ["su1–su4", "128 servers", "32 leaves"]
    assert rows[0][0]["members"][0] == "core-001" and len(rows[0][0]["members"]) == 32
    assert _edges(svg) == 16 + 16 * 8
    assert "each line = 1,024 links" in svg and "16,384 leaf-spine" in svg


def test_su_diagram_reads_like_the_reference_architecture(tmp_path):
    """B200 SuperPOD 4 SU (32 leaves, 16 spines, 2 links per leaf-spine pair): su1 is 32
    servers in 8 runs of 4, leaves r1..r8, spines 01..16; 8 x 8 + 8 x 16 lines, each
    captioned with its count, every line of a leaf in that rail's colour."""
    from compiler.render.diagrams.style import rail_colour

    _, plan = build_plan(SPECS / "b200-superpod-4su.yaml")
    d = dict(scope_drawings(plan))["su1"]
    svg = d.svg()
    spines, leaves, servers = _rows(_svg_nodes(svg)).values()
    assert [n["title"] for n in spines] == [f"spine-{k:02d}" for k in range(1, 17)]
    assert [n["title"] for n in leaves] == [f"su1-leaf-r{k}" for k in range(1, 9)]
    assert [n["text"] for n in servers[:2]] == [["001–004", "4 servers"], ["005–008", "4 servers"]] and len(servers) == 8
    assert len(d.edges) == 8 * 8 + 8 * 16 and _edges(svg) == len(d.edges)
    assert "each line = 2 links" in svg and "each line = 4 links" in svg
    for e in d.edges:
        leaf = e.a if "leaf" in e.a else e.b
        assert e.colour == rail_colour(int(leaf[-1])), e


def test_every_device_of_a_scope_is_drawn_as_a_box_or_in_a_run(large_plans):
    plan = large_plans["16,384 GPUs"]
    groups = scopes(plan)
    for name, d in list(scope_drawings(plan))[:3]:
        shown = set()
        for n in _svg_nodes(d.svg()):
            shown.update(n["members"] or [n["title"]])
        want = {plan.devices[i].name for i in groups[name]}
        assert want <= shown, sorted(want - shown)[:5]
        for n in _svg_nodes(d.svg()):  # a run says how many it holds, and its first and last
            if n["members"]:
                role = plan.devices[plan.device_index(n["members"][0])].role
                assert f"{len(n['members'])} {'leaves' if role == 'leaf' else role + 's'}" in n["text"], n
                assert n["title"] == f"{n['members'][0]}..{n['members'][-1]}"


SMALL_KINDS = ["h100-superpod-1su-multi-fabric", "b300-xdr-1su", "gb200-nvl72-su", "lab-3tier-frr",
               "roce-2spine-4leaf-frr", "rail-only-h100-64", "dgx-h100-6node-ring", "dgx-h100-4node-mesh",
               "torus-switched-512", "tpu-v4-pod", "tpu-v5p-twisted-8x8x16", "dragonfly-2k", "dragonfly-plus-2k",
               "alibaba-hpn-pod", "seed-8k-fat-tree", "meta-llama3-24k"]


@pytest.fixture(scope="module")
def compiled_kinds():
    return {name: (shared_plan(name), shared_outputs(name, ["diagrams", "bom", "report"])) for name in SMALL_KINDS}


@pytest.mark.parametrize("name", SMALL_KINDS)
def test_every_kind_of_diagram_fits_one_screen_and_names_every_device(compiled_kinds, name):
    plan, target = compiled_kinds[name]
    for fabric in fabric_names(plan):
        view = fabric_plan(plan, fabric)
        folder = target / folder_of(fabric)
        svgs = sorted(folder.glob("*.svg"))
        assert {p.stem for p in svgs} == {"fabric", *scopes(view)}
        assert {p.stem for p in folder.glob("*.dot")} == {p.stem for p in svgs}
        groups = scopes(view)
        for path in svgs:
            svg = path.read_text()
            w, h = _size(svg)
            assert w <= MAX_W and h <= MAX_H, f"{path.name}: {w} x {h}"
            assert _edges(svg) <= MAX_EDGES
            nodes = _svg_nodes(svg)
            assert nodes and len({n["title"] for n in nodes}) == len(nodes)  # ids unique
            if path.stem in groups:
                shown = {m for n in nodes for m in (n["members"] or [n["title"]])}
                want = {view.devices[i].name for i in groups[path.stem]}
                assert want <= shown, sorted(want - shown)[:5]


@pytest.mark.parametrize("dims", [[16], [12, 12], [4, 4, 4], [8, 8, 16]])
def test_torus_and_mesh_overviews_of_any_dimension_fit_one_screen(tmp_path, dims):
    path = tmp_path / "torus.yaml"
    n = 1
    for k in dims:
        n *= k
    path.write_text(f"name: t\ngpus: {8 * n}\nserver: dgx-h100\nfabric: {{topology: torus, switch: qm9700, dims: {dims}}}\n")
    _, plan = build_plan(path)
    svg = overview(plan).svg()
    w, h = _size(svg)
    assert w <= MAX_W and h <= MAX_H, (dims, w, h)
    nodes = _svg_nodes(svg)
    assert sum(int(n["text"][1].split()[0]) for n in nodes) == n  # every router in one block


def test_torus_overview_is_a_grid_of_blocks_with_every_node_counted(compiled_kinds):
    plan, target = compiled_kinds["tpu-v4-pod"]
    nodes = _svg_nodes((target / "diagrams/fabric.svg").read_text())
    assert len(nodes) == 64  # 16 x 16 x 16 chips in 4 x 4 x 4 blocks
    text = (target / "diagrams/fabric.svg").read_text()
    assert text.count(">64 chips<") == 64 and text.count(">16 hosts<") == 64  # 4,096 chips, 1,024 hosts
    plan, target = compiled_kinds["torus-switched-512"]
    nodes = _svg_nodes((target / "diagrams/fabric.svg").read_text())
    assert sorted(n["title"] for n in nodes) == sorted(f"block-{k:03d}" for k in range(1, 65))


def test_dragonfly_overview_has_one_box_per_group_and_a_chord_per_pair(compiled_kinds):
    plan, target = compiled_kinds["dragonfly-2k"]
    svg = (target / "diagrams/fabric.svg").read_text()
    groups = max(d.pod or 0 for d in plan.devices)
    assert len(_svg_nodes(svg)) == groups == 4 and _edges(svg) == groups * (groups - 1) // 2
    assert "each line = 170 links" in svg  # global_links_per_group_pair


def test_extra_fabrics_get_diagrams_of_their_own(compiled_kinds):
    plan, target = compiled_kinds["h100-superpod-1su-multi-fabric"]
    for fabric, leaf in (("storage", "storage-su1-leaf-r1"), ("oob", "oob-leaf-001")):
        svg = (target / "diagrams" / fabric / "fabric.svg").read_text()
        titles = [n["title"] for n in _svg_nodes(svg)]
        assert leaf in titles and f"{fabric} fabric" in svg
        servers = {m for n in _svg_nodes(svg) for m in n["members"] or [n["title"]] if m.startswith("dgx-")}
        assert len(servers) == 31
    compute = (target / "diagrams/fabric.svg").read_text()
    assert "storage" not in compute


@pytest.mark.parametrize("name", ["h100-superpod-1su-multi-fabric", "gb200-nvl72-su", "dragonfly-2k", "tpu-v4-pod"])
def test_dot_files_parse_in_graphviz_and_neato_keeps_the_layout(compiled_kinds, name):
    import pygraphviz

    _, target = compiled_kinds[name]
    for dot in sorted(target.glob("diagrams/**/*.dot"))[:3]:
        svg_nodes = _svg_nodes(dot.with_suffix(".svg").read_text())
        g = pygraphviz.AGraph(string=dot.read_text())  # Graphviz's own parser
        assert g.number_of_nodes() == len(svg_nodes) and g.number_of_edges() == _edges(dot.with_suffix(".svg").read_text())
        g.layout(prog="neato")  # pinned nodes: neato only routes the edges
        placed = {str(n): tuple(float(v) for v in n.attr["pos"].split(",")) for n in g.nodes()}
        ref = svg_nodes[0]
        rx, ry = placed[ref["title"]]
        for n in svg_nodes:  # where the SVG has its centre (Graphviz's y grows upward), up to a translation
            gx, gy = placed[n["title"]]
            assert abs((gx - rx) - (n["x"] + n["w"] / 2 - ref["x"] - ref["w"] / 2)) < 1, n["title"]
            assert abs((gy - ry) + (n["y"] + n["h"] / 2 - ref["y"] - ref["h"] / 2)) < 1, n["title"]


def test_diagrams_and_report_identical_across_hash_seeds(tmp_path):
    specs = [str(SPECS / f"{n}.yaml") for n in ("h100-superpod-1su-multi-fabric", "dragonfly-2k", "tpu-v5p-twisted-8x8x16")]
    trees = []
    for seed in ("0", "4242"):
        r = run_cli("compile", *specs, "-o", str(tmp_path / seed), "--only", "diagrams,report", env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        trees.append(tree_bytes(tmp_path / seed))
    assert trees[0] == trees[1] and sum(1 for k in trees[0] if k.endswith(".svg")) >= 8


# --- report.html ---------------------------------------------------------------------

class _Tables(HTMLParser):
    """Every <table id=...> of a page as rows of cell texts."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.h3: list[str] = []
        self._table = None
        self._cell = None
        self._in_h3 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self._table = self.tables.setdefault(a.get("id", f"table{len(self.tables)}"), [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("td", "th") and self._table is not None:
            self._cell = ""
        elif tag == "h3":
            self._in_h3 = True
            self.h3.append("")

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        elif tag in ("td", "th") and self._cell is not None:
            self._table[-1].append(self._cell)
            self._cell = None
        elif tag == "h3":
            self._in_h3 = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        if self._in_h3:
            self.h3[-1] += data


def _page(target: Path) -> _Tables:
    p = _Tables()
    p.feed((target / "report.html").read_text())
    return p


@pytest.mark.parametrize("name", ["h100-superpod-1su-multi-fabric", "gb200-nvl72-su", "tpu-v4-pod"])
def test_report_bom_is_bom_csv_row_for_row(compiled_kinds, name):
    _, target = compiled_kinds[name]
    page = _page(target)
    csv_rows = list(csv.reader(io.StringIO((target / "bom.csv").read_text())))
    assert page.tables["bom"] == csv_rows
    if name.endswith("multi-fabric"):
        assert {row[-1] for row in csv_rows[1:]} == {"compute", "storage", "oob"}


def test_report_names_every_fabric_and_draws_its_overview(compiled_kinds):
    plan, target = compiled_kinds["h100-superpod-1su-multi-fabric"]
    page = _page(target)
    assert page.h3 == [f"{f} fabric" for f in ("compute", "storage", "oob")]
    html = (target / "report.html").read_text()
    for fabric in ("storage", "oob"):
        assert f"{plan.name} · {fabric} fabric</title>" in html  # the overview's own SVG, inline
        assert f"diagrams/{fabric}/fabric.svg" in html
    fabrics = page.tables["fabrics"]
    assert [r[0] for r in fabrics[1:]] == ["compute", "storage", "oob"]
    assert fabrics[2][5] == "62 storage:server-leaf" and fabrics[3][5] == "31 oob:server-leaf"


def test_layered_layout_spreads_ends_in_order_and_arcs_links_within_a_row():
    """The layout engine alone: a lower box's lines leave it left to right in the order of
    their upper ends (no crossing at the box), a link inside one row is an arc above it,
    and a gap of equal bundles gets one caption instead of labels."""
    import numpy as np

    from compiler.render.diagrams.layered import Bundles, Cell, Row, layered

    top = Row("spines", "", [Cell(f"s{k}", (f"s{k}",), (f"s{k}",), "#fff") for k in range(3)])
    bottom = Row("leaves", "", [Cell("l0", ("l0",), ("l0",), "#fff")])
    b = Bundles(np.array([3, 3, 3, 0]), np.array([2, 0, 1, 2]), np.array([2, 2, 2, 5]), np.array([800, 800, 800, 2000]),
                ["#000"] * 4)
    d = layered("t", "t", "", [top, bottom], b, gap_notes={0: "6 leaf-spine"})
    ups = sorted((e for e in d.edges if e.a == "l0"), key=lambda e: e.x1)
    assert [e.b for e in ups] == ["s0", "s1", "s2"] and all(e.label == "" for e in ups)
    arc = next(e for e in d.edges if e.a == "s0")
    assert arc.bend > 0 and arc.label == "x5"
    svg = d.svg()
    assert "each line = 2 links" in svg and "<path d=" in svg
    ET.fromstring(svg)


def test_report_counts_cables_not_board_traces(compiled_kinds):
    """A TPU v4 pod has 12,288 chip links, 4,096 of them board traces inside a host: the
    report's cables are the 8,192 ICI cables summary.json counts (it said 12,288)."""
    _, target = compiled_kinds["tpu-v4-pod"]
    html = (target / "report.html").read_text()
    totals = dict(r for r in _page(target).tables["totals"] if len(r) == 2)
    assert totals["cables"] == "8,192" and totals["links that are not cables"] == "4,096"
    assert "4,096 GPUs, 8,192 cables" in html
    _, target = compiled_kinds["h100-superpod-1su-multi-fabric"]
    assert "248 GPUs, 601 cables in 3 fabrics" in (target / "report.html").read_text()  # 508 + 62 + 31


def test_edges_filled_per_row_keep_escaping_arcs_and_labels():
    """Edges are filled per row from macros (templates.rows) with escaped columns: an arc and a
    straight line, a title and label that need SVG escaping, ends that need DOT quoting, an
    unlabelled edge, spelled as the per-edge Jinja loop spelled them."""
    from compiler.render.diagrams.drawing import Box, Drawing, Edge

    d = Drawing("n", "t", 300, 200)
    d.boxes = [Box('a"1', 10, 10, 50, 20, ("a",), "#fff", "#000", "t"), Box("b\\2", 100, 10, 50, 20, ("b",), "#fff", "#000", "t")]
    d.edges = [Edge('a"1', "b\\2", 2, 1.5, 2.5, 3.5, 4.5, "#f00", 1.5, 'x<y> & "z"', "x8 <&>", 5.0, 6.0, 0.4, 7.0, 8.0),
               Edge('a"1', "b\\2", 1, 1.0, 2.0, 3.0, 4.0, "#0f0", 2.0, "plain")]
    svg, dot = d.svg(), d.dot()
    assert ('<g class="edge"><title>x&lt;y&gt; &amp; &#34;z&#34;</title><path d="M1.5,2.5 Q7.0,8.0 3.5,4.5" '
            'stroke="#f00" stroke-width="1.5"/></g>\n<g class="edge"><title>plain</title><line x1="1.0" y1="2.0" '
            'x2="3.0" y2="4.0" stroke="#0f0" stroke-width="2.0"/></g>\n</g>') in svg
    assert 'paint-order="stroke">\n<text x="5.0" y="6.0" fill="#f00">x8 &lt;&amp;&gt;</text>\n</g>' in svg
    assert dot.endswith('  "a\\"1" -- "b\\\\2" [color="#f00", penwidth=1.5, label="x8 <&>"];\n'
                        '  "a\\"1" -- "b\\\\2" [color="#0f0", penwidth=2.0];\n}\n')


def test_boxes_filled_per_part_keep_escaping_fonts_runs_and_bold_first_lines():
    """SVG boxes are filled per part (open, a line each, close) and DOT nodes per row from
    macros with texts escaped in one pass: a run's <desc>, a row's own font size, a bold
    first line only, texts needing SVG escaping and DOT quoting (a newline in a label)."""
    from compiler.render.diagrams.drawing import Box, Drawing

    d = Drawing("n", "t", 300, 200)
    d.boxes = [Box('a"<1>', 10, 10, 50, 20, ("a & b", 'c "d"'), "#fff", "#000", "t", members='x<y> & "z"', bold=True,
                   font=9.5),
               Box("b\\2", 100, 10, 50, 20, ("b",), "#eee", "#111", "t")]
    svg, dot = d.svg(), d.dot()
    assert ('<g class="nodes" text-anchor="middle">\n'
            '<g class="node" font-size="9.5"><title>a&#34;&lt;1&gt;</title><desc>x&lt;y&gt; &amp; &#34;z&#34;</desc>'
            '<rect x="10" y="10" width="50" height="20" rx="3" fill="#fff" stroke="#000"/>\n'
            '<text x="35.0" y="17.5" font-weight="bold">a &amp; b</text>\n<text x="35.0" y="30.5">c &#34;d&#34;</text>\n'
            '</g>\n<g class="node"><title>b\\2</title><rect x="100" y="10" width="50" height="20" rx="3" fill="#eee" '
            'stroke="#111"/>\n<text x="125.0" y="24.0">b</text>\n</g>\n</g>\n</svg>\n') in svg
    assert ('  "a\\"<1>" [label="a & b\\nc \\"d\\"", pos="35.0,180.0!", width=0.694, height=0.278, fillcolor="#fff", '
            'color="#000"];\n  "b\\\\2" [label="b", pos="125.0,180.0!", width=0.694, height=0.278, fillcolor="#eee", '
            'color="#111"];\n') in dot


@pytest.mark.parametrize("texts", [[], [""], ["plain", 'a"b\\c', "<&>'\n"], ["nul\x00inside", "x<y"]])
def test_texts_escaped_in_one_pass_as_one_by_one(texts):
    """escaped() and quoted() spell each text as markupsafe's escape and q() do, also where a
    text holds the separator of their one pass (then they go one by one)."""
    from markupsafe import escape

    from compiler.render.diagrams.drawing import escaped, q, quoted, quoted_bodies

    assert escaped(texts) == [str(escape(t)) for t in texts]
    assert quoted(texts) == [q(t) for t in texts]
    assert quoted_bodies(texts) == [q(t)[1:-1] for t in texts]


def _renamed(d, rename):
    """A copy of drawing d with every text passed through rename: the same shape, other names."""
    import copy

    out = copy.copy(d)
    out.name, out.title = rename(d.name), rename(d.title)
    out.boxes = []
    for b in d.boxes:
        c = copy.copy(b)
        c.id, c.lines, c.title = rename(b.id), tuple(map(rename, b.lines)), rename(b.title)
        c.members = rename(b.members) if b.members else ""
        out.boxes.append(c)
    out.edges = [e._replace(a=rename(e.a), b=rename(e.b), title=rename(e.title), label=rename(e.label) if e.label else "")
                 for e in d.edges]
    out.texts = [copy.copy(t) for t in d.texts]
    for t in out.texts:
        t.text = rename(t.text)
    return out


def test_scopes_of_one_shape_spelled_once_give_the_bytes_of_each_drawn_alone():
    """spelled.svg_and_dot fills a shape's format with each scope's texts: every scope of a
    4-SU fabric (one shape) comes out byte for byte as its own svg() and dot(), the format is
    made once per shape, and texts that need SVG escaping and DOT quoting (a renamed copy: & < " \\ and
    a %) are escaped in the places they take."""
    from compiler.render.diagrams import spelled

    plan = shared_plan("h100-superpod-4su")
    drawings = [d for _, d in scope_drawings(plan)]
    assert len(drawings) == 4
    spelled._SPELLED.clear()
    for d in drawings:
        assert spelled.svg_and_dot(d) == (d.svg(), d.dot())
    shapes = list(spelled._SPELLED.values())
    assert None not in shapes and len(shapes) == 2  # su1 to su3 share one format; su4 (other boxes and edges) its own
    odd = _renamed(drawings[1], lambda t: t.replace("su", 'a&b<c>"d\\e%s%'))
    assert odd.boxes[0].id != drawings[1].boxes[0].id or odd.title != drawings[1].title
    spelled._SPELLED.clear()
    spelled.svg_and_dot(drawings[0])
    assert spelled.svg_and_dot(odd) == (odd.svg(), odd.dot())
    assert '&amp;b&lt;c&gt;&#34;d\\e%s%' in odd.svg() and 'a&b<c>\\"d\\\\e%s%' in odd.dot()
    # a newline: DOT labels spell it \n, DOT names keep it; such a drawing is spelled the ordinary way
    broken = _renamed(drawings[1], lambda t: t.replace("su", "s\nu"))
    assert spelled.svg_and_dot(broken) == (broken.svg(), broken.dot())


def test_a_shape_whose_format_misspells_its_first_drawing_is_never_filled(monkeypatch):
    """The first drawing of a shape is spelled both ways and compared: where the format gives
    other bytes (here: a filter the format does not know of, simulated), the shape is
    remembered as not fillable and every drawing of it is spelled the ordinary way."""
    from compiler.render.diagrams import spelled

    plan = shared_plan("h100-superpod-4su")
    drawings = [d for _, d in scope_drawings(plan)]
    spelled._SPELLED.clear()
    monkeypatch.setattr(spelled, "_filled", lambda fmt, pool: "not the drawing")
    for d in drawings:
        assert spelled.svg_and_dot(d) == (d.svg(), d.dot())
    assert list(spelled._SPELLED.values()) == [None, None]
