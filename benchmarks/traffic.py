"""Scale benchmark for `clusterc traffic`: one pattern under one routing, timed per case.

Cases (targets on a loaded 2-core machine: 16,384 GPUs under 10 s, 131,072 under 60 s):
- 16,384 GPUs: specs/b200-superpod-64su.yaml (DGX B200, 64 SU, three tiers of QM9700):
  permutation and all-to-all under ecmp, adaptive and ftree;
- 131,072 GPUs: the three-tier rail-optimized fabric of benchmarks/scale.py (16,384 DGX
  H100 on SN5600 broken out to 128 x 400G): permutation and all-to-all under ecmp and adaptive.

What is sampled: nothing for permutation, ring and shift (every flow of the pattern is
routed and shared). all-to-all analyses a seeded sample of its n - 1 phases (16 up to
16,384 GPUs, 4 at 131,072: each phase is a rail-aligned permutation of every NIC) and
scales the time by the phases it stands for. Prints wall time and peak memory (ru_maxrss)
per case. Run by hand: python benchmarks/traffic.py [--gpus 16384|131072] [--case PATTERN:ROUTING]
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

from benchmarks.scale import spec_text  # noqa: E402  (after the sys.path line, as a script)

CASES = {
    16384: ["permutation:ecmp", "permutation:adaptive", "permutation:ftree", "all-to-all:ecmp", "all-to-all:adaptive",
            "all-to-all:ftree"],
    131072: ["permutation:ecmp", "permutation:adaptive", "all-to-all:ecmp", "all-to-all:adaptive"],
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, choices=sorted(CASES), action="append")
    ap.add_argument("--case", action="append", help="PATTERN:ROUTING (default: all cases of the size)")
    args = ap.parse_args()

    from compiler.pipeline import build_plan
    from compiler.traffic import traffic_report

    for gpus in args.gpus or sorted(CASES):
        if gpus == 16384:
            spec = ROOT / "specs" / "b200-superpod-64su.yaml"
        else:
            spec = Path(tempfile.mkdtemp()) / "bench.yaml"
            spec.write_text(spec_text(gpus))
        t0 = time.perf_counter()
        _, plan = build_plan(spec)
        print(f"{plan.name}: {plan.design['gpus']:,} GPUs, {len(plan.links):,} links, plan in "
              f"{time.perf_counter() - t0:.1f} s")
        for case in args.case or CASES[gpus]:
            pattern, routing = case.split(":")
            t0 = time.perf_counter()
            r = traffic_report(plan, [pattern], [routing])["results"][0]
            dt = time.perf_counter() - t0
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"  {pattern:<12} {routing:<9} {dt:6.1f} s  peak {rss_mb:,.0f} MB  flows {r['flows']:,} "
                  f"phases {r['phases']}  mean {r['fraction']:.1%}  slowest {r['min_fraction']:.1%}")


if __name__ == "__main__":
    main()
