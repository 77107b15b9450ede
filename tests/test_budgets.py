"""The budgets check (compiler/check/budgets.py): link ends against the ports there are, and
one medium per cage (a twin-port OSFP module serves both its ports)."""

from __future__ import annotations

import numpy as np

from compiler.check.budgets import check_budgets
from compiler.check.context import CheckContext
from compiler.plan.views import cage_table

from .conftest import plan_copy, shared_plan


def _budgets(plan):
    return check_budgets(CheckContext(plan, seed=1, whole=plan))


def test_ports_used_are_both_ends_of_every_link():
    plan = shared_plan("h100-superpod-1su")
    figures, findings = _budgets(plan)
    assert figures.ports_used == 2 * len(plan.links)
    assert figures.ports_total == sum(len(plan.layouts[d.layout]) for d in plan.devices)
    assert not [f for f in findings if f.severity == "error"]


def test_a_cage_of_two_media_is_named_once_by_its_lowest_cage():
    plan = plan_copy(shared_plan("h100-superpod-1su"))
    links, offsets = plan.links, plan.port_offsets()
    cage = cage_table(plan)[0]
    ends = np.concatenate([offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port])
    link_of_end = np.concatenate([np.arange(len(links))] * 2)
    # cages with two cabled ports, by global cage id; break the two highest and one low one
    cabled = np.bincount(cage[ends])
    twins = np.flatnonzero(cabled == 2)
    assert twins.size >= 3
    plan.media.append("a second medium")  # the check compares media by index
    other = len(plan.media) - 1
    for c in (twins[-1], twins[-2], twins[len(twins) // 2]):
        first = link_of_end[np.flatnonzero(cage[ends] == c)[0]]
        links.media[first] = other
    # the oracle: every cage's media by hand (a link's change mixes the cages of both its ends)
    media_of: dict[int, set[int]] = {}
    for c, m in zip(cage[ends].tolist(), np.concatenate([links.media, links.media]).tolist(), strict=True):
        media_of.setdefault(c, set()).add(m)
    lowest = min(c for c, ms in media_of.items() if len(ms) > 1)
    gid = int(ends[np.flatnonzero(cage[ends] == lowest)[0]])
    dev = int(np.searchsorted(offsets, gid, side="right") - 1)
    port = plan.layouts[plan.devices[dev].layout].ports[gid - int(offsets[dev])]
    mixed = [f for f in _budgets(plan)[1] if f.code == "CAGE_MIXED_MEDIA"]
    assert [(f.severity, f.where) for f in mixed] == [("error", f"{plan.devices[dev].name}:{port.cage}")]
