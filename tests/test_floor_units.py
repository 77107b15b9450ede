"""Small pieces of the floor hand-off tested directly: axis ticks of the report's plots
(compiler/render/axis.py), the QR codes on labels (compiler/render/qr.py) and the
technician's marks read back (compiler/verify/marks.py)."""

from __future__ import annotations

import pytest

from compiler.render.axis import nice_ticks, tick_text
from compiler.render.qr import qr_matrix, svg_path
from compiler.verify.marks import read_marks


@pytest.mark.parametrize("lo, hi, ticks, step", [
    (0, 409.6, [0, 100, 200, 300, 400], 100),  # the 4-SU B200 fabric's server tier in Tb/s
    (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0], 0.2),
    (0, 37, [0, 10, 20, 30], 10),
    (5, 5, [5, 6, 7, 8, 9, 10], 1),  # an empty span widens to show its value
])
def test_ticks_are_round_and_inside_the_span(lo, hi, ticks, step):
    assert nice_ticks(lo, hi) == (ticks, step)
    assert tick_text(1234.0, 100) == "1,234" and tick_text(0.4, 0.2) == "0.4"


def test_a_qr_symbol_is_square_and_its_path_draws_each_dark_run_once():
    m = qr_matrix("su1-leaf-r1:33")
    assert m.shape[0] == m.shape[1] and m.shape[0] in (21, 25, 29)  # QR versions 1-3
    # the three finder patterns: dark 7 x 7 corners
    assert m[0, :7].all() and m[0, -7:].all() and m[-1, :7].all()
    path = svg_path(m)
    runs = sum(int(((row[1:] & ~row[:-1]).sum()) + row[0]) for row in m)
    assert path.count("h") == runs and path.startswith("M2 2.5h7")
    assert qr_matrix("su1-leaf-r1:33").tolist() == m.tolist()  # deterministic


def test_marks_read_done_and_problem_and_refuse_a_file_without_the_columns(tmp_path):
    good = tmp_path / "marks.csv"
    good.write_text("cable_id,status,note\nC1,done,\nC2,problem,dirty MPO\nC3,,\n")
    marks, files = read_marks([good])
    assert {cid: mark for cid, (mark, _) in marks.items()} == {"C1": "done", "C2": "problem"}
    assert marks["C2"][1].endswith("marks.csv:3") and files == [str(good)]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,state\nC1,done\n")
    with pytest.raises(Exception, match="header has id, state"):
        read_marks([bad])
