"""Instructions each stage of a compile executes, counted by valgrind's callgrind
(`performance.py --instructions`): the code's own work, the same from run to run.

Why beside CPU seconds: on the development machine (a VM that hands freed memory back to
its host) a page touched for the first time costs 3-10x what it does a moment later, so
the kernel's share of one stage moves 3x between two runs of the same code, and a
stage's growth from 131,072 to 524,288 GPUs in seconds says as much about which stage met
fresh memory as about the code. An instruction count does not move: it is the work the
code asks of the processor, and where a stage's count grows as the links do, its cost
does too, but for what the count leaves out:
- the memory hierarchy: a pass over arrays that outgrow the last-level cache executes
  the same instructions and takes longer (performance.py prints what one such pass
  grows by on the machine);
- the kernel: callgrind counts user space only (system calls, page faults and the page
  cache's copies are in the CPU seconds' system part);
- programs the compile runs (none in a stage run).

How: the stage run (performance.py --stage-run) runs under callgrind, and at the end of
each top-level stage of the compile (compiler.progress.stage: load, validate, expand, each
check, each output) asks callgrind, through callgrind_control, to write out what it
counted since the last such request. Those parts, in order, are the stages' counts.
callgrind_control reaches the process through valgrind's gdbserver while the process
waits for it, and waiting executes nothing, so a request adds to a stage only Python's
work of starting callgrind_control and reading its exit: 0.3 million instructions
(measured as the count between two requests, one right after the other), where the
stages the growth table shows execute 50 million and more.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

# the parts of a stage run that make "spec -> plan" (as the CPU figures have it)
PLAN_STAGES = ("load", "validate", "expand")
BETWEEN = "-"  # what ran between two top-level stages: the harness's own glue


class DumpAtStageEnds:
    """A progress reporter (the interface of compiler.progress.TerminalProgress) that makes
    callgrind write its counts at every top-level stage's start and end; `labels` names
    the parts in the order callgrind writes them."""

    def __init__(self) -> None:
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
        subprocess.run(["callgrind_control", "--dump", str(os.getpid())], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.labels.append(label)


def install() -> DumpAtStageEnds:
    """Report this process's stages to callgrind from now on."""
    from compiler import progress

    marks = DumpAtStageEnds()
    progress._reporter.set(marks)  # type: ignore[arg-type]  (a reporter by its two methods)
    return marks


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def command(out_file: Path) -> list[str]:
    """valgrind's command line for one counted stage run, before the Python command: only
    instructions (no cache or branch simulation), nothing per source line or instruction
    (the parts stay small), no child traced (a stage run starts none)."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", "--dump-line=no",
            "--dump-instr=no", "--trace-children=no", "--error-limit=no", "--quiet"]


def totals(out_file: Path, labels: list[str]) -> dict[str, int]:
    """Each stage's instructions from the parts callgrind wrote (out_file.1, .2, ... in the
    order of `labels`), keyed as performance.py's CPU figures are: "spec -> plan" for the
    load, validate and expand stages together, "check X" for a check, an output's name for
    "render <output>"; the between parts are left out."""
    counts: dict[str, int] = {}
    for i, label in enumerate(labels, start=1):
        part = Path(f"{out_file}.{i}")
        total = next((int(line.split()[1]) for line in part.read_text().splitlines() if line.startswith("totals:")), 0)
        if label == BETWEEN:
            continue
        key = "spec -> plan" if label in PLAN_STAGES else label.removeprefix("render ")
        counts[key] = counts.get(key, 0) + total
    extra = Path(f"{out_file}.{len(labels) + 1}")
    if extra.exists():  # a part with no label: the run and its labels disagree
        raise RuntimeError(f"callgrind wrote more parts than the stage run named ({extra})")
    return counts
