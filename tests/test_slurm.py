"""Slurm outputs checked by real Slurm (Debian's 22.05: scontrol, slurmctld) where it
runs here, and against the man-page rules for what 22.05 cannot load (block, yaml)."""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.render.hostlist import compress, expand

from . import slurm_rules
from .conftest import ROOT, SPECS, cli_in_process, shared_outputs

CHECK = ROOT / "tests" / "tools" / "slurm-topo-check.sh"  # copy of ../shared/reference/slurm/slurm-topo-check.sh
HAVE_SLURM = shutil.which("scontrol") and (shutil.which("slurmctld") or os.path.exists("/usr/sbin/slurmctld"))
needs_slurm = pytest.mark.skipif(not HAVE_SLURM, reason="Debian slurmctld/slurm-client not installed (.ci/debian-packages)")


def compile_spec(tmp_path: Path, spec: Path | str) -> Path:
    """The compiled folder of `spec`; an example's is the session's shared one (read it only)."""
    if Path(spec).parent == SPECS:
        return shared_outputs(Path(spec))
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stdout + r.stderr
    return next((tmp_path / "out").iterdir())


def hostnames(folder: Path) -> list[str]:
    with open(folder / "hosts.csv", newline="") as fh:
        return [row["hostname"] for row in csv.DictReader(fh)]


@pytest.fixture(scope="module")
def slurm_conf(tmp_path_factory):
    """scontrol show hostnames needs a slurm.conf, nothing more (slurm/README.md)."""
    conf = tmp_path_factory.mktemp("slurm") / "slurm.conf"
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\n")
    return {**os.environ, "SLURM_CONF": str(conf)}


def scontrol_hostnames(expr: str, env) -> list[str]:
    r = subprocess.run(["scontrol", "show", "hostnames", expr], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    return r.stdout.split()


# --- hostlists --------------------------------------------------------------------------

names = st.lists(st.tuples(st.sampled_from(["dgx-su1-", "dgx-su12-", "gpu", "n-"]), st.integers(0, 1200),
                           st.sampled_from([0, 2, 3, 4])), min_size=1, max_size=40, unique=True)


@given(names)
@settings(max_examples=200, deadline=None)
def test_compress_expand_round_trip(items):
    hosts = [f"{p}{n:0{w}d}" if w else f"{p}{n}" for p, n, w in items]
    assert expand(compress(hosts)) == hosts


@needs_slurm
@pytest.mark.slow
def test_scontrol_expands_every_generated_hostlist(tmp_path, slurm_conf):
    checked = 0
    for spec in ("b200-superpod-16su.yaml", "h100-superpod-4su.yaml", "seed-8k-fat-tree.yaml"):
        folder = compile_spec(tmp_path / spec, SPECS / spec)
        for path in ("slurm/topology.conf",):
            for row in slurm_rules.parse_conf((folder / path).read_text()):
                for key in ("nodes", "switches"):
                    if key in row:
                        assert scontrol_hostnames(row[key], slurm_conf) == expand(row[key]), row[key]
                        checked += 1
        all_hosts = hostnames(folder)
        assert scontrol_hostnames(compress(all_hosts), slurm_conf) == all_hosts
    assert checked > 20


# --- slurmctld loads the tree -----------------------------------------------------------

def run_check(topology: Path, nodes: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SLURM_TOPO_CHECK_AUTH": "none", "TMPDIR": str(topology.parent)}
    return subprocess.run(["bash", str(CHECK), str(topology), nodes], env=env, capture_output=True, text=True, timeout=120)


def shown_topology(stdout: str) -> dict[str, dict]:
    out = {}
    for row in slurm_rules.parse_conf(stdout):
        out[row["switchname"]] = {"level": int(row["level"]), "nodes": set(expand(row.get("nodes", ""))) if row.get("nodes") else set(),
                                  "switches": set(expand(row["switches"])) if row.get("switches") else set()}
    return out


@needs_slurm
@pytest.mark.slow
@pytest.mark.parametrize("spec", ["b200-superpod-4su.yaml", "b200-superpod-16su.yaml", "h100-superpod-4su.yaml",
                                  "seed-8k-fat-tree.yaml", "pattern"])
def test_slurmctld_loads_tree_and_matches_plan(tmp_path, spec):
    if spec == "pattern":
        path = tmp_path / "pattern.yaml"
        path.write_text((SPECS / "b200-superpod-2su.yaml").read_text().replace("name: b200-superpod-2su", "name: pattern")
                        + 'hosts: {hostname: "gpu{n:04}"}\n')
    else:
        path = SPECS / spec
    folder = compile_spec(tmp_path, path)
    hosts = hostnames(folder)
    r = run_check(folder / "slurm" / "topology.conf", compress(hosts))
    assert r.returncode == 0, r.stderr  # 0 = accepted, and no topology warning in slurmctld's log
    shown = shown_topology(r.stdout)
    mine = slurm_rules.conf_tree((folder / "slurm" / "topology.conf").read_text())
    assert set(shown) == {s["name"] for s in mine}
    with open(folder / "hosts.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    for s in mine:
        if s["nodes"]:
            assert shown[s["name"]]["level"] == 0 and shown[s["name"]]["nodes"] == set(s["nodes"])
            groups = {row["leaf_group"] for row in rows if row["hostname"] in set(s["nodes"])}
            assert groups == {s["name"]}  # a leaf is exactly one leaf group of the plan
        else:
            assert shown[s["name"]]["switches"] == set(s["children"])
    top = max(shown.values(), key=lambda v: v["level"])
    assert top["nodes"] == set(hosts)  # one root reaches every node
    assert not slurm_rules.tree_problems(mine, set(hosts))


@needs_slurm
@pytest.mark.slow
def test_harness_catches_a_node_under_two_leaves(tmp_path):
    folder = compile_spec(tmp_path, SPECS / "b200-superpod-2su.yaml")
    text = (folder / "slurm" / "topology.conf").read_text().replace("Nodes=dgx-su2-[001-032]", "Nodes=dgx-su1-001,dgx-su2-[001-032]")
    bad = tmp_path / "bad.conf"
    bad.write_text(text)
    r = run_check(bad, compress(hostnames(folder)))
    assert r.returncode == 2 and "Multiple leaf switches contain nodes" in r.stderr
    assert slurm_rules.tree_problems(slurm_rules.conf_tree(text), set(hostnames(folder)))


# --- what 22.05 cannot load: topology.yaml and block ------------------------------------

GB200 = """name: gb200-blocks
servers: 144
server: gb200-nvl72
fabric: {topology: rail-optimized, switch: qm9700, scalable_unit: 18}
"""


@pytest.mark.parametrize("spec", ["b200-superpod-16su.yaml", "seed-8k-fat-tree.yaml", "gb200"])
def test_yaml_and_block_follow_the_man_pages(tmp_path, spec):
    if spec == "gb200":
        path = tmp_path / "gb200.yaml"
        path.write_text(GB200)
    else:
        path = SPECS / spec
    folder = compile_spec(tmp_path, path)
    hosts = hostnames(folder)
    problems, topologies = slurm_rules.yaml_problems((folder / "slurm" / "topology.yaml").read_text(), set(hosts), hosts)
    assert problems == []
    tree_conf = slurm_rules.conf_tree((folder / "slurm" / "topology.conf").read_text())
    tree_yaml = [{"name": s["switch"], "nodes": expand(s["nodes"]) if "nodes" in s else None,
                  "children": expand(s["children"]) if "children" in s else None}
                 for s in topologies["fabric"]["tree"]["switches"]]
    assert tree_yaml == tree_conf  # the same tree in both files
    block_file = folder / "slurm" / "topology-block.conf"
    if spec != "gb200":
        assert not block_file.exists() and set(topologies) == {"fabric"}
        return
    blocks, sizes = slurm_rules.conf_blocks(block_file.read_text())
    assert sizes == [18, 36, 72, 144] and len(blocks) == 8
    assert slurm_rules.block_problems(blocks, sizes, set(hosts), hosts) == []
    assert topologies["nvlink"]["cluster_default"] is True
    assert [b["block"] for b in topologies["nvlink"]["block"]["blocks"]] == [b["name"] for b in blocks]
    # each block is one NVL72 rack: 18 trays, within one SU
    su_of = {row["hostname"]: row["su"] for row in csv.DictReader(open(folder / "hosts.csv", newline=""))}
    assert all(len(b["nodes"]) == 18 and len({su_of[n] for n in b["nodes"]}) == 1 for b in blocks)


def test_block_rules_can_fail():
    hosts = [f"gb{i:04d}" for i in range(1, 37)]
    good = [{"name": "a", "nodes": hosts[:18]}, {"name": "b", "nodes": hosts[18:]}]
    assert slurm_rules.block_problems(good, [18, 36], set(hosts), hosts) == []
    assert slurm_rules.block_problems(good, [18, 54], set(hosts), hosts)  # 54 is not 18 x 2^k
    assert slurm_rules.block_problems(good[::-1], [18, 36], set(hosts), hosts)  # locality order broken
    assert slurm_rules.block_problems([good[0], {"name": "a", "nodes": hosts[18:]}], [18], set(hosts), hosts)


def test_misaligned_domains_are_rejected(tmp_path):
    # An NVL72 rack's NVLink domain never spans two SUs (Slurm blocks and k8s levels follow it).
    path = tmp_path / "gb.yaml"
    path.write_text(GB200.replace("scalable_unit: 18", "scalable_unit: 32").replace("gb200-blocks", "gb200-mis"))
    r = cli_in_process("compile", str(path), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert "fabric.scalable_unit" in r.stderr and "e.g. 18 or 36" in r.stderr
