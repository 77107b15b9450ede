"""cabling.csv's media columns (`media,connector,part_number,length_m,jacket_color,polarity`):
with one orderable length (none without a layout) they are drawn per medium from the
links' media codes; with several, per (medium, length) pair. Both ways give each cable the
same text: here the one-length way is checked against the pair way on the same cables."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from compiler.plan.cables import physical_cables
from compiler.render import cabling
from tests.conftest import shared_plan


def _both_ways(plan, monkeypatch, order_m):
    cables = dataclasses.replace(physical_cables(plan), order_m=order_m)
    monkeypatch.setattr(cabling, "physical_cables", lambda _plan: cables)
    quick = cabling.media_tail(plan).values().tolist()
    monkeypatch.setattr(cabling, "_one_value", lambda _values: False)  # every cable through the pairs
    paired = cabling.media_tail(plan).values().tolist() if order_m is not None else None
    return quick, paired, cables


@pytest.mark.parametrize("example", ["h100-superpod-1su-multi-fabric-hall", "h100-roce-2su-hall"])
@pytest.mark.parametrize("length", [3.0, float("nan")])
def test_one_orderable_length_reads_as_the_pairs_do(example, length, monkeypatch):
    plan = shared_plan(example)
    n = len(physical_cables(plan))
    quick, paired, _ = _both_ways(plan, monkeypatch, np.full(n, length))
    assert quick == paired
    media = {plan.view.facts.media[m].fiber.upper() for m in plan.media}
    assert {text.split(",")[0] for text in quick} <= media
    assert len(set(quick)) >= 2, "several media: the per-medium table is exercised"
    assert all(text.split(",")[3] == ("" if length != length else "3") for text in quick)


@pytest.mark.parametrize("example", ["h100-superpod-1su-multi-fabric-hall", "h100-roce-2su-hall"])
def test_several_lengths_keep_each_cables_length(example, monkeypatch):
    plan = shared_plan(example)
    cables = physical_cables(plan)
    assert cables.order_m is not None and np.unique(cables.order_m[~np.isnan(cables.order_m)]).size > 1
    quick, paired, _ = _both_ways(plan, monkeypatch, cables.order_m)
    assert quick == paired
    lengths = [text.split(",")[3] for text in quick]
    assert lengths == ["" if x != x else f"{x:g}" for x in cables.order_m.tolist()]


def test_without_a_layout_the_length_is_empty_and_the_part_generic(monkeypatch):
    plan = shared_plan("b200-superpod-4su")
    quick, _, cables = _both_ways(plan, monkeypatch, None)
    assert len(quick) == len(cables)
    media = plan.links.media[cables.first_link].tolist()
    for text, mi in zip(quick, media, strict=True):
        rec = plan.view.facts.media[plan.media[mi]]
        fields = text.split(",")
        assert fields[0] == rec.fiber.upper() and fields[3] == ""
        assert rec.cable_part_number in text
