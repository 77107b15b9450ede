"""Progress on long work: stage names on stderr when it is a terminal, nothing otherwise."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

from compiler import progress

from .conftest import ROOT, SPECS, run_cli

STAGES = ["load", "validate", "expand", "render cabling", "render graphml", "check bisection", "render summary"]
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _under_pty(*args: str, env: dict) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal (stdout a pipe); returns (code, stdout, terminal text)."""
    master, slave = pty.openpty()
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm", **env)
    full_env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "compiler.cli", *args], cwd=ROOT, env=full_env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    seen = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        seen.append(chunk)
    os.close(master)
    stdout = proc.stdout.read().decode()
    proc.stdout.close()
    return proc.wait(timeout=600), stdout, ANSI.sub(b"", b"".join(seen)).decode(errors="replace")


def test_stages_show_on_a_terminal(tmp_path):
    code, stdout, terminal = _under_pty("compile", str(SPECS / "h100-superpod-1su.yaml"), "-o", str(tmp_path),
                                        env={progress.AFTER_ENV: "0"})
    assert code == 0, terminal
    finished = re.findall(r"^ *(.+?)  \d+\.\d s$", terminal.replace("\r", "\n"), re.M)
    for name in STAGES:
        assert name in finished, (name, terminal)
    # checks are a stage of their own: they run once, before any output is rendered
    assert finished.index("check bisection") < finished.index("render summary")
    assert "render summary > check" not in terminal
    # stdout is the summary alone, without a stage line or a control sequence
    assert stdout.startswith(f"{SPECS / 'h100-superpod-1su.yaml'} -> ")
    assert "\x1b" not in stdout and "render cabling" not in stdout


def test_a_quick_compile_stays_quiet_on_a_terminal(tmp_path):
    """Below the threshold (default 2 s) nothing is added, even on a terminal."""
    code, _, terminal = _under_pty("compile", str(SPECS / "dgx-h100-4node-mesh.yaml"), "-o", str(tmp_path),
                                   "--only", "summary", env={progress.AFTER_ENV: "60"})
    assert code == 0, terminal
    assert not any(name in terminal for name in STAGES), terminal


def test_json_format_is_quiet_on_a_terminal(tmp_path):
    code, stdout, terminal = _under_pty("compile", str(SPECS / "h100-superpod-1su.yaml"), "-o", str(tmp_path),
                                        "--format", "json", env={progress.AFTER_ENV: "0"})
    assert code == 0, terminal
    assert not any(name in terminal for name in STAGES), terminal
    assert stdout.lstrip().startswith("{")


def test_silent_when_stderr_is_not_a_terminal(tmp_path):
    r = run_cli("compile", str(SPECS / "h100-superpod-1su.yaml"), "-o", str(tmp_path), env={progress.AFTER_ENV: "0"})
    assert r.returncode == 0, r.stderr
    assert not any(name in r.stderr for name in STAGES), r.stderr
    assert "\x1b" not in r.stderr + r.stdout


def test_stage_without_a_reporter_does_nothing():
    with progress.stage("expand"):
        value = 1
    assert value == 1


def test_stages_nest_and_report_failure():
    class Console:
        def __init__(self):
            self.lines = []

        def print(self, line):
            self.lines.append(line)

        def status(self, text):
            console = self

            class Status:
                def start(self):
                    console.lines.append(f"[{text}]")

                def update(self, new):
                    console.lines.append(f"[{new}]")

                def stop(self):
                    pass
            return Status()

    console = Console()
    reporter = progress.TerminalProgress(console, after_s=3600)  # silent throughout: lines wait
    with reporter:
        with progress.stage("render summary"):
            with progress.stage("check hops"):
                pass
        try:
            with progress.stage("render report"):
                raise OSError("disk full")
        except OSError:
            pass
        reporter._show()  # what the timer does when the threshold passes
    text = [re.sub(r"\d+\.\d s", "T", line) for line in console.lines]
    assert text == ["  check hops  T", "render summary  T", "render report  T  (failed)"]
    assert progress._reporter.get() is None
