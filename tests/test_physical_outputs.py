"""The physical outputs checked by what consumes them: the workbook re-read by openpyxl,
every diagram parsed as SVG (tests/test_diagrams.py renders their DOT in Graphviz), rack elevations parsed, the
report loaded in headless Chromium, NetBox CSVs against NetBox's import rules, PTM/Air
DOT through Graphviz's parser, containerlab YAML against its published schema's rules.

Rack sheets read render/rack_rows.py."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import yaml

from compiler.plan.fabrics import management_cords
from compiler.plan.cables import physical_cables
from compiler.pipeline import build_plan, write_outputs
from compiler.render.diagrams import scopes

from .conftest import SPECS, plan_from_text, shared_outputs, shared_plan


HALL_SPECS = ["b200-superpod-4su-hall", "h100-roce-2su-hall"]
EXAMPLE_SPECS = HALL_SPECS + ["b200-superpod-4su", "h100-superpod-1su", "b300-xdr-1su"]
# Rack outputs (workbook, cabling, labels, elevations) cover every fabric of a plan.
RACK_SPECS = HALL_SPECS + ["h100-superpod-1su-multi-fabric-hall"]
SVG = "{http://www.w3.org/2000/svg}"
# 1,600 DGX H100 on SN5600 (400G) in a hall: 41,984 cables, 83,968 labels (builds in well under a second).
BIG_HALL = """name: labels-big
servers: 1600
server: dgx-h100
fabric: {topology: rail-optimized, switch: sn5600, speed_gbps: 400, oversubscription: "1:1", scalable_unit: 64}
layout: {hall: DH9, rows: 16, racks_per_row: 30, rack: {height_u: 48, power_kw: 90}}
"""


@pytest.fixture(scope="module")
def compiled():
    return {name: (shared_plan(name), shared_outputs(name)) for name in EXAMPLE_SPECS + RACK_SPECS[len(HALL_SPECS):]}


def _rows(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


# --- workbook and labels -------------------------------------------------------------

@pytest.mark.parametrize("name", RACK_SPECS)
def test_workbook_has_a_sheet_per_rack_sorted_by_u_with_frozen_header_and_filter(compiled, name):
    from openpyxl import load_workbook

    plan, target = compiled[name]
    wb = load_workbook(target / "cabling.xlsx")
    racks = [r.name for r in plan.physical.racks]
    assert wb.sheetnames == ["Summary"] + racks
    assert wb["Summary"]["B1"].value == plan.name
    statement = [row[1] for row in wb["Summary"].iter_rows(values_only=True) if row and row[0] == "length model"]
    assert statement and "slack" in statement[0]
    seen = set()
    for rack in racks:
        ws = wb[rack]
        assert ws.freeze_panes == "A2" and ws.auto_filter.ref.startswith("A1:")
        assert ws.page_setup.orientation == "landscape" and ws.print_title_rows in ("1:1", "$1:$1")
        header = [c.value for c in ws[1]]
        assert header == ["done", "u", "device", "port", "panel", "transceiver", "far_rack", "far_u", "far_device",
                          "far_port", "length_m", "part_number", "cable_id", "label", "media"]
        assert ws.oddHeader.left.text.startswith(f"&B{rack}") and "&N" in ws.oddHeader.right.text  # rack, page n of m
        rows = list(ws.iter_rows(min_row=2, values_only=True))
        here = [r[1] for r in rows]
        assert here == sorted(here), f"{rack} not sorted by U"
        assert all(r[13].startswith(f"{r[12]} {rack}-") for r in rows)  # this rack's end first
        assert all(isinstance(r[10], (int, float)) and r[10] > 0 or r[10] == "not modelled" for r in rows)
        seen.update(r[12] for r in rows)
        width = ws.column_dimensions["M"].width  # the cable id column holds the longest id
        assert width >= max(len(r[12]) for r in rows) if rows else True
    assert len(seen) == len(physical_cables(plan)) + len(management_cords(plan))


@pytest.mark.parametrize("name", RACK_SPECS)
def test_cabling_csv_and_labels_carry_rack_u_length_and_both_ends(compiled, name):
    plan, target = compiled[name]
    rows = _rows(target / "cabling.csv")
    cords = len(management_cords(plan))  # switch management cords, listed after the plan's cables
    rows, mgmt = rows[: len(rows) - cords], rows[len(rows) - cords:]
    assert all(r["kind"].endswith(":management-leaf") and r["media"] == "CAT6" for r in mgmt)
    cables = len(physical_cables(plan))  # one row per physical cable, a twin-port copper cable is one
    assert len(rows) == cables and sum(len(r["links"].split(";")) for r in rows) == len(plan.links)
    for r in rows[:50] + rows[-50:]:
        assert r["a_rack"] and r["b_rack"] and int(r["a_ru"]) >= 1 and float(r["length_m"]) >= float(r["modelled_m"])
        assert r["label_a"].startswith(r["cable_id"] + " " + r["a_rack"]) and r["label_b"].startswith(r["cable_id"] + " " + r["b_rack"])
        assert r["part_number"] and "xx" not in r["part_number"]
    labels = _rows(target / "labels.csv")
    assert len(labels) == 2 * (cables + cords)
    assert [x["end"] for x in labels[:2]] == ["A", "B"]
    page = (target / "labels.html").read_text()
    assert page.count('class="l"') == 2 * (cables + cords)


class _LabelSheet(HTMLParser):
    """Labels (`<div class="l"><b>id</b>rest</div>` -> "id rest") and rack headings of a sheet."""

    def __init__(self, text: str):
        super().__init__()
        self.labels, self.headings, self._in = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "div" and ("class", "l") in attrs:
            self.labels.append([])
            self._in = "l"
        elif tag == "h2":
            self.headings.append("")
            self._in = "h2"

    def handle_endtag(self, tag):
        if tag in ("div", "h2"):
            self._in = None

    def handle_data(self, data):
        if self._in == "l":
            self.labels[-1].append(data)
        elif self._in == "h2":
            self.headings[-1] += data

    def texts(self) -> list[str]:
        """Each label as labels.csv spells it: `<id> <this end> / <far end>`."""
        return [f"{p[0]} {p[1]} / {p[2].removeprefix('→ ')}" for p in self.labels]


def _paged_sheets(folder: Path) -> tuple[list[str], list[_LabelSheet]]:
    index = (folder / "labels.html").read_text()
    links = re.findall(r'<a href="([^"]+)">', index)
    assert links == [f"labels/labels-{n:04d}.html" for n in range(1, len(links) + 1)]
    assert sorted(str(p.relative_to(folder)) for p in (folder / "labels").iterdir()) == links
    return links, [_LabelSheet((folder / link).read_text()) for link in links]


def test_labels_html_pages_every_label_beyond_50000(tmp_path):
    """84k labels (above one sheet's 50,000): every label on exactly one page, each page
    within the bound, racks whole, labels.html their index."""
    from compiler.render.labels import PAGE_LABELS

    plan = plan_from_text(BIG_HALL)
    assert 2 * len(plan.links) == 83_968 > PAGE_LABELS
    folder = write_outputs(plan, tmp_path, ["labels"])
    want = sorted(r["label"] for r in _rows(folder / "labels.csv"))
    links, sheets = _paged_sheets(folder)
    assert len(links) == 2
    assert all(len(s.texts()) <= PAGE_LABELS for s in sheets)
    assert sorted(t for s in sheets for t in s.texts()) == want
    assert all(" of " not in h for s in sheets for h in s.headings), "no rack is split: each fits a page"
    racks = [h.split(":")[0] for s in sheets for h in s.headings]
    assert len(racks) == len(set(racks)) == len(plan.physical.racks)
    total = 2 * len(physical_cables(plan))  # twin-port copper: one pair per cable
    assert len(want) == total and f"{total:,} labels on 2 pages" in (folder / "labels.html").read_text()


def test_labels_pages_split_a_rack_larger_than_a_page(compiled, tmp_path, monkeypatch):
    from compiler.render import labels

    plan, _ = compiled["h100-roce-2su-hall"]
    monkeypatch.setattr(labels, "PAGE_LABELS", 100)
    folder = write_outputs(plan, tmp_path, ["labels"])
    want = sorted(r["label"] for r in _rows(folder / "labels.csv"))
    _, sheets = _paged_sheets(folder)
    assert all(len(s.texts()) <= 100 for s in sheets)
    assert sorted(t for s in sheets for t in s.texts()) == want
    per_rack: dict[str, list[str]] = {}
    for s in sheets:
        for h in s.headings:
            per_rack.setdefault(h.split(":")[0], []).append(h)
    split = {rack: hs for rack, hs in per_rack.items() if len(hs) > 1}
    assert split, "the leaf racks hold more than 100 labels"
    for rack, hs in split.items():  # "DH2.A01: 100 of 512 cables": the parts add up to the rack
        parts = [re.match(r".*: (\d+) of (\d+) cables", h).groups() for h in hs]
        assert sum(int(a) for a, _ in parts) == int(parts[0][1])
    assert all(len(hs) == 1 and " of " not in hs[0] for rack, hs in per_rack.items() if rack not in split)


# --- diagrams ------------------------------------------------------------------------

@pytest.mark.parametrize("name", EXAMPLE_SPECS)
def test_every_diagram_parses_and_shows_every_device_of_its_scope(compiled, name):
    """Each diagram's SVG parses, and every device of its scope is a box of its own or
    listed in a run's box (<desc>); the overview has a box per SU/pod/run of leaves.
    tests/test_diagrams.py holds the layout to one screen and checks the DOT in Graphviz."""
    plan, target = compiled[name]
    diagrams = target / "diagrams"
    svgs = sorted(diagrams.glob("*.svg"))
    assert sorted(p.stem for p in svgs) == sorted(p.stem for p in diagrams.glob("*.dot"))
    groups = scopes(plan)
    assert {p.stem for p in svgs} == {"fabric", *groups}
    for svg in svgs:
        root = ET.fromstring(svg.read_bytes())  # well-formed SVG or this raises
        nodes = [g for g in root.iter(f"{SVG}g") if g.get("class") == "node"]
        titles = {g.find(f"{SVG}title").text for g in nodes}
        members = {m for g in nodes if g.find(f"{SVG}desc") is not None for m in g.find(f"{SVG}desc").text.split()}
        if svg.stem == "fabric":
            assert len(titles) >= 2 and any(t.startswith(("su", "leaves", "pod")) for t in titles)
            edges = [t.text for g in root.iter(f"{SVG}g") if g.get("class") == "edge" for t in g.findall(f"{SVG}title")]
            assert edges
        else:
            want = {plan.devices[i].name for i in groups[svg.stem]}
            assert want <= titles | members, sorted(want - titles - members)[:5]


@pytest.mark.parametrize("name", RACK_SPECS)
def test_rack_elevations_parse_and_show_every_device_in_the_rack(compiled, name):
    plan, target = compiled[name]
    phys = plan.physical
    for r, rack in enumerate(phys.racks):
        root = ET.fromstring((target / "racks" / f"{rack.name}.svg").read_bytes())
        titles = {t.text for t in root.iter(f"{SVG}title")}
        want = {plan.devices[i].name for i in np.nonzero(phys.dev_rack == r)[0].tolist()}
        assert want and want <= titles


# --- report in a real browser ----------------------------------------------------------

CHROMIUM = shutil.which("chromium")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian package chromium not installed (./dev.sh test installs it as root)")
@pytest.mark.parametrize("name", ["b200-superpod-4su-hall", "h100-superpod-1su", "h100-superpod-1su-multi-fabric"])
def test_report_loads_in_headless_chromium_and_shows_name_and_totals(compiled, name, tmp_path):
    if name not in compiled:  # a spec beyond the module's examples: compile it here
        compiled[name] = (shared_plan(name), shared_outputs(name, ["report", "summary"]))
    plan, target = compiled[name]
    page = (target / "report.html").read_text()
    assert "src=" not in page and "href=" not in page  # self-contained
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", "--dump-dom", (target / "report.html").as_uri()],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert 'data-loaded="ok"' in dom, "the page's load handler did not run"
    assert not re.search(r"Uncaught|CONSOLE.*(error|Error)", r.stderr), r.stderr[-2000:]
    assert re.search(r'<pre id="load-errors" hidden=""></pre>', dom), "script errors recorded on the page"
    assert f'<h1 id="design-name">{plan.name}</h1>' in dom
    cables = sum(n for f in json.loads((target / "summary.json").read_text()).get("fabrics", {"": {"cables": json.loads(
        (target / "summary.json").read_text())["cables"]}}).values() for n in f["cables"].values())
    assert f"{plan.design['gpus']:,} GPUs, {cables:,} cables" in dom
    fabrics = len(plan.design.get("fabrics") or [0])
    assert int(re.search(r'data-svgs="(\d+)"', dom).group(1)) >= fabrics + 2  # a diagram per fabric + plots as SVG


# NetBox: tests/test_netbox.py (every fabric, imported into a model of NetBox's bulk import)


# --- PTM / Air / containerlab (Ethernet designs) ------------------------------------------

def test_ptm_and_air_dot_parse_in_graphviz_and_cover_every_switch_link(compiled, tmp_path):
    import pygraphviz

    # Air boots the design's NOS, so the Cumulus design (Spectrum-X) has an Air file; PTM's
    # expected cabling is written for every Ethernet design. Labs per NOS: tests/test_labs.py.
    _, cumulus = build_plan(SPECS / "spectrum-x-h100-2su.yaml")
    cases = {"ptm/topology.dot": compiled["h100-roce-2su-hall"],
             "air/topology.dot": (cumulus, write_outputs(cumulus, tmp_path, ["interop"]))}
    for rel, (plan, target) in cases.items():
        switch_links = int(sum(1 for a, b in zip(plan.links.a_dev.tolist(), plan.links.b_dev.tolist())
                               if plan.devices[a].tier >= 1 and plan.devices[b].tier >= 1))
        g = pygraphviz.AGraph(string=(target / rel).read_text())  # Graphviz's own parser (cgraph)
        assert not g.is_directed() and g.number_of_edges() == switch_links
    plan, target = cases["air/topology.dot"]
    air = pygraphviz.AGraph(string=(target / "air/topology.dot").read_text())
    switches = {d.name for d in plan.devices if d.tier >= 1}
    assert set(air.nodes()) == switches
    assert all(air.get_node(n).attr["function"] in ("leaf", "spine") and air.get_node(n).attr["os"] for n in switches)
    # ports of a switch are used once: PTM matches each against LLDP
    plan, target = compiled["h100-roce-2su-hall"]
    switch_links = int(sum(1 for a, b in zip(plan.links.a_dev.tolist(), plan.links.b_dev.tolist())
                           if plan.devices[a].tier >= 1 and plan.devices[b].tier >= 1))
    ptm = (target / "ptm/topology.dot").read_text()
    ends = re.findall(r'"([^"]+)":"([^"]+)"', ptm)
    assert len(ends) == 2 * switch_links == len(set(ends))
    assert not (compiled["b200-superpod-4su-hall"][1] / "ptm").exists()  # InfiniBand: no PTM/Air/containerlab
    # no NOS named: no lab could boot the design
    assert not (target / "containerlab").exists() and not (target / "air").exists()
