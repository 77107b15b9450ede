"""Outputs rendered at once by worker processes (render/parallel.py): the same files and
manifest as one process writes, every output rendered outside the parent, a worker's
failure raised in the parent with the previous output left as it was."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import time

import pytest

from compiler.pipeline import write_outputs
from compiler.render import RENDERERS, Renderer
from compiler.render.parallel import PARALLEL_FROM_LINKS, render_workers

from .conftest import ROOT, SPECS, cli_in_process, outputs_of, run_cli, shared_checks, shared_plan, tree_bytes

# physical layout (cabling.xlsx, racks), several fabrics, every Ethernet output; and SONiC configs
SPECS_OF_MANY_OUTPUTS = ["h100-superpod-1su-multi-fabric-hall.yaml", "roce-2spine-4leaf-sonic.yaml"]


@pytest.mark.parametrize("spec", SPECS_OF_MANY_OUTPUTS)
def test_one_and_two_workers_write_the_same_bytes(tmp_path, spec):
    plan = shared_plan(SPECS / spec)
    checks = shared_checks(plan)
    one = tree_bytes(write_outputs(plan, tmp_path / "1", checks=checks, workers=1))
    two = tree_bytes(write_outputs(plan, tmp_path / "2", checks=checks, workers=2))
    assert sorted(one) == sorted(two) and one == two
    manifest = json.loads(one["manifest.json"])
    assert list(manifest["outputs"]) == sorted(RENDERERS)
    assert not any(".staging" in f for f in two)


def test_the_compile_and_one_forked_worker_render_each_output_once(tmp_path, monkeypatch):
    """Two workers: this process and one child share the outputs; the outputs that read the
    check results render here, after the checks."""
    plan = shared_plan("roce-2spine-4leaf-sonic")
    seen = tmp_path / "pids"
    seen.mkdir()

    def spy(name, render):
        def wrapped(plan, checks, out):
            with open(seen / name, "a") as fh:
                fh.write(f"{os.getpid()}\n")
            render(plan, checks, out)
        return wrapped

    for name, r in list(RENDERERS.items()):
        monkeypatch.setitem(RENDERERS, name, dataclasses.replace(r, render=spy(name, r.render)))
    outputs_of(plan, tmp_path / "out", workers=2)
    pids = {p.name: [int(line) for line in p.read_text().split()] for p in seen.iterdir()}
    assert sorted(pids) == sorted(RENDERERS) and all(len(v) == 1 for v in pids.values())
    readers = {n for n, r in RENDERERS.items() if r.reads_checks}
    assert readers == {"summary", "checks", "report", "workbook"}
    assert {pids[n][0] for n in readers} == {os.getpid()}
    # and so do the other outputs that read the bill of materials: computed once, here
    assert {pids[n][0] for n in ("bom", "cabling", "floor", "labels")} == {os.getpid()}
    assert len({v[0] for v in pids.values()}) <= 2


def test_the_check_jobs_run_in_the_workers_only(tmp_path, monkeypatch):
    """The compile's process takes no check job, even while they wait (here: each takes a
    while): it renders, and a worker pays for the checks' imports (scipy) after the fork.
    The check results are those of run_checks."""
    from compiler.check import CheckJobs, check_jobs
    from compiler.pipeline import check_and_write

    plan = shared_plan("roce-2spine-4leaf-sonic")
    seen = tmp_path / "pids"
    run = CheckJobs.run

    def slow_run(self, k):
        with open(seen, "a") as fh:
            fh.write(f"{os.getpid()}\n")
        time.sleep(0.2)  # the compile's process is free long before the worker has taken them all
        return run(self, k)

    monkeypatch.setattr(CheckJobs, "run", slow_run)
    _, checks = check_and_write(plan, tmp_path / "out", ["plan", "graphml", "checks"], workers=2)
    pids = [int(line) for line in seen.read_text().split()]
    assert len(pids) == len(check_jobs(plan)) and os.getpid() not in pids
    assert checks.as_json() == shared_checks(plan).as_json()


def test_the_adopt_lists_no_file_again(tmp_path, monkeypatch):
    """The process that renders an output lists its files (the manifest's) once, in the
    staging folder; moving them in place at the end of the compile, alone on one core,
    lists nothing again, and the manifest is a serial compile's."""
    from compiler.render import writer

    plan = shared_plan("roce-2spine-4leaf-sonic")
    checks = shared_checks(plan)
    one = tree_bytes(write_outputs(plan, tmp_path / "1", checks=checks, workers=1))
    adopting = []
    adopt, files_under = writer.OutputDir.adopt, writer._files_under

    def watched_adopt(self, name):
        adopting.append(name)
        try:
            adopt(self, name)
        finally:
            adopting.remove(name)

    def watched_files_under(root, entries):
        assert not adopting, f"adopt({adopting[0]}) listed {entries} again"
        return files_under(root, entries)

    monkeypatch.setattr(writer.OutputDir, "adopt", watched_adopt)
    monkeypatch.setattr(writer, "_files_under", watched_files_under)
    two = tree_bytes(write_outputs(plan, tmp_path / "2", checks=checks, workers=2))
    assert one == two


class _Broken(Exception):
    pass


class _NotPicklable(Exception):
    def __init__(self, message, hint):  # two arguments: unpickling from args alone fails
        super().__init__(message)
        self.hint = hint


@pytest.mark.parametrize("error", [_Broken("graphml broke"), _NotPicklable("graphml broke", "a hint")])
def test_a_worker_failure_is_raised_and_the_previous_output_stays(tmp_path, monkeypatch, error):
    plan = shared_plan("roce-2spine-4leaf-sonic")
    target = outputs_of(plan, tmp_path, ["summary", "cabling"], workers=1)
    before = tree_bytes(target)

    def broken(plan, checks, out):
        out.write_text("graph.graphml", "half")
        raise error

    monkeypatch.setitem(RENDERERS, "graphml", Renderer(broken, "all"))
    with pytest.raises((_Broken, RuntimeError), match="graphml broke"):
        outputs_of(plan, tmp_path, workers=2)
    assert tree_bytes(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no temporary folder left


def test_only_with_workers_keeps_the_other_outputs(tmp_path):
    plan = shared_plan("roce-2spine-4leaf-sonic")
    full = tree_bytes(outputs_of(plan, tmp_path / "full", workers=1))
    target = outputs_of(plan, tmp_path / "parts", ["summary", "cabling", "bom"], workers=2)
    outputs_of(plan, tmp_path / "parts", [n for n in RENDERERS if n not in ("summary", "cabling", "bom")], workers=2)
    assert tree_bytes(target) == full


def test_small_plans_render_in_one_process_large_ones_on_the_cores(monkeypatch):
    plan = shared_plan("roce-2spine-4leaf-sonic")
    assert len(plan.links) < PARALLEL_FROM_LINKS and render_workers(plan) == 1
    assert render_workers(plan, 3) == 3
    monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", "2")
    assert render_workers(plan) == 2 and render_workers(plan, 1) == 1
    monkeypatch.delenv("CLUSTERC_RENDER_WORKERS")
    monkeypatch.setattr("compiler.render.parallel.PARALLEL_FROM_LINKS", 1)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert render_workers(plan) == 2
    monkeypatch.setattr("compiler.render.parallel.multiprocessing.get_all_start_methods", lambda: ["spawn"])
    assert render_workers(plan, 2) == 1  # no fork: this process renders


def test_cli_compile_with_two_workers_reproduces_the_committed_example(tmp_path):
    name = "h100-roce-2su-hall"
    r = run_cli("compile", str(SPECS / f"{name}.yaml"), "-o", str(tmp_path),
                env={"PYTHONHASHSEED": "7", "CLUSTERC_RENDER_WORKERS": "2"})
    assert r.returncode == 0, r.stderr
    assert tree_bytes(tmp_path / name) == tree_bytes(ROOT / "out" / name)


def test_a_failed_share_is_raised_in_the_parent_and_one_worker_forks_nothing(monkeypatch):
    from compiler.render.parallel import in_shares, share_workers

    def work(k, n):
        if k == 1:
            raise ValueError("share 1 fails")

    with pytest.raises(RuntimeError, match="1 of 2 forked share"):
        in_shares(work, 2)
    ran = []
    in_shares(lambda k, n: ran.append((k, n, os.getpid())), 1)
    assert ran == [(0, 1, os.getpid())]  # one worker: in this process
    monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", "1")
    assert share_workers(10_000, 256) == 1  # the one switch for every render of a compile
    monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", "2")
    assert share_workers(10_000, 256) == 2 and share_workers(10, 256) == 1


def _full_disk(plan, checks, out):
    out.write_text("graph.graphml", "half")
    raise OSError(errno.ENOSPC, "No space left on device", "graph.graphml")


def test_a_worker_error_is_the_same_clean_error_and_exit_code_as_in_process(tmp_path, monkeypatch):
    """A disk that fills while a worker writes: the command line reports it exactly as when
    the compile's own process writes (exit 2, the same message, no traceback, no folder)."""
    monkeypatch.setitem(RENDERERS, "graphml", dataclasses.replace(RENDERERS["graphml"], render=_full_disk))
    seen = {}
    for workers in ("1", "2"):
        monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", workers)
        r = cli_in_process("compile", str(SPECS / "roce-2spine-4leaf-sonic.yaml"), "-o", str(tmp_path / workers))
        seen[workers] = (r.returncode, r.stdout, r.stderr.replace(str(tmp_path / workers), "OUT"))
        assert list((tmp_path / workers).iterdir()) == []  # nothing swapped in, no temporary folder left
    assert seen["1"] == seen["2"]
    code, stdout, stderr = seen["2"]
    assert code == 2 and "error: cannot write outputs: No space left on device: graph.graphml" in stderr
    assert "Traceback" not in stdout + stderr


def test_one_two_and_four_workers_write_the_same_bytes_and_fork_once_each(tmp_path, monkeypatch):
    """The queue hands outputs to whichever process is free: any split gives the same
    folder. Inside the render no output forks children of its own (in_shares)."""
    plan = shared_plan("roce-2spine-4leaf-sonic")
    checks = shared_checks(plan)
    monkeypatch.setattr("compiler.render.switch_configs.PARALLEL_FROM", 1)  # the configs would split
    forks = []
    real_fork = os.fork

    def counted_fork():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted_fork)
    trees = {}
    for n in (1, 2, 4):
        forks.clear()
        monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", str(n))  # in_shares's count, outside the render
        trees[n] = tree_bytes(write_outputs(plan, tmp_path / str(n), checks=checks, workers=n))
        assert len(forks) == n - 1
    assert trees[1] == trees[2] == trees[4]


def test_the_trace_is_a_timeline_of_every_stage_and_worker(tmp_path, monkeypatch):
    """$CLUSTERC_TRACE: one JSON line per stage, from the compile and from its worker, with
    when it ran and what it cost that process."""
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("CLUSTERC_TRACE", str(trace))
    monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", "2")
    r = cli_in_process("compile", str(SPECS / "roce-2spine-4leaf-sonic.yaml"), "-o", str(tmp_path / "out"))
    assert r.returncode in (0, 1), r.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert all(set(e) >= {"name", "pid", "start_s", "end_s", "user_s", "sys_s", "minflt"} for e in events)
    assert all(e["end_s"] >= e["start_s"] and e["user_s"] >= 0 and e["minflt"] >= 0 for e in events)
    here = [e["name"] for e in events if e["pid"] == os.getpid()]
    assert {"expand", "checks", "render summary", "adopt", "manifest and swap"} <= set(here)
    workers = {e["pid"] for e in events if e["name"] == "render worker"}
    assert len(workers) == 1 and os.getpid() not in workers
    bom = [e["pid"] for e in events if e["name"] in ("memo bom", "memo physical_cables")]
    assert bom == [os.getpid()] * 2  # after the fork, once, in the process that renders what reads it
    rendered = sorted(e["name"].removeprefix("render ") for e in events
                      if e["name"].startswith("render ") and e["name"] != "render worker")
    assert rendered == sorted(RENDERERS)  # each output once, in whichever process took it


@pytest.mark.parametrize("spec", SPECS_OF_MANY_OUTPUTS)
def test_checks_run_as_jobs_on_one_two_and_four_workers_give_the_same_results_and_bytes(tmp_path, spec):
    """Without check results given, the checks are jobs on the render queue that any
    process may take: checks.json, every other output and the returned results are a
    serial run_checks's, whatever the number of workers."""
    from compiler.pipeline import check_and_write
    plan = shared_plan(SPECS / spec)
    serial = shared_checks(plan).as_json()
    trees = {}
    for n in (1, 2, 4):
        target, checks = check_and_write(plan, tmp_path / str(n), workers=n)
        assert checks.as_json() == serial
        trees[n] = tree_bytes(target)
    assert trees[1] == trees[2] == trees[4]
    assert json.loads(trees[2]["report/checks.json"]) == json.loads(json.dumps(serial))


class _HandshakeJobs:
    """Two jobs that cannot both run in one process: each says it has started (a byte in a
    pipe of its own) and waits until the other has, so two workers run one each and their
    results (or errors) must come back."""

    def __init__(self, fail: bool):
        self.fail = fail
        self.started = [os.pipe(), os.pipe()]  # (read, write) per job

    def __len__(self) -> int:
        return 2

    def run(self, k: int) -> object:
        os.write(self.started[k][1], b"x")
        os.read(self.started[1 - k][0], 1)
        if self.fail and k == 1:
            raise OSError(errno.ENOSPC, "No space left on device", f"job-{k}")
        return (k, os.getpid())

    def finish(self, results: list) -> object:
        for r in results:
            if isinstance(r, BaseException):
                raise r
        return results


@pytest.mark.parametrize("fail", [False, True])
def test_a_check_job_taken_by_a_worker_comes_back_or_raises_here(tmp_path, fail):
    """Job results taken by the workers come back through the small results channel in job
    order; a job's exception in a worker is raised in the compile's process as it is. The
    compile's process takes no job: it renders (and the checks' imports are the workers')."""
    from compiler.render.parallel import render_at_once
    from compiler.render.writer import OutputDir
    plan = shared_plan("roce-2spine-4leaf-sonic")
    checks = shared_checks(plan)
    jobs = _HandshakeJobs(fail)
    names = ["summary", "bom"]

    def call(name, given):
        return lambda: RENDERERS[name].render(plan, checks, out)

    with OutputDir(tmp_path / plan.name) as out:
        if fail:
            with pytest.raises(OSError, match="No space left") as raised:
                render_at_once(plan, out, names, 3, call, jobs, {"summary"})
            assert raised.value.filename == "job-1"
            return
        results = render_at_once(plan, out, names, 3, call, jobs, {"summary"})
    assert [k for k, _ in results] == [0, 1]
    assert len({pid for _, pid in results}) == 2 and os.getpid() not in {pid for _, pid in results}


def _check_on_full_disk(ctx, **needs):
    raise OSError(errno.ENOSPC, "No space left on device", "redundancy.tmp")


def test_a_check_error_is_the_same_clean_error_and_exit_code_on_any_number_of_workers(tmp_path, monkeypatch):
    """A check that raises: the command line reports it exactly as when the checks run in
    the compile's own process (exit 2, the same message, no traceback, no folder)."""
    from compiler.check import CHECKS
    monkeypatch.setitem(CHECKS, "redundancy", dataclasses.replace(CHECKS["redundancy"], run=_check_on_full_disk))
    seen = {}
    for workers in ("1", "2", "4"):
        monkeypatch.setenv("CLUSTERC_RENDER_WORKERS", workers)
        r = cli_in_process("compile", str(SPECS / "roce-2spine-4leaf-sonic.yaml"), "-o", str(tmp_path / workers))
        seen[workers] = (r.returncode, r.stdout, r.stderr.replace(str(tmp_path / workers), "OUT"))
        assert list((tmp_path / workers).iterdir()) == []
    assert seen["1"] == seen["2"] == seen["4"]
    code, stdout, stderr = seen["2"]
    assert code == 2 and "No space left on device: redundancy.tmp" in stderr
    assert "Traceback" not in stdout + stderr


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads a process's children from Linux's /proc")
def test_a_compile_killed_while_rendering_leaves_no_worker_running(tmp_path):
    """SIGKILL cannot be caught, so the compile cannot stop its forked workers itself: they
    must die with it (PR_SET_PDEATHSIG), or they go on writing into the staging folder that
    the next compile cleans up and leave half-written folders behind."""
    import signal
    import subprocess
    import sys
    import time

    spec = tmp_path / "big.yaml"
    spec.write_text("name: killme\ngpus: 65536\nserver: dgx-h100\n"
                    "fabric: {topology: rail-optimized, switch: sn5600, speed_gbps: 400}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CLUSTERC_RENDER_WORKERS": "2"}
    killed_while_rendering = 0
    for delay in (0.3, 1.0, 2.0, 3.0):  # into the check jobs, then into the outputs
        proc = subprocess.Popen([sys.executable, "-m", "compiler.cli", "compile", str(spec), "-o", str(tmp_path / "out")],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        workers: list[int] = []
        deadline = time.monotonic() + 120
        while not workers and proc.poll() is None and time.monotonic() < deadline:
            workers = _children(proc.pid)
            time.sleep(0.02)
        assert workers, "the compile forked no render worker: the test did not exercise the pool"
        time.sleep(delay)
        if proc.poll() is not None:
            break  # finished before the kill
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed_while_rendering += 1
        deadline = time.monotonic() + 5
        while any(_alive(w) for w in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [w for w in workers if _alive(w)], f"a render worker outlived the compile killed after {delay} s"
    assert killed_while_rendering >= 2
