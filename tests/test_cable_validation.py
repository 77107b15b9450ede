"""cable-validation/: NVIDIA UFM Cable Validation Tool input (P2P file, HCA mapping),
as its documentation defines them (render/cable_validation.py says which pages). The tool
itself is closed; the file is read back with openpyxl and cross-checked against the plan's
other outputs (the ibnetdiscover topology, the switch configs' interface names)."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from openpyxl import load_workbook

from compiler.twin.infiniband import parse_ibnetdiscover

from .conftest import outputs_of, shared_plan, tree_bytes

HEADER = ("A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port")


def _rows(folder):
    wb = load_workbook(folder / "cable-validation" / "p2p.xlsx", read_only=True)
    assert wb.sheetnames == ["P2P"]
    rows = list(wb["P2P"].iter_rows(values_only=True))
    assert rows[0] == HEADER
    return rows[1:]


def test_infiniband_p2p_ports_are_the_ib_port_numbers_ibnetdiscover_prints(tmp_path):
    plan = shared_plan("h100-superpod-1su")
    folder = outputs_of(plan, tmp_path, ["cable-validation", "infiniband"])
    rows = _rows(folder)
    assert len(rows) == len(plan.links) == 508
    assert rows[0] == ("dgx-su1-001", "Host", "1", "su1-leaf-r1", "Switch", "1")
    # every switch-switch row is a link of the expected ibnetdiscover topology, by node description and IB port
    topo = (folder / "infiniband" / "topology.ibnetdiscover").read_text()
    guid_of = {desc: node for node, desc in re.findall(r'^Switch\s+\d+\s+"([^"]+)"\s+#\s+"([^"]+)"', topo, re.M)}
    links = parse_ibnetdiscover(topo)["links"]
    switch_rows = [r for r in rows if r[1] == r[4] == "Switch"]
    assert len(switch_rows) == 256
    for a, _, ap, z, _, zp in switch_rows:
        assert links[(guid_of[a], int(ap))] == (guid_of[z], int(zp))
    # host port N is the N-th compute port; hca_mapping says which mlx5 device that is (DGX H100 user guide table)
    mapping = (folder / "cable-validation" / "hca_mapping.csv").read_text().splitlines()
    assert mapping == ["port,hca-name", "1,mlx5_0", "2,mlx5_3", "3,mlx5_4", "4,mlx5_5", "5,mlx5_6", "6,mlx5_9",
                       "7,mlx5_10", "8,mlx5_11"]
    assert sorted({r[2] for r in rows if r[0].startswith("dgx-")}) == [str(i) for i in range(1, 9)]


def test_ethernet_p2p_ports_are_the_nos_interface_names(tmp_path):
    plan = shared_plan("roce-2spine-4leaf-sonic")
    folder = outputs_of(plan, tmp_path, ["cable-validation", "configs"])
    rows = _rows(folder)
    assert len(rows) == 512
    config = (folder / "configs" / "leaf-001" / "config_db.json").read_text()
    for a, at, ap, z, zt, zp in rows:
        if z == "leaf-001":
            assert at == "Host" and zt == "Switch" and f'"{zp}"' in config
    assert rows[-1] == ("leaf-004", "Switch", "Ethernet508", "spine-02", "Switch", "Ethernet508")
    # hgx-h100 has no RDMA names in the catalog: no mapping file, and the README says the default applies
    assert not (folder / "cable-validation" / "hca_mapping.csv").exists()
    assert "mapped by the tool's default" in (folder / "cable-validation" / "README.md").read_text()


def test_not_written_where_the_cables_do_not_fit_one_excel_sheet(tmp_path, monkeypatch):
    """An Excel sheet holds 1,048,576 rows: a fabric of more cables (524,288 GPUs on three
    tiers has 1.57 million) gets the README saying why, not a failed compile. The limit is
    lowered to this fabric's 512 cables to show it on a small plan."""
    import compiler.render.cable_validation as cv

    assert cv.EXCEL_MAX_ROWS == 1_048_576
    plan = shared_plan("roce-2spine-4leaf-sonic")
    monkeypatch.setattr(cv, "EXCEL_MAX_ROWS", 512)  # the header and 511 cables
    folder = outputs_of(plan, tmp_path / "over", ["cable-validation"]) / "cable-validation"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md"]
    assert "512 cables do not fit one Excel sheet (511 rows below the header" in (folder / "README.md").read_text()
    monkeypatch.setattr(cv, "EXCEL_MAX_ROWS", 513)  # exactly fits
    assert len(_rows(outputs_of(plan, tmp_path / "fits", ["cable-validation"]))) == 512


def test_p2p_is_byte_identical_across_compiles(tmp_path):
    plan = shared_plan("h100-superpod-1su")
    one = tree_bytes(outputs_of(plan, tmp_path / "1", ["cable-validation"]))
    two = tree_bytes(outputs_of(plan, tmp_path / "2", ["cable-validation"]))
    assert one == two and "cable-validation/p2p.xlsx" in one


def test_not_written_where_ib_port_numbering_is_unknown(tmp_path):
    plan = shared_plan("b300-xdr-1su")
    folder = outputs_of(plan, tmp_path, ["cable-validation"]) / "cable-validation"
    assert sorted(p.name for p in folder.iterdir()) == ["README.md"]
    assert "port numbering is not in the catalog" in (folder / "README.md").read_text()


def test_p2p_with_no_cables_still_has_its_header():
    from io import BytesIO

    from compiler.render.xlsx import table_xlsx

    wb = load_workbook(BytesIO(table_xlsx("P2P", list(HEADER), [np.zeros(0, dtype=object)] * len(HEADER))), read_only=True)
    assert list(wb["P2P"].iter_rows(values_only=True))[0] == HEADER


def test_p2p_zip_is_sound_and_dated_at_the_fixed_time(tmp_path):
    import zipfile

    plan = shared_plan("h100-superpod-1su")
    path = outputs_of(plan, tmp_path, ["cable-validation"]) / "cable-validation" / "p2p.xlsx"
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None  # every entry's CRC holds after the core.xml rewrite
        assert {i.date_time for i in z.infolist()} == {(2000, 1, 1, 0, 0, 0)}
        core = z.read("docProps/core.xml").decode()
    assert core.count("2000-01-01T00:00:00Z") == 2
    # openpyxl's full (not read-only) reader too: cells, not just a row stream
    ws = load_workbook(path)["P2P"]
    assert ws.max_row == len(plan.links) + 1 and ws["A2"].value == "dgx-su1-001"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is not installed")
def test_spreadsheets_open_in_libreoffice(tmp_path):
    """LibreOffice converts p2p.xlsx and cabling.xlsx to CSV with the same cells openpyxl reads."""
    import csv

    plan = shared_plan("h100-roce-2su-hall")
    folder = outputs_of(plan, tmp_path / "out", ["cable-validation", "workbook"])
    want = [tuple(r) for r in [HEADER] + _rows(folder)]
    r = subprocess.run(["soffice", f"-env:UserInstallation=file://{tmp_path}/lo", "--headless", "--convert-to", "csv",
                        "--outdir", str(tmp_path / "csv"), str(folder / "cable-validation" / "p2p.xlsx"),
                        str(folder / "cabling.xlsx")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = [tuple(row) for row in csv.reader((tmp_path / "csv" / "p2p.csv").open(newline=""))]
    assert got == want and len(got) == len(plan.links) + 1
    summary = list(csv.reader((tmp_path / "csv" / "cabling.csv").open(newline="")))  # the first sheet
    assert summary[0][:2] == ["design", plan.name]
