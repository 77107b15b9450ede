"""InfiniBand twin: the compiled fabric in ibsim, routed by OpenSM with the compiled opensm.conf.

`run(ib_dir)` takes a compiled `out/<name>/infiniband/` folder, starts ibsim on its
`topology.ibnetdiscover`, runs OpenSM once (`-o`) as a client of the simulator with the
folder's opensm.conf (paths pointed at a private copy), then `ibnetdiscover` to compare
the simulated fabric with the expected file. It returns a plain dict (JSON-ready):

    ok               the first routing engine configured every switch, SUBNET UP, the
                     counts OpenSM reports match the files, discovery matches the file
    engine           the engine opensm.conf asks for first (e.g. ftree)
    engine_used      the engine whose "<engine> tables configured on all switches" line
                     appeared (a fallback such as updn when the first one failed), or None
    engine_lines     OpenSM's own success/failure lines about routing
    errors           OpenSM's error-level log lines (first 50)
    subnet_up, sm_state   "SUBNET UP" seen; "MASTER" when OpenSM entered the master state
    counts, expected what OpenSM's fabric summary reports vs what the files describe
    discovery        links found by ibnetdiscover vs the file: missing / unexpected
    ibsim            nodes, switches, ports and the limits passed to ibsim
    seconds          wall time per step

Needs Debian packages ibsim-utils (with libumad2sim0), opensm and infiniband-diags; no
kernel InfiniBand and no root. Processes are started in their own session and stopped
by pid. `TwinUnavailable` says why a twin cannot run (a tool missing, or a design whose
IB port numbering is not established so no topology was written).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ..render.infiniband import CONF_DIR

# ibsim's compiled-in defaults (ibsim.c: -N/-S/-P); larger fabrics need them raised.
IBSIM_DEFAULT_LIMITS = {"nodes": 2048, "switches": 256, "ports": 13312}
UMAD2SIM_GLOB = "/usr/lib/*/umad2sim/libumad2sim.so"
TOOLS = ("ibsim", "opensm", "ibnetdiscover")

_NODE = re.compile(r'^(Switch|Ca)\s+(\d+)\s+"([^"]+)"')
_PORT = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\]')
_TABLES = re.compile(r"(\S+) tables configured on all switches")
_FABRIC_CAS = re.compile(r"Fabric has (\d+) CAs?, (\d+) CA ports? \((\d+) of them CNs\), (\d+) switch")
_ROOTS = re.compile(r"Fabric has (\d+) switch(?:es)? at rank 0 \(roots\)")
_RANK = re.compile(r"FatTree rank \(roots to leaf switches\): (\d+)")


class TwinUnavailable(Exception):
    """The twin cannot run here or for this design; the message says why."""


def umad2sim() -> str | None:
    found = sorted(glob.glob(UMAD2SIM_GLOB))
    return found[0] if found else None


def missing_tools() -> list[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None and not Path(f"/usr/sbin/{t}").exists()]
    if umad2sim() is None:
        missing.append("libumad2sim.so (libumad2sim0)")
    return missing


def _tool(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def parse_ibnetdiscover(text: str) -> dict:
    """Nodes and links of an ibnetdiscover-format file (ours, or the tool's output).

    Returns {"nodes": {id: (kind, nports)}, "links": {(id, port): (peer id, peer port)}}.
    Node ids are "S-<guid>"/"H-<guid>"; GUIDs are compared as integers so that leading
    zeros and case do not matter."""
    nodes: dict[str, tuple[str, int]] = {}
    links: dict[tuple[str, int], tuple[str, int]] = {}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        m = _NODE.match(line)
        if m:
            current = _norm(m.group(3))
            nodes[current] = (m.group(1), int(m.group(2)))
            continue
        m = _PORT.match(line)
        if m and current is not None:
            links[(current, int(m.group(1)))] = (_norm(m.group(2)), int(m.group(3)))
    return {"nodes": nodes, "links": links}


def _norm(node_id: str) -> str:
    kind, _, guid = node_id.partition("-")
    try:
        return f"{kind}-{int(guid, 16):016x}"
    except ValueError:
        return node_id


def _guid_count(path: Path) -> int:
    if not path.exists():
        return 0
    return sum(1 for ln in path.read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#"))


def _wait_for_socket(sock: str, proc: subprocess.Popen, timeout_s: float) -> bool:
    needle = f"@{sock}:ctl@"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as fh:
            if needle in fh.read():
                return True
        time.sleep(0.05)
    return False


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: ibsim and nothing else of ours
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def run(ib_dir: str | Path, *, fabric: str | Path | None = None, timeout_s: float = 600.0,
        keep: Path | None = None, lfts: bool = False) -> dict:
    """Run the compiled InfiniBand folder `ib_dir` in ibsim + OpenSM; see the module doc.

    fabric: an ibnetdiscover-format file to simulate instead of the expected topology (a
    fabric as cabled, e.g. with a mistake); discovery is still compared with the expected
    file, so `discovery.missing`/`unexpected` list the miscabled ports.
    keep: a folder to leave the working files in (ibsim and OpenSM logs, dumps).
    lfts: also read every switch's unicast forwarding table back from the simulator with
    infiniband-diags' `dump_fts` (ibroute for every switch) after OpenSM routed: the routes
    OpenSM actually computed, as `result["lfts"]` (the tool's text; see twin/lft.py)."""
    ib_dir = Path(ib_dir)
    net = ib_dir / "topology.ibnetdiscover"
    conf = ib_dir / "opensm.conf"
    if not conf.exists():
        raise TwinUnavailable(f"{ib_dir}: no opensm.conf (not an InfiniBand design, or not compiled)")
    if not net.exists():
        readme = ib_dir / "README.md"
        why = ""
        if readme.exists():
            why = "; ".join(ln[2:] for ln in readme.read_text().splitlines() if ln.startswith("- `topology.ibnetdiscover`"))
        raise TwinUnavailable(f"{ib_dir}: no topology.ibnetdiscover, so nothing to simulate" + (f" ({why})" if why else ""))
    missing = missing_tools()
    if missing:
        raise TwinUnavailable("missing " + ", ".join(missing) + " (Debian: ibsim-utils libumad2sim0 opensm infiniband-diags)")

    expected = parse_ibnetdiscover(net.read_text())
    simulated_net = Path(fabric) if fabric is not None else net
    simulated = parse_ibnetdiscover(simulated_net.read_text()) if fabric is not None else expected
    kinds = [k for k, _ in expected["nodes"].values()]
    switches, cas = kinds.count("Switch"), kinds.count("Ca")
    ports = sum(n + 1 for _, n in simulated["nodes"].values())
    sim_kinds = [k for k, _ in simulated["nodes"].values()]
    need = {"nodes": len(sim_kinds), "switches": sim_kinds.count("Switch"), "ports": ports}
    limits = {k: max(v, need[k]) for k, v in IBSIM_DEFAULT_LIMITS.items()}
    ca_ids = [i for i, (k, _) in simulated["nodes"].items() if k == "Ca"]
    if not ca_ids:
        raise TwinUnavailable(f"{net}: no CA to run the subnet manager from")
    engine = _first_engine(conf.read_text())

    work = Path(tempfile.mkdtemp(prefix="clusterc-ibtwin-"))
    result: dict = {"ok": False, "engine": engine, "engine_used": None, "engine_lines": [], "errors": [],
                    "subnet_up": False, "sm_state": None, "counts": {}, "discovery": {},
                    "expected": {"switches": switches, "ca_ports": cas, "roots": _guid_count(ib_dir / "root.guids"),
                                 "compute_nodes": _guid_count(ib_dir / "compute.guids")},
                    "ibsim": {**need, "limits": limits}, "seconds": {}}
    ibsim = None
    try:
        for f in ib_dir.iterdir():
            if f.is_file():
                text = f.read_text()
                if f.name == "opensm.conf":
                    text = text.replace(f"{CONF_DIR}/", f"{work}/")
                (work / f.name).write_text(text)
        if fabric is not None:
            shutil.copyfile(simulated_net, work / "simulated.ibnetdiscover")
        (work / "cache").mkdir()
        sock = f"clusterc{os.getpid()}x{time.monotonic_ns() % 1_000_000}"
        base_env = {**os.environ, "IBSIM_SOCKNAME": sock}
        args = [_tool("ibsim"), "-s", "-n"]
        if limits != IBSIM_DEFAULT_LIMITS:
            args += ["-N", str(limits["nodes"]), "-S", str(limits["switches"]), "-P", str(limits["ports"])]
        t0 = time.monotonic()
        with open(work / "ibsim.log", "wb") as log:
            # ibsim reads its console from stdin and busy-loops on EOF unless -n is given.
            sim_file = work / ("simulated.ibnetdiscover" if fabric is not None else net.name)
            ibsim = subprocess.Popen(args + [str(sim_file)], cwd=work, env=base_env, stdin=subprocess.DEVNULL,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if not _wait_for_socket(sock, ibsim, min(timeout_s, 120)):
            tail = (work / "ibsim.log").read_text(errors="replace").splitlines()[-5:]
            result["errors"] = ["ibsim: " + ln for ln in tail] or ["ibsim did not start"]
            return result
        result["seconds"]["ibsim_start"] = round(time.monotonic() - t0, 3)

        # umad2sim makes fake sysfs trees in the cwd; SIM_HOST picks the CA a client sits on.
        client_env = {**base_env, "SIM_HOST": ca_ids[0], "LD_PRELOAD": umad2sim(),
                      "OSM_CACHE_DIR": str(work / "cache"), "OSM_TMP_DIR": str(work)}
        t0 = time.monotonic()
        osm = subprocess.run([_tool("opensm"), "-F", str(work / "opensm.conf"), "-o", "-e", "-d2",
                              "-f", str(work / "opensm.log"), "-s", "0"], cwd=work, env=client_env,
                             stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout_s)
        result["seconds"]["opensm"] = round(time.monotonic() - t0, 3)
        result["opensm_exit"] = osm.returncode
        _read_opensm_log((work / "opensm.log").read_text(errors="replace"), result)

        t0 = time.monotonic()
        disc = subprocess.run([_tool("ibnetdiscover")], cwd=work, env=client_env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout_s)
        result["seconds"]["ibnetdiscover"] = round(time.monotonic() - t0, 3)
        (work / "discovered.ibnetdiscover").write_text(disc.stdout)
        found = parse_ibnetdiscover(disc.stdout)["links"]
        missing_links = sorted(set(expected["links"].items()) - set(found.items()))
        unexpected = sorted(set(found.items()) - set(expected["links"].items()))
        result["discovery"] = {"links": len(found) // 2, "expected_links": len(expected["links"]) // 2,
                               "missing": [_fmt(x) for x in missing_links[:20]],
                               "unexpected": [_fmt(x) for x in unexpected[:20]],
                               "matches": not missing_links and not unexpected}
        if lfts:
            t0 = time.monotonic()
            dump = subprocess.run([_tool("dump_fts")], cwd=work, env=client_env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=timeout_s)
            result["seconds"]["dump_fts"] = round(time.monotonic() - t0, 3)
            result["lfts"] = dump.stdout
        c, e = result["counts"], result["expected"]
        result["ok"] = bool(result["engine_used"] == engine and result["subnet_up"]
                            and c.get("switches") == e["switches"] and c.get("ca_ports") == e["ca_ports"]
                            and (engine != "ftree" or (c.get("roots") == e["roots"]
                                                       and c.get("compute_nodes") == e["compute_nodes"]))
                            and result["discovery"]["matches"])
        return result
    finally:
        if ibsim is not None:
            _stop(ibsim)
        if keep is not None:
            shutil.copytree(work, keep, dirs_exist_ok=True, ignore=shutil.ignore_patterns("sys-*", "cache"))
        shutil.rmtree(work, ignore_errors=True)


def _fmt(link) -> str:
    (a, ap), (b, bp) = link
    return f'"{a}"[{ap}] -> "{b}"[{bp}]'


def _first_engine(conf_text: str) -> str:
    for line in conf_text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "routing_engine":
            return parts[1].split(",")[0]
    return "minhop"  # OpenSM's default


def _read_opensm_log(log: str, result: dict) -> None:
    for raw in log.splitlines():
        ln = raw.split(" -> ", 1)[-1].strip()
        if "] 0x01 -> " in raw and len(result["errors"]) < 50:  # OpenSM's error level
            result["errors"].append(ln)
        m = _TABLES.search(ln)
        if m:
            result["engine_used"] = m.group(1)
            result["engine_lines"].append(ln)
        elif re.search(r"routing engine|ftree: |cannot build lid matrices|hasn't been identified", ln, re.I):
            result["engine_lines"].append(ln)
        if ln.endswith("SUBNET UP"):
            result["subnet_up"] = True
        if "Entering MASTER state" in ln:
            result["sm_state"] = "MASTER"
        m = _FABRIC_CAS.search(ln)
        if m:
            result["counts"].update(cas=int(m.group(1)), ca_ports=int(m.group(2)), compute_nodes=int(m.group(3)),
                                    switches=int(m.group(4)))
        m = _ROOTS.search(ln)
        if m:
            result["counts"]["roots"] = int(m.group(1))
        m = _RANK.search(ln)
        if m:
            result["counts"]["ftree_rank"] = int(m.group(1))
    result["engine_lines"] = result["engine_lines"][:20]
