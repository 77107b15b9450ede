"""`clusterc twin` run by a test, and what that run (and only that run) left behind.

Several twins may run at once on one machine (pytest-xdist workers, a developer's own run),
so a test must not count another run's namespaces or daemons as its leftovers. A run is
told apart by what it names after itself: its namespaces are `cct<its pid>-N` (watched
while it runs, so a daemon left in one of them is found after the name is gone), and its
work folder is made in a temporary folder of the test's own (TMPDIR)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .conftest import ROOT

NETNS_DIR = Path("/run/netns")  # where `ip netns add` names a namespace (a bind mount of it)
WATCH_S = 0.2  # between looks at the run's namespaces; each lives for seconds, from up() to down()


def _namespaces(pid: int) -> dict[str, int]:
    """The named namespaces of the twin run with this pid, by name: their inode numbers."""
    found = {}
    for path in NETNS_DIR.glob(f"cct{pid}-*"):
        try:
            found[path.name] = path.stat().st_ino
        except OSError:  # deleted meanwhile
            continue
    return found


def _processes_in(inodes: set[int]) -> list[str]:
    """Running processes whose network namespace is one of `inodes`."""
    found = []
    for ns in Path("/proc").glob("[0-9]*/ns/net"):
        try:
            inode = int(os.readlink(ns).removeprefix("net:[").removesuffix("]"))
            if inode in inodes:
                found.append(f"{(ns.parent.parent / 'comm').read_text().strip()} pid {ns.parent.parent.name}")
        except (OSError, ValueError):  # exited meanwhile
            continue
    return sorted(found)


def twin_cli(*args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """`clusterc twin ARGS` in a fresh interpreter and what it left behind: namespaces named
    after its pid, anything in its temporary folder (its work folder), any process (zebra,
    bgpd, lldpd, a server's ping) still in a namespace it made, named or not. A twin someone
    else runs meanwhile is not counted."""
    # Not pytest's tmp_path: the daemons run as the `frr` user and must reach their work
    # folder, and pytest's base folder is open to root only.
    tmp = Path(tempfile.mkdtemp(prefix="clusterc-test-twin-"))
    try:
        os.chmod(tmp, 0o755)
        env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen([sys.executable, "-m", "compiler.cli", "twin", *args], cwd=ROOT, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        inodes: set[int] = set()
        give_up = time.monotonic() + 600
        while True:
            try:
                out, err = proc.communicate(timeout=WATCH_S)
                break
            except subprocess.TimeoutExpired:
                inodes |= set(_namespaces(proc.pid).values())
                if time.monotonic() > give_up:
                    proc.kill()
                    raise
        left = sorted(_namespaces(proc.pid)) + [str(p) for p in sorted(tmp.iterdir())] + _processes_in(inodes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), left
