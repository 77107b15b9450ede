"""`clusterc verify` on what the real tools discover.

InfiniBand: the fabric as (mis)cabled is loaded into ibsim with factory-style GUIDs and
the node descriptions real hardware announces (`MF0;<host>:MQM9700/U1` on managed
switches, `<host> mlx5_N` on ConnectX ports), the real `ibnetdiscover` discovers it, and
`verify` must name exactly the cables that were swapped, moved, removed or added (and
the switch whose name is wrong). ibsim runs every link at 4xSDR, so speed and width
are ignored here (test_verify.py covers them from real-format rates).

Ethernet: `clusterc twin --swap C1,C2 --lldp-out DIR` runs the real lldpd next to FRR
in every switch namespace; `verify` on DIR names the swapped cables and nothing else.

`verify --write-guids` (verify/guids.py) is exercised here."""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from compiler.pipeline import build_plan, write_outputs
from compiler.render.infiniband import render as render_infiniband
from compiler.render.writer import OutputDir
from compiler.twin import infiniband as ibtwin
from compiler.verify import SCHEMA, verify

from .conftest import ROOT, SPECS, run_cli
from .twin_runs import twin_cli
from .verify_faults import Faults, apply, expected_findings, reported, spare_ports

pytestmark = pytest.mark.slow

needs_ibsim = pytest.mark.skipif(bool(ibtwin.missing_tools()), reason="needs ibsim-utils, libumad2sim0, opensm, "
                                 "infiniband-diags (listed in .ci/debian-packages)")
FACTORY_OUI = 0xB8CEF603  # an NVIDIA/Mellanox OUI-style prefix: GUIDs nothing in the plan predicts


def _as_cabled_net_file(plan, faults: Faults, folder: Path, renamed_label: dict[int, str] | None = None) -> Path:
    """The net file of the fabric as cabled: the plan's ibnetdiscover-format file for the
    miscabled link table, then every GUID replaced by a factory-style one and every node
    description by what the hardware announces."""
    broken = replace(plan, links=apply(plan, faults), _memo={})
    with OutputDir(folder / "as-cabled") as out:
        render_infiniband(broken, None, out)  # the InfiniBand files read no check results
    text = (folder / "as-cabled" / "infiniband" / "topology.ibnetdiscover").read_text()
    factory: dict[int, int] = {}

    def guid(m: re.Match) -> str:
        value = int(m.group(0), 16)  # a node GUID (even) or a CA port GUID (its node's + 1, as on ConnectX)
        base = factory.setdefault(value & ~1, (FACTORY_OUI << 32) | (len(factory) * 2 + 0x10))
        new = base | (value & 1)
        return f"{new:016x}" if len(m.group(0)) == 16 else f"{new:x}"

    text = re.sub(r"(?<![0-9a-fA-F])0?2[0-9a-f]{14}(?![0-9a-fA-F])", guid, text)
    from compiler.catalog import load_catalog

    nics = {}
    for model, server in load_catalog().servers.items():
        for group in server.nic_groups.values():
            for p in group.ports:
                if p.device:
                    nics[(model, p.name)] = p.device
    models = {d.name: d.model for d in plan.devices}
    switches = {d.name for d in plan.devices if d.tier > 0}
    renamed_label = renamed_label or {}

    def desc(m: re.Match) -> str:
        label = m.group(1)
        if label in switches:
            host = renamed_label.get(label, label)
            return f'"MF0;{host}:MQM9700/U1"'
        host, _, port = label.partition(" ")
        if port:
            device = nics.get((models.get(host), port))
            if device is None and port.startswith("p") and port[1:].isdigit():
                device = f"mlx5_{int(port[1:]) - 1}"  # appliances: one ConnectX per port, in order
            return f'"{host} {device or port}"'
        return m.group(0)

    text = re.sub(r'"([^"]*)"', lambda m: desc(m) if not m.group(1).startswith(("S-", "H-")) else m.group(0), text)
    path = folder / "as-cabled.ibnetdiscover"
    path.write_text(text)
    return path


def _discover(expected_ib: Path, net_file: Path, keep: Path) -> Path:
    result = ibtwin.run(expected_ib, fabric=net_file, keep=keep)
    assert result["discovery"]["links"] > 0, result["errors"]
    return keep / "discovered.ibnetdiscover"


def _check(plan, discovered: Path, faults: Faults, scope=None) -> dict:
    result = verify(plan, [discovered], ignore={"speed", "width"}, scope=scope)
    jsonschema.validate(result, json.loads(SCHEMA.read_text()))
    assert reported(result) == expected_findings(plan, faults), json.dumps(result["mismatches"], indent=1)[:4000]
    return result


@needs_ibsim
def test_full_su_with_ufm_swapped_moved_removed_added_and_renamed(tmp_path):
    _, plan = build_plan(SPECS / "h100-superpod-1su.yaml")
    expected = write_outputs(plan, tmp_path / "expected") / "infiniband"
    ids = {c: i for i, c in enumerate(_cable_ids(plan))}
    spares = spare_ports(plan)
    assert len(spares) == 4  # leaves r5..r8: port 1/16/2 (31 servers + 2 UFMs on r1..r4)
    spine2 = plan.device_index("spine-02")
    faults = Faults(
        swaps=[(ids["dgx-su1-003:1"], ids["dgx-su1-004:1"]),  # two neighbours' cables crossed at leaf r1
               (ids["su1-leaf-r2:33"], ids["su1-leaf-r6:41"])],  # two uplinks crossed between spines 1 and 2
        moves=[(ids["dgx-su1-010:5"], *spares[0])],  # into the spare port of its own leaf r5
        removals=[ids["dgx-su1-020:8"]],
        additions=[(spares[1], spares[2])],  # leaf r6 to leaf r7, nobody planned it
        renamed={spine2: "switch-5a3b2c"},
    )
    assert plan.devices[spares[0][0]].name == "su1-leaf-r5"
    net = _as_cabled_net_file(plan, faults, tmp_path, renamed_label={"spine-02": "switch-5a3b2c"})
    discovered = _discover(expected, net, tmp_path / "run")
    assert "b8cef603" in discovered.read_text() and "MF0;su1-leaf-r1:MQM9700/U1" in discovered.read_text()
    result = _check(plan, discovered, faults)
    kinds = sorted(m["kind"] for m in result["mismatches"])
    assert kinds == ["missing", "name", "swapped", "swapped", "unplanned", "wrong-port"]
    assert result["checked_cables"] == len(plan.links)
    # the UFM appliances' ports have no catalog mlx5 map: taken as planned, and said so
    assert any(n.startswith("4 host port(s) on 2 host(s)") for n in result["notes"]), result["notes"]
    # the same through the CLI, with the speeds ibsim cannot model left in: every link is 4xSDR
    r = run_cli("verify", str(expected.parent), "--as-built", str(discovered), "--format", "json")
    assert r.returncode == 1
    full = json.loads(r.stdout)
    speeds = [m for m in full["mismatches"] if m["kind"] == "speed"]
    assert speeds and all(m["found"]["rate"] == "4xSDR" for m in speeds)


@needs_ibsim
def test_three_tier_fabric_swaps_moves_and_removals(tmp_path):
    spec = tmp_path / "b200-3tier.yaml"
    spec.write_text("""name: b200-3tier
servers: 60
server: dgx-b200
fabric:
  topology: rail-optimized
  switch: qm9700
  tiers: 3
  oversubscription: "1:1"
  scalable_unit: 32
""")
    _, plan = build_plan(spec)
    expected = write_outputs(plan, tmp_path / "expected") / "infiniband"
    ids = {c: i for i, c in enumerate(_cable_ids(plan))}
    kinds = plan.link_kinds
    spine_core = [i for i in range(len(plan.links)) if kinds[int(plan.links.kind[i])] == "spine-core"]
    spares = spare_ports(plan)
    faults = Faults(swaps=[(spine_core[0], spine_core[40]), (ids["dgx-su2-001:3"], ids["dgx-su2-002:3"])],
                    moves=[(ids["dgx-su2-005:1"], *spares[0]), (ids["dgx-su1-007:2"], *spares[5])],
                    removals=[spine_core[7], ids["su1-leaf-r4:40"]],
                    additions=[(spares[2], spares[9])])
    discovered = _discover(expected, _as_cabled_net_file(plan, faults, tmp_path), tmp_path / "run")
    result = _check(plan, discovered, faults)
    assert sorted({m["kind"] for m in result["mismatches"]}) == ["missing", "swapped", "unplanned", "wrong-device",
                                                                  "wrong-port"]


@needs_ibsim
def test_as_built_exactly_as_planned_is_ok_and_guids_are_mapped(tmp_path):
    _, plan = build_plan(SPECS / "h100-superpod-1su.yaml")
    expected = write_outputs(plan, tmp_path / "expected") / "infiniband"
    discovered = _discover(expected, _as_cabled_net_file(plan, Faults(), tmp_path), tmp_path / "run")
    guids = tmp_path / "guids"
    r = run_cli("verify", str(expected.parent), "--as-built", str(discovered), "--ignore", "speed,width",
                "--write-guids", str(guids))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK: the fabric matches the plan" in r.stdout
    names = dict(re.findall(r'^(0x[0-9a-f]{16}) "([^"]+)"$', (guids / "node-name-map").read_text(), re.M))
    assert len(names) == 12 + 31 * 8 + 4 and all(g.startswith("0xb8cef603") for g in names)
    assert sorted(v for v in names.values() if "spine" in v) == ["spine-01", "spine-02", "spine-03", "spine-04"]
    roots = [ln for ln in (guids / "root.guids").read_text().splitlines() if ln.startswith("0x")]
    assert sorted(names[g] for g in roots) == ["spine-01", "spine-02", "spine-03", "spine-04"]
    compute = [ln for ln in (guids / "compute.guids").read_text().splitlines() if ln.startswith("0x")]
    assert len(compute) == 31 * 8 and all(int(g, 16) & 1 for g in compute)  # CA port GUIDs (node GUID + 1)


def _cable_ids(plan):
    from compiler.verify.names import cable_id_list

    return cable_id_list(plan)


# --- Ethernet: lldpd in the FRR twin ------------------------------------------------------

needs_twin = pytest.mark.skipif(
    os.geteuid() != 0 or not Path("/usr/lib/frr/bgpd").exists() or not shutil.which("lldpd"),
    reason="the twin needs root, FRR and lldpd (Debian packages frr, lldpd; .ci/debian-packages)")


@needs_twin
@pytest.mark.parametrize("spec,swap", [
    (ROOT / "tests" / "data" / "verify" / "tiny-rail.yaml", None),
    (ROOT / "tests" / "data" / "verify" / "tiny-rail.yaml", ("su1-leaf-r3:5", "su1-leaf-r7:6")),  # two leaves' uplinks
    (SPECS / "roce-2spine-4leaf-frr.yaml", ("leaf-001:65", "leaf-003:70")),  # crossed between the two spines' ports
    (SPECS / "roce-2spine-4leaf-frr.yaml", ("gpu-0001:1", "gpu-0032:1")),  # the two sampled servers' first NICs
])
def test_twin_lldp_tables_name_exactly_the_swapped_cables(tmp_path, spec, swap):
    out = tmp_path / "lldp"
    args = [str(spec), "--lldp-out", str(out), "--timeout", "20", "--format", "json"]
    if swap:
        args += ["--swap", ",".join(swap)]
    twin, left = twin_cli(*args)
    assert not left, f"the twin left lldpd or namespaces behind: {left}"
    report = json.loads(twin.stdout)
    assert report["lldp"]["neighbours"] == report["lldp"]["expected_neighbours"] > 0, report["lldp"]
    assert report["lldp"]["missing"] == [] and not [p for p in report["problems"] if p.startswith("LLDP")]
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(f"{n}.json" for n in _switch_names(spec))
    r = run_cli("verify", str(spec), "--as-built", str(out), "--format", "json")
    result = json.loads(r.stdout)
    jsonschema.validate(result, json.loads(SCHEMA.read_text()))
    if swap is None:
        assert twin.returncode == 0 and r.returncode == 0 and result["ok"], result["mismatches"]
    else:
        assert r.returncode == 1
        assert [(m["kind"], sorted(m["cables"])) for m in result["mismatches"]] == [("swapped", sorted(swap))]
    # every cable between booted devices was checked; the servers the twin does not boot are listed, not failed
    assert {n["what"] for n in result["not_seen"]} <= {"device"}
    assert result["checked_cables"] == report["links_wired"]


def _switch_names(spec: Path) -> list[str]:
    _, plan = build_plan(spec)
    return [d.name for d in plan.devices if d.role in ("leaf", "spine", "core")]
