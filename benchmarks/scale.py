"""Scale benchmark: compile a 131,072-GPU three-tier rail-optimized fabric.

16,384 8-GPU servers on sn5600 broken out to 128 x 400G (--uplink-speed 800: leaves
400G down / 800G up, spines and cores 64 x 800G). Prints wall time per stage and peak
memory (ru_maxrss). Run by hand: python benchmarks/scale.py [--gpus N] [--uplink-speed G] [--keep]
Targets (2 cores): compile under 10 s and 2 GB for spec -> plan -> cabling/BOM/plan/summary.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = """name: bench-{gpus}
gpus: {gpus}
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: sn5600
  speed_gbps: 400
  tiers: auto
  oversubscription: "1:1"
{uplink}{nos}"""


def spec_text(gpus: int, nos: str | None = None, uplink_speed_gbps: int | None = None) -> str:
    """The benchmark fabric (DGX H100, SN5600 at 400G, rail-optimized, 1:1), shared by the
    scale, deploy-config and traffic benchmarks so they time the same design."""
    return SPEC.format(gpus=gpus, nos=f"  nos: {nos}\n" if nos else "",
                       uplink=f"  uplink_speed_gbps: {uplink_speed_gbps}\n" if uplink_speed_gbps else "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=131072)
    ap.add_argument("--keep", action="store_true", help="leave the outputs in benchmarks/out/")
    ap.add_argument("--nos", choices=["frr", "sonic", "cumulus"], help="also render every switch config for this NOS (timed apart)")
    ap.add_argument("--uplink-speed", type=int, help="fabric.uplink_speed_gbps (e.g. 800: two link speeds)")
    args = ap.parse_args()

    from compiler.check import run_checks
    from compiler.check.bisection import BisectionFigures
    from compiler.pipeline import build_plan, write_outputs
    from compiler.render.summary import summarize
    from compiler.plan.fabrics import fabric_plan
    from compiler.render import RENDERERS

    work = Path(tempfile.mkdtemp())
    spec = work / "bench.yaml"
    spec.write_text(spec_text(args.gpus, args.nos, args.uplink_speed))
    out = ROOT / "benchmarks" / "out" if args.keep else work / "out"

    t0 = time.perf_counter()
    _, plan = build_plan(spec)
    t1 = time.perf_counter()
    checks = run_checks(plan)
    tc = time.perf_counter()
    outputs = [o for o in RENDERERS if o != "configs"]  # configs are timed on their own (--nos)
    per_output = {}
    from compiler.render.writer import OutputDir

    with OutputDir(out / plan.name) as w:
        for name in outputs:
            t_o = time.perf_counter()
            renderer = RENDERERS[name]  # as the pipeline hands it the fabrics it reads
            renderer.render(plan if renderer.reads == "all" else fabric_plan(plan), checks, w)
            per_output[name] = time.perf_counter() - t_o
    t2 = time.perf_counter()
    t_cfg = None
    if args.nos:  # the switch configs alone, so the base numbers stay comparable
        write_outputs(plan, work / "configs", ["configs"], checks)
        t_cfg = time.perf_counter() - t2
    s = summarize(plan, checks)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"gpus {s['gpus']:,}  servers {s['servers']:,}  switches {s['switches']}  tiers {s['tiers']}")
    print(f"links {len(plan.links):,}  ports {plan.port_count():,}")
    print(f"spec -> plan       {t1 - t0:6.2f} s")
    print(f"checks             {tc - t1:6.2f} s  ({', '.join(f'{k} {v:.2f}' for k, v in checks.seconds.items())})")
    b = checks.of(BisectionFigures)
    print(f"  bisection {b.worst_cut_gbps:,} Gb/s worst cut ({b.worst_cut}), closed form {b.analytic_gbps:,} Gb/s")
    print(f"write outputs      {t2 - tc:6.2f} s")
    print("  " + ", ".join(f"{k} {v:.2f}" for k, v in per_output.items()))
    core = sum(per_output.get(k, 0) for k in ("cabling", "bom", "plan", "summary"))
    print(f"  foundation outputs (cabling, bom, plan, summary): {core:.2f} s")
    print(f"total              {t2 - t0:6.2f} s")
    if t_cfg is not None:
        switches = sum(1 for d in plan.devices if d.role in ("leaf", "spine", "core"))
        print(f"switch configs     {t_cfg:6.2f} s  ({args.nos}, {switches:,} switches, {1000 * t_cfg / switches:.2f} ms per switch)")
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (RSS)  {rss_mb:6.0f} MB")
    for f in sorted((out / plan.name).iterdir()):
        print(f"  {f.name:<18} {f.stat().st_size / 1e6:8.1f} MB")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
