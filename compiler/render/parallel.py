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

import ctypes
import gc
import multiprocessing
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Protocol

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


_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """In a forked child: be killed when the compile's process dies. A compile killed with
    SIGKILL cannot stop its children itself, and a child left running would go on writing
    into the staging folder the next compile cleans up. Linux only (prctl); elsewhere the
    child still exits when it finds its parent gone."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


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
    parent = os.getpid()
    for k in range(workers):
        pid = os.fork()
        if pid == 0:  # child: never return into the caller's stack
            _die_with(parent)
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


class Jobs(Protocol):
    """Work that must be done before the outputs that read its result (the checks): len(jobs)
    independent jobs, longest first; run(k) returns job k's result (small: it is pickled
    back from a worker) or raises; finish(results) turns every job's result (or its
    exception), in job order, into the value handed to those outputs."""

    def __len__(self) -> int: ...

    def run(self, k: int) -> object: ...

    def finish(self, results: list) -> object: ...


class Done:
    """Jobs already done: no job, and `value` as their result."""

    def __init__(self, value: object):
        self.value = value

    def __len__(self) -> int:
        return 0

    def run(self, k: int) -> object:
        raise IndexError(k)

    def finish(self, results: list) -> object:
        return self.value


def render_at_once(plan: Plan, out: OutputDir, names: list[str], workers: int,
                   renderer_call: Callable[[str, object], Callable[[], None]],
                   jobs: Jobs, reads_checks: set[str], here: Collection[str] = ()) -> object:
    """Render `names` in this process and `workers` - 1 children forked from it, then adopt
    them into `out` in the order of `names`.

    The children are forked first, before the checks run, so they share the plan as it was
    built and no check temporaries. Two queues (one byte per item in a pipe: each byte is
    read by exactly one process) hold the check jobs (`jobs`), which only the children
    take (each child before any output), and the outputs that read no check result, longest
    first, which every process takes (this one from the start). A check job's result
    goes to a small file and its number down a third pipe; this process collects them
    between items, and as soon as it has all of them it finishes the checks
    (`jobs.finish`) and renders the outputs that read them (`reads_checks`), then takes
    from the queue again. The checks' imports (scipy, ~0.3 s) are thus paid by the
    children alone, after the fork, while this process renders. It renders the outputs of `here` (those that share derived data
    with the ones that read the checks: computed once, here) before it takes from the
    queue. One fork per worker for the whole render, and nothing but small
    files of results and errors goes back. renderer_call(name, checks)() renders one
    output; outputs that read no check result get a NotChecked, which refuses to be read. A
    renderer's exception is raised here, the first in output order, once every process has
    stopped, and nothing is swapped in (OutputDir's all-or-nothing); a check's is raised as
    jobs.finish raises it, as a serial compile raises it. Returns what jobs.finish returned."""
    global _in_pool
    n_jobs = len(jobs)
    queue = [n for n in longest_first(names) if n not in reads_checks and n not in here]
    if max(n_jobs, len(queue)) > 256:
        raise ValueError(f"{n_jobs} check jobs and {len(queue)} outputs: a render queue holds at most 256")
    read_end = _queue(range(len(queue)))
    jobs_end = _queue(range(n_jobs))
    done_read, done_write = os.pipe()  # the number of each check job a worker has finished
    sys.stdout.flush()  # a child flushes its streams as it exits: nothing buffered may be printed twice
    sys.stderr.flush()
    # The plan's objects stay out of every process's collections: fewer pages copied. No
    # collection first: it walks every object alive (0.05 s at 131,072 GPUs, before any
    # worker starts) to free the few cycles there are, which unfreeze() returns to the GC.
    gc.freeze()
    _in_pool = True  # one output per process at a time: in_shares forks nothing more
    children: dict[int, Path] = {}
    failed: dict[str, BaseException] = {}
    assert out.tmp is not None
    staging = out.tmp / STAGING
    staging.mkdir(exist_ok=True)
    results: dict[int, object] = {}
    checks: list[object] = []  # jobs.finish's value, once every job has reported
    parent = os.getpid()
    try:
        try:
            for k in range(workers - 1):
                report = staging / f".worker-{k}.pickle"
                pid = os.fork()
                if pid == 0:  # child: never returns into the caller's stack
                    _die_with(parent)
                    os.close(done_read)
                    _worker(plan, out, queue, (jobs_end, read_end), renderer_call, report, jobs, done_write, staging)
                children[pid] = report
            os.close(done_write)  # the workers hold it: once all have exited, a read returns b""
            done_write = -1

            def checks_ready() -> None:
                if not checks and _collect(staging, done_read, results, block=False) == n_jobs:
                    with stage("checks"):
                        checks.append(jobs.finish([results[k] for k in range(n_jobs)]))
                    for name in (n for n in names if n in reads_checks):
                        _render_here(out, name, renderer_call(name, checks[0]), failed)

            checks_ready()
            for name in (n for n in names if n in here):
                if not failed:
                    _render_here(out, name, renderer_call(name, NotChecked(name)), failed)
            checks_ready()
            while not failed and (token := os.read(read_end, 1)):
                name = queue[token[0]]
                _render_here(out, name, renderer_call(name, NotChecked(name)), failed)
                checks_ready()
            if not failed and not checks:
                with stage("checks: waiting for the workers"):
                    _collect(staging, done_read, results, block=True)
                if len(results) < n_jobs:
                    raise RuntimeError(f"{n_jobs - len(results)} check job(s) were taken by a worker that exited "
                                       "before it reported")
                checks_ready()
        finally:
            for end in (jobs_end, read_end):  # on a failure here: the children take nothing more
                while os.read(end, 256):
                    pass
            with stage("render: waiting for the workers"):
                _wait(plan, out, children, failed)
    finally:
        os.close(read_end)
        os.close(jobs_end)
        os.close(done_read)
        if done_write >= 0:
            os.close(done_write)
        _in_pool = False
        gc.unfreeze()
    first = next((failed[n] for n in names if n in failed), failed.get(""))
    if first is not None:
        raise first
    with stage("adopt"):
        for name in names:
            out.adopt(name)
        out.end_staging()
    return checks[0]


def _queue(items: range) -> int:
    """A pipe's read end from which `items` (at most 256) can be taken, one byte each, by
    any number of processes; once they are taken, a read returns b"" (done)."""
    read_end, write_end = os.pipe()
    os.write(write_end, bytes(items))  # a few dozen bytes: far below a pipe's capacity
    os.close(write_end)
    return read_end


def _run_job(jobs: Jobs, k: int) -> object:
    """Check job k's result, or its exception as one that can cross from a worker (pickled)."""
    try:
        return jobs.run(k)
    except BaseException as exc:  # noqa: BLE001 - handed to jobs.finish, which raises it
        return _crossable(exc, f"check job {k}")


def _job_file(staging: Path, k: int) -> Path:
    return staging / f".check-job-{k}.pickle"


def _collect(staging: Path, done_read: int, results: dict[int, object], block: bool) -> int:
    """Add to `results` the check jobs workers have finished since the last call (all that
    are left, where `block`: until every worker has exited); how many results there are."""
    os.set_blocking(done_read, block)
    try:
        while chunk := os.read(done_read, 256):
            for k in chunk:
                path = _job_file(staging, k)
                results[k] = pickle.loads(path.read_bytes())
                path.unlink()
    except BlockingIOError:
        pass
    return len(results)


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


def _worker(plan: Plan, out: OutputDir, queue: list[str], ends: tuple[int, int], renderer_call: Callable[[str, object], Callable[[], None]],
            report: Path, jobs: Jobs, done_write: int, staging: Path) -> None:
    """A forked child: take check jobs from the first queue of `ends` until it is empty (each
    job's result to its file, its number down `done_write`), then outputs from the second
    until it is empty (or an output fails); then write the failures (name -> exception)
    and the MEMOS_BACK it computed to `report`, exit. Never returns."""
    code = 0
    since = usage()
    try:
        quiet()
        failed: dict[str, BaseException] = {}
        jobs_end, read_end = ends
        while token := os.read(jobs_end, 1):
            item = token[0]
            _job_file(staging, item).write_bytes(pickle.dumps(_run_job(jobs, item)))
            os.write(done_write, bytes([item]))
        while not failed and (token := os.read(read_end, 1)):
            name = queue[token[0]]
            _render_here(out, name, renderer_call(name, NotChecked(name)), failed)
        memos = {key: value for key in MEMOS_BACK if (value := plan.memoized(key)) is not None}
        report.write_bytes(pickle.dumps((failed, memos, out.staged_files)))
    except BaseException:  # noqa: BLE001 - reported through the exit status
        traceback.print_exc()
        code = 1
    finally:
        trace_line("render worker", since)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _wait(plan: Plan, out: OutputDir, children: dict[int, Path], failed: dict[str, BaseException]) -> None:
    """Wait for every child; add the failures each reports to `failed` (a child that died
    without reporting is a failure of the render as a whole), its MEMOS_BACK to `plan`, and
    the files of the outputs it rendered to `out` (OutputDir.staged_files: the adopt need
    not list them again, alone on one core at the end of the compile)."""
    for pid, results in children.items():
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        try:
            theirs, memos, files = pickle.loads(results.read_bytes())
            results.unlink()
        except (OSError, pickle.UnpicklingError, EOFError):
            theirs, memos, files = {"": RuntimeError(f"a render worker (pid {pid}) exited with status {code} "
                                                     "before it reported")}, {}, {}
        failed.update(theirs)
        out.staged_files.update(files)
        for key, value in memos.items():
            plan.memo(key, lambda _plan, value=value: value)


def _render_staged(out: OutputDir, name: str, call: Callable[[], None]) -> BaseException | None:
    """Render output `name` into its staging folder; its exception, if any, as one that can
    cross to the parent (pickled)."""
    try:
        with stage(f"render {name}"), out.staged(name):
            call()
    except BaseException as exc:  # noqa: BLE001 - handed back, then raised by the parent
        return _crossable(exc, f"output {name}")
    return None


def _crossable(exc: BaseException, what: str) -> BaseException:
    """`exc` as it is where it pickles, else a RuntimeError with its traceback (called in its
    except block)."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{what} failed in a worker process:\n{traceback.format_exc()}")
    return exc
