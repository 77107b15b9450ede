"""The typed contract between expand and every later stage (compiler/plan/fabric_view.py,
compiler/plan/facts.py): the view's records say what plan.json's dicts say, the servers-first
invariant is checked, and each shared rule (link addresses, uplink speed, protocol, model per
role) is derived once: grep tests find a second derivation where no output could show it."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from compiler.diagnostics import SpecInvalid
from compiler.plan.fabric_view import PlanContractError, build_view, server_range
from compiler.plan.fabrics import fabric_plan
from compiler.plan.load import read_plan_json
from compiler.plan.model import Device
from compiler.render.host_configs import server_nics
from compiler.render.structured_config import switch_configs
from compiler.topology import TOPOLOGIES, topology

from .conftest import ROOT

COMPILER = ROOT / "compiler"
EXAMPLES = sorted(p.name for p in (ROOT / "out").iterdir() if (p / "plan.json").is_file())

# Where design and facts are plain JSON on purpose: built (expand), written and read back
# (plan.json), or turned into the typed records every other module reads.
SERIALIZATION = {"plan/serialize.py", "plan/facts.py", "plan/fabric_view.py", "plan/fabric_record.py", "plan/fabrics.py",
                 "plan/model.py", "expand/facts.py", "expand/extra_fabrics.py", "expand/management.py"}
STRING_KEYED = re.compile(r"\.(design|facts)(\[|\.get\()")
# `d = plan.design` and then `d["x"]`: the same read under another name (the view's typed
# records, `plan.view.design`, are what a stage binds instead)
ALIASED = re.compile(r"=\s*(?![\w.]*\bview\.)[\w.]*\.(design|facts)\s*$")


def _lines(where: str = ""):
    for path in sorted((COMPILER / where).rglob("*.py")):
        rel = path.relative_to(COMPILER).as_posix()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            yield rel, n, line


def test_no_string_keyed_read_of_design_or_facts_outside_serialization():
    found = [f"compiler/{rel}:{n}: {line.strip()}" for rel, n, line in _lines()
             if rel not in SERIALIZATION and (STRING_KEYED.search(line) or ALIASED.search(line))]
    assert found == []


def test_the_grep_sees_a_string_keyed_read():
    """The patterns above match the reads they are meant to refuse (a test that cannot fail is a defect)."""
    assert STRING_KEYED.search('speed = int(plan.design.get("speed_gbps") or 0)')
    assert STRING_KEYED.search('rec = plan.facts["media"][m]')
    assert ALIASED.search("    d = plan.design")
    assert not ALIASED.search("    d = plan.view.design") and not STRING_KEYED.search("plan.view.design.gpus")


# The nested records the view reaches through typed fields (catalog facts of a model, the
# spec's prices, a tier's port split ...): a string-keyed read of one, or of a key inside one,
# is the untyped contract back. Writes (`rec["spine_ports"] = ...`) and the spec's own
# mapping (`spec["bom"].get("prices")`) are not reads of the plan, nor is expand's reading of
# the dicts it is building (its sizing designs carry the unit fill as the record will).
NESTED = (r"(?:sonic|host_topology|scale_up_parts|prices|management_port|leaf_ports|spine_ports|tor_ports|hosts"
          r"|links_per_pair|unit_fill|cheapest|whole_units|with_room)")
NESTED_BY_KEY = re.compile(r"\[[\"']" + NESTED + r"[\"']\](?!\s*=[^=])|\.get\([\"']" + NESTED + r"[\"']")
INSIDE_NESTED = re.compile(r"\." + NESTED + r"\s*(?:\[[\"']|\.get\([\"'])")


def test_no_string_keyed_read_of_a_nested_record_outside_serialization():
    found = [f"compiler/{rel}:{n}: {line.strip()}" for rel, n, line in _lines()
             if rel not in SERIALIZATION and not rel.startswith("expand/") and "spec[" not in line and "spec.get(" not in line
             and (NESTED_BY_KEY.search(line) or INSIDE_NESTED.search(line))]
    assert found == []


def test_the_grep_sees_a_string_keyed_read_of_a_nested_record():
    assert INSIDE_NESTED.search('bset = buffer_set(sonic["platform"], sku) if rec.sonic["platform"] else None')
    assert NESTED_BY_KEY.search('topo = facts.get("host_topology", {}).get(server)')
    assert NESTED_BY_KEY.search('mgmt = rec["management_port"]')
    assert INSIDE_NESTED.search('down, up = d.leaf_ports["down"], d.leaf_ports["up"]')
    assert INSIDE_NESTED.search('prefix = plan.view.design.hosts["label_prefix"]')
    assert not NESTED_BY_KEY.search('        rec["spine_ports"] = {"down": s.spine.down, "up": s.spine.up}')
    assert not INSIDE_NESTED.search("down, up = d.leaf_ports.down, d.leaf_ports.up")
    assert not INSIDE_NESTED.search("topo = view.facts.host_topology.get(server_type)")  # a map by model id


# Record fields still plain dicts on purpose, each with why; any other field of the view's
# records typed `dict`, `Any` or a mapping of those is an untyped corner of the contract.
STILL_PLAIN = {
    # the catalog's host topology as plan.json holds it, for the NCCL library (render/nccl.py
    # validates it as the catalog's HostTopology; the plan may not import the catalog's models)
    ("HostTopologyFacts", "catalog_record"),
}
UNTYPED = re.compile(r"\bdict\b(?!\[)|\bAny\b|\bdict\[[^\]]*\bdict\b")


def _record_fields(cls: type, seen: set[type]):
    """(class, field, annotation) of a dataclass and of every dataclass its annotations name."""
    import dataclasses
    import sys

    if cls in seen or not dataclasses.is_dataclass(cls):
        return
    seen.add(cls)
    names = vars(sys.modules[cls.__module__])
    for f in dataclasses.fields(cls):
        owner = next(c.__name__ for c in cls.__mro__ if f.name in getattr(c, "__annotations__", {}))
        yield owner, f.name, str(f.type)
        for word in re.findall(r"[A-Za-z_]\w*", str(f.type)):
            if isinstance(names.get(word), type):
                yield from _record_fields(names[word], seen)


def test_every_record_the_view_reaches_is_typed():
    """Every field of the view, its facts and each family's design record (and every record
    they name) says what it holds: no bare `dict` or `Any` (STILL_PLAIN says why for the rest)."""
    from compiler.plan.fabric_view import FabricView

    seen: set[type] = set()
    fields = [*_record_fields(FabricView, seen)]
    for t in TOPOLOGIES.values():
        fields += _record_fields(t.record, seen)
    untyped = sorted({f"{owner}.{name}: {ann}" for owner, name, ann in fields
                      if UNTYPED.search(ann) and (owner, name) not in STILL_PLAIN})
    assert untyped == []
    assert {"ModelFacts", "PlanFacts", "ClosRecord", "DirectRecord"} <= {c.__name__ for c in seen}


@pytest.fixture(scope="module")
def plans():
    return {name: read_plan_json(ROOT / "out" / name) for name in EXAMPLES}


def test_typed_facts_say_what_the_plan_json_dicts_say(plans):
    for name, plan in plans.items():
        raw = json.loads((ROOT / "out" / name / "plan.json").read_text(encoding="utf-8"))["facts"]
        facts = plan.view.facts
        assert list(facts.models) == list(raw["models"]) and list(facts.media) == list(raw["media"]), name
        for model, rec in raw["models"].items():
            typed = facts.models[model]
            assert (typed.kind, typed.part_number, typed.power_w, typed.protocol) == \
                (rec["kind"], rec["part_number"], rec["power_w"], rec.get("protocol")), (name, model)
        for medium, rec in raw["media"].items():
            typed = facts.media[medium]
            assert (typed.cable_part_number, typed.fiber, typed.needs_transceivers, typed.transceivers) == \
                (rec["cable_part_number"], rec["fiber"], rec["needs_transceivers"], rec["transceivers"]), (name, medium)
        for part, rec in raw["transceivers"].items():
            # plan.json records part_number only where it differs from the id; null: not published
            assert facts.transceivers[part].part_number == rec.get("part_number", part), (name, part)


def test_nested_records_say_what_the_plan_json_dicts_say(plans):
    """The records nested in the facts read plan.json's dicts exactly, and the committed
    examples hold each kind: SONiC platforms (roce-2spine-4leaf-sonic), management ports,
    host topologies (DGX H100) and scale-up parts (gb200-nvl72-su)."""
    seen = set()
    for name, plan in plans.items():
        raw = json.loads((ROOT / "out" / name / "plan.json").read_text(encoding="utf-8"))["facts"]
        facts = plan.view.facts
        for model, rec in raw["models"].items():
            typed = facts.models[model]
            if "sonic" in rec:
                seen.add("sonic")
                assert typed.sonic is not None and typed.sonic.platform == rec["sonic"]["platform"], (name, model)
                assert {str(k): v for k, v in typed.sonic.hwsku.items()} == rec["sonic"]["hwsku"], (name, model)
                assert typed.sonic_port_alias == rec["sonic"].get("port_alias"), (name, model)
            else:
                assert typed.sonic is None, (name, model)
            port = rec.get("management_port")
            seen |= {"management_port"} if port else set()
            assert (None if typed.management_port is None else dataclasses.asdict(typed.management_port)) == port, (name, model)
        for server, topo in raw.get("host_topology", {}).items():
            typed_topo = facts.host_topology[server]
            assert (typed_topo is None) == (topo is None), (name, server)
            if topo is not None:
                seen.add("host_topology")
                assert [(n.name, n.busid, list(n.near_gpus)) for n in typed_topo.nics] == \
                    [(n.get("name"), n["busid"], n.get("near_gpus", [])) for n in topo["nics"]], (name, server)
        for ref, part in raw.get("scale_up_parts", {}).items():
            seen.add("scale_up_parts")
            typed_part = facts.scale_up_parts[ref]
            assert (typed_part.part_number, typed_part.power_w, typed_part.part_of, typed_part.switch_asics) == \
                (part["part_number"], part["power_w"], part["part_of"], part["switch_asics"]), (name, ref)
        d, design = plan.view.design, json.loads((ROOT / "out" / name / "plan.json").read_text(encoding="utf-8"))["design"]
        for key in ("leaf_ports", "spine_ports", "tor_ports", "hosts", "links_per_pair"):
            value = getattr(d, key, None)
            raw_value = design.get(key)
            typed = None if value is None else {k: v for k, v in dataclasses.asdict(value).items()
                                                 if v is not None or k in raw_value}  # keys written only where they apply
            assert typed == raw_value, (name, key)
    assert seen == {"sonic", "management_port", "host_topology", "scale_up_parts"}


def test_prices_are_exact_decimals_as_plan_json_writes_them():
    from decimal import Decimal

    from compiler.plan.facts import PriceFacts

    prices = PriceFacts.from_json({"currency": "USD", "source": None, "file": "prices.yaml",
                                   "parts": {"MMA4Z00-NS": "1234.50", "CAT6": "0.1"}})
    assert prices is not None and prices.parts == {"MMA4Z00-NS": Decimal("1234.50"), "CAT6": Decimal("0.1")}
    assert prices.parts["CAT6"] * 3 == Decimal("0.3")  # exact, as a float would not be


def test_the_view_reads_each_committed_example(plans):
    """Hand-checked against the specs: roce-2spine-4leaf-* are Ethernet Clos fabrics of 32
    servers at 400G; b300-xdr-1su is an InfiniBand XDR fabric at 800G."""
    roce = plans["roce-2spine-4leaf-frr"].view
    assert (roce.protocol, roce.design.speed_gbps, roce.uplink_gbps, len(roce.servers)) == ("ethernet", 400, 400, 32)
    xdr = plans["b300-xdr-1su"].view
    assert (xdr.protocol, xdr.uplink_gbps, xdr.is_infiniband) == ("infiniband", 800, True)
    for name, plan in plans.items():
        view = plan.view
        n = len(view.servers)
        assert all(d.role == "server" for d in plan.devices[:n]) and all(d.role != "server" for d in plan.devices[n:]), name
        assert view.model_id("leaf") == view.design.switch, name
        coordinates = view.device_coordinates  # a coordinate the plan sets is one its descriptor explains
        assert coordinates.pod is not None or all(d.pod is None for d in plan.devices), name
        assert coordinates.group is not None or all(d.group is None for d in plan.devices), name
        if topology(view.design.topology).family == "clos":  # and means what the descriptor says
            assert {d.role for d in plan.devices if d.pod is not None} <= {"leaf", "spine"}, name
            assert {d.role for d in plan.devices if d.group is not None and d.role != "core"} <= {"leaf"}, name


def test_each_topology_says_what_pod_and_group_mean():
    """The families whose lowering sets Device.pod or Device.group say what it means there
    (Clos and multi-plane both; dragonfly pod, a torus of chips group); ring and full mesh neither."""
    said = {name: (t.pod_means is not None, t.group_means is not None) for name, t in TOPOLOGIES.items()}
    assert said["fat-tree"] == said["rail-optimized"] == said["multi-plane"] == (True, True)
    assert said["dragonfly"] == said["dragonfly+"] == (True, False)
    assert said["torus"] == said["mesh"] == (False, True)
    assert said["ring"] == said["full-mesh"] == said["rail-only"] == (False, False)


def _device(name: str, role: str) -> Device:
    return Device(name, role, role, role, 0 if role == "server" else 1, 1)


def test_servers_must_come_first_in_the_device_list():
    assert server_range([_device("s1", "server"), _device("s2", "server"), _device("l1", "leaf")]) == range(2)
    with pytest.raises(PlanContractError, match="server s2 follows l1"):
        server_range([_device("s1", "server"), _device("l1", "leaf"), _device("s2", "server")])


def test_a_plan_json_whose_servers_do_not_come_first_is_refused(tmp_path):
    data = json.loads((ROOT / "out" / "roce-2spine-4leaf-frr" / "plan.json").read_text(encoding="utf-8"))
    rows = data["devices"]["rows"]
    leaf = next(i for i, row in enumerate(rows) if row[1] == "leaf")
    rows.insert(1, rows.pop(leaf))  # a leaf between the first and the second server
    (tmp_path / "plan.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SpecInvalid) as exc:
        read_plan_json(tmp_path)
    (diag,) = exc.value.diagnostics
    assert diag.code == "PLAN_INVALID" and "servers must come first" in diag.message


def test_uplink_speed_is_the_design_speed_where_the_record_has_none(plans):
    """A design whose uplink_speed_gbps is absent or null has uplinks at speed_gbps (one
    rule; one reader took a null for the speed itself)."""
    plan = plans["roce-2spine-4leaf-frr"]
    for extra in ({}, {"uplink_speed_gbps": None}, {"uplink_speed_gbps": 800}):
        view = build_view({**plan.design, **extra}, plan.facts, plan.devices, plan.routing)
        assert view.uplink_gbps == (extra.get("uplink_speed_gbps") or 400)


# --- the /31 rule: one derivation (plan/routing.link_end_addresses) ----------------------

def _dotted(values: np.ndarray) -> list[str]:
    return [f"{v >> 24}.{v >> 16 & 255}.{v >> 8 & 255}.{v & 255}" for v in values.astype(np.int64).tolist()]


# (example, server NICs: its spec's servers x the server model's compute NICs)
@pytest.mark.parametrize("name, nics", [("roce-2spine-4leaf-frr", 32 * 8), ("lab-3tier-frr", 32 * 1)])
def test_switch_configs_and_host_configs_write_the_views_link_end_addresses(plans, name, nics):
    """Every address a switch config or a host NIC gets is its link end's, as the view gives
    it: the upper end (the leaf toward servers, the spine toward leaves) the even address of
    the /31, the lower end the odd one."""
    plan = fabric_plan(plans[name])
    upper, lower = plan.view.link_end_addresses()
    names = [d.name for d in plan.devices]
    links = plan.links
    numbered = np.flatnonzero(upper != 0)
    assert numbered.size == len(links)  # numbered peering: every link has a /31
    expected = {(names[b], a) for b, a in zip(links.b_dev[numbered].tolist(), _dotted(upper[numbered]), strict=True)}
    switch_low = numbered[np.array([plan.devices[a].tier > 0 for a in links.a_dev[numbered].tolist()], dtype=bool)]
    expected |= {(names[a], x) for a, x in zip(links.a_dev[switch_low].tolist(), _dotted(lower[switch_low]), strict=True)}
    written = {(cfg.hostname, iface.address.split("/")[0]) for cfg in switch_configs(plan, plan.routing.nos)
               for iface in cfg.interfaces if iface.address}
    assert written == expected

    servers, per_server, _ = server_nics(plan)
    host = numbered[links.a_dev[numbered] < len(servers)]
    expected_nics = {(names[a], x, g) for a, x, g in zip(links.a_dev[host].tolist(), _dotted(lower[host]),
                                                          _dotted(upper[host]), strict=True)}
    assert {(s, nic.address, nic.gateway) for s, nics in zip(servers, per_server, strict=True) for nic in nics} == expected_nics
    assert len(expected_nics) == nics


def test_no_output_derives_link_addresses_itself():
    """An output reads the routing plan's /31s only through link_end_addresses."""
    found = [f"compiler/{rel}:{n}" for rel, n, line in _lines("render")
             if "link_net" in line and "link_end_addresses(" not in line]
    found += [f"compiler/{rel}:{n}" for rel, n, line in _lines("twin") if "link_net" in line]
    assert found == []


def test_no_stage_derives_the_uplink_speed_or_a_role_model_itself():
    """The uplink speed (`uplink_speed_gbps or speed_gbps`) and the switch model of a role
    (`<role>_switch or switch`) are the view's; the stages after expand call it."""
    later = ("check/", "render/", "traffic/", "explore/", "verify/", "resilience/", "twin/", "ci.py", "compare.py")
    # a read of the design's key (a docstring's `fabric.uplink_speed_gbps` names the spec key;
    # summary.json's own field is read back by speed_text)
    uplink = re.compile(r"(?<!fabric)\.uplink_speed_gbps\b|(?<!summary)(?:\.get\(|\[)[\"']uplink_speed_gbps"
                        r"|getattr\([^)]*[\"']uplink_speed_gbps")
    role_model = re.compile(r"\b(?:spine|core)_switch\b|\{role\}_switch")
    found = [f"compiler/{rel}:{n}: {line.strip()}" for rel, n, line in _lines()
             if rel.startswith(later) and not line.lstrip().startswith("#")
             and (uplink.search(line) or role_model.search(line))]
    assert found == []


def test_later_stages_read_the_sealed_views_design():
    """`Plan.design_record` is rebuilt on each read for expand, whose design still grows; every
    later stage reads the sealed view's record (`plan.view.design`), one object per plan."""
    found = [f"compiler/{rel}:{n}" for rel, n, line in _lines()
             if "design_record" in line and not rel.startswith(("expand/", "topology/", "plan/model.py", "plan/fabric_view.py"))]
    assert found == []


def test_protocol_is_read_through_the_view_only():
    """A fabric's protocol is the view's (`protocol`, `is_infiniband`), a device model's
    `model_protocol`: no stage reads a model record's protocol field itself."""
    field = re.compile(r"(?<!view)\.protocol\b|[\"']protocol[\"']\](?!\s*=[^=])|get\([\"']protocol[\"']")  # a read, not a key written
    found = [f"compiler/{rel}:{n}: {line.strip()}" for rel, n, line in _lines()
             if rel.startswith(("check/", "render/", "traffic/", "explore/", "verify/", "resilience/", "twin/", "plan/"))
             and rel not in ("plan/fabric_view.py", "plan/facts.py") and field.search(line)]
    assert found == []


def test_infiniband_port_numbers_are_one_rule(plans):
    """The subnet manager's files and verify's name matching number an InfiniBand switch port
    alike (ModelFacts.ib_port_numbers): on the H100 SuperPOD example (QM9700: 32 OSFP cages of
    2 ports), cage 17 lane 2 is port 34 in both, and no other module reads ports_per_cage."""
    from compiler.render.infiniband import ib_view
    from compiler.verify.names import ib_port_numbers

    plan = fabric_plan(plans["h100-superpod-1su"])
    view = ib_view(plan)
    by_layout = ib_port_numbers(plan)
    checked = 0
    for end_dev, end_port, numbers in ((plan.links.a_dev, plan.links.a_port, view.a_port),
                                       (plan.links.b_dev, plan.links.b_port, view.b_port)):
        for dev, port, number in zip(end_dev.tolist(), end_port.tolist(), numbers.tolist(), strict=True):
            d = plan.devices[dev]
            if d.tier > 0:
                assert by_layout[d.layout][number] == port
                checked += 1
    tiers = np.array([d.tier for d in plan.devices])
    assert checked == int((tiers[plan.links.a_dev] > 0).sum() + (tiers[plan.links.b_dev] > 0).sum()) > len(plan.links)
    leaf = next(d for d in plan.devices if d.role == "leaf")
    ports = plan.layouts[leaf.layout].ports
    p = next(i for i, x in enumerate(ports) if x.cage == "17" and x.lane == 2)
    assert by_layout[leaf.layout][34] == p
    found = [f"compiler/{rel}:{n}" for rel, n, line in _lines() if "ports_per_cage\")" in line
             and rel != "plan/facts.py" and not rel.startswith(("expand/", "catalog/"))]
    assert found == []


def test_each_fabric_has_its_own_view(plans):
    """h100-superpod-1su-multi-fabric (its spec): an InfiniBand compute fabric of QM9700s, an
    Ethernet storage fabric of SN5600s, an out-of-band fabric of SN2201s that carries the
    management network; all three reach the same 31 servers."""
    from compiler.plan.fabrics import fabric_names, fabric_view

    plan = plans["h100-superpod-1su-multi-fabric"]
    views = {name: fabric_view(plan, name) for name in fabric_names(plan)}
    assert {n: (v.fabric, v.protocol, v.model_id("leaf")) for n, v in views.items()} == {
        "compute": (None, "infiniband", "qm9700"), "storage": ("storage", "ethernet", "sn5600"),
        "oob": ("oob", "ethernet", "sn2201")}
    assert {len(v.servers) for v in views.values()} == {31}
    assert plan.fabrics["oob"].management_network is not None and plan.fabrics["compute"].management_network is None


def test_expand_and_the_view_share_the_uplink_rule():
    """ClosDesign.up_gbps (expand) and FabricView.uplink_gbps (every later stage) both call
    topology.records.uplink_gbps: the rule has no other spelling in compiler/."""
    spelled = re.compile(r"uplink_speed_gbps\s+or\b")
    found = [f"compiler/{rel}:{n}" for rel, n, line in _lines() if spelled.search(line) and rel != "topology/records.py"]
    assert found == []


def test_nos_port_names_are_read_in_one_place():
    """A port's name as a NOS spells it comes from plan/views.py (nos_port_names per NOS,
    floor_port_names per device's fabric): no output or the twin indexes the routing plan's
    port_names itself."""
    found = [f"compiler/{rel}:{n}: {line.strip()}" for rel, n, line in _lines()
             if re.search(r"\.port_names(\.get\(|\[)", line)
             and rel not in ("plan/views.py", "plan/serialize.py") and not rel.startswith("expand/")]
    assert found == []
