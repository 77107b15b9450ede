"""Scale benchmark: a hall laid out under growth, and the physical diff of two sizes.

Half of a 131,072-GPU three-tier rail-optimized fabric built today (65,536 GPUs) with
`growth:` to the full size and a `layout:`, so placement, lengths and media run on the
plan at the growth target and today's plan takes them over (expand/final_size.py); then
the same spec at the full size, and `diff` between the two (every cable's physical
attributes compared). Prints wall time per step and peak memory (ru_maxrss).
Run by hand: python benchmarks/growth_layout.py [--gpus N]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = """name: bench-growth-{gpus}
gpus: {gpus}
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: sn5600
  speed_gbps: 400
  oversubscription: "1:1"
growth: {{max_servers: {final}}}
layout:
  rows: 52
  racks_per_row: {per_row}
  rack: {{height_u: 48, power_kw: 45}}
  leaf_placement: end-of-row
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=131072, help="the growth target; today is half of it")
    args = ap.parse_args()

    from compiler.pipeline import build_plan
    from compiler.plan.diff import diff_plans

    final = args.gpus // 8
    per_row = min(999, max(20, final // 4 // 40))  # 4 DGX H100 per 45 kW rack, ~50 rows
    work = Path(tempfile.mkdtemp())
    times = {}
    plans = []
    for gpus in (args.gpus // 2, args.gpus):
        spec = work / f"g{gpus}.yaml"
        spec.write_text(SPEC.format(gpus=gpus, final=final, per_row=per_row))
        t0 = time.perf_counter()
        plans.append(build_plan(spec)[1])
        times[f"build {gpus:,} GPUs (placed for {args.gpus:,})"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    d = diff_plans(*plans)
    times["diff (devices, cables, physical, BOM)"] = time.perf_counter() - t0
    for what, seconds in times.items():
        print(f"{what:<48} {seconds:7.2f} s")
    c = d["counts"]
    print(f"links {len(plans[0].links):,} -> {len(plans[1].links):,}; racks {len(plans[0].physical.racks):,} -> "
          f"{len(plans[1].physical.racks):,}; diff: +{c['cables_added']:,} -{c['cables_removed']} ~{c['cables_changed']} "
          f"physical {c['cables_physical']}, devices moved {c['devices_moved']}")
    print(f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")


if __name__ == "__main__":
    main()
