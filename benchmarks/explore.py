"""Explore benchmark: what one candidate costs (plan + the scan's checks, its worst single
failure included, no rendering) at 1,024 and 16,384 GPUs, and what a design space of
about a thousand candidates costs end to end, as candidates per second. Run by hand:
python benchmarks/explore.py [--one-only] [--gpus 1024,16384]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ONE = """name: bench-one
gpus: {gpus}
server: dgx-b200
fabric: {{topology: rail-optimized, switch: qm9700, oversubscription: "1:1", scalable_unit: 32}}
"""

# 2 servers x 3 topologies x 2 switches x 2 tiers x 4 ratios x 7 SU sizes x 3 media = 2,016
# combinations; keys a topology does not take collapse duplicates (dragonfly: no tiers,
# ratio or SU), so about a thousand distinct candidates remain.
SPACE = """name: bench-space
gpus: {gpus}
server: [dgx-h100, dgx-b200]
fabric:
  topology: [rail-optimized, fat-tree, dragonfly]
  switch: [qm9700, qm9790]
  tiers: [2, 3]
  oversubscription: ["1:1", "3:2", "2:1", "3:1"]
  scalable_unit: [8, 12, 16, 20, 24, 28, 32]
  media: [mmf, smf, {{server-leaf: mmf, leaf-spine: smf}}]
requirements: {{survive: {{spine: 1}}}}
"""


def one_candidate(gpus: int, runs: int = 7) -> None:
    from compiler.explore.choices import candidates
    from compiler.explore.evaluate import evaluate
    from compiler.yaml12 import load_yaml_text

    work = Path(tempfile.mkdtemp()) / "one.yaml"
    text = ONE.format(gpus=gpus)
    work.write_text(text)
    cand = candidates(load_yaml_text(text, str(work)), 1)[0]
    evaluate(cand, work)  # warm imports and catalog
    times, cpu = [], []
    for _ in range(runs):
        c0 = time.process_time()
        ev = evaluate(cand, work)
        cpu.append(time.process_time() - c0)
        times.append(ev.seconds)
    print(f"one {gpus:,}-GPU candidate (plan + scan checks + worst single failure): median "
          f"{statistics.median(times) * 1000:.0f} ms wall ({statistics.median(cpu) * 1000:.0f} ms CPU), "
          f"min {min(times) * 1000:.0f} ms over {runs} runs; "
          f"{ev.switches_total} switches, {ev.cables:,} cables, worst failure {ev.worst_single_failure}")


def space(gpus: int) -> None:
    from compiler.explore import explore

    path = Path(tempfile.mkdtemp()) / "space.yaml"
    path.write_text(SPACE.format(gpus=gpus))
    t0, c0 = time.perf_counter(), time.process_time()
    x = explore(path, "switches", max_candidates=3000)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    per = [e.seconds for e in x.evaluated]
    print(f"design space at {gpus:,} GPUs: {len(x.evaluated):,} candidates ({x.duplicates:,} duplicates skipped), "
          f"{len(x.feasible):,} feasible, front {len(x.front)}: {dt:.1f} s wall, {cpu:.1f} s CPU = "
          f"{len(x.evaluated) / dt:.1f} candidates/s ({len(x.evaluated) / cpu:.1f} per CPU second); "
          f"per candidate median {statistics.median(per) * 1000:.0f} ms, max {max(per) * 1000:.0f} ms")
    print(f"best: {x.best.candidate.name} {x.best.candidate.choices} {x.best.switches}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one-only", action="store_true")
    ap.add_argument("--gpus", default="1024,16384", help="GPUs of the runs, comma-separated")
    args = ap.parse_args()
    sizes = [int(g) for g in args.gpus.split(",")]
    for gpus in sizes:
        one_candidate(gpus)
    if not args.one_only:
        for gpus in sizes:
            space(gpus)


if __name__ == "__main__":
    main()
