"""Deployable configs at scale: every switch config and every host config of the
131,072-GPU benchmark fabric (benchmarks/scale.py's spec), written twice and compared
byte for byte. Run by hand: python benchmarks/deploy_configs.py [--gpus N] [--nos sonic] [--storage]
Target (2 cores): switch + host configs under 15 s, identical across runs.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scale import spec_text  # noqa: E402  (after the sys.path line, as a script)


def tree_digest(folder: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    for p in files:
        h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return len(files), h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=131072)
    ap.add_argument("--nos", choices=["frr", "sonic", "cumulus", "eos"], default="sonic")
    ap.add_argument("--storage", action="store_true",
                    help="add an Ethernet storage fabric (the DGX's two storage ports, same NOS): its switch configs "
                         "and its NICs in every server's host configs")
    args = ap.parse_args()

    from compiler.check import run_checks
    from compiler.pipeline import build_plan, write_outputs

    work = Path(tempfile.mkdtemp())
    spec = work / "bench.yaml"
    # pools wider than the default /13 share: 32,768 storage ports at 131,072 GPUs
    storage = (f"fabrics:\n  - {{name: storage, switch: sn5600, oversubscription: '1:1', nos: {args.nos},\n"
               "      addressing: {server_links: 10.192.0.0/12, fabric_links: 10.208.0.0/12, loopbacks: 10.224.0.0/16,"
               " management: 10.225.0.0/16}}\n") if args.storage else ""
    spec.write_text(spec_text(args.gpus, args.nos) + storage)
    t0 = time.perf_counter()
    _, plan = build_plan(spec)
    checks = run_checks(plan)
    print(f"plan + checks      {time.perf_counter() - t0:6.2f} s")
    digests = []
    for run in (1, 2):
        times = {}
        for output in ("configs", "host-configs"):
            t = time.perf_counter()
            write_outputs(plan, work / f"run{run}-{output}", [output], checks)
            times[output] = time.perf_counter() - t
        digests.append([tree_digest(work / f"run{run}-{o}" / plan.name) for o in ("configs", "host-configs")])
        total = sum(times.values())
        print(f"run {run}: switch configs {times['configs']:6.2f} s ({digests[-1][0][0]:,} files), "
              f"host configs {times['host-configs']:6.2f} s ({digests[-1][1][0]:,} files), total {total:6.2f} s")
    print("byte-identical across runs:", digests[0] == digests[1])
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
