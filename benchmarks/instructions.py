"""Instructions each stage of a compile executes, counted by valgrind's callgrind
(`performance.py --instructions`): the code's own work, steady from run to run (three
runs of 131,072 GPUs: within 0.7 % a stage, the bisection check 1.8 %).

Why beside CPU seconds: on the development machine (a VM that hands freed memory back to
its host) a page touched for the first time costs 3-10x what it does a moment later, so
the kernel's share of one stage moves 3x between two runs of the same code, and a
stage's growth from 131,072 to 524,288 GPUs in seconds says as much about which stage met
fresh memory as about the code. An instruction count barely moves: it is the work the
code asks of the processor, and where a stage's count grows as the links do, its cost
does too, but for what the count leaves out:
- the memory hierarchy: a pass over arrays that outgrow the last-level cache executes
  the same instructions and takes longer (performance.py prints what one such pass
  grows by on the machine);
- the kernel: callgrind counts user space only (system calls, page faults and the page
  cache's copies are in the CPU seconds' system part);
- programs the compile runs: the counted run traces no program it starts (callgrind_control
  itself is one), and its renders fork no children ($CLUSTERC_RENDER_WORKERS=1: the switch
  configs' shares run in the process), since a forked child's counts would go to a file of
  its own and no stage's.

How: the stage run (performance.py --stage-run) runs under callgrind, and at the end of
each top-level stage of the compile (compiler.progress.stage: load, validate, expand, each
check, each output) asks callgrind, through callgrind_control, to write out what it
counted since the last such request. Those parts, in order, are the stages' counts.
callgrind_control reaches the process through valgrind's gdbserver while the process
waits for it, so a request adds to a stage only Python's work of starting
callgrind_control, polling for its end and reading the part's header: about 0.9 million
instructions (measured as the count between two requests, one right after the other),
where the stages the growth table shows execute 50 million and more. Each part is checked
to be this process's next one when it is asked for, so the names cannot slip.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# the parts of a stage run that make "spec -> plan" (as the CPU figures have it)
PLAN_STAGES = ("load", "validate", "expand")
BETWEEN = "-"  # what ran between two top-level stages: the harness's own glue
OUT_ENV = "CLUSTERC_CALLGRIND_OUT"  # the counted process's --callgrind-out-file, for checking each part
DUMP_TIMEOUT_S = 60
BETWEEN_STAGES = "between stages"
START_UP = "start-up"  # the interpreter and the imports, before the first stage


class DumpAtStageEnds:
    """A progress reporter (the interface of compiler.progress.TerminalProgress) that makes
    callgrind write its counts at every top-level stage's start and end; `labels` names
    the parts in the order callgrind writes them."""

    def __init__(self, out_file: Path) -> None:
        self.out_file = out_file
        self.labels: list[str] = []
        self._running: list[str] = []

    def begin(self, name: str) -> None:
        if not self._running:
            self._dump(BETWEEN)
        self._running.append(name)

    def end(self, ok: bool) -> None:
        name = self._running.pop()
        if not self._running:
            self._dump(name)

    def _dump(self, label: str) -> None:
        # With a timeout, Python waits for callgrind_control by polling and sleeping, and
        # valgrind's gdbserver takes the request at the next poll; a plain wait blocks in
        # waitpid, and only vgdb's ptrace can wake it, which a sandbox may forbid (a hang).
        # callgrind_control exits 0 whatever happened, so the part itself is the answer.
        n = len(self.labels) + 1
        subprocess.run(["callgrind_control", "--dump", str(os.getpid())], timeout=DUMP_TIMEOUT_S,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        part = Path(f"{self.out_file}.{n}")
        head = part.read_text(errors="replace")[:4096].splitlines() if part.exists() else []
        if f"part: {n}" not in head or f"pid: {os.getpid()}" not in head:
            raise RuntimeError(f"callgrind wrote no part {n} of this process ({part}) at the end of {label!r}: "
                               "callgrind_control could not reach it")
        self.labels.append(label)


def install() -> DumpAtStageEnds:
    """Report this process's stages to callgrind from now on (the process runs under
    `command(out_file)`, with $CLUSTERC_CALLGRIND_OUT set to out_file), and render in it."""
    from compiler import progress
    from compiler.render.parallel import WORKERS_ENV

    os.environ[WORKERS_ENV] = "1"  # no forked shares: their counts would be no stage's
    marks = DumpAtStageEnds(Path(os.environ[OUT_ENV]))
    progress._reporter.set(marks)  # type: ignore[arg-type]  (a reporter by its two methods)
    return marks


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def command(out_file: Path) -> list[str]:
    """valgrind's command line for one counted stage run, before the Python command: only
    instructions (no cache or branch simulation), nothing per source line or instruction
    (the parts stay small), no program it starts traced (callgrind_control among them),
    and no part but those asked for, whatever a ~/.valgrindrc says (threads counted
    together, no periodic dumps)."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--dump-line=no",
            "--dump-instr=no", "--trace-children=no", "--separate-threads=no", "--dump-every-bb=0",
            "--error-limit=no", "--quiet"]


def environment(out_file: Path) -> dict[str, str]:
    """What the counted process needs in its environment beside the caller's: where its parts
    go, one hash seed (set iteration orders, and so the work, the same every run), and
    OpenBLAS without idle threads (callgrind counts their spinning)."""
    return {OUT_ENV: str(out_file), "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}


def totals(out_file: Path, labels: list[str]) -> dict[str, int]:
    """Each stage's instructions from the parts callgrind wrote (out_file.1, .2, ... in the
    order of `labels`), keyed as performance.py's CPU figures are: "spec -> plan" for the
    load, validate and expand stages together, "check X" for a check, an output's name for
    "render <output>", other top-level stages by their names (the output folder's
    "manifest and swap"); the part before the first stage as START_UP; the other parts
    between stages (the harness's glue and the requests to callgrind) together as
    BETWEEN_STAGES, so a large stretch outside every stage shows."""
    counts: dict[str, int] = {}
    for i, label in enumerate(labels, start=1):
        part = Path(f"{out_file}.{i}")
        total = next((int(line.split()[1]) for line in part.read_text().splitlines() if line.startswith("totals:")), None)
        if total is None:
            raise RuntimeError(f"{part}: no totals line (not a callgrind part)")
        if label == BETWEEN:
            key = START_UP if i == 1 else BETWEEN_STAGES
        else:
            key = "spec -> plan" if label in PLAN_STAGES else label.removeprefix("render ")
        counts[key] = counts.get(key, 0) + total
    extra = Path(f"{out_file}.{len(labels) + 1}")
    if extra.exists():  # a part with no label: the run and its labels disagree
        raise RuntimeError(f"callgrind wrote more parts than the stage run named ({extra})")
    return counts
