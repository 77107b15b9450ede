"""Pull sheets (floor/<rack>.html): every cable on the sheets of the racks it ends in, this
rack's end first, sorted by U then port; the rack heading on every printed page."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from compiler.pipeline import build_plan, write_outputs

SPECS = Path(__file__).parents[1] / "specs"
CHROMIUM = shutil.which("chromium")


class _Sheet(HTMLParser):
    """The body rows of a pull sheet: per <tr>, per <td>, its text pieces."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: list[list[list[str]]] = []
        self.heading = ""
        self._body = self._cell = self._head = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "tbody":
            self._body = True
        elif tag == "tr" and self._body:
            self.rows.append([])
        elif tag == "td" and self._body:
            self.rows[-1].append([])
            self._cell = True
        elif tag == "tr" and ("class", "rack") in attrs:
            self._head = True

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = False
        elif tag == "tr":
            self._head = False

    def handle_data(self, data):
        if self._cell and data.strip():
            self.rows[-1][-1].append(data.strip())
        elif self._head:
            self.heading += data


@pytest.fixture(scope="module")
def multi_fabric_hall(tmp_path_factory):
    _, plan = build_plan(SPECS / "h100-superpod-1su-multi-fabric-hall.yaml")
    folder = write_outputs(plan, tmp_path_factory.mktemp("out"), only=["floor", "cabling", "labels", "workbook"])
    return plan, folder


def test_every_cable_is_on_the_sheets_of_its_two_racks_this_end_first_sorted_by_u_then_port(multi_fabric_hall):
    plan, folder = multi_fabric_hall
    cables = list(csv.DictReader(io.StringIO((folder / "cabling.csv").read_text())))
    assert any(c["kind"].endswith("management-leaf") for c in cables)  # cords are on the sheets too
    by_id = {c["cable_id"]: c for c in cables}
    port_index = {(d.name, p.name): i for d in plan.devices for i, p in enumerate(plan.layouts[d.layout].ports)}
    seen: Counter[tuple[str, str]] = Counter()
    racks = plan.physical.racks
    for rack in racks:
        sheet = _Sheet((folder / "floor" / f"{rack.name}.html").read_text())
        assert sheet.heading.startswith(rack.name) and f"row {rack.row}" in sheet.heading and "hall DH1" in sheet.heading
        keys = []
        for _, u, here, far, _, ident in sheet.rows:
            cid = ident[0]
            c = by_id[cid]
            seen[(cid, rack.name)] += 1
            # This rack's end first: the A end unless only the B end is here (or both are
            # here and B is lower).
            near = "a" if c["a_rack"] == rack.name else "b"
            if c["a_rack"] == c["b_rack"] and (int(c["b_ru"]), port_index.get((c["b_device"], c["b_port"]), 1 << 30)) \
                    < (int(c["a_ru"]), port_index.get((c["a_device"], c["a_port"]), 1 << 30)):
                near = "b"
            far_end = "b" if near == "a" else "a"
            assert c[f"{near}_rack"] == rack.name and int(u[0]) == int(c[f"{near}_ru"].split(";")[0])
            assert here[0] == c[f"{near}_device"].split(";")[0].replace(";", "+")
            assert far[0] == f"{c[f'{far_end}_rack']} U{c[f'{far_end}_ru'].split(';')[0]}" and far[1] == c[f"{far_end}_device"]
            assert ident[1] == c[f"label_{near}"]
            assert "m" in _[0] or _[0] == "not modelled"
            keys.append((int(u[0]), port_index.get((here[0], here[1].split("+")[0]), 1 << 30)))
        assert keys == sorted(keys), f"{rack.name}: not sorted by U, then port"
    for c in cables:
        want = {c["a_rack"], c["b_rack"]}
        got = {r for (cid, r), n in seen.items() if cid == c["cable_id"]}
        assert got == want and all(seen[(c["cable_id"], r)] == 1 for r in want), c["cable_id"]
    assert sum(seen.values()) == sum(1 + (c["a_rack"] != c["b_rack"]) for c in cables)


def test_index_lists_racks_in_walking_order(multi_fabric_hall):
    plan, folder = multi_fabric_hall
    text = (folder / "floor" / "index.html").read_text()
    order = [r.name for r in sorted(plan.physical.racks, key=lambda r: (r.row_index, r.position))]
    where = [text.index(f'<a href="{name}.html">') for name in order]
    assert where == sorted(where)


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian package chromium not installed (./dev.sh test installs it as root)")
@pytest.mark.parametrize("paper", ["A4", "letter"])
def test_printed_sheet_has_the_rack_heading_and_page_n_of_m_on_every_page(multi_fabric_hall, tmp_path, paper):
    pypdf = pytest.importorskip("pypdf")
    _, folder = multi_fabric_hall
    rack = "DH1.A09"  # the network rack: hundreds of cables, many pages
    page = (folder / "floor" / f"{rack}.html").read_text().replace("@page{", f"@page{{size:{paper} portrait;", 1)
    (tmp_path / "sheet.html").write_text(page)
    pdf = tmp_path / "sheet.pdf"
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'profile'}", "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
                        (tmp_path / "sheet.html").as_uri()], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and pdf.exists(), r.stderr[-2000:]
    pages = pypdf.PdfReader(pdf).pages
    assert len(pages) > 3
    for n, p in enumerate(pages, 1):
        text = p.extract_text()
        assert f"{rack} row A · hall DH1" in text.replace("\n", " ") and f"page {n} of {len(pages)}" in text, (n, text[:300])


class _Labels(HTMLParser):
    """labels.html: per label, its QR path (`d`), the symbol's size in modules and its text pieces."""

    def __init__(self, text: str):
        super().__init__()
        self.labels: list[tuple[str, int, list[str]]] = []
        self._in = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "div" and a.get("class") == "l":
            self.labels.append(("", 0, []))
            self._in = True
        elif tag == "svg" and self._in:
            self.labels[-1] = ("", int(a["viewbox"].split()[2]), self.labels[-1][2])
        elif tag == "path" and self._in:
            self.labels[-1] = (a["d"], self.labels[-1][1], self.labels[-1][2])

    def handle_endtag(self, tag):
        if tag == "div" and self.labels and len(self.labels[-1][2]) >= 4:
            self._in = False

    def handle_data(self, data):
        if self._in and data.strip():
            self.labels[-1][2].append(data.strip())


def _raster(path: str, modules: int, scale: int = 6) -> np.ndarray:
    """Our QR path (horizontal runs, `M x y.5 h w m gap 0 h w ...`) drawn as a greyscale
    image, black on white, with a white margin: what a printer puts on the label."""
    img = np.full((modules, modules), 255, dtype=np.uint8)
    for row in re.findall(r"M[^M]+", path):
        tokens = re.findall(r"([Mmh])(-?[\d.]+)(?:\s(-?[\d.]+))?", row)
        x = y = 0.0
        for op, a, b in tokens:
            if op == "M":
                x, y = float(a), float(b)
            elif op == "m":
                x += float(a)
            else:
                img[int(y), int(x):int(x + float(a))] = 0
                x += float(a)
    return np.pad(np.kron(img, np.ones((scale, scale), dtype=np.uint8)), 4 * scale, constant_values=255)


def test_every_label_has_a_qr_code_that_decodes_to_its_cable_id_and_says_length_and_part(multi_fabric_hall):
    zxingcpp = pytest.importorskip("zxingcpp")
    _, folder = multi_fabric_hall
    cables = {c["cable_id"]: c for c in csv.DictReader(io.StringIO((folder / "cabling.csv").read_text()))}
    labels = _Labels((folder / "labels.html").read_text()).labels
    assert len(labels) == 2 * len(cables)  # both ends of every cable and cord
    decoded = Counter()
    for path, modules, (cid, here, far, fit) in labels:
        assert modules >= 21  # a QR symbol (version 1 or more) and its quiet zone
        found = [r.text for r in zxingcpp.read_barcodes(_raster(path, modules))]
        assert found == [cid], (cid, found)
        decoded[cid] += 1
        c = cables[cid]
        assert {here, far.removeprefix("→ ")} == set(c["label_a"][len(cid) + 1:].split(" / "))
        assert fit == (f"{c['length_m']} m " if c["length_m"] else "not modelled ") + c["part_number"]
    assert set(decoded.values()) == {2} and set(decoded) == set(cables)


def test_labels_csv_carries_length_and_part_and_the_printer_csv_one_plain_row_per_label(multi_fabric_hall):
    _, folder = multi_fabric_hall
    cables = {c["cable_id"]: c for c in csv.DictReader(io.StringIO((folder / "cabling.csv").read_text()))}
    labels = list(csv.DictReader(io.StringIO((folder / "labels.csv").read_text())))
    assert all(r["length_m"] == cables[r["cable_id"]]["length_m"] and r["part"] == cables[r["cable_id"]]["part_number"]
               for r in labels)
    text = (folder / "labels-print.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == ["cable_id", "end", "rack", "here", "far", "length", "part", "qr"]
    assert len(rows) == len(labels) == len(text.splitlines()) - 1  # no line break inside a field
    for r, lab in zip(rows, labels, strict=True):
        c = cables[r["cable_id"]]
        assert (r["cable_id"], r["end"]) == (lab["cable_id"], lab["end"]) and r["qr"] == r["cable_id"]
        assert r["rack"] == c[f"{lab['end'].lower()}_rack"] and lab["label"] == f"{r['cable_id']} {r['here']} / {r['far']}"
        assert all(len(v) < 256 for v in r.values())  # P-touch Template's field limit


def _marked(folder: Path, tmp_path: Path, problem: str) -> Path:
    rows = list(csv.DictReader(io.StringIO((folder / "floor" / "marks.csv").read_text())))
    assert list(rows[0]) == ["cable_id", "a_rack", "a_device", "b_rack", "b_device", "status", "note"]
    for r in rows:
        r["status"], r["note"] = ("problem", "MPO end face dirty") if r["cable_id"] == problem else ("done", "")
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    (tmp_path / "marks.csv").write_text(out.getvalue())
    return tmp_path / "marks.csv"


def test_marks_with_one_problem_cable_come_back_as_exactly_that_missing_cable(multi_fabric_hall, tmp_path):
    from compiler.verify import verify

    plan, folder = multi_fabric_hall
    problem = "dgx-su1-002:6"
    import jsonschema

    from compiler.verify import SCHEMA

    result = verify(plan, [], marks=[_marked(folder, tmp_path, problem)])
    assert not result["ok"] and [(m["kind"], m["cable_id"]) for m in result["mismatches"]] == [("missing", problem)]
    jsonschema.validate(result, json.loads(SCHEMA.read_text()))  # --format json's contract
    assert [i["format"] for i in result["inputs"]] == ["floor-marks"]
    all_done = _marked(folder, tmp_path, "none")
    assert verify(plan, [], marks=[all_done])["ok"]


def test_the_workbook_rack_sheets_saved_as_csv_are_marks_too(multi_fabric_hall, tmp_path):
    from openpyxl import load_workbook

    from compiler.verify import verify

    plan, folder = multi_fabric_hall
    problem = "dgx-su1-003:2"
    wb = load_workbook(folder / "cabling.xlsx", read_only=True)
    paths = []
    for name in wb.sheetnames[1:]:  # every rack sheet, as a spreadsheet program saves it
        rows = [list(r) for r in wb[name].iter_rows(values_only=True)]
        header = rows[0]
        for r in rows[1:]:
            r[header.index("done")] = "problem" if r[header.index("cable_id")] == problem else "x"
        out = io.StringIO()
        csv.writer(out).writerows(rows)
        paths.append(tmp_path / f"{name}.csv")
        paths[-1].write_text(out.getvalue())
    result = verify(plan, [], marks=paths)
    assert [(m["kind"], m["cable_id"]) for m in result["mismatches"]] == [("missing", problem)]


def test_marks_naming_an_unknown_cable_or_an_unknown_mark_are_input_errors(multi_fabric_hall, tmp_path):
    from compiler.diagnostics import SpecInvalid
    from compiler.verify import verify

    plan, _ = multi_fabric_hall
    (tmp_path / "m.csv").write_text("cable_id,status\ndgx-su1-001:1,done\ndgx-su1-01:2,done\ndgx-su1-001:3,maybe\n")
    with pytest.raises(SpecInvalid) as err:
        verify(plan, [], marks=[tmp_path / "m.csv"])
    (bad,) = err.value.diagnostics
    assert bad.code == "MARKS_UNREADABLE" and bad.line == 4 and "maybe" in bad.message
    (tmp_path / "m.csv").write_text("cable_id,status\ndgx-su1-001:1,done\ndgx-su1-001;2,done\n")
    with pytest.raises(SpecInvalid) as err:
        verify(plan, [], marks=[tmp_path / "m.csv"])
    (bad,) = err.value.diagnostics
    assert bad.code == "MARKS_UNKNOWN_CABLE" and bad.line == 3 and "did you mean dgx-su1-001:2?" in bad.hint


def test_cli_verify_marks_on_the_committed_template_exits_1_naming_the_problem_cable(tmp_path):
    import os
    import sys

    root = Path(__file__).parents[1]
    folder = root / "out" / "h100-superpod-1su-multi-fabric-hall"
    marks = _marked(folder, tmp_path, "dgx-su1-004:3")
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "verify", str(folder), "--marks", str(marks), "--format", "json"],
                       capture_output=True, text=True, timeout=300, check=False, cwd=root,
                       env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 1, r.stderr[-2000:]
    result = json.loads(r.stdout)
    assert [(m["kind"], m["cable_id"]) for m in result["mismatches"]] == [("missing", "dgx-su1-004:3")]
    r = subprocess.run([sys.executable, "-m", "compiler.cli", "verify", str(folder)], capture_output=True, text=True,
                       timeout=300, check=False, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert r.returncode == 2 and "no input files" in r.stderr and "Traceback" not in r.stderr


def test_a_management_cord_shows_its_orderable_length_where_the_plan_models_one():
    import math
    from types import SimpleNamespace

    from compiler.render.floor_rows import NO_MEDIUM, NOT_MODELLED, _cord_length

    assert _cord_length(SimpleNamespace(length_m=4.2, order_m=5.0)) == (5.0, "5 m")
    none_reaches = _cord_length(SimpleNamespace(length_m=120.0, order_m=None))
    assert math.isnan(none_reaches[0]) and none_reaches[1] == NO_MEDIUM
    for cord in (SimpleNamespace(length_m=None, order_m=None), SimpleNamespace()):  # no layout; a plan before lengths
        length, text = _cord_length(cord)
        assert math.isnan(length) and text == NOT_MODELLED
