"""The Ethernet twin's LLDP collection, without namespaces: lldpcli is replaced by a small
model of the wire (a daemon's `update` puts its frame in every peer's table), so the
polling logic is checked fast and deterministically. The real lldpd runs in
tests/test_verify_real_tools.py (slow, root)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from compiler.pipeline import build_plan
from compiler.twin import ethernet
from compiler.twin.ethernet import EthernetTwin, TwinOptions, _lldp_ports, _Node

from .conftest import ROOT

TINY = ROOT / "tests" / "data" / "verify" / "tiny-rail.yaml"
SAMPLE = ROOT / "tests" / "data" / "verify" / "lldp" / "lldpcli" / "su1-leaf-r1.json"


def test_lldp_ports_reads_lldpcli_json_as_a_list_and_as_a_lone_object():
    data = json.loads(SAMPLE.read_text())  # real `lldpcli -f json show neighbors details` from the twin
    ports = _lldp_ports(json.dumps(data))
    assert ports == {"swp1s0", "swp2s1", "swp3s0", "swp3s1", "swp4s0", "swp4s1"}  # 2 servers, 4 uplinks
    lone = data["lldp"]["interface"][0]  # lldpcli prints a lone interface as the object itself
    assert _lldp_ports(json.dumps({"lldp": {"interface": lone}})) == {"swp1s0"}
    assert _lldp_ports('{"lldp": {}}') == _lldp_ports("") == _lldp_ports("not json") == set()


class _Wire:
    """lldpcli against a model fabric: `update` on a daemon lets every peer hear it, unless muted."""

    def __init__(self, twin: EthernetTwin, muted: set[str], ghost: tuple[str, str, int] | None = None):
        self.twin, self.muted = twin, muted
        self.heard: dict[str, set[str]] = {n.name: set() for n in twin.nodes.values()}
        self.calls: list[tuple[str, str]] = []
        # (switch, port, reads): that port also lists a neighbour from another port for that many reads
        self.ghost = ghost

    def __call__(self, node: _Node, *args: str):
        self.calls.append((node.name, args[-1]))
        if args[-1] == "update" and node.name not in self.muted:
            for (a, na), (b, nb) in self.twin.wired.values():
                if node.index in (a, b):
                    far, port = (b, nb) if node.index == a else (a, na)
                    self.heard[self.twin.nodes[far].name].add(port)
        table = [{p: {"chassis": {"peer": {}}, "port": {"descr": "p"}}} for p in sorted(self.heard[node.name])]
        if args[-1] == "details" and self.ghost and self.ghost[0] == node.name and self.ghost[2] > 0:
            table.append({self.ghost[1]: {"chassis": {"other": {}}, "port": {"descr": "q"}}})
            self.ghost = (self.ghost[0], self.ghost[1], self.ghost[2] - 1)
        return type("Done", (), {"stdout": json.dumps({"lldp": {"interface": table}})})()


@pytest.fixture
def small_twin(tmp_path, monkeypatch):
    """Three switches of tiny-rail (leaves r1, r2 and spine-01) and the four cables between them."""
    _, plan = build_plan(TINY)
    twin = EthernetTwin(plan, TwinOptions(timeout_s=0))
    names = ("su1-leaf-r1", "su1-leaf-r2", "spine-01")
    for n, name in enumerate(names):
        i = plan.device_index(name)
        twin.nodes[i] = _Node(i, name, f"ns{n}", tmp_path / name, True, lldpd=object())
    links = plan.links
    for link in range(len(links)):
        a, b = int(links.a_dev[link]), int(links.b_dev[link])
        if a in twin.nodes and b in twin.nodes:
            twin.wired[link] = ((a, twin._ifname(a, int(links.a_port[link]))), (b, twin._ifname(b, int(links.b_port[link]))))
    assert len(twin.wired) == 4  # two uplinks from each leaf to spine-01
    monkeypatch.setattr(ethernet, "LLDP_RESEND_S", 0.0)
    monkeypatch.setattr(ethernet, "LLDP_POLL_S", 0.0)
    return twin


def test_collection_stops_at_the_second_equal_read_where_every_port_hears_one_neighbour(small_twin, tmp_path):
    wire = _Wire(small_twin, muted=set())
    small_twin._lldpcli = wire
    for node in small_twin.nodes.values():  # start_lldp's round: every daemon sent once
        wire(node, "update")
    wire.calls.clear()
    report = small_twin.collect_lldp(tmp_path / "out")
    assert (report["neighbours"], report["expected_neighbours"], report["missing"], report["crowded"]) == (8, 8, [], [])
    assert wire.calls == [("spine-01", "details"), ("su1-leaf-r1", "details"), ("su1-leaf-r2", "details")] * 2
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["spine-01.json", "su1-leaf-r1.json",
                                                                    "su1-leaf-r2.json"]
    assert _lldp_ports((tmp_path / "out" / "spine-01.json").read_text()) == set(small_twin._interfaces(
        small_twin.nodes[small_twin.plan.device_index("spine-01")]))


def test_a_silent_daemon_names_the_ports_that_never_heard_it_and_only_it_is_asked_again(small_twin, tmp_path,
                                                                                        monkeypatch):
    monkeypatch.setattr(ethernet, "LLDP_MAX_WAIT_S", 0.05)
    wire = _Wire(small_twin, muted={"spine-01"})  # what a paused lldpd did: answers lldpcli, sends nothing
    small_twin._lldpcli = wire
    for node in small_twin.nodes.values():
        wire(node, "update")
    wire.calls.clear()
    report = small_twin.collect_lldp(tmp_path / "out")
    leaves = [small_twin.nodes[small_twin.plan.device_index(f"su1-leaf-r{k}")] for k in (1, 2)]
    leaf_ports = [f"{n.name}:{p}" for n in leaves for p in small_twin._interfaces(n)]
    assert report["missing"] == leaf_ports and len(leaf_ports) == 4
    assert (report["neighbours"], report["expected_neighbours"], report["crowded"]) == (4, 8, [])
    # the complete table (spine-01's) was read twice, the same both times; the resends went to spine-01 alone
    assert {c for c in wire.calls if c[1] == "update"} == {("spine-01", "update")}
    assert wire.calls.count(("spine-01", "details")) == 2


def _ports(twin, name):
    return twin._interfaces(twin.nodes[twin.plan.device_index(name)])


def test_a_port_listing_two_neighbours_is_read_until_it_lists_one(small_twin, tmp_path):
    """A second neighbour on a port (lldpd keeps one for its TTL) is no settled table: the
    collection reads that switch again, and writes the read where the port lists one."""
    port = _ports(small_twin, "spine-01")[0]
    wire = _Wire(small_twin, muted=set(), ghost=("spine-01", port, 3))
    small_twin._lldpcli = wire
    for node in small_twin.nodes.values():
        wire(node, "update")
    wire.calls.clear()
    report = small_twin.collect_lldp(tmp_path / "out")
    assert (report["neighbours"], report["missing"], report["crowded"]) == (8, [], [])
    assert wire.calls.count(("spine-01", "details")) == 5  # 3 with the second neighbour, then two equal reads
    assert wire.calls.count(("su1-leaf-r1", "details")) == 2
    assert set(_lldp_ports((tmp_path / "out" / "spine-01.json").read_text())) == set(_ports(small_twin, "spine-01"))
    assert len(json.loads((tmp_path / "out" / "spine-01.json").read_text())["lldp"]["interface"]) == 4


def test_a_port_still_listing_two_neighbours_at_the_deadline_is_named(small_twin, tmp_path, monkeypatch):
    monkeypatch.setattr(ethernet, "LLDP_MAX_WAIT_S", 0.05)
    port = _ports(small_twin, "spine-01")[1]
    wire = _Wire(small_twin, muted=set(), ghost=("spine-01", port, 10**6))
    small_twin._lldpcli = wire
    for node in small_twin.nodes.values():
        wire(node, "update")
    wire.calls.clear()
    report = small_twin.collect_lldp(tmp_path / "out")
    assert (report["neighbours"], report["expected_neighbours"]) == (9, 8)
    assert (report["missing"], report["crowded"]) == ([], [f"spine-01:{port}"])
    assert not [c for c in wire.calls if c[1] == "update"]  # every port was heard: nobody is asked to send again


def test_lldp_out_refuses_tables_of_switches_not_in_the_plan(tmp_path):
    """`verify --as-built DIR` reads every *.json in DIR, so a table left there by another
    fabric's run would read as this fabric's cables: the twin stops, names it, deletes nothing."""
    _, plan = build_plan(TINY)
    switches = {d.name for d in plan.devices if d.role in ethernet.SWITCH_ROLES}
    out = tmp_path / "lldp"
    ethernet._refuse_stale_tables(out, switches)  # no folder yet: fine
    out.mkdir()
    (out / "su1-leaf-r1.json").write_text("{}")  # this plan's switch: rewritten by the run
    (out / "notes.txt").write_text("mine")
    ethernet._refuse_stale_tables(out, switches)
    (out / "pod7-spine-09.json").write_text("{}")
    with pytest.raises(ethernet.TwinUnavailable, match=r"1 LLDP table\(s\) of switches not in this plan \(pod7-spine-09.json\)"):
        ethernet._refuse_stale_tables(out, switches)
    assert (out / "pod7-spine-09.json").exists()


HOLD_BIND_S = 0.3  # what a descheduled lldpd monitor can spend between a port's socket() and bind() on a busy machine


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("lldpd") or not shutil.which("strace"),
                    reason="needs root, lldpd and strace (Debian packages lldpd, strace)")
def test_real_lldpd_lists_only_the_cabled_neighbour_while_peers_open_their_ports(monkeypatch):
    """lldpd opens each port's packet socket for every protocol, then binds it to the port
    in a second call: a frame that reaches any port of the namespace in between is read
    later as a neighbour of the port being opened. On a loaded machine a daemon is now and
    then descheduled there; strace holds every bind() HOLD_BIND_S to make that certain.
    Three switches of tiny-rail, their four cables, no FRR: each port lists exactly one
    neighbour, the far end of its cable (before the twin started its daemons paused, spine-01's
    later ports also listed the leaves' other ports)."""
    _, plan = build_plan(TINY)
    twin = EthernetTwin(plan, TwinOptions(timeout_s=0))
    twin.work = Path(tempfile.mkdtemp(prefix="clusterc-test-lldp-"))
    os.chmod(twin.work, 0o755)
    real_popen = subprocess.Popen

    def held(cmd, *args, **kwargs):
        if isinstance(cmd, list) and "lldpd" in cmd:
            at = cmd.index("unshare")
            cmd = cmd[:at] + ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=bind",
                              "-e", f"inject=bind:delay_enter={int(HOLD_BIND_S * 1e6)}"] + cmd[at:]
        return real_popen(cmd, *args, **kwargs)

    try:
        for n, name in enumerate(("su1-leaf-r1", "su1-leaf-r2", "spine-01")):
            i = plan.device_index(name)
            twin.nodes[i] = _Node(i, name, f"{twin.run_id}-lldp{n}", twin.work / name, True)
            twin.nodes[i].dir.mkdir()
            ethernet._run("ip", "netns", "add", twin.nodes[i].ns)
            twin.namespaces.append(twin.nodes[i].ns)
        twin._wire()
        monkeypatch.setattr(ethernet.subprocess, "Popen", held)
        twin.start_lldp()
        monkeypatch.setattr(ethernet.subprocess, "Popen", real_popen)
        report = twin.collect_lldp(twin.work / "out")
        far = {}  # (switch, port) -> (device, port) at the cable's other end
        for (a, na), (b, nb) in twin.wired.values():
            far[(twin.nodes[a].name, na)], far[(twin.nodes[b].name, nb)] = (twin.nodes[b].name, nb), (twin.nodes[a].name, na)
        listed = {}
        for node in twin.nodes.values():
            entries = json.loads((twin.work / "out" / f"{node.name}.json").read_text())["lldp"]["interface"]
            for entry in [entries] if isinstance(entries, dict) else entries:
                for port, body in entry.items():
                    listed.setdefault((node.name, port), []).append((next(iter(body["chassis"])), body["port"]["descr"]))
        assert listed == {k: [v] for k, v in far.items()} and len(far) == 8
        assert (report["neighbours"], report["missing"], report["crowded"]) == (8, [], [])
    finally:
        for node in twin.nodes.values():  # strace is the process started: stop its group (lldpd in it)
            if node.lldpd is not None and node.lldpd.poll() is None:
                os.killpg(node.lldpd.pid, signal.SIGTERM)
                node.lldpd.wait(timeout=10)
        twin.down()
