"""Digital twin of an Ethernet fabric: real FRR daemons in network namespaces, wired as
the cabling list says, loaded with the generated frr.conf, checked against the plan.

How: one namespace per switch and per sampled server; one veth pair per cable between them, each end
named as the NOS names the port; zebra + bgpd per switch under the `frr` user, in
their own UTS namespace (so BGP sees the switch's hostname); `vtysh -b` loads the config.

Reported against the plan: every BGP session (Established, and the peer's router id
is the loopback of the device the cabling says is on that port, which catches
swapped cables even where unnumbered sessions would come up), and for every ordered
leaf pair the ECMP next hops in the kernel to the other leaf's loopback against
`check.ecmp.expected_ecmp`. Optional: fail a cable or a switch and time the
re-convergence to the degraded prediction.

Cleanup is in `finally` and on SIGTERM/SIGINT: only pids from our own pid files are
signalled, and only while /proc/PID/comm is the daemon we started and the pid lives
in our namespace; then our namespaces, FRR's per-pid /var/tmp/frr dirs and our work
dir are removed. Requires root and Debian's `frr`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog.nos import TWIN_NOS
from ..check.ecmp import expected_ecmp
from ..plan.model import Plan
from ..plan.routing import RoutingPlan
from ..plan.views import cable_ids, nos_port_names
from ..render.host_configs import server_nics
from ..plan.naming import SWITCH_ROLES
from ..render.structured_config import switch_configs
from ..render.switch_configs import render_switch

# LLDP collection. lldpd sends every 30 s (tx-interval); the twin asks for frames instead
LLDP_START_S = 30.0  # every lldpd listening on all its ports; ~0.3 s for 12 daemons
LLDP_POLL_S = 0.2  # between reads of the neighbour tables
LLDP_RESEND_S = 2.0  # after which the peers of ports still unheard are asked to send again
LLDP_MAX_WAIT_S = 60.0  # a guard: collection ends when every port hears its neighbour (~1 s)

FRR_LIB = Path("/usr/lib/frr")
MAX_SWITCHES = 64  # a few dozen FRR pairs of daemons (~30 MB each) is what a CI box takes


class TwinUnavailable(Exception):
    """The twin cannot run here (not root, FRR missing) or for this design (too large)."""


@dataclass
class TwinOptions:
    fail_link: str | None = None  # cable id
    fail_switch: str | None = None  # device name
    swap: tuple[str, str] | None = None  # two cable ids whose upper ends are swapped (a recabling mistake)
    timeout_s: float = 90.0
    servers: int = 2  # sampled servers (first and last), for an end-to-end ping
    lldp_out: Path | None = None  # run lldpd in every namespace; write each switch's neighbour table here


@dataclass
class _Node:
    index: int  # plan device index
    name: str
    ns: str
    dir: Path
    switch: bool
    pids: dict[str, int] = field(default_factory=dict)
    lldpd: subprocess.Popen | None = None


def _run(*cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check, timeout=timeout)


def preflight(plan: Plan) -> None:
    if plan.routing is None:
        raise TwinUnavailable("the Ethernet twin needs a routing plan: a fat-tree or rail-optimized Ethernet fabric "
                              "(addressing is not planned for other topologies yet)")
    switches = sum(1 for d in plan.devices if d.role in SWITCH_ROLES)
    if switches > MAX_SWITCHES:
        raise TwinUnavailable(f"{switches} switches: the twin runs designs of up to {MAX_SWITCHES} switches on one machine")
    if os.geteuid() != 0:
        raise TwinUnavailable("the twin needs root (network namespaces, veth pairs)")
    missing = [p for p in ("zebra", "bgpd") if not (FRR_LIB / p).exists()] + ([] if shutil.which("vtysh") else ["vtysh"])
    if missing:
        raise TwinUnavailable(f"FRR is not installed ({', '.join(missing)} missing): apt-get install frr")


class EthernetTwin:
    def __init__(self, plan: Plan, options: TwinOptions):
        assert plan.routing is not None  # preflight() refused a plan without one
        self.plan = plan
        self.routing: RoutingPlan = plan.routing
        self.expected: list[dict] = []  # the sessions the configs ask for: expected_sessions(), once up
        self.opt = options
        self.run_id = f"cct{os.getpid()}"
        self.work: Path | None = None  # made by up(), so a refused run leaves nothing behind
        self.nodes: dict[int, _Node] = {}
        self.cables = plan.memo("cable_ids", cable_ids)
        self.cable_index = {c: i for i, c in enumerate(self.cables)}
        self.configs = {c.hostname: c for c in switch_configs(plan, TWIN_NOS)}
        self.wired: dict[int, tuple[tuple[int, str], tuple[int, str]]] = {}  # link -> ((dev, ifname), (dev, ifname))
        self.namespaces: list[str] = []

    # --- set-up ----------------------------------------------------------------------
    def _sampled_servers(self) -> list[int]:
        servers = [i for i, d in enumerate(self.plan.devices) if d.role == "server"]
        if not servers or self.opt.servers <= 0:
            return []
        return sorted({servers[0], servers[-1]})[: self.opt.servers]

    def _ifname(self, dev: int, port: int) -> str:
        d = self.plan.devices[dev]
        name = self.plan.memo("twin_port_names", lambda p: nos_port_names(p, TWIN_NOS))[d.port_offset + port]
        if len(name) > 15 or "/" in name or " " in name:
            raise TwinUnavailable(f"port name {name!r} of {d.name} is not a Linux interface name")
        return name

    def up(self) -> None:
        plan = self.plan
        self.work = Path(tempfile.mkdtemp(prefix="clusterc-twin-"))
        os.chmod(self.work, 0o755)  # the daemons run as `frr` and must reach their folders
        members = [i for i, d in enumerate(plan.devices) if d.role in SWITCH_ROLES] + self._sampled_servers()
        for n, i in enumerate(members):
            d = plan.devices[i]
            node = _Node(i, d.name, f"{self.run_id}-{n}", self.work / d.name, d.role in SWITCH_ROLES)
            node.dir.mkdir()
            _run("ip", "netns", "add", node.ns)
            self.namespaces.append(node.ns)
            _run("ip", "netns", "exec", node.ns, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1",
                 "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0",
                 "net.ipv4.fib_multipath_hash_policy=1")
            _run("ip", "-n", node.ns, "link", "set", "lo", "up")
            self.nodes[i] = node
        self._wire()
        self._configure_servers()
        self._start_frr()

    def _wire(self) -> None:
        links = self.plan.links
        a_dev, a_port, b_dev, b_port = (x.tolist() for x in (links.a_dev, links.a_port, links.b_dev, links.b_port))
        upper = {i: (b_dev[i], b_port[i]) for i in range(len(links))}
        if self.opt.swap:  # the floor team swapped two cables at their upper ends
            x, y = (self.cable_index[c] for c in self.opt.swap)
            upper[x], upper[y] = upper[y], upper[x]
        for i in range(len(links)):
            (a, pa), (b, pb) = (a_dev[i], a_port[i]), upper[i]
            if a not in self.nodes or b not in self.nodes:
                continue
            na, nb = self._ifname(a, pa), self._ifname(b, pb)
            _run("ip", "-n", self.nodes[a].ns, "link", "add", na, "type", "veth", "peer", "name", nb, "netns", self.nodes[b].ns)
            _run("ip", "-n", self.nodes[a].ns, "link", "set", na, "up")
            _run("ip", "-n", self.nodes[b].ns, "link", "set", nb, "up")
            self.wired[i] = ((a, na), (b, nb))

    def _configure_servers(self) -> None:
        """Sampled servers as host-configs/netplan sets them up (render/host_configs.py): the
        odd address of each NIC's /31, one routing table per NIC with a rule for its address,
        and the main table's routes to the fabric over rail 1."""
        r = self.routing
        _, per_server, _ = server_nics(self.plan)
        pools = (r.pools["server_links"], r.pools["loopbacks"])
        for i, node in self.nodes.items():
            if node.switch:
                continue
            for k, nic in enumerate(per_server[i]):
                _run("ip", "-n", node.ns, "addr", "add", f"{nic.address}/31", "dev", nic.ifname)
                for pool in pools:
                    _run("ip", "-n", node.ns, "route", "add", pool, "via", nic.gateway, "dev", nic.ifname, "table", str(nic.table))
                    if k == 0:
                        _run("ip", "-n", node.ns, "route", "add", pool, "via", nic.gateway, "dev", nic.ifname)
                _run("ip", "-n", node.ns, "rule", "add", "from", nic.address, "table", str(nic.table), "priority", str(nic.table))

    def _vtysh(self, node: _Node, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return _run("vtysh", "--config_dir", str(node.dir), "--vty_socket", str(node.dir), *args, check=check)

    def _start_frr(self) -> None:
        for node in self.nodes.values():
            if not node.switch:
                continue
            (node.dir / "frr.conf").write_text(render_switch(self.configs[node.name])["frr.conf"])
            (node.dir / "vtysh.conf").write_text("")
            (node.dir / "empty.conf").write_text("")
            shutil.chown(node.dir, "frr", "frr")
            for f in node.dir.iterdir():
                shutil.chown(f, "frr", "frr")
            check = self._vtysh(node, "-C", "-f", str(node.dir / "frr.conf"), check=False)
            if check.returncode != 0:
                raise RuntimeError(f"generated frr.conf of {node.name} fails vtysh -C:\n{check.stdout}{check.stderr}")
        self.t_start = time.monotonic()
        for node in self.nodes.values():
            if not node.switch:
                continue
            for daemon in ("zebra", "bgpd"):
                _run("ip", "netns", "exec", node.ns, "unshare", "--uts", "sh", "-c", 'hostname "$0"; exec "$@"', node.name,
                     str(FRR_LIB / daemon), "-d", "-F", "datacenter", "-f", str(node.dir / "empty.conf"),
                     "-i", str(node.dir / f"{daemon}.pid"), "-z", str(node.dir / "zserv.api"),
                     "--vty_socket", str(node.dir), "-P", "0", "--log", f"file:{node.dir / daemon}.log")
                node.pids[daemon] = _read_pid(node.dir / f"{daemon}.pid")
        for node in self.nodes.values():
            if node.switch:
                self._vtysh(node, "-b")

    # --- observation -------------------------------------------------------------------
    def expected_sessions(self) -> list[dict]:
        """One session per switch port wired to a switch; whom it should reach comes from
        that port's config, i.e. from the plan, whatever was actually cabled."""
        out = []
        for _link, ((a, na), (b, nb)) in sorted(self.wired.items()):
            if self.nodes[a].switch and self.nodes[b].switch:
                out += [{"device": self.plan.devices[a].name, "interface": na}, {"device": self.plan.devices[b].name, "interface": nb}]
        # the neighbor a config expects on an interface comes from the config itself
        by_if = {(c.hostname, i.name): i for c in self.configs.values() for i in c.interfaces}
        for s in out:
            iface = by_if[(s["device"], s["interface"])]
            s["neighbor"] = iface.peer_address or iface.name
            s["expected_peer"] = iface.peer
            s["expected_router_id"] = self.configs[iface.peer].router_id
        return out

    def observe(self) -> dict:
        sessions = []
        neighbors: dict[str, dict] = {}
        for node in self.nodes.values():
            if node.switch:
                res = self._vtysh(node, "-c", "show bgp neighbors json", check=False)
                try:
                    neighbors[node.name] = json.loads(res.stdout or "{}")
                except json.JSONDecodeError:
                    neighbors[node.name] = {}
        for s in self.expected:
            n = neighbors.get(s["device"], {}).get(s["neighbor"], {})
            state = n.get("bgpState", "absent")
            rid = n.get("remoteRouterId")
            ok = state == "Established" and rid == s["expected_router_id"]
            sessions.append({k: v for k, v in s.items() if not k.startswith("_")} | {"state": state, "peer_router_id": rid, "ok": ok})
        routes = {}
        for i, node in self.nodes.items():
            if self.plan.devices[i].role != "leaf":
                continue
            res = _run("ip", "-n", node.ns, "-j", "route", "show", "proto", "bgp", check=False)
            table = json.loads(res.stdout or "[]")
            routes[i] = {e["dst"]: len(e.get("nexthops", [])) or 1 for e in table}
        return {"sessions": sessions, "routes": routes}

    def compare(self, obs: dict, failed_links: frozenset[int], failed_devices: frozenset[int]) -> tuple[bool, list[dict], list[str]]:
        r = self.routing
        leaves = [i for i in self.nodes if self.plan.devices[i].role == "leaf"]
        max_paths = min((c.maximum_paths for c in self.configs.values() if c.role == "leaf"), default=1)
        expect = expected_ecmp(self.plan, max_paths, failed_links, failed_devices,
                               [(a, b) for a in leaves for b in leaves if a != b])
        rows, problems = [], []
        for (a, b), want in sorted(expect.items()):
            if a in failed_devices or b in failed_devices:
                continue
            got = obs["routes"].get(a, {}).get(r.ip(int(r.loopback[b])), 0)
            rows.append({"from": self.plan.devices[a].name, "to": self.plan.devices[b].name, "expected": want, "installed": got})
            if got != want:
                problems.append(f"{self.plan.devices[a].name} -> {self.plan.devices[b].name}: {got} ECMP next hop(s), plan predicts {want}")
        for s in obs["sessions"]:
            if s["_failed"]:
                continue
            if not s["ok"]:
                why = (s["state"] if s["state"] != "Established"
                       else f"peer router id {s['peer_router_id']}, expected {s['expected_router_id']} ({s['expected_peer']})")
                problems.append(f"{s['device']} {s['interface']} -> {s['expected_peer']}: {why}")
        return not problems, rows, problems

    def wait(self, failed_links=frozenset(), failed_devices=frozenset()) -> tuple[bool, float, dict, list, list]:
        t0 = time.monotonic()
        while True:
            obs = self.observe()
            for s in obs["sessions"]:
                s["_failed"] = self._session_failed(s, failed_links, failed_devices)
            ok, rows, problems = self.compare(obs, failed_links, failed_devices)
            elapsed = time.monotonic() - t0
            if ok or elapsed > self.opt.timeout_s:
                return ok, elapsed, obs, rows, problems
            time.sleep(0.3)

    def _session_failed(self, s: dict, failed_links, failed_devices) -> bool:
        names = {self.plan.devices[i].name for i in failed_devices}
        if s["device"] in names or s["expected_peer"] in names:
            return True
        for link in failed_links:
            ends = self.wired.get(link)
            if ends and any((self.plan.devices[d].name, n) == (s["device"], s["interface"]) for d, n in ends):
                return True
        return False

    # --- LLDP: the neighbour tables a bring-up team collects ------------------------------
    def _interfaces(self, node: _Node) -> list[str]:
        return sorted(n for (a, na), (b, nb) in self.wired.values() for d, n in ((a, na), (b, nb)) if d == node.index)

    def _lldpcli(self, node: _Node, *args: str) -> subprocess.CompletedProcess:
        return _run("lldpcli", "-u", str(node.dir / "lldpd.sock"), *args, check=False)

    def start_lldp(self) -> None:
        """lldpd (Debian's, the daemon SONiC and Cumulus run) in every namespace, under the
        device's hostname (its own UTS namespace), on the wired ports only, with its own
        control socket (-u), in the foreground (-d: no shared /run/lldpd.pid) in its own
        session, stopped by pid. Returns once every daemon listens on all its ports and has
        sent once, so no first frame is lost to a daemon that was not yet listening.

        Every daemon starts paused and is resumed only once all of them have bound every
        port: lldpd opens each port's packet socket for every protocol (ETH_P_ALL) and binds
        it to its port in a second call, and a frame that reaches any port of the namespace
        in between stays queued on that socket, to be read (no interface check on receive)
        as a neighbour of the port being opened. Started unpaused, the daemons that were up
        sent while the others opened their ~100 sockets, and a loaded machine (a descheduled
        daemon between the two calls) left one port with a second neighbour for 120 s, which
        `verify` read as an unplanned cable. A paused lldpd sends nothing and drops what it
        reads, so nothing is on the wire until every socket is bound.

        -L true: the configurator lldpd runs at start (lldpcli, which reads /etc/lldpd.conf
        and sends `resume`) does nothing, so the daemon stays paused until resumed here.
        lldpcli writes back the whole configuration it read with every command: two lldpcli
        on one daemon at once can undo each other (a real lldpcli at start and an `update`
        once paused a daemon for good: the switch with no neighbours on tiny-rail), so each
        daemon gets one command at a time, in order."""
        if not shutil.which("lldpd") or not shutil.which("lldpcli"):
            raise TwinUnavailable("lldpd is not installed: apt-get install lldpd")
        true = shutil.which("true") or "/bin/true"
        for node in self.nodes.values():
            ifaces = self._interfaces(node)
            if not ifaces:
                continue
            log = open(node.dir / "lldpd.log", "wb")
            node.lldpd = subprocess.Popen(
                ["ip", "netns", "exec", node.ns, "unshare", "--uts", "sh", "-c", 'hostname "$0"; exec "$@"', node.name,
                 "lldpd", "-d", "-u", str(node.dir / "lldpd.sock"), "-I", ",".join(ifaces), "-L", true],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
        daemons = [n for n in self.nodes.values() if n.lldpd is not None]
        deadline = time.monotonic() + LLDP_START_S
        for node in daemons:
            while not (node.dir / "lldpd.sock").exists():
                self._lldpd_alive(node, deadline, "did not open its control socket")
                time.sleep(0.05)
        # a port lldpcli lists has its raw socket open and watched: frames sent to it from now on are kept
        for node in daemons:
            want = set(self._interfaces(node))
            while not want <= _lldp_ports(self._lldpcli(node, "-f", "json", "show", "interfaces").stdout):
                self._lldpd_alive(node, deadline, "did not take all its ports")
                time.sleep(0.05)
        for node in daemons:  # every socket is bound: frames now reach only their own port's socket
            self._lldpcli(node, "resume")
        for node in daemons:  # send now, to daemons that were still paused when the others resumed
            self._lldpcli(node, "update")

    def _lldpd_alive(self, node: _Node, deadline: float, what: str) -> None:
        if node.lldpd is None or node.lldpd.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"lldpd in {node.name} {what}: see {node.dir / 'lldpd.log'}")

    def collect_lldp(self, out: Path) -> dict:
        """Poll until every switch's table is settled: each wired port lists exactly one
        neighbour, and two reads in a row list the same ones (LLDP_MAX_WAIT_S at most);
        then write each switch's `lldpcli -f json show neighbors details` to OUT/<switch>.json.
        Ports still unheard are listed in `missing`, ports listing more than one neighbour
        (a neighbour lldpd keeps for its TTL, 120 s) in `crowded`, as switch:port."""
        t0 = time.monotonic()
        switches = sorted((n for n in self.nodes.values() if n.switch and n.lldpd is not None), key=lambda n: n.name)
        want = {n.name: set(self._interfaces(n)) for n in switches}
        peer = {}  # (node, port) -> the node at the cable's other end, the one that must send
        for (a, na), (b, nb) in self.wired.values():
            peer[(a, na)], peer[(b, nb)] = self.nodes[b], self.nodes[a]
        tables: dict[str, str] = {}
        seen: dict[str, dict[str, list[tuple]]] = {}  # switch -> wired port -> its neighbours
        pending, last_send = switches, t0
        while True:
            settled = []
            for node in pending:
                tables[node.name] = self._lldpcli(node, "-f", "json", "show", "neighbors", "details").stdout
                now = {p: n for p, n in _lldp_neighbours(tables[node.name]).items() if p in want[node.name]}
                if all(len(now.get(p, ())) == 1 for p in want[node.name]) and now == seen.get(node.name):
                    settled.append(node)
                seen[node.name] = now
            pending = [n for n in pending if n not in settled]
            if not pending or time.monotonic() - t0 > max(self.opt.timeout_s, LLDP_MAX_WAIT_S):
                break
            if time.monotonic() - last_send > LLDP_RESEND_S:
                # start_lldp's round reaches every port; this is a guard for a frame lost anyway (a loaded
                # machine), asking only the peers of unheard ports to send again
                senders = {peer[(n.index, p)].name: peer[(n.index, p)] for n in pending for p in want[n.name]
                           if not seen[n.name].get(p)}
                for name in sorted(senders):
                    self._lldpcli(senders[name], "update")
                last_send = time.monotonic()
            time.sleep(LLDP_POLL_S)
        out.mkdir(parents=True, exist_ok=True)
        for name, text in sorted(tables.items()):
            (out / f"{name}.json").write_text(text)
        return {"folder": str(out), "switches": len(tables),
                "neighbours": sum(len(v) for ports in seen.values() for v in ports.values()),
                "expected_neighbours": sum(len(w) for w in want.values()), "seconds": round(time.monotonic() - t0, 2),
                "missing": [f"{n.name}:{p}" for n in pending for p in sorted(want[n.name]) if not seen[n.name].get(p)],
                "crowded": [f"{n.name}:{p}" for n in pending for p in sorted(want[n.name])
                            if len(seen[n.name].get(p, ())) > 1]}

    def stop_lldp(self) -> None:
        for node in self.nodes.values():
            proc = node.lldpd
            if proc is None or proc.poll() is not None:
                continue
            if _is_ours(proc.pid, "lldpd", node.ns):
                os.killpg(proc.pid, signal.SIGTERM)  # its own session: lldpd and its privilege-separated child
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)

    # --- failures ------------------------------------------------------------------------
    def fail(self, links: frozenset[int]) -> None:
        for link in links:
            (a, na), _ = self.wired[link]
            _run("ip", "-n", self.nodes[a].ns, "link", "del", na, check=False)

    # --- teardown --------------------------------------------------------------------------
    def down(self) -> None:
        self.stop_lldp()
        pids = []
        for node in self.nodes.values():
            for daemon, pid in node.pids.items():
                if _is_ours(pid, daemon, node.ns):
                    try:
                        os.kill(pid, signal.SIGTERM)
                        pids.append(pid)
                    except ProcessLookupError:
                        pass
        deadline = time.monotonic() + 8
        while pids and time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
            time.sleep(0.1)
        for node in self.nodes.values():
            for daemon, pid in node.pids.items():
                if _is_ours(pid, daemon, node.ns):
                    os.kill(pid, signal.SIGKILL)
                shutil.rmtree(f"/var/tmp/frr/{daemon}.{pid}", ignore_errors=True)
        for ns in self.namespaces:
            _run("ip", "netns", "del", ns, check=False)
        if self.work is not None:
            shutil.rmtree(self.work, ignore_errors=True)


def _lldp_ports(text: str) -> set[str]:
    """The interfaces in lldpcli's JSON (`show neighbors` or `show interfaces`): an object
    keyed by interface for one, a list of such one-key objects for several."""
    try:
        interfaces = (json.loads(text or "{}").get("lldp") or {}).get("interface") or []
    except (json.JSONDecodeError, AttributeError):
        return set()
    if isinstance(interfaces, dict):
        interfaces = [interfaces]
    return {name for item in interfaces if isinstance(item, dict) for name in item}


def _lldp_neighbours(text: str) -> dict[str, list[tuple]]:
    """Each port's neighbours in `lldpcli -f json show neighbors details`, as (system name,
    chassis id, port id, port description): one entry per neighbour, so a port that lists
    two has two (two one-key objects naming the port). Only who the neighbour is: its
    addresses and age change from read to read."""
    try:
        interfaces = (json.loads(text or "{}").get("lldp") or {}).get("interface") or []
    except (json.JSONDecodeError, AttributeError):
        return {}
    if isinstance(interfaces, dict):
        interfaces = [interfaces]
    out: dict[str, list[tuple]] = {}
    for item in interfaces:
        for port, body in (item.items() if isinstance(item, dict) else ()):
            body = body if isinstance(body, dict) else {}
            chassis, far = body.get("chassis") or {}, body.get("port") or {}
            name = "" if "id" in chassis else next(iter(chassis), "")  # keyed by system name when it sends one
            cid = (chassis.get(name) or {}).get("id") if name else chassis.get("id")
            out.setdefault(port, []).append((name, json.dumps(cid, sort_keys=True),
                                             json.dumps(far.get("id"), sort_keys=True), far.get("descr")))
    return out


def _read_pid(path: Path) -> int:
    deadline = time.monotonic() + 5  # -d: the daemon writes its pid file after forking
    while time.monotonic() < deadline:
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            time.sleep(0.05)
    raise RuntimeError(f"{path.name} not written: the daemon did not start (see {path.with_suffix('.log')})")


def _is_ours(pid: int, comm: str, ns: str) -> bool:
    try:
        if Path(f"/proc/{pid}/comm").read_text().strip() != comm:
            return False
    except OSError:
        return False
    res = _run("ip", "netns", "identify", str(pid), check=False)
    return res.stdout.strip() == ns


def _refuse_stale_tables(out: Path, switches: set[str]) -> None:
    """`verify --as-built DIR` reads every *.json in DIR: a table left by another fabric's
    run would read as cables of this one. Each run rewrites every switch's table, so only
    files named after a switch of this plan may already be there; others are not deleted
    (they are the user's), the run stops and names them."""
    if not out.is_dir():
        return
    stale = sorted(p.name for p in out.glob("*.json") if p.stem not in switches)
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        raise TwinUnavailable(f"--lldp-out {out} holds {len(stale)} LLDP table(s) of switches not in this plan ({shown}); "
                              f"`clusterc verify` would read them as this fabric's: use an empty folder or remove them")


def run(plan: Plan, options: TwinOptions) -> dict:
    """Boot the fabric, compare with the plan, optionally fail something; always clean up."""
    preflight(plan)
    failed_links: frozenset[int] = frozenset()
    failed_devices: frozenset[int] = frozenset()
    twin = EthernetTwin(plan, options)
    if options.fail_link is not None and options.fail_link not in twin.cable_index:
        raise TwinUnavailable(f"no cable {options.fail_link} in the plan")
    if options.fail_switch is not None:
        names = {d.name: i for i, d in enumerate(plan.devices) if d.role in SWITCH_ROLES}
        if options.fail_switch not in names:
            raise TwinUnavailable(f"no switch {options.fail_switch} in the plan")
    for c in options.swap or ():
        if c not in twin.cable_index:
            raise TwinUnavailable(f"no cable {c} in the plan")
    if options.lldp_out is not None:
        _refuse_stale_tables(Path(options.lldp_out), {d.name for d in plan.devices if d.role in SWITCH_ROLES})
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}

    def _interrupted(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    for s in previous:
        signal.signal(s, _interrupted)
    try:
        twin.up()
        if options.lldp_out is not None:
            twin.start_lldp()  # before convergence: LLDP comes up while BGP does
        twin.expected = twin.expected_sessions()
        ok, elapsed, obs, rows, problems = twin.wait()
        report: dict[str, Any] = {
            "converged": ok, "convergence_s": round(time.monotonic() - twin.t_start, 2),
            "switches": sum(1 for n in twin.nodes.values() if n.switch),
            "servers_sampled": [n.name for n in twin.nodes.values() if not n.switch],
            "links_wired": len(twin.wired), "peering": twin.routing.peering,
            "sessions": [{k: v for k, v in s.items() if not k.startswith("_")} for s in obs["sessions"]],
            "ecmp": rows, "problems": problems,
        }
        report["sessions_established"] = sum(1 for s in obs["sessions"] if s["state"] == "Established")
        if options.lldp_out is not None:
            report["lldp"] = twin.collect_lldp(Path(options.lldp_out))
            # an incomplete table would read as missing cables in `clusterc verify`
            report["problems"] += [f"LLDP: {port} heard no neighbour in {report['lldp']['seconds']} s"
                                   for port in report["lldp"]["missing"]]
            report["problems"] += [f"LLDP: {port} lists more than one neighbour after {report['lldp']['seconds']} s"
                                   for port in report["lldp"]["crowded"]]
        report["server_ping"] = _ping(twin) if ok else None
        if ok and report["server_ping"] is not None and not report["server_ping"]["ok"]:
            report["problems"] += [f"rail {x['rail']}: ping {x['from']} -> {x['to']} "
                                   + ("failed" if x["egress_ok"] else "left on another NIC")
                                   for x in report["server_ping"]["rails"] if not (x["ok"] and x["egress_ok"])]
        if ok and (options.fail_link or options.fail_switch):
            if options.fail_link:
                failed_links = frozenset({twin.cable_index[options.fail_link]})
            if options.fail_switch:
                dev = plan.device_index(options.fail_switch)
                failed_devices = frozenset({dev})
                failed_links = failed_links | {l for l, ((a, _), (b, _)) in twin.wired.items() if dev in (a, b)}
            t0 = time.monotonic()
            twin.fail(failed_links)
            ok2, _, obs2, rows2, problems2 = twin.wait(failed_links, failed_devices)
            report["failure"] = {
                "link": options.fail_link, "switch": options.fail_switch, "converged": ok2,
                "reconvergence_s": round(time.monotonic() - t0, 2), "ecmp": rows2, "problems": problems2,
                "sessions_established": sum(1 for s in obs2["sessions"] if s["state"] == "Established"),
            }
        report["ok"] = not report["problems"] and report.get("failure", {}).get("converged", True)
        return report
    finally:
        twin.down()
        for s, handler in previous.items():
            signal.signal(s, handler)


def _ping(twin: EthernetTwin) -> dict | None:
    """Ping from the first sampled server to the last on every rail: from NIC k's address to
    the other server's NIC k, and the kernel must send it out of NIC k (its own table)."""
    servers = [n for n in twin.nodes.values() if not n.switch]
    if len(servers) < 2 or not shutil.which("ping"):
        return None
    _, per_server, _ = server_nics(twin.plan)
    src_nics, dst_nics = per_server[servers[0].index], per_server[servers[-1].index]
    rails = []
    for a, b in zip(src_nics, dst_nics, strict=True):
        route = _run("ip", "-n", servers[0].ns, "-o", "route", "get", b.address, "from", a.address, check=False).stdout
        res = _run("ip", "netns", "exec", servers[0].ns, "ping", "-c", "1", "-W", "2", "-I", a.address, b.address, check=False)
        rails.append({"rail": a.rail, "from": f"{servers[0].name}:{a.ifname} {a.address}",
                      "to": f"{servers[-1].name}:{b.ifname} {b.address}",
                      "egress_ok": f" dev {a.ifname} " in route, "ok": res.returncode == 0})
    return {"from": rails[0]["from"] if rails else servers[0].name, "to": rails[0]["to"] if rails else servers[-1].name,
            "rails": rails, "ok": bool(rails) and all(x["ok"] and x["egress_ok"] for x in rails)}
