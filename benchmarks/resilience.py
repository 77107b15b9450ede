"""clusterc resilience at scale: samples per second of the benchmark fabric
(benchmarks/scale.py's spec) at the default fleet rates, per executor and worker count,
after the one-off set-up (plan, components, intact cuts). Run by hand:
python benchmarks/resilience.py [--gpus 1024,16384] [--samples 200] [--workers 1,2] [--dask]
Also checks that every run gives the same figures (same seed).

--precision: per metric, p99.9 and its sampling error after the run, and the samples that
bring the error within 1 % of the value (the error falls as 1/sqrt(samples): the run's
samples x (error / (0.01 x value))^2), with CPU seconds (user+sys of this process and its
workers) per sample."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scale import spec_text  # noqa: E402  (after the sys.path line, as a script)


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its finished children (pool workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _needed(samples: int, value: float, stderr: float) -> str:
    if stderr == 0:
        return f"within already at {samples:,} (no spread between the order statistics)"
    if value == 0:
        return "undefined (p99.9 is 0; 1 % of it is 0)"
    return f"{samples * (stderr / (0.01 * abs(value))) ** 2:,.0f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="1024,16384")
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--dask", action="store_true", help="also on a dask LocalCluster (the resilience extra)")
    ap.add_argument("--precision", action="store_true", help="samples needed for p99.9 within 1 %% (see above)")
    args = ap.parse_args()

    from compiler.pipeline import build_plan
    from compiler.resilience import resilience_report

    for gpus in [int(x) for x in args.gpus.split(",")]:
        spec = Path(tempfile.mkdtemp()) / "bench.yaml"
        spec.write_text(spec_text(gpus))
        t0 = time.perf_counter()
        _, plan = build_plan(spec)
        t1, c1 = time.perf_counter(), _cpu_s()
        resilience_report(plan, samples=1)  # set-up alone (components, cuts, criticality)
        setup_s, setup_cpu_s = time.perf_counter() - t1, _cpu_s() - c1
        runs = [("local", int(w)) for w in args.workers.split(",")] + \
            ([("dask", int(w)) for w in args.workers.split(",")] if args.dask else [])
        figures = set()
        for executor, workers in runs:
            t, c = time.perf_counter(), _cpu_s()
            r = resilience_report(plan, samples=args.samples, seed=1, executor=executor, workers=workers)
            run_s = time.perf_counter() - t - setup_s
            cpu_s = _cpu_s() - c - setup_cpu_s
            figures.add(json.dumps(r["metrics"], sort_keys=True))
            print(f"{gpus:>7,} GPUs  {executor:5} x{workers}: {args.samples / max(run_s, 1e-9):8.1f} samples/s "
                  f"(build {t1 - t0:.1f} s, set-up {setup_s:.1f} s, p99.9 bisection "
                  f"{r['metrics']['bisection_fraction']['p999']:.4f}; {cpu_s / args.samples * 1000:.1f} ms CPU "
                  f"per sample, set-up {setup_cpu_s:.1f} s CPU; load {os.getloadavg()[0]:.1f})")
            if args.precision:
                for name, m in r["metrics"].items():
                    print(f"    {name}: p99.9 {m['p999']:.6g} ± {m['p999_stderr']:.3g}; "
                          f"samples for 1 %: {_needed(args.samples, m['p999'], m['p999_stderr'])}")
        print(f"{gpus:>7,} GPUs  same figures on every executor: {len(figures) == 1}")


if __name__ == "__main__":
    main()
