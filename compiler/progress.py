"""Progress on long work: the pipeline names its stages here, and a terminal may show them.

The pipeline wraps each stage in `with stage("expand"):`. Without a reporter (the
Python API, tests, CI logs, pipes) that costs nothing and prints nothing. The CLI
installs a `TerminalProgress` only when stderr is a terminal and the output is text,
and even then nothing appears before AFTER_S seconds: a quick compile looks as it
always did. Past that, a spinner names the running stage and each finished stage
gets a line with its time, on stderr, so stdout (the summary) stays clean.

The same stages make a timeline for whoever asks for one: with $CLUSTERC_TRACE=<file>, each
stage that ends appends one JSON line to that file: its name, the process (a render worker
forked from the compile writes its own lines), start and end on the machine's monotonic
clock, and the CPU seconds (user, sys) and page faults it cost that process
(getrusage). `benchmarks/performance.py --trace` prints it. Without the variable, nothing is
measured.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar, Token
from typing import Any

AFTER_ENV = "CLUSTERC_PROGRESS_AFTER_S"  # seconds of silence before stages show; tests force 0
AFTER_S = 2.0
TRACE_ENV = "CLUSTERC_TRACE"  # a file: every stage's timeline appended to it, one JSON line each

_reporter: ContextVar[TerminalProgress | None] = ContextVar("clusterc_progress", default=None)


@contextmanager
def stage(name: str):
    """Report the enclosed work as stage `name` (stages nest: render summary > check hops)."""
    with traced(name), _reported(name):
        yield


@contextmanager
def _reported(name: str):
    reporter = _reporter.get()
    if reporter is None:
        yield
        return
    reporter.begin(name)
    try:
        yield
    except BaseException:
        reporter.end(ok=False)
        raise
    reporter.end(ok=True)


Usage = tuple[float, float, float, int]  # (monotonic s, user s, sys s, minor page faults)


def usage() -> Usage:
    """This process's clock and resource use so far."""
    import resource  # POSIX; imported only where a trace is asked for

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return time.monotonic(), ru.ru_utime, ru.ru_stime, ru.ru_minflt


def trace_line(name: str, since: Usage, **extra: Any) -> None:
    """Append stage `name`, from `since` (usage()) to now, to $CLUSTERC_TRACE (nothing when
    unset). One short write in append mode: the lines of processes writing at once never mix."""
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    end = usage()
    event = {"name": name, "pid": os.getpid(), "start_s": round(since[0], 6), "end_s": round(end[0], 6),
             "user_s": round(end[1] - since[1], 4), "sys_s": round(end[2] - since[2], 4),
             "minflt": end[3] - since[3], **extra}
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(event) + "\n").encode())
    finally:
        os.close(fd)


@contextmanager
def traced(name: str, **extra: Any):
    """The enclosed work as one line of the trace (see above), when one is asked for; also
    when it fails (with "failed": true)."""
    if not os.environ.get(TRACE_ENV):
        yield
        return
    since = usage()
    try:
        yield
    except BaseException:
        trace_line(name, since, failed=True, **extra)
        raise
    trace_line(name, since, **extra)


def quiet() -> None:
    """No stage reporting in this process from now on: a worker forked from a compile that
    shows progress must not draw on the parent's terminal."""
    _reporter.set(None)


class TerminalProgress:
    """Stages on a rich console: silent for `after_s` seconds, then a spinner with the running
    stage(s) and one line per finished stage (those finished while silent are printed when
    the display starts). A timer thread starts the display, so a single long stage shows too."""

    def __init__(self, console, after_s: float):
        self.console = console
        self.after_s = after_s
        self._lock = threading.RLock()
        self._running: list[tuple[str, float]] = []  # (stage, start), outermost first
        self._unshown: list[str] = []  # lines of stages finished while silent
        self._visible = False
        self._closed = False
        self._status: Any = None  # a rich Status, made on first show (rich loads only on a terminal)
        self._timer: threading.Timer | None = None
        self._token: Token[TerminalProgress | None] | None = None

    def __enter__(self) -> TerminalProgress:
        self._token = _reporter.set(self)
        self._timer = threading.Timer(max(self.after_s, 0.0), self._show)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            self._closed = True
            self._visible = False
            self._stop_spinner()
        if self._token is not None:
            _reporter.reset(self._token)

    def begin(self, name: str) -> None:
        with self._lock:
            self._running.append((name, time.monotonic()))
            self._refresh()

    def end(self, ok: bool) -> None:
        with self._lock:
            name, start = self._running.pop()
            indent = "  " * len(self._running)
            line = f"{indent}{name}  {time.monotonic() - start:.1f} s" + ("" if ok else "  (failed)")
            if self._visible:
                self.console.print(line)
            else:
                self._unshown.append(line)
            self._refresh()

    def _show(self) -> None:
        with self._lock:
            if self._closed:  # the timer fired as the compile ended
                return
            self._visible = True
            for line in self._unshown:
                self.console.print(line)
            self._unshown.clear()
            self._refresh()

    def _refresh(self) -> None:
        """Spinner on while a stage runs, off (cleared) between stages so the CLI's own
        printing never meets it."""
        if not self._visible:
            return
        if not self._running:
            self._stop_spinner()
            return
        from rich.text import Text

        text = Text(" > ".join(name for name, _ in self._running))
        if self._status is None:
            self._status = self.console.status(text)
            self._status.start()
        else:
            self._status.update(text)

    def _stop_spinner(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


def after_seconds() -> float:
    """AFTER_S, or the number in $CLUSTERC_PROGRESS_AFTER_S."""
    try:
        return float(os.environ.get(AFTER_ENV, AFTER_S))
    except ValueError:
        return AFTER_S


def terminal_progress(enabled: bool = True):
    """The CLI's reporter: a TerminalProgress on stderr when `enabled` and stderr is a
    terminal; otherwise a context that does nothing."""
    if not enabled or not sys.stderr.isatty():
        return nullcontext()
    from rich.console import Console  # only on a terminal: rich costs ~30 ms to import

    console = Console(stderr=True, markup=False, highlight=False, emoji=False)
    return TerminalProgress(console, after_seconds())
