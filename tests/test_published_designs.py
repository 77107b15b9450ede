"""Published designs reproduced exactly from the specs in specs/ (sources in each spec).

SuperPOD spine-leaf and core groups are expand/spine_leaf_groups.py's."""

from __future__ import annotations

import pytest

from compiler.pipeline import build_plan
from compiler.render.summary import summarize

from .conftest import SPECS, shared_checks, shared_plan

# NVIDIA DGX SuperPOD RA for DGX B200, component-count table (designs.md):
# SU, nodes, GPUs, leaf, spine, core, node-leaf, leaf-spine, spine-core cables.
B200_TABLE = [
    (2, 64, 512, 16, 8, 0, 512, 512, 0),
    (4, 128, 1024, 32, 16, 0, 1024, 1024, 0),
    (8, 256, 2048, 64, 32, 0, 2048, 2048, 0),
    (16, 512, 4096, 128, 128, 64, 4096, 4096, 4096),
    (32, 1024, 8192, 256, 256, 128, 8192, 8192, 8192),
    (64, 2048, 16384, 512, 512, 256, 16384, 16384, 16384),
]


@pytest.mark.parametrize("row", B200_TABLE, ids=[f"{r[0]}su" for r in B200_TABLE])
def test_b200_superpod_table(row):
    su, nodes, gpus, leaf, spine, core, node_leaf, leaf_spine, spine_core = row
    plan = shared_plan(f"b200-superpod-{su}su")
    s = summarize(plan, shared_checks(plan))
    assert (s["servers"], s["gpus"]) == (nodes, gpus)
    assert s["switches"] == ({"leaf": leaf, "spine": spine, "core": core} if core else {"leaf": leaf, "spine": spine})
    expected_cables = {"server-leaf": node_leaf, "leaf-spine": leaf_spine}
    if spine_core:
        expected_cables["spine-core"] = spine_core
    assert s["cables"] == expected_cables
    assert s["tiers"] == (3 if core else 2)
    assert s["oversubscription"]["leaf"] == "1:1"


def test_b200_4su_summary_contract():
    plan = shared_plan("b200-superpod-4su")
    s = summarize(plan, shared_checks(plan))
    assert s["switches"] == {"leaf": 32, "spine": 16}
    assert s["cables"] == {"server-leaf": 1024, "leaf-spine": 1024}
    assert {"name", "gpus", "servers", "switches", "cables", "tiers", "oversubscription", "notes"} <= set(s)


@pytest.mark.parametrize("spec,leaf,spine,node_leaf,leaf_spine", [
    # NVIDIA DGX SuperPOD H100 RA, network fabrics table: node-leaf counts include the UFM ports.
    ("h100-superpod-1su", 8, 4, 252, 256),
    ("h100-superpod-4su", 32, 16, 1020, 1024),
    # NVIDIA DGX SuperPOD B300 XDR RA.
    ("b300-xdr-1su", 8, 4, 576, 576),
    ("b300-xdr-18su", 144, 72, 10368, 10368),
])
def test_other_superpods(spec, leaf, spine, node_leaf, leaf_spine):
    plan = shared_plan(spec)
    s = summarize(plan, shared_checks(plan))
    assert s["switches"] == {"leaf": leaf, "spine": spine}
    node_cables = sum(n for kind, n in s["cables"].items() if kind.endswith("-leaf"))
    assert node_cables == node_leaf
    assert s["cables"]["leaf-spine"] == leaf_spine


def test_h100_ufm_ports_on_distinct_leaves():
    _, plan = build_plan(SPECS / "h100-superpod-1su.yaml")
    ufm = [i for i, d in enumerate(plan.devices) if d.role == "ufm"]
    assert [plan.devices[i].name for i in ufm] == ["ufm-01", "ufm-02"]
    kind = plan.link_kinds.index("ufm-leaf")
    sel = plan.links.kind == kind
    leaves = [plan.devices[int(b)].name for b in plan.links.b_dev[sel]]
    ports = [plan.layouts[plan.devices[int(b)].layout].ports[int(p)].name
             for b, p in zip(plan.links.b_dev[sel], plan.links.b_port[sel])]
    # The 32nd server slot of SU1 is free on every rail leaf; the four UFM ports take it on rails 1-4.
    assert leaves == ["su1-leaf-r1", "su1-leaf-r2", "su1-leaf-r3", "su1-leaf-r4"]
    assert set(ports) == {"1/16/2"}


def test_seed_design():
    # designs.md seed: 128 leaves (64 down / 64 up), 64 spines each to all 128 leaves,
    # 8,192 GPUs, 8,192 + 8,192 cables, 1:1.
    plan = shared_plan("seed-8k-fat-tree")
    s = summarize(plan, shared_checks(plan))
    assert s["gpus"] == 8192 and s["servers"] == 1024
    assert s["switches"] == {"leaf": 128, "spine": 64}
    assert s["cables"] == {"server-leaf": 8192, "leaf-spine": 8192}
    assert plan.design["leaf_ports"] == {"down": 64, "up": 64}
    assert plan.design["leaf_spine_links_per_pair"] == 1
    assert s["oversubscription"] == {"leaf": "1:1"}
