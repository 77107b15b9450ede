"""Diagram benchmark: what share of a full compile the diagrams take (the target is under
a fifth at every size), timed two ways:

- the CLI, as a user runs it: `compile` (everything), `compile --only <all but diagrams>`
  and `compile --only diagrams`, best of --repeat runs each, in CPU seconds of the child
  (user + system: on a shared machine wall time measures the neighbours);
- in process: each output's renderer (CPU seconds), after the plan is built and checked.

Run by hand: python benchmarks/diagrams.py [SPEC ...] [--repeat N]. Default specs: the
16,384-GPU B200 SuperPOD (64 SU, 3 tiers) and 1,536 DGX H100 servers on SN5600.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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


def cli_seconds(spec: Path, out: Path, only: list[str] | None, repeat: int) -> float:
    args = [sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(out)]
    if only:
        args += ["--only", ",".join(only)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    best = float("inf")
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode not in (0, 1):
            raise SystemExit(f"compile failed: {r.stderr[-2000:]}")
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best


def in_process(spec: Path, out: Path) -> dict[str, float]:
    from compiler.check import report_for
    from compiler.pipeline import build_plan
    from compiler.plan.fabrics import fabric_view
    from compiler.render import ALL_FABRICS, RENDERERS
    from compiler.render.writer import OutputDir

    t = time.process_time()
    _, plan = build_plan(spec)
    times = {"spec -> plan": time.process_time() - t}
    t = time.process_time()
    report_for(fabric_view(plan))
    times["run checks"] = time.process_time() - t  # the "checks" output only writes them
    with OutputDir(out / plan.name) as w:
        for name, render in RENDERERS.items():
            t = time.process_time()
            render(plan if name in ALL_FABRICS else fabric_view(plan), w)
            times[name] = time.process_time() - t
    return times


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("specs", nargs="*")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    from compiler.render import RENDERERS

    work = Path(tempfile.mkdtemp())
    specs = [Path(s) for s in args.specs]
    if not specs:
        (work / "bench-1536.yaml").write_text(SPEC_1536)
        specs = [ROOT / "specs" / "b200-superpod-64su.yaml", work / "bench-1536.yaml"]
    others = [o for o in RENDERERS if o != "diagrams"]
    for spec in specs:
        full = cli_seconds(spec, work / "full", None, args.repeat)
        without = cli_seconds(spec, work / "without", others, args.repeat)
        alone = cli_seconds(spec, work / "alone", ["diagrams"], args.repeat)
        print(f"{spec.name}")
        print(f"  CLI compile, all outputs        {full:6.2f} s CPU")
        print(f"  CLI compile, all but diagrams   {without:6.2f} s CPU")
        print(f"  CLI compile --only diagrams     {alone:6.2f} s CPU (interpreter start, spec -> plan included)")
        print(f"  diagrams' share (full - without) / full: {100 * (full - without) / full:4.1f} %")
        times = in_process(spec, work / "inproc")
        total = sum(times.values())
        print(f"  in process (CPU): total {total:.2f} s, diagrams {times['diagrams']:.3f} s = {100 * times['diagrams'] / total:.1f} %;"
              f" report {times['report']:.3f} s")
        print("   " + ", ".join(f"{k} {v:.2f}" for k, v in times.items()))


if __name__ == "__main__":
    main()
