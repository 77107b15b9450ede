"""Outputs rendered at once on the machine's cores.

Every renderer is independent of the others (each reads the plan and, for three of them,
the check results, and writes its own entries), so a large compile renders them in this
process and in worker processes forked from it (render_at_once): the children share the
plan (0.5 GB at 131,072 GPUs) copy-on-write instead of receiving a copy. They are forked
once, before the checks run, and take the outputs that read no check result from a queue,
longest first, while this process runs the checks, renders the outputs that read them,
and then takes from the queue too: every core is busy from the end of expand to the last
output. Each process writes an output into a folder of its own (OutputDir.staged) and this
one moves them in place in output order (OutputDir.adopt), so the files, the manifest and
the folder's atomic swap are exactly a serial compile's, whatever the number of workers. Where fork is not available (or on one core, or for a
plan small enough that starting workers costs more than it saves) everything renders in
this process, as it always did.

The one other fork here, `in_shares`, splits one long output (the switch configs of
thousands of switches) over the cores: each child writes its share of the files. Both
count the cores with `cores()`, and $CLUSTERC_RENDER_WORKERS=1 keeps every render in the
compile's own process. Inside render_at_once it forks nothing: each core has an output of
its own already, and every other fork copies more of the plan's pages.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from ..plan.model import Plan
from ..progress import quiet, stage, trace_line, usage
from .writer import STAGING, OutputDir

# Below this many links every output takes milliseconds: forking workers would cost more.
PARALLEL_FROM_LINKS = 20_000
# Overrides the number of render workers for every compile (1: render in the compile's own process).
WORKERS_ENV = "CLUSTERC_RENDER_WORKERS"
# At most this many workers: the outputs are about twenty, a handful of them long.
MAX_WORKERS = 8

# The outputs of a large plan that take longest start first, so that none of them is left
# running alone at the end (longest processing time first); the rest follow in registry
# order. CPU seconds at 131,072 GPUs (benchmarks/performance.py --trace): configs 4-6,
# cabling 2.5-3, cable-validation 2.4, host-configs 1.6-2, netbox 1.6, diagrams 1.4, graphml
# 1.3, monitoring 1.2, plan.json 1, interop 0.5, every other output under 0.2. Only the order
# of the work changes, never what is written.
LONG_FIRST = ("configs", "cabling", "cable-validation", "host-configs", "netbox", "diagrams", "graphml", "monitoring",
              "plan", "interop")

# Small derived values a worker may compute that this process reads after the render: the
# plan's digest (the manifest's plan_sha256), which plan.json's renderer computes on the way.
# They come back with the worker's report instead of being computed twice.
MEMOS_BACK = ("plan_sha256",)

# True while render_at_once runs (in its own process and the children it forks).
_in_pool = False


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS has one), at most
    MAX_WORKERS."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(n, MAX_WORKERS))


def _workers_from_env() -> int | None:
    text = os.environ.get(WORKERS_ENV, "").strip()
    return int(text) if text.isdigit() else None


def render_workers(plan: Plan, requested: int | None = None) -> int:
    """How many processes render: `requested`, else $CLUSTERC_RENDER_WORKERS, else the cores
    this process may use (for a plan of at least PARALLEL_FROM_LINKS links); 1 where fork
    is not available."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if requested is None:
        requested = _workers_from_env()
    if requested is not None:
        return max(1, requested)
    if len(plan.links) < PARALLEL_FROM_LINKS:
        return 1
    return cores()


def share_workers(items: int, from_items: int) -> int:
    """How many forked children `in_shares` should split `items` pieces of work over: the
    cores (or $CLUSTERC_RENDER_WORKERS), 1 below `from_items` pieces, where forking costs
    more than it saves, where fork is not available, or while render_at_once keeps every
    core busy with an output of its own (more children would only copy more pages)."""
    if not hasattr(os, "fork") or items < from_items or _in_pool:
        return 1
    env = _workers_from_env()
    return max(1, min(env, MAX_WORKERS)) if env is not None else cores()


def in_shares(work: Callable[[int, int], None], workers: int) -> None:
    """Run work(k, workers) for k = 0 .. workers - 1, each in a child forked from this
    process (it inherits what `work` reads; each share must write files no other share
    writes, so the output is what one process writes); wait for all. A share's exception
    is printed by its child and raised here as a RuntimeError. workers <= 1: work(0, 1)
    here. Plain os.fork, as render_at_once: what the children need is inherited, not pickled."""
    if workers <= 1:
        work(0, 1)
        return
    sys.stdout.flush()  # a child's exit flushes inherited buffers: nothing may be printed twice
    sys.stderr.flush()
    pids = []
    for k in range(workers):
        pid = os.fork()
        if pid == 0:  # child: never return into the caller's stack
            code = 0
            try:
                work(k, workers)
            except BaseException:  # noqa: BLE001 - reported through the exit status
                traceback.print_exc()
                code = 1
            finally:
                os._exit(code)
        pids.append(pid)
    failed = [pid for pid in pids if os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0]
    if failed:
        raise RuntimeError(f"{len(failed)} of {workers} forked share(s) failed (their tracebacks are above)")


def render_at_once(plan: Plan, out: OutputDir, names: list[str], workers: int,
                   renderer_call: Callable[[str, object], Callable[[], None]],
                   run_checks: Callable[[], object], reads_checks: set[str]) -> None:
    """Render `names` in this process and `workers` - 1 children forked from it, then adopt
    them into `out` in the order of `names`.

    The children are forked first, before the checks run, so they share the plan as it was
    built and no check temporaries; each takes outputs that read no check result from a
    queue (one byte per output in a pipe: each byte is read by exactly one process), longest
    first. This process runs the checks (`run_checks()`: the check results), renders the
    outputs that read them (`reads_checks`), then takes from the same queue. One fork per
    worker for the whole render, and nothing but a small file of errors goes back.
    renderer_call(name, checks)() renders one output; outputs that read no check result get
    a NotChecked, which refuses to be read. A renderer's exception is raised here, the first
    in output order, once every process has stopped, and nothing is swapped in (OutputDir's
    all-or-nothing)."""
    global _in_pool
    queue = [n for n in longest_first(names) if n not in reads_checks]
    if len(queue) > 255:
        raise ValueError(f"{len(queue)} outputs: the render queue holds at most 255")
    read_end, write_end = os.pipe()
    os.write(write_end, bytes(range(len(queue))))  # a few dozen bytes: far below a pipe's capacity
    os.close(write_end)  # the queue is complete: a read of an empty queue returns b"" (done)
    sys.stdout.flush()  # a child flushes its streams as it exits: nothing buffered may be printed twice
    sys.stderr.flush()
    gc.collect()
    gc.freeze()  # the plan's objects stay out of every process's collections: fewer pages copied
    _in_pool = True  # one output per process at a time: in_shares forks nothing more
    children: dict[int, Path] = {}
    failed: dict[str, BaseException] = {}
    assert out.tmp is not None
    staging = out.tmp / STAGING
    staging.mkdir(exist_ok=True)
    try:
        try:
            for k in range(workers - 1):
                results = staging / f".worker-{k}.pickle"
                pid = os.fork()
                if pid == 0:  # child: never returns into the caller's stack
                    _worker(plan, out, queue, read_end, renderer_call, results)
                children[pid] = results
            with stage("checks"):
                checks = run_checks()
            for name in (n for n in names if n in reads_checks):
                _render_here(out, name, renderer_call(name, checks), failed)
            while not failed and (token := os.read(read_end, 1)):
                name = queue[token[0]]
                _render_here(out, name, renderer_call(name, NotChecked(name)), failed)
        finally:
            while os.read(read_end, 256):  # on a failure here: the children take nothing more
                pass
            with stage("render: waiting for the workers"):
                _wait(plan, children, failed)
    finally:
        os.close(read_end)
        _in_pool = False
        gc.unfreeze()
    first = next((failed[n] for n in names if n in failed), failed.get(""))
    if first is not None:
        raise first
    with stage("adopt"):
        for name in names:
            out.adopt(name)
        out.end_staging()


def longest_first(names: list[str]) -> list[str]:
    """`names`, the longest outputs (LONG_FIRST) first, then the rest in their order."""
    return [n for n in LONG_FIRST if n in names] + [n for n in names if n not in LONG_FIRST]


class NotChecked:
    """What a queued output is handed instead of the check results, which do not exist yet
    when the workers are forked: reading it is a bug in the registry (Renderer.reads_checks)."""

    def __init__(self, output: str):
        self.output = output

    def __getattr__(self, attribute: str) -> object:
        raise AssertionError(f"output {self.output} read checks.{attribute} but is registered without "
                             "reads_checks=True (compiler/render/__init__.py)")


def _render_here(out: OutputDir, name: str, call: Callable[[], None], failed: dict[str, BaseException]) -> None:
    error = _render_staged(out, name, call)
    if error is not None:
        failed[name] = error


def _worker(plan: Plan, out: OutputDir, queue: list[str], read_end: int, renderer_call: Callable[[str, object], Callable[[], None]],
            results: Path) -> None:
    """A forked child: render outputs from the queue until it is empty (or one fails), write
    the failures (name -> exception) and the MEMOS_BACK it computed to `results`, exit.
    Never returns."""
    code = 0
    since = usage()
    try:
        quiet()
        failed: dict[str, BaseException] = {}
        while not failed and (token := os.read(read_end, 1)):
            name = queue[token[0]]
            _render_here(out, name, renderer_call(name, NotChecked(name)), failed)
        memos = {key: value for key in MEMOS_BACK if (value := plan.memoized(key)) is not None}
        results.write_bytes(pickle.dumps((failed, memos)))
    except BaseException:  # noqa: BLE001 - reported through the exit status
        traceback.print_exc()
        code = 1
    finally:
        trace_line("render worker", since)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _wait(plan: Plan, children: dict[int, Path], failed: dict[str, BaseException]) -> None:
    """Wait for every child; add the failures each reports to `failed` (a child that died
    without reporting is a failure of the render as a whole), and its MEMOS_BACK to `plan`."""
    for pid, results in children.items():
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        try:
            theirs, memos = pickle.loads(results.read_bytes())
            results.unlink()
        except (OSError, pickle.UnpicklingError, EOFError):
            theirs, memos = {"": RuntimeError(f"a render worker (pid {pid}) exited with status {code} "
                                              "before it reported")}, {}
        failed.update(theirs)
        for key, value in memos.items():
            plan.memo(key, lambda _plan, value=value: value)


def _render_staged(out: OutputDir, name: str, call: Callable[[], None]) -> BaseException | None:
    """Render output `name` into its staging folder; its exception, if any, as one that can
    cross to the parent (pickled): as it is, or as a RuntimeError with its traceback."""
    try:
        with stage(f"render {name}"), out.staged(name):
            call()
    except BaseException as exc:  # noqa: BLE001 - handed back, then raised by the parent
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001
            return RuntimeError(f"output {name} failed in a worker process:\n{traceback.format_exc()}")
        return exc
    return None
