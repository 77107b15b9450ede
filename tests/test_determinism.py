"""The same spec gives byte-identical outputs, whatever the hash seed or run."""

from __future__ import annotations

import hashlib

from .conftest import SPECS, run_cli, tree_bytes


def _digest(folder):
    return {rel: hashlib.sha256(data).hexdigest() for rel, data in tree_bytes(folder).items()}


def test_two_compiles_identical_across_hash_seeds(tmp_path):
    specs = [str(SPECS / "h100-superpod-1su.yaml"), str(SPECS / "b200-superpod-16su.yaml")]
    digests = []
    for seed in ("0", "12345"):
        out = tmp_path / f"out-{seed}"
        r = run_cli("compile", *specs, "-o", str(out), env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        digests.append({name: _digest(out / name) for name in ("h100-superpod-1su", "b200-superpod-16su")})
    assert digests[0] == digests[1]
    assert {"bom.csv", "cabling.csv", "plan.json", "plan.schema.json", "summary.json", "report/checks.json",
            "infiniband/opensm.conf", "infiniband/topology.ibnetdiscover", "hosts.csv", "nccl/dgx-h100.xml",
            "slurm/topology.conf", "slurm/topology.yaml", "k8s/node-labels.yaml", "k8s/label-nodes.sh",
            "k8s/kueue-topology.yaml", "graph.graphml"} <= set(digests[0]["h100-superpod-1su"])
