"""`clusterc twin`: the Ethernet fabric booted as real FRR daemons in network namespaces,
wired from the cabling list. Needs root and Debian's frr; each run cleans up after itself,
which the tests check (no namespace, no daemon of ours left), even when the run fails.

The text report is twin/report.py's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from .conftest import SPECS, run_cli
from . import twin_runs
from .twin_runs import twin_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="the twin needs root (network namespaces)"),
    pytest.mark.skipif(not Path("/usr/lib/frr/bgpd").exists() or not shutil.which("vtysh"),
                       reason="FRR is not installed (Debian package frr, listed in .ci/debian-packages)"),
]


def _twin(*args: str) -> tuple[int, dict, str]:
    r, left = twin_cli(*args, "--format", "json")
    assert not left, f"the twin left namespaces, daemons or its work folder behind: {left}"
    report = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
    return r.returncode, report, r.stderr


def test_two_spine_four_leaf_converges_with_64_way_ecmp_and_survives_a_spine_failure():
    rc, rep, err = _twin(str(SPECS / "roce-2spine-4leaf-frr.yaml"), "--fail-switch", "spine-02")
    assert rc == 0, rep.get("problems") or err
    assert rep["switches"] == 6 and len(rep["sessions"]) == 512
    assert all(s["state"] == "Established" for s in rep["sessions"])
    assert len(rep["ecmp"]) == 12 and {e["installed"] for e in rep["ecmp"]} == {64}
    # both sampled servers route over all 8 NICs as host-configs/netplan sets them up: a ping
    # on every rail, each leaving on its own NIC (per-NIC table and rule)
    ping = rep["server_ping"]
    assert ping["ok"] and [x["rail"] for x in ping["rails"]] == list(range(1, 9))
    assert all(x["ok"] and x["egress_ok"] for x in ping["rails"])
    f = rep["failure"]
    assert f["converged"] and {e["installed"] for e in f["ecmp"]} == {32} and f["sessions_established"] == 256


def test_three_tier_converges_and_reconverges_after_a_cable_cut():
    # leaf-002:8: a leaf-spine cable of pod 1; the leaf loses one of its 4 paths to every other leaf
    rc, rep, err = _twin(str(SPECS / "lab-3tier-frr.yaml"), "--fail-link", "leaf-002:8")
    assert rc == 0, rep.get("problems") or err
    assert rep["switches"] == 20 and all(s["state"] == "Established" for s in rep["sessions"])
    assert {e["installed"] for e in rep["ecmp"]} == {4} and len(rep["ecmp"]) == 56
    f = rep["failure"]
    assert f["converged"] and {e["installed"] for e in f["ecmp"]} == {3, 4}
    assert f["reconvergence_s"] < 30


def test_swapped_cables_are_detected():
    # leaf-001:5 (leaf-001 -> pod1-spine-01) and leaf-002:8 (leaf-002 -> pod1-spine-04) swapped at the spines
    rc, rep, err = _twin(str(SPECS / "lab-3tier-frr.yaml"), "--swap", "leaf-001:5,leaf-002:8", "--timeout", "20")
    assert rc == 1, err
    bad = [s for s in rep["sessions"] if not s["ok"]]
    assert {(s["device"], s["expected_peer"]) for s in bad} >= {("leaf-001", "pod1-spine-01"), ("leaf-002", "pod1-spine-04")}
    assert any("ECMP" in p for p in rep["problems"])


def test_infiniband_spec_runs_the_ibsim_twin():
    from compiler.twin.infiniband import missing_tools

    if missing_tools():
        pytest.skip(f"ibsim/OpenSM not installed: {', '.join(missing_tools())}")
    r = run_cli("twin", str(SPECS / "h100-superpod-1su.yaml"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ftree tables configured on all switches" in r.stdout and "Traceback" not in r.stderr
    r = run_cli("twin", str(SPECS / "h100-superpod-1su.yaml"), "--fail-link", "spine-01:1")
    assert r.returncode == 2 and "Ethernet twin" in r.stderr


def test_unknown_cable_is_a_usage_error():
    r, left = twin_cli(str(SPECS / "lab-3tier-frr.yaml"), "--fail-link", "C999999")
    assert r.returncode == 2 and "no cable C999999" in r.stderr
    assert not left, left


def test_unnumbered_fabric_of_another_nos_converges():
    # the Cumulus example peers BGP unnumbered (RFC 5549); the twin runs its decisions as FRR
    rc, rep, err = _twin(str(SPECS / "roce-2spine-4leaf-cumulus.yaml"))
    assert rc == 0, rep.get("problems") or err
    assert rep["peering"] == "unnumbered" and rep["sessions_established"] == 512
    assert {e["installed"] for e in rep["ecmp"]} == {64} and rep["server_ping"]["ok"]


def test_the_leftover_check_finds_a_namespace_and_a_process_left_in_it_after_its_name_is_gone():
    """twin_runs' check is not vacuous: a namespace named as a run's is listed, and a process
    still in it is found once the name is deleted (as a daemon the run failed to stop would be)."""
    name = f"cct0-{os.getpid()}"  # as a twin run with pid 0 (none) names them: no real run's
    subprocess.run(["ip", "netns", "add", name], check=True)
    sleeper = None
    try:
        inode = twin_runs._namespaces(0)[name]
        sleeper = subprocess.Popen(["ip", "netns", "exec", name, "sleep", "60"])
        for _ in range(100):  # `ip netns exec` enters the namespace, then becomes `sleep`
            if os.readlink(f"/proc/{sleeper.pid}/ns/net") == f"net:[{inode}]" and \
                    Path(f"/proc/{sleeper.pid}/comm").read_text().strip() == "sleep":
                break
            time.sleep(0.05)
        subprocess.run(["ip", "netns", "del", name], check=True)
        assert name not in twin_runs._namespaces(0)
        assert twin_runs._processes_in({inode}) == [f"sleep pid {sleeper.pid}"]
    finally:
        if sleeper is not None:
            sleeper.kill()
            sleeper.wait()
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
    assert twin_runs._processes_in({inode}) == []
