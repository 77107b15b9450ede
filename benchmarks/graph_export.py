"""Graph export benchmark: what `to_networkx()` and graph.graphml cost on a rail-optimized
fabric of DGX H100 (sn5600 at 400G). Prints wall time, the networkx graph's memory
(traced allocations) and the GraphML file size. Run by hand:
python benchmarks/graph_export.py [--gpus N]   (default 16,384 GPUs: ~50k links)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SPEC = """name: bench-graph-{gpus}
gpus: {gpus}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: sn5600, speed_gbps: 400, oversubscription: "1:1"}}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", type=int, default=16384)
    args = ap.parse_args()

    import compiler

    work = Path(tempfile.mkdtemp())
    t0 = time.perf_counter()
    built = compiler.build(SPEC.format(gpus=args.gpus))
    t1 = time.perf_counter()
    graph = built.to_networkx()
    t2 = time.perf_counter()
    del graph
    tracemalloc.start()  # a second graph for its memory: tracing slows the build ~5x
    graph = built.to_networkx()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t3 = time.perf_counter()
    target = built.write(work, only=["graphml"])
    t4 = time.perf_counter()
    links = len(built.plan.links)
    size = (target / "graph.graphml").stat().st_size
    print(f"gpus {args.gpus:,}  devices {len(built.plan.devices):,}  links {links:,}")
    print(f"build (spec -> plan)   {t1 - t0:6.2f} s")
    print(f"to_networkx            {t2 - t1:6.2f} s  ({1e6 * (t2 - t1) / links:.1f} us per link, {graph.number_of_edges():,} edges)")
    print(f"  networkx memory      {peak / 1e6:6.0f} MB  ({peak / links:.0f} B per link)")
    print(f"graph.graphml          {t4 - t3:6.2f} s  ({1e6 * (t4 - t3) / links:.1f} us per link), {size / 1e6:.1f} MB")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
