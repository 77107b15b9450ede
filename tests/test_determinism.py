"""The same spec gives byte-identical outputs, whatever the hash seed or run."""

from __future__ import annotations

import hashlib

from .conftest import SPECS, run_cli


def _digest(folder):
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_two_compiles_identical_across_hash_seeds(tmp_path):
    specs = [str(SPECS / "h100-superpod-1su.yaml"), str(SPECS / "b200-superpod-16su.yaml"),
             str(SPECS / "h100-roce-2su-hall.yaml")]
    digests = []
    for seed in ("0", "12345"):
        out = tmp_path / f"out-{seed}"
        r = run_cli("compile", *specs, "-o", str(out), env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        digests.append({name: _digest(out / name) for name in ("h100-superpod-1su", "b200-superpod-16su", "h100-roce-2su-hall")})
    assert digests[0] == digests[1]
    assert {"bom.csv", "cabling.csv", "plan.json", "plan.schema.json", "summary.json", "report.html",
            "diagrams/fabric.svg", "netbox/cables.csv"} <= set(digests[0]["h100-superpod-1su"])
    assert {"cabling.xlsx", "labels.csv", "labels.html", "racks/DH2.A01.svg", "containerlab/h100-roce-2su-hall.clab.yml",
            "ptm/topology.dot"} <= set(digests[0]["h100-roce-2su-hall"])
