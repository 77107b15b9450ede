"""clusterc resilience at scale: samples per second of the benchmark fabric
(benchmarks/scale.py's spec) at the default fleet rates, per executor and worker count,
after the one-off set-up (plan, components, intact cuts). Run by hand:
python benchmarks/resilience.py [--gpus 1024,16384] [--samples 200] [--workers 1,2] [--dask]
Also checks that every run gives the same figures (same seed)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scale import spec_text  # noqa: E402  (after the sys.path line, as a script)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="1024,16384")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--dask", action="store_true", help="also on a dask LocalCluster (the resilience extra)")
    args = ap.parse_args()

    from compiler.pipeline import build_plan
    from compiler.resilience import resilience_report

    for gpus in [int(x) for x in args.gpus.split(",")]:
        spec = Path(tempfile.mkdtemp()) / "bench.yaml"
        spec.write_text(spec_text(gpus))
        t0 = time.perf_counter()
        _, plan = build_plan(spec)
        t1 = time.perf_counter()
        resilience_report(plan, samples=1)  # set-up alone (components, cuts, criticality)
        setup_s = time.perf_counter() - t1
        runs = [("local", int(w)) for w in args.workers.split(",")] + \
            ([("dask", int(w)) for w in args.workers.split(",")] if args.dask else [])
        figures = set()
        for executor, workers in runs:
            t = time.perf_counter()
            r = resilience_report(plan, samples=args.samples, seed=1, executor=executor, workers=workers)
            run_s = time.perf_counter() - t - setup_s
            figures.add(json.dumps(r["metrics"], sort_keys=True))
            print(f"{gpus:>7,} GPUs  {executor:5} x{workers}: {args.samples / max(run_s, 1e-9):8.1f} samples/s "
                  f"(build {t1 - t0:.1f} s, set-up {setup_s:.1f} s, p99.9 bisection "
                  f"{r['metrics']['bisection_fraction']['p999']:.4f})")
        print(f"{gpus:>7,} GPUs  same figures on every executor: {len(figures) == 1}")


if __name__ == "__main__":
    main()
