"""Scale benchmark for the non-Clos families: a 4,096-chip 3D torus (TPU v4 pod, direct
ICI) and a 262,144-endpoint dragonfly (32,768 DGX H100 on sn5600 at 400G: balanced
p = h = 32, a = 64, 128 groups). Prints wall time per stage. Run by hand:
python benchmarks/topologies.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DRAGONFLY = """name: bench-dragonfly
gpus: 262144
server: dgx-h100
fabric:
  topology: dragonfly
  switch: sn5600
  speed_gbps: 400
"""


def main() -> None:
    from compiler.check import run_checks
    from compiler.check.hops import HopsFigures
    from compiler.pipeline import build_plan, write_outputs
    from compiler.render.summary import summarize

    work = Path(tempfile.mkdtemp())
    (work / "df.yaml").write_text(DRAGONFLY)
    for spec in (ROOT / "specs" / "tpu-v4-pod.yaml", work / "df.yaml"):
        t0 = time.perf_counter()
        _, plan = build_plan(spec)
        t1 = time.perf_counter()
        checks = run_checks(plan)
        t2 = time.perf_counter()
        write_outputs(plan, work / "out", checks=checks)
        t3 = time.perf_counter()
        s = summarize(plan, checks)
        print(f"{plan.name}: gpus {s['gpus']:,}  switches {s['switches']}  cables {s['cables']}  links {len(plan.links):,}")
        print(f"  spec -> plan {t1 - t0:.2f} s  checks {t2 - t1:.2f} s  outputs {t3 - t2:.2f} s")
        print(f"  checks: {', '.join(f'{k} {v:.2f}' for k, v in checks.seconds.items())}")
        print(f"  bisection {s['bisection_gbps']}  hops {checks.of(HopsFigures).max}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
