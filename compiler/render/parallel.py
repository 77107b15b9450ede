"""Outputs rendered at once on the machine's cores.

Every renderer is independent of the others (each reads the plan and the check results
and writes its own entries), so a large compile hands them to a pool of worker processes
forked from this one: the children share the plan (0.5 GB at 131,072 GPUs) copy-on-write
instead of receiving a copy. Each worker writes an output into a folder of its own
(OutputDir.staged) and the parent moves them in place in output order (OutputDir.adopt),
so the files, the manifest and the folder's atomic swap are exactly a serial compile's,
whatever the number of workers. Where fork is not available (or on one core, or for a
plan small enough that starting workers costs more than it saves) everything renders in
this process, as it always did.

The one other fork here, `in_shares`, splits one long output (the switch configs of
thousands of switches) over the cores: each child writes its share of the files. Both
count the cores with `cores()`, and $CLUSTERC_RENDER_WORKERS=1 keeps every render in the
compile's own process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import pickle
import sys
import traceback
from collections.abc import Callable

from ..plan.model import Plan
from ..progress import quiet, stage
from .writer import OutputDir

# Below this many links every output takes milliseconds: forking workers would cost more.
PARALLEL_FROM_LINKS = 20_000
# Overrides the number of render workers for every compile (1: render in the compile's own process).
WORKERS_ENV = "CLUSTERC_RENDER_WORKERS"
# At most this many workers: the outputs are about twenty, a handful of them long.
MAX_WORKERS = 8

# The longest outputs on a large plan start first so that none of them is left running
# alone at the end (CPU seconds at 131,072 GPUs: benchmarks/performance.py); the rest follow
# in registry order. Only the order of the work changes, never what is written.
LONG_FIRST = ("configs", "cable-validation", "graphml", "monitoring", "cabling", "host-configs", "netbox", "diagrams",
              "plan")

# What the workers render: set in the parent just before it forks them, so they inherit
# it (the output folder, and renderer_call(name) -> a call that renders that output).
_job: tuple[OutputDir, Callable[[str], Callable[[], None]]] | None = None


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
    more than it saves, or where fork is not available."""
    if not hasattr(os, "fork") or items < from_items:
        return 1
    env = _workers_from_env()
    return max(1, min(env, MAX_WORKERS)) if env is not None else cores()


def in_shares(work: Callable[[int, int], None], workers: int) -> None:
    """Run work(k, workers) for k = 0 .. workers - 1, each in a child forked from this
    process (it inherits what `work` reads; each share must write files no other share
    writes, so the output is what one process writes); wait for all. A share's exception
    is printed by its child and raised here as a RuntimeError. workers <= 1: work(0, 1)
    here. Plain os.fork, not a Pool: a render pool's worker is a daemon process, which
    multiprocessing forbids to start children."""
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


def render_at_once(out: OutputDir, names: list[str], workers: int,
                   renderer_call: Callable[[str], Callable[[], None]]) -> None:
    """Render `names` in `workers` forked processes (renderer_call(name)() renders one), then
    adopt them into `out` in the order of `names`. A renderer's exception is raised here,
    the first in output order, and nothing is swapped in (OutputDir's all-or-nothing)."""
    global _job
    order = [n for n in LONG_FIRST if n in names] + [n for n in names if n not in LONG_FIRST]
    _job = (out, renderer_call)
    sys.stdout.flush()  # a worker flushes its streams as it exits: nothing buffered may be printed twice
    sys.stderr.flush()
    gc.collect()
    gc.freeze()  # the plan's objects stay out of the children's collections: fewer pages copied
    try:
        with multiprocessing.get_context("fork").Pool(min(workers, len(names)), initializer=quiet) as pool:
            pending = {name: pool.apply_async(_render_staged, (name,)) for name in order}
            for name in names:
                with stage(f"render {name}"):
                    pending[name].get()
                    out.adopt(name)
    finally:
        _job = None
        gc.unfreeze()
    out.end_staging()


def _render_staged(name: str) -> None:
    """In a worker: render output `name` into its staging folder. An exception that cannot
    cross to the parent as it is (pickled) goes as a RuntimeError with its traceback."""
    assert _job is not None
    out, renderer_call = _job
    try:
        with out.staged(name):
            renderer_call(name)()
    except BaseException as exc:  # noqa: BLE001 - re-raised, or its text raised
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:  # noqa: BLE001
            raise RuntimeError(f"output {name} failed in a worker process:\n{traceback.format_exc()}") from None
        raise
