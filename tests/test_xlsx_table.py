"""compiler/render/xlsx.py table_xlsx: a table of plain text has its sheet joined from the
columns, and every entry of the package reads exactly as rust_xlsxwriter writes the same
rows (only the sheet's compression differs); text the writer escapes or marks goes
through the writer itself. openpyxl reads both back as the rows."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from openpyxl import load_workbook

from compiler.render.xlsx import _fixed_core_dates, table_xlsx

COLUMNS = ["A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port"]


def _rust(rows: list[tuple]) -> bytes:
    from rustpy_xlsxwriter import FastExcel

    buf = io.BytesIO()
    FastExcel(buf).sheet("P2P", [dict(zip(COLUMNS, r, strict=True)) for r in rows]).save()
    return _fixed_core_dates(buf.getvalue())


def _entries(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {name: z.read(name) for name in z.namelist()}


PLAIN = [(f"dgx-{i:03d}", "Host", str(i % 8 + 1), f"leaf-{i % 3}", "Switch", f"swp{i}s0") for i in range(70_000)]
ODD = [("a&b", "Host", " 1", "x<y", "Switch", ""), ("tab\there", "Host", "2", "ü", "Switch", 'q"')]


@pytest.mark.parametrize("rows", [PLAIN, ODD, PLAIN[:1] + ODD], ids=["plain", "escaped", "mixed"])
def test_the_package_is_what_rust_xlsxwriter_writes(rows):
    values = [np.array(col, dtype=object) for col in zip(*rows, strict=True)]
    ours = table_xlsx("P2P", COLUMNS, values)
    assert _entries(ours) == _entries(_rust(rows))
    assert table_xlsx("P2P", COLUMNS, values) == ours  # byte-identical run to run
    sheet = load_workbook(io.BytesIO(ours), read_only=True)["P2P"]
    read = [tuple("" if v is None else v for v in r) for r in sheet.iter_rows(values_only=True)]
    assert read[0] == tuple(COLUMNS)
    assert read[1:] == [tuple(r) for r in rows]
