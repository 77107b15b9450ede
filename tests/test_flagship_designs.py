"""This year's flagship NVIDIA designs reproduced from specs that state only what the
reference architectures state: the dual-plane Spectrum-X Enterprise RAs (HGX B300, GB300
NVL72; counts over both planes) and the hardware they are built from (ConnectX-8 as 2 x
400GbE, one port per plane)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from compiler.catalog import load_catalog
from compiler.pipeline import build_plan


def _plan(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return build_plan(path)[1]


def test_connectx8_hosts_bring_two_plane_ports_per_cage():
    cat = load_catalog()
    for sid, nics, gpus, domain in (("hgx-b300", 8, 8, 8), ("gb300-nvl72", 4, 4, 72)):
        s = cat.servers[sid]
        g = s.nic_groups["compute"]
        assert (s.gpus, g.nics, g.speed_gbps, g.cage.gbps) == (gpus, nics, 400, 800)
        assert s.scale_up.domain_gpus == domain
        # Two logical 400G ports per 800G cage, lane 1 then lane 2: one per plane.
        assert len(g.ports) == 2 * nics
        assert Counter(p.cage for p in g.ports) == {f"osfp{i}": 2 for i in range(1, nics + 1)}
        assert [p.lane for p in g.ports] == [1, 2] * nics
    for sid, nics in (("hgx-b300-xdr", 8), ("gb300-nvl72-xdr", 4)):
        g = cat.servers[sid].nic_groups["compute"]
        assert (g.nics, len(g.ports), g.speed_gbps, g.cage.serdes_gbps) == (nics, nics, 800, 200)


def test_dual_plane_nic_cage_takes_a_twin_port_module_and_two_straight_fibers(tmp_path):
    """NVIDIA documents a twin-port 2 x 400G module reaching two switches over two straight
    fibers (no splitter): the BOM orders one flat-top twin-port per NIC cage, one finned
    twin-port per switch cage in use, and one MFP7E10 per 400G link."""
    plan = _plan(tmp_path, "name: t\nserver: hgx-b300\nservers: 32\n"
                           "fabric: {topology: multi-plane, switch: sn5600, speed_gbps: 400}\n")
    kinds = np.array(plan.link_kinds)[plan.links.kind]
    host = kinds == "server-leaf"
    assert host.sum() == 32 * 16
    media = {plan.media[m] for m in plan.links.media[host].tolist()}
    assert media == {"mmf"}  # straight fiber, not mmf-split
