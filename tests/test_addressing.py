"""The Ethernet addressing and ASN plan: unique, RFC 7938-shaped, stable under growth,
and clear errors when pools or ASN ranges run out.

The addressing is expand/addressing.py's."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from compiler.diagnostics import SpecInvalid
from compiler.plan.routing import dotted

from .conftest import plan_from_text

RAIL = """name: grow
servers: {servers}
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: sn5600
  speed_gbps: 400
  scalable_unit: 32
  tiers: 3
  nos: frr
"""


def _by_name(plan):
    r = plan.routing
    lo, mg = dotted(r.loopback), dotted(r.management)
    return {d.name: (lo[i], int(r.asn[i]), mg[i]) for i, d in enumerate(plan.devices)}


def _links(plan):
    r = plan.routing
    names = [d.name for d in plan.devices]
    port = {lid: [p.name for p in lay.ports] for lid, lay in plan.layouts.items()}
    out = {}
    nets = dotted(r.link_net)
    for i, (a, pa, b, pb) in enumerate(zip(plan.links.a_dev.tolist(), plan.links.a_port.tolist(),
                                           plan.links.b_dev.tolist(), plan.links.b_port.tolist())):
        da, db = plan.devices[a], plan.devices[b]
        out[(names[a], port[da.layout][pa], names[b], port[db.layout][pb])] = nets[i]
    return out


def test_addresses_unique_and_31s_pair_up():
    plan = plan_from_text(RAIL.format(servers=128))
    r = plan.routing
    switch = np.array([d.role in ("leaf", "spine", "core") for d in plan.devices])
    assert np.all(r.loopback[switch] != 0) and np.all(r.loopback[~switch] == 0)
    assert len(set(r.loopback[switch].tolist())) == int(switch.sum())
    assert len(set(r.management.tolist())) == len(plan.devices)
    assert np.all(r.link_net % 2 == 0) and len(set(r.link_net.tolist())) == len(plan.links)
    # no /31 overlaps a loopback or a management address
    ends = set(r.link_net.tolist()) | set((r.link_net + 1).tolist())
    assert not ends & set(r.loopback.tolist()) and not ends & set(r.management.tolist())


def test_asn_plan_follows_rfc7938():
    plan = plan_from_text(RAIL.format(servers=128))
    r = plan.routing
    by_role = {}
    for i, d in enumerate(plan.devices):
        by_role.setdefault(d.role, []).append((d, int(r.asn[i])))
    assert len({a for _, a in by_role["core"]}) == 1  # tier 1 shares one ASN
    pods = {}
    for d, a in by_role["spine"]:
        pods.setdefault(d.pod, set()).add(a)
    assert all(len(v) == 1 for v in pods.values()) and len({next(iter(v)) for v in pods.values()}) == len(pods)
    leaf_asns = [a for _, a in by_role["leaf"]]
    assert len(set(leaf_asns)) == len(leaf_asns)  # every leaf its own
    all_asns = {a for v in by_role.values() for _, a in v if a}
    assert all(64512 <= a <= 65534 for a in all_asns)  # fits the 2-byte private range


def test_stable_under_growth():
    small, big = plan_from_text(RAIL.format(servers=128)), plan_from_text(RAIL.format(servers=256))
    a, b = _by_name(small), _by_name(big)
    kept = [n for n in a if n in b]
    assert len(kept) == len(a) - sum(1 for n in a if n not in b)
    changed = [n for n in kept if a[n] != b[n]]
    assert not changed, f"addresses moved on growth: {changed[:5]}"
    la, lb = _links(small), _links(big)
    same_cable = [k for k in la if k in lb]
    assert same_cable and all(la[k] == lb[k] for k in same_cable)
    # every server-leaf cable is kept with its address
    assert sum(1 for k in la if k[0].startswith("gpu-")) == sum(1 for k in same_cable if k[0].startswith("gpu-"))


def test_four_byte_asns_when_two_byte_run_out():
    # 8,200 servers of 8 NICs, 8 per leaf: 1,025 leaves, more than the 1,023 2-byte private ASNs
    text = RAIL.replace("rail-optimized", "fat-tree").replace("  scalable_unit: 32\n", "  servers_per_leaf: 8\n").format(servers=8200)
    plan = plan_from_text(text)
    asns = plan.routing.asn[plan.routing.asn > 0]
    assert asns.min() >= 4200000000 and asns.max() <= 4294967294
    leaves = [int(plan.routing.asn[i]) for i, d in enumerate(plan.devices) if d.role == "leaf"]
    assert len(set(leaves)) == 1025


BAD = {
    "pool too small": ("addressing:\n  loopbacks: 10.0.0.0/28\n",
                       ["addressing.loopbacks", "10.0.0.0/28", "leaf share holds 8", "use a /"]),
    "server pool too small": ("addressing:\n  server_links: 10.64.0.0/24\n", ["addressing.server_links", "server-facing /31s"]),
    "pools overlap": ("addressing:\n  loopbacks: 10.64.0.0/16\n", ["overlap", "loopbacks (10.64.0.0/16)", "server_links"]),
    "host bits": ("addressing:\n  management: 172.16.0.1/12\n", ["has host bits set"]),
    "asn range runs out": ("addressing:\n  asn: 65000-65010\n", ["addressing.asn", "ASNs 65000-65010 hold 11", "4-byte"]),
    "asn range backwards": ("addressing:\n  asn: 65010-65000\n", ["addressing.asn", "expected auto, 2-byte, 4-byte"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_addressing_is_a_clear_error(case):
    extra, needles = BAD[case]
    with pytest.raises(SpecInvalid) as exc:
        plan_from_text(RAIL.format(servers=128) + extra, "spec.yaml")
    text = str(exc.value)
    for needle in needles:
        assert needle in text, text
    assert "spec.yaml:" in text


def test_management_and_loopbacks_skip_network_address():
    plan = plan_from_text(RAIL.format(servers=128))
    assert not any(ip.endswith(".0.0") for ip in dotted(plan.routing.loopback[plan.routing.loopback > 0]))


def test_roles_get_disjoint_regions():
    plan = plan_from_text(RAIL.format(servers=128))
    regions = plan.routing.regions["loopbacks"]
    from ipaddress import ip_network

    nets = [ip_network(v) for v in regions.values()]
    assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    assert Counter(d.role for d in plan.devices)["core"] > 0


@pytest.mark.parametrize("bad", ["leaf 7", "a" * 64, "-leaf", "su1\nleaf", "leaf!"])
def test_a_device_name_no_switch_config_can_hold_is_refused_by_name(bad):
    """Every device name goes into switch configs (hostnames, peer descriptions): one that
    is not letters, digits, '.', '_' and '-' (at most 63, starting with a letter or digit)
    is refused, and the first such device named, wherever it is in the plan."""
    from compiler.expand.addressing import _check_names
    from compiler.expand.families import resolve_and_build
    from compiler.pipeline import build_plan

    from .conftest import SPECS

    loaded, _ = build_plan(SPECS / "roce-2spine-4leaf-frr.yaml")
    design, plan = resolve_and_build(loaded)
    _check_names(loaded, design, plan, None, ("fabric",))  # the example's names pass
    for at in (0, len(plan.devices) // 2, len(plan.devices) - 1):
        _, plan = resolve_and_build(loaded)
        plan.devices[at].name = bad
        with pytest.raises(SpecInvalid) as e:
            _check_names(loaded, design, plan, None, ("fabric",))
        (d,) = e.value.diagnostics
        assert d.code == "NAME_UNSAFE_FOR_CONFIG" and repr(bad) in d.message
