"""Synthetic hardware for closed-form tests: a k-port switch and a one-NIC host."""

from __future__ import annotations

from pathlib import Path


def catalog_yaml(k: int) -> str:
    return f"""
switches:
  - id: k{k}
    vendor: test
    model: k{k}
    part_number: K{k}
    asic: test
    protocol: ethernet
    cages: {k}
    cage: {{form_factor: OSFP, top: finned, gbps: 400}}
    modes:
      400: {{ports_per_cage: 1, name: "p{{cage}}"}}
    confidence: unconfirmed
    sources: [synthetic]
servers:
  - id: host1
    vendor: test
    model: host1
    gpu: test
    gpus: 1
    hostname_prefix: h
    nic_groups:
      compute:
        nic: test
        nics: 1
        speed_gbps: 400
        cage: {{form_factor: OSFP, top: flat, gbps: 400}}
        ports: [{{name: p1, cage: p1}}]
        port_map_confidence: unconfirmed
    confidence: unconfirmed
    sources: [synthetic]
"""


def fat_tree_spec(tmp: Path, k: int, hosts: int, tiers="auto", ratio="1:1", extra="") -> Path:
    (tmp / f"k{k}.yaml").write_text(catalog_yaml(k))
    spec = tmp / f"ft-k{k}-{hosts}.yaml"
    spec.write_text(f"""name: ft-k{k}-{hosts}
servers: {hosts}
server: host1
catalog: k{k}.yaml
fabric:
  topology: fat-tree
  switch: k{k}
  tiers: {tiers}
  oversubscription: "{ratio}"
{extra}""")
    return spec
