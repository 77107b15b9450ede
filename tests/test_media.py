"""compiler/expand/media.py: which medium (copper, active copper, multimode or single-mode
optics) each link takes, and the length it is ordered at, from its length alone."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.catalog import load_catalog
from compiler.expand import media

from .conftest import shared_plan

# A DGX H100 SuperPOD SU: QM9700 leaf-spine links are finned-top 800G twin-port cages at both
# ends (copper fits); the DGX's own cages are flat-top, so no passive twin-port copper
# (MCP4Y10, finned to finned) reaches a server: optics from the first metre.
# length (m) -> (leaf-spine medium, its ordered length; server-leaf medium, its ordered length)
# Reach and orderable lengths: MCP4Y10 DAC 0.5/1/1.5/2 m; MCA4J80 linear active copper 3/4/5 m;
# MFP7E10 multimode fiber 3..50 m (SR4 modules 50 m); MFP7E30 single-mode fiber 3..100 m
# (DR4 modules 100 m); beyond 100 m nothing the catalog sells reaches (no order length).
AT_AND_AROUND_REACH = {
    0.5: ("dac", 0.5, "mmf", 3.0),
    2.0: ("dac", 2.0, "mmf", 3.0),
    2.01: ("lacc", 3.0, "mmf", 3.0),
    3.01: ("lacc", 4.0, "mmf", 5.0),
    5.0: ("lacc", 5.0, "mmf", 5.0),
    5.01: ("mmf", 7.0, "mmf", 7.0),
    50.0: ("mmf", 50.0, "mmf", 50.0),
    50.01: ("smf", 70.0, "smf", 70.0),
    100.0: ("smf", 100.0, "smf", 100.0),
    100.01: ("smf", None, "smf", None),
}


@pytest.mark.parametrize("length_m", sorted(AT_AND_AROUND_REACH))
def test_choose_by_length_at_and_around_each_reach(length_m):
    plan = shared_plan("h100-superpod-1su")
    ids, idx, order_m = media.choose_by_length(plan, load_catalog(), {}, np.full(len(plan.links), length_m))
    chosen = np.array(ids)[idx]
    up_medium, up_order, host_medium, host_order = AT_AND_AROUND_REACH[length_m]
    for kind, medium, order in (("leaf-spine", up_medium, up_order), ("server-leaf", host_medium, host_order)):
        sel = plan.links.kind == plan.link_kinds.index(kind)
        assert set(chosen[sel].tolist()) == {medium}, (kind, length_m)
        if order is None:  # beyond every reach: kept on the longest-reach optics, no orderable length
            assert np.isnan(order_m[sel]).all(), (kind, length_m)
        else:
            assert set(order_m[sel].tolist()) == {order}, (kind, length_m)


def test_choose_by_length_honours_a_requested_medium():
    """A medium the spec asks for by link kind is kept whatever the length (check.physical
    reports what it cannot reach); the other kinds are chosen by length."""
    plan = shared_plan("h100-superpod-1su")
    ids, idx, _ = media.choose_by_length(plan, load_catalog(), {"leaf-spine": "smf"}, np.full(len(plan.links), 1.0))
    chosen = np.array(ids)[idx]
    up = plan.links.kind == plan.link_kinds.index("leaf-spine")
    assert set(chosen[up].tolist()) == {"smf"} and set(chosen[~up].tolist()) == {"mmf"}
