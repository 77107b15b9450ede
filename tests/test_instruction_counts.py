"""benchmarks/instructions.py: the instructions callgrind counts land on the stage that
executed them (an off-by-one between callgrind's parts and the stage names would put one
stage's work on the next, and the growth table would read right and mean nothing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchmarks import instructions

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import json, sys
    from benchmarks import instructions
    from compiler.progress import stage
    from compiler.render.parallel import in_shares, share_workers

    marks = instructions.install()
    with stage("load"):
        sum(range(1_000))
    with stage("expand"):
        with stage("inner"):  # nested: part of expand, no part of its own
            sum(range(100_000))
    sum(range(1_000_000))  # between stages: the harness's glue, its own row
    with stage("check small"):
        sum(range(10_000))
    with stage("render large"):
        sum(range(1_000_000))
    with stage("render shares"):  # the switch configs' way of splitting work: in the process here
        in_shares(lambda k, n: sum(range(k, 1_000_000, n)), share_workers(10_000, 1))
    json.dump(marks.labels, open(sys.argv[1], "w"))
""")


@pytest.mark.skipif(not instructions.available(), reason="valgrind is not installed")
def test_each_stage_gets_its_own_instructions(tmp_path):
    script, labels, out_file = tmp_path / "run.py", tmp_path / "labels.json", tmp_path / "cg.out"
    script.write_text(SCRIPT)
    subprocess.run([*instructions.command(out_file), sys.executable, str(script), str(labels)], cwd=ROOT, check=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT), **instructions.environment(out_file)}, timeout=300)
    counts = instructions.totals(out_file, json.loads(labels.read_text()))
    assert list(counts) == [instructions.START_UP, "spec -> plan", instructions.BETWEEN_STAGES, "check small", "large",
                            "shares"]
    # the same million steps split in shares: counted as the one stage's (a forked share's
    # count would go to a file of its own, and the stage would show the fork alone)
    assert 0.7 < counts["shares"] / counts["large"] < 1.3
    # the glue's million steps are between stages; the interpreter's start and imports before them
    assert 0.8 < counts[instructions.BETWEEN_STAGES] / counts["large"] < 1.3
    assert counts[instructions.START_UP] > counts["large"]
    # 100x the steps: the large stage's count is near 100x the small one's (each also pays
    # the ~0.9 million instructions of asking callgrind for its part)
    assert 30 < counts["large"] / counts["check small"] < 110
    # load and expand (with its nested stage) are spec -> plan: about a tenth of the large
    # stage (101,000 steps), not more than it (the glue's million steps counted in)
    assert 0.05 < counts["spec -> plan"] / counts["large"] < 0.2


def test_more_parts_than_names_is_an_error(tmp_path):
    for i in (1, 2):
        (tmp_path / f"cg.out.{i}").write_text("events: Ir\ntotals: 5\n")
    with pytest.raises(RuntimeError, match="more parts"):
        instructions.totals(tmp_path / "cg.out", ["check a"])


def test_a_part_without_totals_is_an_error(tmp_path):
    (tmp_path / "cg.out.1").write_text("events: Ir\n")
    with pytest.raises(RuntimeError, match="no totals"):
        instructions.totals(tmp_path / "cg.out", ["check a"])
