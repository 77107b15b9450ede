"""The ftree routing model (compiler/traffic/ftree.py) against the routes OpenSM really
computes: the compiled fabric runs in ibsim, OpenSM routes it with the compiled opensm.conf
(ftree), infiniband-diags' dump_fts reads every switch's LFT back, and every route from
one server of each leaf to every compute node, walked through the real tables, must equal
the model's, cable for cable."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from compiler.pipeline import build_plan, write_outputs
from compiler.plan.model import LinkTable
from compiler.traffic.clos import ClosRoutes
from compiler.traffic.fabric import TrafficFabric
from compiler.traffic.ftree import FtreeRoutes
from compiler.twin.lft import LftTables
from compiler.twin import infiniband as twin

from .conftest import SPECS

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(twin.missing_tools()), reason="needs ibsim-utils, libumad2sim0, opensm, "
                                                   "infiniband-diags (listed in .ci/debian-packages)")]
LAB_CATALOG = Path(__file__).parent / "data" / "lab-ib.yaml"


def _spec(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(text.replace("CATALOG", str(LAB_CATALOG)))
    return p


def _routes(fl: np.ndarray, ln: np.ndarray, n: int) -> list[tuple[int, ...]]:
    order = np.lexsort((ln, fl))
    fl, ln = fl[order], ln[order]
    split = np.searchsorted(fl, np.arange(n + 1))
    return [tuple(ln[split[i]:split[i + 1]].tolist()) for i in range(n)]


def _compare(plan, tmp_path: Path) -> tuple[int, int, int]:
    """(routes compared, routes that differ, routes the model marks as secondary)."""
    ib = write_outputs(plan, tmp_path, ["infiniband"]) / "infiniband"
    result = twin.run(ib, lfts=True)
    assert result["engine_used"] == "ftree" and result["subnet_up"], result["errors"]
    fabric = TrafficFabric(plan)
    tables = LftTables(fabric, result["lfts"])
    switches = sum(1 for d in plan.devices if d.tier > 0)
    assert tables.switches == switches
    model = FtreeRoutes(ClosRoutes(fabric))
    first_on_leaf = np.unique(fabric.ep_switch, return_index=True)[1]
    n = fabric.ep_link.size
    src = np.repeat(first_on_leaf, n)
    dst = np.tile(np.arange(n), first_on_leaf.size)
    src, dst = src[src != dst], dst[src != dst]
    fl, ln, ok, secondary = model.paths(src, dst)
    rf, rl, real_ok = tables.paths(src, dst)
    assert ok.all() and real_ok.all()
    mine, real = _routes(fl, ln, src.size), _routes(rf, rl, src.size)
    return src.size, sum(a != b for a, b in zip(mine, real)), secondary


@pytest.mark.parametrize("spec", [
    "b200-superpod-2su.yaml",  # two tiers, rail-optimized, 4 cables per leaf-spine pair
    "h100-superpod-1su.yaml",  # two tiers with UFM appliances: CAs that are not compute nodes (dummies)
])
def test_ftree_model_equals_opensm_on_published_superpods(spec, tmp_path):
    _, plan = build_plan(SPECS / spec)
    compared, differ, secondary = _compare(plan, tmp_path)
    assert differ == 0 and secondary == 0 and compared > 1000


@pytest.mark.parametrize("text", [
    # three tiers, 4 pods, 2 cables per spine-core pair; full, and with partly filled leaves and pods
    "name: lab3\nservers: 128\nserver: lab-1nic\ncatalog: CATALOG\nfabric: {topology: fat-tree, switch: lab-ib-8port, tiers: 3}\n",
    "name: lab3p\nservers: 50\nserver: lab-1nic\ncatalog: CATALOG\nfabric: {topology: fat-tree, switch: lab-ib-8port, tiers: 3}\n",
    # 2:1 fat tree of DGX H100, 7 spines with 3 cables from every leaf
    "name: ft21\nservers: 48\nserver: dgx-h100\nfabric: {topology: fat-tree, switch: qm9700, oversubscription: '2:1'}\n",
])
def test_ftree_model_equals_opensm_on_three_tier_and_oversubscribed_fat_trees(text, tmp_path):
    _, plan = build_plan(_spec(tmp_path, text))
    compared, differ, secondary = _compare(plan, tmp_path)
    assert differ == 0 and secondary == 0


def _without(plan, links: np.ndarray):
    keep = np.ones(len(plan.links), dtype=bool)
    keep[links] = False
    cols = {k: getattr(plan.links, k)[keep] for k in LinkTable.__dataclass_fields__}
    return replace(plan, links=LinkTable(**cols), _memo={})


def test_ftree_model_equals_opensm_on_degraded_two_tier_fabrics(tmp_path):
    """OpenSM re-routes a degraded fat tree: one lost cable of four to a spine (the counters
    spread over three), and a leaf that lost all its cables to one spine (ftree's indexing
    changes and that leaf reaches the CNs that spine carried through secondary routes)."""
    _, plan = build_plan(SPECS / "b200-superpod-2su.yaml")
    up = np.flatnonzero(plan.links.kind == plan.link_kinds.index("leaf-spine"))
    compared, differ, secondary = _compare(_without(plan, up[[5, 40]]), tmp_path / "cable")
    assert differ == 0 and secondary == 0
    L = plan.links
    group = up[(L.a_dev[up] == L.a_dev[up[0]]) & (L.b_dev[up] == L.b_dev[up[0]])]
    assert group.size == 4
    compared, differ, secondary = _compare(_without(plan, group), tmp_path / "group")
    assert differ == 0 and secondary == 60  # the other 15 leaves' CNs on spine-01: 15 x 4


def test_ftree_model_marks_its_approximation_on_degraded_three_tier_fabrics(tmp_path):
    """Three tiers, a leaf that lost its only cable to a spine: ftree's secondary routes through
    other planes are modelled approximately; exactly those routes may differ, and are counted."""
    text = "name: lab3\nservers: 128\nserver: lab-1nic\ncatalog: CATALOG\nfabric: {topology: fat-tree, switch: lab-ib-8port, tiers: 3}\n"
    _, plan = build_plan(_spec(tmp_path, text))
    up = np.flatnonzero(plan.links.kind == plan.link_kinds.index("leaf-spine"))
    compared, differ, secondary = _compare(_without(plan, up[[5]]), tmp_path)
    assert 0 < differ <= secondary < compared / 100
