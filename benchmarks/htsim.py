"""Re-run csg-htsim on fabrics `clusterc traffic --export htsim` writes, with the routes
`traffic` chose, and regenerate tests/data/htsim/runs.json (what tests/test_traffic_exports.py
compares the flow model with).

    python benchmarks/htsim.py /path/to/csg-htsim/sim/datacenter [--only NAME] [--out DIR]

The folder holds the built htsim_ndp (csg-htsim's own Makefiles; nothing of htsim is in
this repository). For each case: compile the spec text, write the export folder (fat_tree.topo,
the pattern's connection matrix pinned to the routes of each routing, run.sh), run
run.sh's htsim_ndp lines as written, and read each flow's `finished at` time. Fixed routes:
htsim_ndp -strat perm -paths 1 keeps one path per flow, chosen by its seeded generator,
which the export replays (compiler/traffic/exports.py htsim_pinned_order); htsim_eqds and
htsim_roce hash routes themselves, so they are not runs on the same routes.
Cost: a 256-host case runs ~10 s of htsim; all cases a few minutes.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from compiler.expand import expand  # noqa: E402
from compiler.spec.load import load_spec_text  # noqa: E402
from compiler.traffic.exports import HTSIM_COMMIT, htsim_files, htsim_nodes, htsim_path_choice, htsim_run_files  # noqa: E402
from compiler.traffic.fabric import TrafficFabric, parse_failure  # noqa: E402
from compiler.traffic.patterns import build_pattern, placement  # noqa: E402
from compiler.traffic.routing import Router  # noqa: E402

OUT = ROOT / "tests" / "data" / "htsim"
ROUTINGS = ["ecmp", "ftree"]


def spec_text(servers: int, oversubscription: str) -> str:
    return (f"name: htsim-{servers}-{oversubscription.replace(':', 'to')}\nservers: {servers}\nserver: dgx-b200\n"
            f"fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32, oversubscription: \"{oversubscription}\"}}\n")


# name, servers, oversubscription, --fail, patterns, traffic seed (permutation and ECMP hash)
CASES = [
    ("1su-1to1", 32, "1:1", None, ["permutation", "all-to-all"], 1),
    ("1su-1to1-seed2", 32, "1:1", None, ["permutation"], 2),
    ("1su-2to1", 32, "2:1", None, ["permutation", "all-to-all"], 1),
    ("1su-spine-fail", 32, "1:1", "spine:1", ["permutation", "all-to-all"], 1),
    ("2su-1to1", 64, "1:1", None, ["permutation", "all-to-all"], 1),
    ("2su-2to1", 64, "2:1", None, ["permutation"], 1),
]

FINISHED = re.compile(r"^Flow ndp_(\d+)_(\d+) flow_id \d+ finished at ([0-9.e+-]+) total bytes (\d+)")


def topo_params(text: str) -> dict:
    out, tier = {}, None
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0].startswith("#"):
            continue
        if parts[0] == "Tier":
            tier = f"tier{parts[1]}"
            out[tier] = {}
        elif tier:
            out[tier][parts[0]] = int(parts[1])
        else:
            out[parts[0]] = int(parts[1])
    return out


def route_indices(plan, fail: str | None, pattern: str, routing: str, seed: int) -> dict[tuple[int, int], int]:
    """(src node, dst node) -> the htsim path the export pinned the flow to (the route traffic chose)."""
    intact = TrafficFabric(plan)
    fabric = TrafficFabric(plan, parse_failure(plan, fail), graph=intact.graph) if fail else intact
    pat = build_pattern(fabric, pattern, placement(intact, None, "plan", seed), seed)
    phase = max(pat.phases, key=lambda ph: ph.src.size)
    m = Router(fabric, seed=seed).route(routing, phase).inc.terms[0].chain[0].tocoo()
    index, _ = htsim_path_choice(plan, fabric, m.col, m.row, phase.src.size)
    node = htsim_nodes(intact)
    return {(int(node[s]), int(node[d])): int(k) for s, d, k in zip(phase.src, phase.dst, index)}


def run_case(bindir: Path, name: str, servers: int, ratio: str, fail: str | None, patterns: list[str],
             seed: int) -> list[dict]:
    text = spec_text(servers, ratio)
    plan = expand(load_spec_text(text, f"<{name}>"))
    files = {**htsim_files(plan), **htsim_run_files(plan, patterns, ROUTINGS, seed=seed, fail=fail)}
    runs = []
    with tempfile.TemporaryDirectory(prefix="htsim-") as tmp:
        for fname, body in files.items():
            (Path(tmp) / fname).write_text(body)
        for line in files["run.sh"].splitlines():
            m = re.search(r"-tm (\S+)\.cm .*-strat perm", line)
            if not m or ("-fail" in m.group(1)) != bool(fail):
                continue
            stem = m.group(1)
            pattern = next(p for p in patterns if stem.startswith(p.replace(":", "-")))
            routing = stem.rsplit("-", 1)[1]
            cmd = line.split("  # ")[0]
            print(f"{name}: {stem}", file=sys.stderr, flush=True)
            subprocess.run(["sh", "-c", cmd], cwd=tmp, env={"HTSIM": str(bindir), "PATH": "/usr/bin:/bin"}, check=True)
            finish = {}
            for out_line in (Path(tmp) / f"{stem}.ndp.out").read_text().splitlines():
                f = FINISHED.match(out_line)
                if f:
                    finish[(int(f.group(1)), int(f.group(2)))] = float(f.group(3))
            conns = []
            for row in (Path(tmp) / f"{stem}.cm").read_text().splitlines()[2:]:
                pair, _, rest = row.partition(" ")
                if " size 1" in row and "start 0 " not in row:
                    continue  # a placeholder that only advances htsim's generator
                s, d = (int(v) for v in pair.split("->"))
                conns.append([s, d, finish.get((s, d))])
            paths = route_indices(plan, fail, pattern, routing, seed)
            conns = sorted([s, d, paths[(s, d)], t] for s, d, t in conns)
            size = int(re.search(r"size (\d+)", (Path(tmp) / f"{stem}.cm").read_text().splitlines()[2]).group(1))
            lone = Path(tmp) / "lone.cm"  # one flow across the spines: the transport's fixed cost (latency, start)
            n = int(files["fat_tree.topo"].split("Nodes ")[1].split()[0])
            lone.write_text(f"Nodes {n}\nConnections 1\n0->{n - 1} start 0 size {size}\n")
            out = subprocess.run(["sh", "-c", cmd.split(" > ")[0].replace(f"-tm {stem}.cm", "-tm lone.cm")], cwd=tmp,
                                 env={"HTSIM": str(bindir), "PATH": "/usr/bin:/bin"}, check=True, capture_output=True, text=True)
            lone_us = next(float(f.group(3)) for f in map(FINISHED.match, out.stdout.splitlines()) if f)
            runs.append({"case": name, "spec": text, "pattern": pattern, "routing": routing, "seed": seed, "fail": fail,
                         "flow_bytes": size, "lone_flow_us": lone_us, "command": cmd.replace(str(bindir), "$HTSIM"),
                         "fat_tree": topo_params(files["fat_tree.topo"]),
                         "flows": conns})
    return runs


def summary(run: dict) -> dict:
    """htsim's figures for a run, as tests/test_traffic_exports.py reads them: a flow's rate is
    its size over its finish time less a lone flow's fixed cost, over the host line rate."""
    line = run["fat_tree"]["tier0"]["Downlink_speed_Gbps"] * 1e9
    bits = run["flow_bytes"] * 8
    fixed_s = run["lone_flow_us"] * 1e-6 - bits / line
    done = [f[3] for f in run["flows"] if f[3] is not None]
    rates = [bits / (t * 1e-6 - fixed_s) / line for t in done]
    return {"flows": len(run["flows"]), "finished": len(done), "mean_fraction": round(sum(rates) / len(rates), 4),
            "min_fraction": round(min(rates), 4), "collective_us": max(done)}


def dump(doc: dict) -> str:
    """JSON with each innermost list (a flow, a key's numbers) on one line."""
    text = json.dumps(doc, indent=1)
    return re.sub(r"\[([^\[\]{}]*)\]", lambda m: "[" + " ".join(m.group(1).split()) + "]", text) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("bindir", type=Path, help="csg-htsim sim/datacenter folder with htsim_ndp built")
    ap.add_argument("--only", action="append", help="case name (default: all)")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    commit = subprocess.run(["git", "-C", str(args.bindir), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    if not commit.startswith(HTSIM_COMMIT):
        print(f"note: htsim at {commit or 'an unknown commit'}, the export is written for {HTSIM_COMMIT}", file=sys.stderr)
    runs = []
    for case in CASES:
        if not args.only or case[0] in args.only:
            runs += run_case(args.bindir, *case)
    for run in runs:
        run["htsim"] = summary(run)
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"htsim_commit": commit, "binary": "htsim_ndp",
           "about": "csg-htsim NDP on the export's fat tree with the routes clusterc traffic chose (benchmarks/htsim.py); "
                    "flows: [src node, dst node, htsim path index (get_bidir_paths), finish time in us (null: did not finish)]; lone_flow_us: one flow "
                    "alone across the spines (the transport's fixed cost); htsim: the run summarised (rate = size over finish "
                    "time less that fixed cost, over line rate)",
           "runs": runs}
    path = args.out / "runs.json"
    path.write_text(dump(doc))
    print(f"wrote {len(runs)} runs to {path}")


if __name__ == "__main__":
    main()
