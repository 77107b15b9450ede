"""Port uniqueness, radix and wiring-rule invariants on every compiled example plan.

Every builder assembles its plan with expand/assembly.py, whose port offsets and layouts these
invariants hold."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from compiler.check.invariants import plan_invariants
from compiler.pipeline import build_plan

from .conftest import SPECS, shared_plan


SPEC_FILES = sorted(p for p in SPECS.glob("*.yaml") if "64su" not in p.name)


@pytest.fixture(scope="module", params=SPEC_FILES, ids=[p.stem for p in SPEC_FILES])
def plan(request):
    return shared_plan(request.param)


def test_invariants_hold(plan):
    assert plan_invariants(plan) == []


def test_every_port_used_at_most_once_and_within_radix(plan):
    offsets = plan.port_offsets()
    gids = np.concatenate([offsets[plan.links.a_dev] + plan.links.a_port, offsets[plan.links.b_dev] + plan.links.b_port])
    assert np.unique(gids).size == gids.size
    for end in ("a", "b"):
        dev, port = getattr(plan.links, f"{end}_dev"), getattr(plan.links, f"{end}_port")
        sizes = np.array([len(plan.layouts[d.layout]) for d in plan.devices])
        assert (port < sizes[dev]).all() and (port >= 0).all()


def test_every_server_nic_connected_once(plan):
    if plan.design.get("direct"):
        pytest.skip("direct network: hosts have no fabric NICs (chips link to chips; see test_topologies)")
    servers = [i for i, d in enumerate(plan.devices) if d.role == "server"]
    nics = len(plan.layouts[plan.devices[servers[0]].layout])
    # server-leaf, server-router; with several fabrics also storage:server-leaf, oob:server-leaf
    kinds = [i for i, k in enumerate(plan.link_kinds) if k.split(":")[-1].startswith("server-")]
    per_server = Counter(plan.links.a_dev[np.isin(plan.links.kind, kinds)].tolist())
    assert set(per_server.values()) == {nics}
    assert len(per_server) == len(servers)


def test_equal_links_to_every_upper_switch(plan):
    # ECMP needs equal paths: every leaf has the same number of links to each spine it
    # reaches, and reaches every spine of its pod; likewise spine -> core.
    for kind, lower, upper_key in (("leaf-spine", "leaf", "pod"), ("spine-core", "spine", "group")):
        if kind not in plan.link_kinds:
            continue
        sel = plan.links.kind == plan.link_kinds.index(kind)
        pairs = Counter(zip(plan.links.a_dev[sel].tolist(), plan.links.b_dev[sel].tolist()))
        assert len(set(pairs.values())) == 1, f"{kind}: unequal links per pair"
        per_lower = Counter(a for a, _ in pairs)
        assert len(set(per_lower.values())) == 1, f"{kind}: {lower}s reach different numbers of peers"


RAIL_SPECS = [p for p in SPEC_FILES if "rail-optimized" in p.read_text()]


@pytest.mark.parametrize("spec", RAIL_SPECS, ids=[p.stem for p in RAIL_SPECS])
def test_rail_optimized_rule(spec):
    plan = shared_plan(spec)
    assert plan.design["topology"] == "rail-optimized"
    sel = plan.links.kind == plan.link_kinds.index("server-leaf")
    for a, a_port, b in zip(plan.links.a_dev[sel].tolist(), plan.links.a_port[sel].tolist(), plan.links.b_dev[sel].tolist()):
        server, leaf = plan.devices[a], plan.devices[b]
        assert leaf.su == server.su and leaf.rail == a_port + 1


def test_names_are_unique_and_safe(plan):
    names = [d.name for d in plan.devices]
    assert len(set(names)) == len(names)
    assert all(n.replace("-", "").isalnum() and n == n.lower() for n in names)


def test_fabric_records_that_do_not_tile_the_plan_are_caught():
    """A fabric record off by one (a device or link counted in the wrong fabric) would put a
    storage switch in the compute checks or a cable under the wrong fabric: a compiler bug."""
    import dataclasses

    from compiler.check.invariants import fabric_invariants

    plan = build_plan(SPECS / "h100-superpod-1su-multi-fabric.yaml")[1]
    assert fabric_invariants(plan) == []
    good = dict(plan.fabrics)
    storage = good["storage"]
    plan.fabrics["storage"] = dataclasses.replace(storage, links=range(storage.links.start + 1, storage.links.stop))
    assert [f.code for f in fabric_invariants(plan)] == ["FABRIC_RANGES"]
    compute = good["compute"]  # the last compute link handed to storage: its upper end is a compute leaf
    plan.fabrics.update(compute=dataclasses.replace(compute, links=range(0, compute.links.stop - 1)),
                        storage=dataclasses.replace(storage, links=range(compute.links.stop - 1, storage.links.stop)))
    assert [f.code for f in fabric_invariants(plan)] == ["FABRIC_LINK_OUTSIDE", "FABRIC_ROUTING_SIZE"]  # storage: 63 links, 62 /31s
    plan.fabrics.update(good)
    r = good["oob"].routing  # routing padded past its fabric (what pad_routing used to do)
    plan.fabrics["oob"] = dataclasses.replace(good["oob"], routing=dataclasses.replace(
        r, loopback=np.concatenate([r.loopback, np.zeros(1, dtype=r.loopback.dtype)])))
    assert [f.code for f in fabric_invariants(plan)] == ["FABRIC_ROUTING_SIZE"]


def test_the_test_helper_holds_plans_to_the_pipeline_invariants(monkeypatch):
    """plan_from_text (tests/conftest.py) builds a plan as `clusterc compile` does: a plan that
    breaks an invariant (here two devices given one name) is refused there too, so a test
    never passes on a plan compile would not write."""
    import compiler.pipeline

    from .conftest import plan_from_text

    text = "name: twin-names\nservers: 4\nserver: dgx-h100\nfabric: {topology: rail-optimized, switch: qm9700}\n"
    assert plan_invariants(plan_from_text(text)) == []
    expand = compiler.pipeline.expand

    def twin_names(loaded):
        plan = expand(loaded)
        plan.devices[1].name = plan.devices[0].name
        return plan

    monkeypatch.setattr(compiler.pipeline, "expand", twin_names)
    with pytest.raises(AssertionError, match="DEVICE_NAME_REUSED|used twice"):
        plan_from_text(text)


def test_a_link_between_ports_of_two_speeds_is_found():
    """A leaf whose ports run at 200G, its servers' NICs at 400G: every server link of it
    joins two speeds; the first such link is named with both speeds and both devices."""
    from dataclasses import replace

    from compiler.plan.model import PortLayout

    from .conftest import plan_copy

    plan = plan_copy(shared_plan(SPECS / "h100-superpod-1su.yaml"))
    leaf = next(i for i, d in enumerate(plan.devices) if d.role == "leaf")
    layout = plan.layouts[plan.devices[leaf].layout]
    plan.layouts["slow"] = PortLayout("slow", tuple(replace(p, speed_gbps=200) for p in layout.ports))
    plan.devices[leaf].layout = "slow"
    first = int(np.argmax((plan.links.b_dev == leaf) | (plan.links.a_dev == leaf)))
    found = [f for f in plan_invariants(plan) if f.code == "SPEED_MISMATCH"]
    assert len(found) == 1
    assert found[0].message.startswith(f"link {first + 1}: ")
    assert "200 Gb/s" in found[0].message and "400 Gb/s" in found[0].message
    assert plan.devices[leaf].name in found[0].message


def test_a_port_index_past_the_device_s_ports_is_found():
    from .conftest import plan_copy

    plan = plan_copy(shared_plan(SPECS / "h100-superpod-1su.yaml"))
    dev = int(plan.links.b_dev[5])
    ports = len(plan.layouts[plan.devices[dev].layout])
    plan.links.b_port[5] = ports
    found = [f for f in plan_invariants(plan) if f.code == "PORT_OUT_OF_RANGE"]
    assert [f.message for f in found] == [f"link 6 uses port index {ports} of {plan.devices[dev].name}, which has {ports} ports"]


def test_port_offsets_that_do_not_tile_the_ports_are_found():
    """Global port ids are each device's port_offset plus its port index, and port_count reads
    the last device's: a device whose offset is not the sum of the ports before it (a
    builder's bug) would give two devices the same global ports, so it is an error."""
    from .conftest import plan_copy

    plan = plan_copy(shared_plan(SPECS / "h100-superpod-1su.yaml"))
    assert plan.port_count() == sum(len(plan.layouts[d.layout]) for d in plan.devices)
    dev = 7
    before = sum(len(plan.layouts[d.layout]) for d in plan.devices[:dev])
    plan.devices[dev].port_offset -= 1
    found = plan_invariants(plan)
    assert [(f.code, f.where) for f in found] == [("PORT_OFFSET_GAP", plan.devices[dev].name)]
    assert f"start at global port {before - 1}; the devices before it have {before}" in found[0].message


def test_a_compile_checks_the_invariants_once_and_the_budgets_check_reports_them():
    """The pipeline checks a plan's invariants as expand builds it; the budgets check reads
    that answer (plan_invariants_once) rather than paying for it again. A plan of its own
    (plan_copy: nothing carried over), here with a device's ports overlapping the one
    before, is checked afresh and the budgets check reports what it found."""
    from compiler.check.budgets import check_budgets
    from compiler.check.context import CheckContext
    from compiler.check.invariants import plan_invariants_once

    from .conftest import plan_copy

    built = build_plan(SPECS / "h100-superpod-1su.yaml")[1]
    assert built.memoized("plan_invariants") == ()
    assert plan_invariants_once(built) is built.memoized("plan_invariants")
    plan = plan_copy(built)
    assert plan.memoized("plan_invariants") is None
    plan.devices[7].port_offset -= 1
    figures, found = check_budgets(CheckContext(plan, seed=1, whole=plan))
    assert [f.code for f in found] == ["PORT_OFFSET_GAP"]  # and no per-port table read at a port no device holds
    assert (figures.ports_used, figures.ports_total) == (2 * len(plan.links), plan.port_count())
    assert [f.code for f in plan_invariants_once(plan)] == ["PORT_OFFSET_GAP"]
