"""The README's performance table: whole `clusterc compile` processes on the benchmark
fabrics, each compile's stages and outputs, peak memory, and pyavd on a fabric of as many
switches where it is installed. Run by hand (not a test; timings never are):

    python benchmarks/performance.py                      # 131,072 GPUs and the 512-switch EOS fabric
    python benchmarks/performance.py --cases all          # and 524,288 GPUs (minutes, ~2.5 GB), dual/single plane
    python benchmarks/performance.py --cases dual131k,single131k   # HGX B300 at 131,072 GPUs, two planes vs one
    python benchmarks/performance.py --pyavd-python /tmp/pyavd/bin/python   # with pyavd 6.4 beside it
    python benchmarks/performance.py --skip-stages --workers 1,2            # the render stage on 1 and 2 cores
    python benchmarks/performance.py --skip-stages --trace    # and each compile's timeline: stages, workers, faults
    python benchmarks/performance.py --cases 131k,262k,524k --repeat 3 --drop-caches --keep   # the growth tables, steadily
    python benchmarks/performance.py --cases 131k,524k --skip-stages --instructions   # each stage's instructions (callgrind, ~20 min)

Each case runs twice: once as a user runs it (`python -m compiler.cli compile SPEC -o DIR`,
a separate process: wall time, CPU time = user + sys of it and its worker processes, the
largest resident set of any of them), once in this process with the outputs rendered one
after another (CPU seconds of each stage and output; a renderer's own forked children
included; peak resident set). On a machine shared with other work, wall time is inflated
by the wait for a core and CPU time is the steadier figure; take both on a quiet machine.
With --instructions, each case's stages also run once under valgrind's callgrind, which
counts the instructions each executes (benchmarks/instructions.py): the code's own work,
the same from run to run, where the CPU seconds of a stage move with what the machine's
kernel and caches charge it that run.
The pyavd side (--pyavd-python: a Python with pyavd installed, kept apart from clusterc's
environment) is one process doing what pyavd's documentation shows for a whole fabric:
validate_inputs for each device, get_avd_facts, get_device_structured_config and
get_device_config for each device, get_fabric_documentation.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import instructions  # noqa: E402  (after the sys.path line, as a script)
from benchmarks.scale import spec_text  # noqa: E402

EOS_SPEC = """name: eos-{servers}
gpus: {gpus}
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: arista-7060x6-64pe
  speed_gbps: 400
  tiers: auto
  oversubscription: "1:1"
  nos: eos
"""

# specs/hgx-b300-dual-plane.yaml (NVIDIA's Enterprise RA: each ConnectX-8 800G cage split
# 2 x 400G, one port per plane, each plane its own fabric), scaled up; and the same servers
# on one plane (every 400G port on one rail-optimized fabric) for comparison.
B300_SPEC = """name: hgx-b300-{planes}-{gpus}
server: hgx-b300
gpus: {gpus}
fabric:
  topology: {topology}
  switch: sn5600
  speed_gbps: 400
  nos: sonic
"""

# name -> (what it is, spec text)
CASES = {
    "131k": ("131,072 GPUs (DGX H100, SN5600 400G, 3 tiers), every output + FRR configs", spec_text(131072, "frr")),
    "262k": ("262,144 GPUs, every output", spec_text(262144)),
    "524k": ("524,288 GPUs, every output", spec_text(524288)),
    "eos512": ("1,536 DGX H100 on Arista 7060X6, EOS configs, 512 switches", EOS_SPEC.format(servers=1536, gpus=12288)),
    "dual131k": ("131,072 GPUs of HGX B300, dual plane (SN5600 400G), every output + SONiC configs",
                 B300_SPEC.format(planes="dual-plane", gpus=131072, topology="multi-plane")),
    "single131k": ("131,072 GPUs of HGX B300, one plane (rail-optimized, SN5600 400G), every output + SONiC configs",
                   B300_SPEC.format(planes="single-plane", gpus=131072, topology="rail-optimized")),
}
DEFAULT_CASES = ["131k", "eos512"]


# --drop-caches: before each measured process, write the dirty pages out and drop the clean
# ones (root only). A 524,288-GPU compile writes 2.6 GB; once earlier runs have filled memory
# with page cache, its allocations reclaim and compact memory in the kernel first (with THP
# defrag=madvise, numpy's large arrays compact directly), and that system time moved one
# output's CPU by 4x between two runs of the same code. A fresh state per process measures
# the code; without the flag the figures include whatever state the machine is in.
# The dropped cache held the interpreter, numpy, scipy and the templates too: a small compile
# reads them back in (a user's compile finds them cached: it is never the first program run).
DROP_CACHES = Path("/proc/sys/vm/drop_caches")
WARM_SPEC = ROOT / "specs" / "h100-superpod-1su.yaml"
drop_caches = False
warm_runs = 0
warm_root = Path(tempfile.gettempdir())  # main() sets its work folder


def fresh_memory() -> None:
    global warm_runs
    if drop_caches:
        os.sync()
        DROP_CACHES.write_text("3\n")
        warm_runs += 1
        warm = warm_root / f"warm-{warm_runs}"
        subprocess.run([sys.executable, "-m", "compiler.cli", "compile", str(WARM_SPEC), "-o", str(warm)], cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, check=False)


def run_process(argv: list[str], env: dict | None = None) -> dict:
    """One whole process: wall s, CPU s (user + sys of it and the children it waited for),
    largest resident set (MB; of it or one of its children, a maximum, not a sum)."""
    fresh_memory()
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, ru = os.wait4(proc.pid, 0)  # this process's own usage, its descendants' included
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in (0, 1):  # 1: an error finding, still a full compile
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{err.read().decode()[-3000:]}")
    return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "rss_mb": ru.ru_maxrss / 1024}


def byte_compile() -> None:
    """Byte-compile the package once, as installing it does: with PYTHONDONTWRITEBYTECODE set
    and no __pycache__, every compile would first compile ~165 modules from source (0.3-0.5 s
    of CPU at 131,072 GPUs, on one core, before the render workers start)."""
    import compileall

    compileall.compile_dir(ROOT / "compiler", quiet=1)


def compile_process(spec: Path, out: Path, trace: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    if trace is not None:
        env["CLUSTERC_TRACE"] = str(trace)
    return run_process([sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(out)], env)


# The stages of a trace that are work (the rest of a process's CPU is the machinery around
# it: imports, forks and the page faults they cost, waiting, the folder swap).
WORK_STAGES = ("load", "validate", "expand", "check ", "render ")


def print_trace(path: Path, whole: dict) -> None:
    """The compile's timeline ($CLUSTERC_TRACE): each process's stages, when they ran (s from
    the start) and what they cost it (CPU user + sys, page faults)."""
    events = [json.loads(line) for line in path.read_text().splitlines()]
    t0 = min(e["start_s"] for e in events)
    main_pid = next(e["pid"] for e in events if e["name"].startswith("clusterc"))
    label = {main_pid: "main"}
    for e in sorted(events, key=lambda e: e["start_s"]):
        label.setdefault(e["pid"], f"worker {len(label)}")
    print("  timeline (s from start; CPU s user + sys; minor page faults):")
    for e in sorted(events, key=lambda e: (label[e["pid"]] != "main", label[e["pid"]], e["start_s"])):
        cpu = e["user_s"] + e["sys_s"]
        if cpu < 0.05 and e["end_s"] - e["start_s"] < 0.05:
            continue
        print(f"    {label[e['pid']]:>8} {e['name']:<36} {e['start_s'] - t0:6.2f} -> {e['end_s'] - t0:6.2f}  "
              f"CPU {cpu:5.2f} (sys {e['sys_s']:4.2f})  faults {e['minflt']:>9,}")
    work = sum(e["user_s"] + e["sys_s"] for e in events
               if e["name"].startswith(WORK_STAGES) and e["name"] != "render worker")
    print(f"  stages' CPU {work:.1f} s of {whole['cpu_s']:.1f} s: {whole['cpu_s'] - work:.1f} s around them "
          f"(imports, forks and their page faults, the swap)", flush=True)


def stages_in_process(spec: Path, out: Path, counted: bool = False) -> dict:
    """CPU seconds of each stage and output, rendered one after another in this process,
    and the system part of each (the kernel's share: creating files, faulting pages in).
    `counted`: the process runs under callgrind (--instructions), which writes its counts
    at each stage's end (benchmarks/instructions.py); the result names them in order."""
    from compiler.check import run_checks
    from compiler.cli import tune_allocator
    from compiler.pipeline import build_plan
    from compiler.plan.fabrics import fabric_plan
    from compiler.progress import TRACE_ENV, stage
    from compiler.render import ALL, RENDERERS
    from compiler.render.writer import OutputDir

    def cpu() -> tuple[float, float]:  # (user + sys, sys) of this process and the children it forked
        usages = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
        return sum(ru.ru_utime + ru.ru_stime for ru in usages), sum(ru.ru_stime for ru in usages)

    def since(t: tuple[float, float]) -> tuple[float, float]:
        now = cpu()
        return now[0] - t[0], now[1] - t[1]

    def peak_mb() -> float:  # the largest resident set so far: after a stage, what that stage reached at most
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    marks = instructions.install() if counted else None
    tune_allocator()  # as the command line does
    t = cpu()
    _, plan = build_plan(spec)
    stage_s = {"spec -> plan": since(t)}
    gc.freeze()  # as the compile does before it forks: the plan's objects leave the collections
    peaks = {"plan": peak_mb()}
    t = cpu()
    trace = out.with_name(out.name + "-checks.jsonl")  # each check's CPU, from the compile's own trace
    os.environ[TRACE_ENV] = str(trace)
    try:
        checks = run_checks(plan)
    finally:
        del os.environ[TRACE_ENV]
    stage_s["checks"] = since(t)
    for line in trace.read_text().splitlines():
        e = json.loads(line)
        if e["name"].startswith("check "):
            stage_s[e["name"]] = (e["user_s"] + e["sys_s"], e["sys_s"])
    peaks["checks"] = peak_mb()
    outputs = {}
    with OutputDir(out / plan.name) as w:
        for name, renderer in RENDERERS.items():
            t = cpu()
            with stage(f"render {name}"), w.output(name):  # as the compile does (pipeline.py)
                renderer.render(plan if renderer.reads == ALL else fabric_plan(plan), checks, w)
            outputs[name] = since(t)
            peaks[name] = peak_mb()
    gc.unfreeze()
    switches = sum(1 for d in plan.devices if d.role in ("leaf", "spine", "core", "super-spine"))
    return {"links": len(plan.links), "switches": switches, "plan_s": stage_s["spec -> plan"][0],
            "checks_s": stage_s["checks"][0], "stage_s": stage_s,
            "check_seconds": dict(checks.seconds), "outputs_s": {k: v[0] for k, v in outputs.items()},
            "outputs_sys_s": {k: v[1] for k, v in outputs.items()}, "peak_mb_after": peaks,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "labels": marks.labels if marks is not None else []}


def stages_in_fresh_processes(specs: dict[str, Path], out: Path, repeat: int) -> dict[str, dict]:
    """Per case, stages_in_process, each time in a new process (a compile is one process: a
    heap warmed by an earlier, smaller run would hide the page faults a user pays), `repeat`
    times; each stage's and output's figure is its least over the runs. A stage of a tenth
    of a second moves by a quarter between two runs on this machine (another process's
    moment, a page reclaimed), so one run's ratio of two sizes says more about that than
    about the code. The runs go round the cases (131k, 524k, 131k, 524k, ...), not a case's
    runs one after another: the machine drifts over a benchmark (its disk fills, freed
    memory goes back to the host), and every size then meets that drift alike, where
    running the largest last gave it the worst of it."""
    runs: dict[str, list] = {name: [] for name in specs}
    for i in range(repeat):
        for name, spec in specs.items():
            run_dir, result = out / f"stages-{name}-{i}", out / f"stages-{name}-{i}.json"
            run_process([sys.executable, __file__, "--stage-run", str(spec), str(run_dir), str(result)],
                        {**os.environ, "PYTHONPATH": str(ROOT)})
            if not result.exists():  # the run died (out of disk: each keeps its outputs until the end)
                raise SystemExit(f"the stage run {i + 1} of {spec.name} wrote no result; free disk space: "
                                 f"{shutil.disk_usage(out).free / 2**30:.1f} GB")
            runs[name].append(json.loads(result.read_text()))
    return {name: least(r) for name, r in runs.items()}


def stages_counted(specs: dict[str, Path], out: Path) -> dict[str, tuple[int, dict[str, int]]]:
    """Per case, one stage run under callgrind: its links and each stage's instructions (see
    benchmarks/instructions.py; one run, as a count does not move between runs). Some
    50x slower than a stage run: 7-8 min at 131,072 GPUs, 10 at 524,288."""
    counts = {}
    for name, spec in specs.items():
        run_dir, result, out_file = out / f"counted-{name}", out / f"counted-{name}.json", out / f"callgrind-{name}.out"
        run_process([*instructions.command(out_file), sys.executable, __file__, "--stage-run", str(spec), str(run_dir),
                     str(result), "--counted"], {**os.environ, "PYTHONPATH": str(ROOT), **instructions.environment(out_file)})
        if not result.exists():
            raise SystemExit(f"the counted stage run of {spec.name} wrote no result")
        run = json.loads(result.read_text())
        counts[name] = run["links"], instructions.totals(out_file, run["labels"])
    return counts


def print_counted_growth(small_run: tuple[int, dict[str, int]], large_run: tuple[int, dict[str, int]],
                         label: str) -> None:
    """Each stage's instructions at the larger size over the smaller, against the links'
    growth (the bar: 5 % over it)."""
    (small_links, small), (large_links, large) = small_run, large_run
    links = large_links / small_links
    print(f"\ninstructions {label}: {links:.1f}x the links, bar {1.05 * links:.1f}x (callgrind; user space only)")
    print("| stage | small (millions) | large (millions) | ratio |")
    print("|---|---|---|---|")
    for k, a in small.items():
        b = large.get(k)
        if b is None or max(a, b) < 50e6:  # under ~20 ms: the table's noise floor in CPU terms too
            continue
        print(f"| {k} | {a / 1e6:,.0f} | {b / 1e6:,.0f} | {b / a:.2f}x |")


def least(runs: list):
    """The element-wise least of several runs' results (numbers, pairs, dicts of them)."""
    first = runs[0]
    if isinstance(first, dict):
        return {k: least([r[k] for r in runs]) for k in first}
    if isinstance(first, list):  # (CPU, sys) of one stage: the pair of the run of least CPU
        return min(runs)
    if isinstance(first, float):
        return min(runs)
    return first  # counts (links, switches): the same in every run


def print_growth(small: dict, large: dict, label: str) -> None:
    """Each stage's CPU at the larger size over the smaller (the issue's bar: 5 % over the
    links' growth, 4.2x for 4x), with and without the kernel's share, beside what one pass
    over per-link arrays of the two sizes costs on this machine (machine_growth)."""
    def stages(st: dict) -> dict[str, tuple[float, float]]:
        # the checks' total under its own name: the output "checks" (checks.json) is another row
        rows = {("all checks" if k == "checks" else k): v for k, v in st["stage_s"].items()}
        rows.update({k: (v, st["outputs_sys_s"][k]) for k, v in st["outputs_s"].items()})
        return rows

    a, b = stages(small), stages(large)
    links = large["links"] / small["links"]
    passes = machine_growth(2 * small["links"], 2 * large["links"])  # directed links: the traffic arrays
    print(f"\ngrowth {label}: {links:.1f}x the links, bar {1.05 * links:.1f}x (CPU s in this process; "
          "'user' leaves out the kernel's share)")
    print("one pass over arrays of one value per directed link, on this machine: "
          + ", ".join(f"{k} {v:.1f}x" for k, v in passes.items()))
    print("| stage | small (CPU, sys) | large (CPU, sys) | CPU ratio | user ratio |")
    print("|---|---|---|---|---|")
    for k in a:
        if k not in b or max(a[k][0], b[k][0]) < 0.05:
            continue
        (ca, sa), (cb, sb) = a[k], b[k]
        user = (cb - sb) / (ca - sa) if ca - sa > 0 else float("nan")
        print(f"| {k} | {ca:.2f}, {sa:.2f} | {cb:.2f}, {sb:.2f} | {cb / ca:.1f}x | {user:.1f}x |")


def machine_growth(small: int, large: int) -> dict[str, float]:
    """What this machine's memory charges for one linear pass at each size (least of 25 runs,
    this thread's CPU): a gather by a random permutation, a gather that keeps near its place
    (as link tables mostly do), an element-wise product, a weighted bincount. Where the small
    size's arrays fit the processor's last-level cache and the large size's do not (on the
    development machine: 32 MB of L3 between 131,072 and 262,144 GPUs), each grows 5-10x for
    4x the elements, so a stage made of such passes cannot show the links' growth there."""
    import numpy as np

    from compiler.cli import tune_allocator

    tune_allocator()
    rng = np.random.default_rng(1)

    def least(f) -> float:
        best = float("inf")
        for _ in range(25):
            t = time.thread_time()
            f()
            best = min(best, time.thread_time() - t)
        return best

    def at(n: int) -> dict[str, float]:
        a, out = rng.random(n), np.empty(n)
        perm = rng.permutation(n)
        near = (np.arange(n) + rng.integers(-64, 64, n)).clip(0, n - 1)
        return {"random gather": least(lambda: np.take(a, perm, out=out)),
                "gather near in place": least(lambda: np.take(a, near, out=out)),
                "element-wise": least(lambda: np.multiply(a, 2.0, out=out)),
                "bincount": least(lambda: np.bincount(perm, weights=a, minlength=n))}

    at_small, at_large = at(small), at(large)
    return {name: at_large[name] / at_small[name] for name in at_small}


def render_by_workers(spec: Path, out: Path, counts: list[int]) -> dict[int, tuple[float, float]]:
    """write_outputs with each number of render workers: (wall s, CPU s with the workers)."""
    from compiler.check import run_checks
    from compiler.pipeline import build_plan, write_outputs

    def cpu() -> float:
        return sum(ru.ru_utime + ru.ru_stime for ru in (resource.getrusage(resource.RUSAGE_SELF),
                                                        resource.getrusage(resource.RUSAGE_CHILDREN)))

    _, plan = build_plan(spec)
    checks = run_checks(plan)
    times = {}
    for n in counts:
        t, c = time.perf_counter(), cpu()
        write_outputs(plan, out / str(n), checks=checks, workers=n)
        times[n] = (time.perf_counter() - t, cpu() - c)
    return times


PYAVD_SCRIPT = textwrap.dedent('''
    """pyavd on an eBGP leaf-spine fabric of {leaves} leaves and {spines} spines, as its docs show."""
    import sys
    from pyavd import (get_avd_facts, get_device_config, get_device_structured_config,
                       get_fabric_documentation, validate_inputs)

    LEAVES, SPINES = {leaves}, {spines}
    spines = [f"spine{{s + 1}}" for s in range(SPINES)]
    fabric = {{
        "fabric_name": "FABRIC",
        "underlay_routing_protocol": "ebgp",
        "spine": {{"defaults": {{"platform": "7800R3", "loopback_ipv4_pool": "10.255.0.0/22", "bgp_as": "65000"}},
                   "nodes": [{{"name": n, "id": s + 1, "mgmt_ip": f"172.16.0.{{s + 1}}/16"}} for s, n in enumerate(spines)]}},
        "l3leaf": {{"defaults": {{"platform": "7060X6", "loopback_ipv4_pool": "10.254.0.0/22",
                                  "vtep_loopback_ipv4_pool": "10.253.0.0/22", "uplink_switches": spines,
                                  "uplink_interfaces": [f"Ethernet{{s + 1}}/1" for s in range(SPINES)],
                                  "uplink_ipv4_pool": "10.0.0.0/14"}},
                    "node_groups": [{{"group": f"leaf{{i + 1}}", "bgp_as": str(65001 + i),
                                      "nodes": [{{"name": f"leaf{{i + 1}}", "id": i + 1, "mgmt_ip": f"172.17.{{i // 250}}.{{i % 250 + 1}}/16",
                                                  "uplink_switch_interfaces": [f"Ethernet{{i + 1}}/1"] * SPINES}}]}}
                                    for i in range(LEAVES)]}},
    }}
    inputs = {{n: dict(fabric, type="spine") for n in spines}}
    inputs.update({{f"leaf{{i + 1}}": dict(fabric, type="l3leaf") for i in range(LEAVES)}})
    validated = {{}}
    for name, data in inputs.items():
        result = validate_inputs(data)
        if result.validation_result.violations:
            sys.exit(f"{{name}}: {{result.validation_result.violations[:3]}}")
        validated[name] = result.validated_data
    inputs = validated
    facts = get_avd_facts(inputs)
    structured = {{name: get_device_structured_config(name, data, facts) for name, data in inputs.items()}}
    configs = {{name: get_device_config(s) for name, s in structured.items()}}
    docs = get_fabric_documentation(facts, structured, "FABRIC")
    print(len(configs), sum(len(c) for c in configs.values()), len(docs.fabric_documentation))
''')


def pyavd_process(python: str, leaves: int, spines: int, work: Path) -> dict:
    script = work / "pyavd_fabric.py"
    script.write_text(PYAVD_SCRIPT.format(leaves=leaves, spines=spines))
    return run_process([python, str(script)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help=f"comma-separated of {', '.join(CASES)}, or all")
    ap.add_argument("--pyavd-python", help="a Python with pyavd installed: also time pyavd on as many switches")
    ap.add_argument("--avd-spines", type=int, default=16, help="spines of the pyavd fabric (leaves: the rest)")
    ap.add_argument("--skip-stages", action="store_true", help="whole processes only")
    ap.add_argument("--trace", action="store_true", help="print the compile's timeline of stages and workers")
    ap.add_argument("--keep", action="store_true",
                    help="leave the compiled outputs in place (printed) instead of deleting them: on ext4 "
                         "without a journal, deleting many files slows the next run's file creation for minutes")
    ap.add_argument("--dir", help="where the compiles write (default: a new folder in the temporary directory)")
    ap.add_argument("--workers", help="also time the render stage with these numbers of workers, e.g. 1,2")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run each case's stages this many times, each in a new process, and keep each "
                         "stage's least CPU (the growth table's ratios steady to a few percent with 3); every "
                         "run's outputs stay until the end: 2.6 GB a run at 524,288 GPUs")
    ap.add_argument("--drop-caches", action="store_true",
                    help="before each measured process, sync and drop the page cache (root): every run starts "
                         "from the same memory state, not one filled by the runs before it")
    ap.add_argument("--instructions", action="store_true",
                    help="also count each stage's instructions under valgrind's callgrind, one run a case (the "
                         "growth in work, steady from run to run; ~10 min at 524,288 GPUs)")
    ap.add_argument("--stage-run", nargs=3, metavar=("SPEC", "OUT", "RESULT"), help=argparse.SUPPRESS)
    ap.add_argument("--counted", action="store_true", help=argparse.SUPPRESS)  # the stage run is under callgrind
    args = ap.parse_args()
    global drop_caches
    drop_caches = args.drop_caches
    if args.stage_run:  # one stage run in this (new) process, its result as JSON
        spec, out, result = (Path(a) for a in args.stage_run)
        Path(result).write_text(json.dumps(stages_in_process(spec, out, counted=args.counted)))
        return
    if args.instructions and not instructions.available():
        raise SystemExit("--instructions needs valgrind (Debian's valgrind package)")
    names = list(CASES) if args.cases == "all" else args.cases.split(",")
    byte_compile()
    work = Path(tempfile.mkdtemp(prefix="clusterc-perf-", dir=args.dir))
    global warm_root
    warm_root = work
    rows = []
    try:
        specs, wholes = {}, {}
        for name in names:
            what, text = CASES[name]
            specs[name] = work / f"{name}.yaml"
            specs[name].write_text(text)
            # Nothing is deleted until the end: on ext4 without a journal (this machine's
            # disk), creating a file skips over every inode freed in the last minutes, so a
            # compile right after a deletion of many files pays seconds of system time that
            # belong to the deletion, not to the compile.
            whole = wholes[name] = compile_process(specs[name], work / f"cli-{name}",
                                                   work / f"trace-{name}.jsonl" if args.trace else None)
            print(f"{name}: {what}\n  clusterc compile: {whole['wall_s']:.1f} s wall, {whole['cpu_s']:.1f} s CPU, "
                  f"{whole['rss_mb']:,.0f} MB largest process", flush=True)  # printed now: a failed stage run loses nothing
        staged = {} if args.skip_stages else stages_in_fresh_processes(specs, work, args.repeat)
        counted = stages_counted(specs, work) if args.instructions else {}
        for name in names:
            what, spec, whole, stages = CASES[name][0], specs[name], wholes[name], staged.get(name)
            trace = work / f"trace-{name}.jsonl" if args.trace else None
            rows.append((name, what, whole, stages))
            print(f"{name} ({what}):", flush=True)
            if trace is not None:
                print_trace(trace, whole)
            if stages:
                print(f"  {stages['links']:,} links, {stages['switches']:,} switches; CPU s: spec -> plan "
                      f"{stages['plan_s']:.2f}, checks {stages['checks_s']:.2f} (wall s each: "
                      f"{', '.join(f'{k} {v:.2f}' for k, v in stages['check_seconds'].items() if v >= 0.05)})")
                slow = sorted(stages["outputs_s"].items(), key=lambda kv: -kv[1])
                print("  outputs: " + ", ".join(f"{k} {v:.2f}" for k, v in slow if v >= 0.05)
                      + f"; total {sum(stages['outputs_s'].values()):.2f}; peak {stages['rss_mb']:,.0f} MB", flush=True)
                grew, last = [], 0.0
                for k, mb in stages["peak_mb_after"].items():
                    if mb > last + 1:
                        grew.append(f"{k} {mb:,.0f}")
                    last = mb
                print("  peak resident set after each stage that raised it (MB): " + ", ".join(grew), flush=True)
            if name in counted:
                stages = {k: v for k, v in counted[name][1].items() if k != instructions.START_UP}
                top = sorted(stages.items(), key=lambda kv: -kv[1])[:8]
                print("  instructions (millions): " + ", ".join(f"{k} {v / 1e6:,.0f}" for k, v in top)
                      + f"; all stages after the start-up {sum(stages.values()) / 1e6:,.0f} (as the docs' table)",
                      flush=True)
            if args.workers:
                by = render_by_workers(spec, work / f"workers-{name}", [int(n) for n in args.workers.split(",")])
                print("  render stage by workers: " + ", ".join(f"{n}: {w:.1f} s wall, {c:.1f} s CPU"
                                                               for n, (w, c) in by.items()), flush=True)
            if name == "eos512" and args.pyavd_python and stages:
                leaves = stages["switches"] - args.avd_spines
                avd = pyavd_process(args.pyavd_python, leaves, args.avd_spines, work)
                print(f"  pyavd ({leaves} leaves, {args.avd_spines} spines): {avd['wall_s']:.1f} s wall, "
                      f"{avd['cpu_s']:.1f} s CPU, {avd['rss_mb']:,.0f} MB; clusterc {avd['wall_s'] / whole['wall_s']:.1f}x "
                      f"faster (wall), {avd['cpu_s'] / whole['cpu_s']:.1f}x (CPU)", flush=True)
        by_name = {name: stages for name, _, _, stages in rows if stages}
        for small, large, label in (("131k", "524k", "131,072 -> 524,288 GPUs"), ("262k", "524k", "262,144 -> 524,288 GPUs")):
            if small in by_name and large in by_name:
                print_growth(by_name[small], by_name[large], label)
            if small in counted and large in counted:
                print_counted_growth(counted[small], counted[large], label)
        print("\n| fabric | clusterc compile (wall, CPU, largest process) | slowest outputs (CPU s) |")
        print("|---|---|---|")
        for _name, what, whole, stages in rows:
            slowest = "" if stages is None else ", ".join(
                f"{k} {v:.1f}" for k, v in sorted(stages["outputs_s"].items(), key=lambda kv: -kv[1])[:5])
            print(f"| {what} | {whole['wall_s']:.1f} s, {whole['cpu_s']:.1f} s, {whole['rss_mb'] / 1024:.2f} GB | {slowest} |")
    finally:
        if args.keep:
            print(f"outputs left in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
