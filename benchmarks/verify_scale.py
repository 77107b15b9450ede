"""Scale benchmark: `clusterc verify` on the full discovery of a 16,384-server fabric.

Default: 16,384 DGX H100 (131,072 GPUs) on a three-tier sn5600 RoCE fabric, verified from
one `lldpcli -f json show neighbors details` table per switch (the switches report their
neighbours; hosts are seen as neighbours). `--ib`: DGX H100 on QM9700 InfiniBand, three
tiers, verified from one ibnetdiscover output (8,192 servers by default: a 64-port switch's
three-tier limit at 1:1). The plan is compiled to a folder (plan.json; for InfiniBand also
infiniband/topology.ibnetdiscover, in ibnetdiscover's own format); the discovery is
written from the plan's cables with --faults swaps, moves and removals applied. Timed
as a user runs it: load the compiled plan, read the discovery, verify (resolve names,
match, scope, report).

Run by hand: python benchmarks/verify_scale.py [--ib] [--servers N] [--faults N]
Target (2 cores): seconds, not minutes.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

IB_SPEC = """name: verify-bench
servers: {servers}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: qm9700, tiers: 3, oversubscription: "1:1", scalable_unit: 32}}
"""
ETH_SPEC = """name: verify-bench-eth
servers: {servers}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: sn5600, speed_gbps: 400, tiers: auto, oversubscription: "1:1", nos: sonic}}
"""


def lldp_tables(plan, links) -> dict[str, dict]:
    """Each switch's `lldpcli -f json show neighbors details` for the given cabling (hosts
    send their MAC as port id and their panel port name as description, as lldpd does)."""
    names = [d.name for d in plan.devices]
    port_names = {lid: [p.name for p in lay.ports] for lid, lay in plan.layouts.items()}
    nos = plan.routing.port_names["sonic"]
    ifname = {lid: nos.get(lid) or port_names[lid] for lid in plan.layouts}
    tables: dict[str, list] = {}
    for a, pa, b, pb in zip(links.a_dev.tolist(), links.a_port.tolist(), links.b_dev.tolist(), links.b_port.tolist()):
        for (x, px), (y, py) in (((a, pa), (b, pb)), ((b, pb), (a, pa))):
            dx, dy = plan.devices[x], plan.devices[y]
            if dx.tier == 0:
                continue
            host = dy.tier == 0
            port = ({"id": {"type": "mac", "value": "b8:3f:d2:00:00:01"}, "descr": port_names[dy.layout][py]} if host
                    else {"id": {"type": "ifname", "value": ifname[dy.layout][py]}, "descr": ifname[dy.layout][py]})
            tables.setdefault(names[x], []).append(
                {ifname[dx.layout][px]: {"via": "LLDP", "chassis": {names[y]: {"id": {"type": "mac", "value": "b8:3f:d2:00:00:02"}}},
                                         "port": port}})
    return {name: {"lldp": {"interface": rows}} for name, rows in tables.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int)
    ap.add_argument("--faults", type=int, default=100, help="swaps, moves and removals applied (each)")
    ap.add_argument("--ib", action="store_true", help="an InfiniBand fabric verified from ibnetdiscover output")
    args = ap.parse_args()
    args.lldp = not args.ib
    args.servers = args.servers or (8192 if args.ib else 16384)

    from compiler.pipeline import build_plan, write_outputs
    from compiler.pipeline import load_plan
    from compiler.render.infiniband import render as render_infiniband
    from compiler.render.writer import OutputDir
    from compiler.verify import read_inputs, verify_discovery
    from compiler.verify.match import compare
    from compiler.verify.report import build
    from compiler.verify.resolve import resolve
    from compiler.verify.scope import decide
    from tests.verify_faults import apply, expected_findings, random_faults, reported

    work = Path(tempfile.mkdtemp())
    spec = work / "bench.yaml"
    spec.write_text((ETH_SPEC if args.lldp else IB_SPEC).format(servers=args.servers))
    t0 = time.perf_counter()
    _, plan = build_plan(spec)
    folder = write_outputs(plan, work / "out", ["plan"] if args.lldp else ["plan", "infiniband"])
    t_compile = time.perf_counter() - t0
    n = args.faults
    faults = random_faults(plan, random.Random(1), swaps=n, moves=n, removals=n)
    cabled = apply(plan, faults)
    discovery = work / "discovery"
    discovery.mkdir()
    if args.lldp:
        for name, table in lldp_tables(plan, cabled).items():
            (discovery / f"{name}.json").write_text(json.dumps(table))
    else:
        with OutputDir(work / "as-cabled") as out:
            render_infiniband(replace(plan, links=cabled, _memo={}), out)
        shutil.move(str(work / "as-cabled" / "infiniband" / "topology.ibnetdiscover"), discovery / "fabric.ibnetdiscover")
    size_mb = sum(f.stat().st_size for f in discovery.iterdir()) / 1e6

    times = {}
    t = time.perf_counter()
    loaded = load_plan(folder)
    times["load plan.json"] = time.perf_counter() - t
    t = time.perf_counter()
    disc = read_inputs([discovery])
    times["read discovery"] = time.perf_counter() - t
    t = time.perf_counter()
    res = resolve(loaded, disc)
    times["resolve names"] = time.perf_counter() - t
    t = time.perf_counter()
    outcome = compare(loaded, disc, res)
    times["match"] = time.perf_counter() - t
    t = time.perf_counter()
    result = verify_discovery(loaded, disc)  # scope + report (resolve and match again inside)
    times["scope + report (incl. a second resolve+match)"] = time.perf_counter() - t
    _ = decide, build, outcome
    total = times["load plan.json"] + times["read discovery"] + times["scope + report (incl. a second resolve+match)"]
    ok = reported(result) == expected_findings(plan, faults)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{plan.name}: {args.servers:,} servers, {len(plan.devices):,} devices, {len(plan.links):,} cables "
          f"(compile {t_compile:.1f} s, not timed below)")
    print(f"discovery: {len(disc.files):,} file(s), {size_mb:.0f} MB, {len(disc.links):,} rows; "
          f"{n} swaps + {n} moves + {n} removals applied")
    for k, v in times.items():
        print(f"  {k:<48} {v:6.2f} s")
    print(f"  {'verify as the CLI runs it (load + read + verify)':<48} {total:6.2f} s")
    print(f"findings: {len(result['mismatches'])} ({'exactly the mistakes applied' if ok else 'NOT the mistakes applied'}); "
          f"{result['checked_cables']:,} cables checked")
    print(f"peak memory (RSS) {rss_mb:.0f} MB")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
