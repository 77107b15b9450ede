"""A NOS is one descriptor (compiler/catalog/data/nos.yaml): the spec's allowed values, its
JSON Schema, the error hints, the files a switch gets and its port names all follow the
registry, so registering a NOS (here a fake one, in-test) is enough for the spec to take
it and for switch configs to be written from its templates."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest
import yaml

from compiler.catalog import load_catalog
from compiler.catalog.models import Nos
from compiler.catalog.nos import TWIN_NOS, descriptor, nos_ids, nos_registry
from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan
from compiler.pipeline import write_outputs
from compiler.render.plan_json import schema_text
from compiler.render.structured_config import SWITCH_ROLES, switch_configs
from compiler.render.switch_configs import render_switch
from compiler.render.templates import TEMPLATE_DIR, environment
from compiler.spec.schema import spec_schema

from .conftest import SPECS, cli_in_process, plan_from_text


def _nos_enums(node) -> list[list]:
    """Every enum under a `nos` property of a JSON Schema."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "nos":
                found += [s["enum"] for s in value.get("anyOf", [value]) if "enum" in s]
            found += _nos_enums(value)
    elif isinstance(node, list):
        for value in node:
            found += _nos_enums(value)
    return found


def test_the_spec_schema_lists_exactly_the_registry():
    enums = _nos_enums(spec_schema())
    assert len(enums) == 2  # fabric.nos and fabrics[].nos
    assert all(e == ["frr", "sonic", "cumulus", "eos"] == list(nos_ids()) for e in enums)


def test_the_plan_schema_lists_exactly_the_registry():
    """The written plan.schema.json takes its NOS enum from the registry; the committed file
    keeps no list of its own to fall out of step."""
    assert _nos_enums(json.loads(schema_text())) == [[*nos_ids(), None]]
    committed = json.loads((resources.files("compiler.plan") / "plan.schema.json").read_text())
    assert _nos_enums(committed) == [[None]]


def test_every_descriptor_is_complete():
    for nos in nos_registry().values():
        for f in nos.files:
            template = TEMPLATE_DIR / f.template
            assert template.is_file(), f"{nos.id}: {f.template} is not under templates/"
            text = template.read_text()
            # what the templates read from a SwitchConfig, the descriptor must supply
            if "d.port_mtu_bytes" in text:
                assert nos.port_mtu_bytes is not None, f"{nos.id}: {f.template} sets a port MTU, the descriptor gives none"
            if "d.device_type" in text:
                assert set(nos.role_types) >= set(SWITCH_ROLES), f"{nos.id}: {f.template} needs a device type per role"
        assert len({f.path for f in nos.files if f.peering != "numbered"}) == len([f for f in nos.files if f.peering != "numbered"])
    assert descriptor(TWIN_NOS).files_for("numbered") == (("frr.conf", "frr/frr.conf.j2"),)


def test_sonic_gets_frr_conf_only_for_unnumbered_peering():
    sonic = descriptor("sonic")
    assert [p for p, _ in sonic.files_for("numbered")] == ["config_db.json"]
    assert [p for p, _ in sonic.files_for("unnumbered")] == ["config_db.json", "frr.conf"]


def test_every_catalog_switch_runs_registered_noses_only():
    catalog = load_catalog()
    runs = {n for sw in catalog.switches.values() for n in sw.nos}
    assert runs == set(nos_ids())  # and every NOS has a switch that runs it
    for sw in catalog.switches.values():
        assert not sw.nos or sw.protocol == "ethernet", sw.id


@pytest.mark.parametrize("entry,needles", [
    ("nos: [cumulus, junos]", ["hw.yaml:", "switches.0.nos.1", "unknown NOS 'junos'", "allowed: frr (FRRouting)"]),
    ("nos: [sonic]\n    nos_port_names: {sonik: 'Ethernet{serdes0}'}",
     ["switches.0.nos_port_names.sonik", "no NOS's naming key", "did you mean sonic?"]),
])
def test_user_catalog_with_an_unknown_nos_is_a_clear_error(tmp_path, entry, needles):
    catalog = tmp_path / "hw.yaml"
    catalog.write_text(f"""switches:
  - id: myswitch
    vendor: x
    model: x
    part_number: x
    asic: x
    protocol: ethernet
    cages: 32
    cage: {{form_factor: OSFP, gbps: 800}}
    modes: {{400: {{ports_per_cage: 2, name: "swp{{cage}}s{{lane0}}"}}}}
    {entry}
    serdes_per_cage: 8
    confidence: inferred
    sources: [test]
""")
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: x\nservers: 8\nserver: hgx-h100\ncatalog: hw.yaml\n"
                    "fabric: {topology: fat-tree, switch: myswitch, speed_gbps: 400}\n")
    r = cli_in_process("validate", str(spec))
    assert r.returncode == 2
    text = r.stdout + r.stderr
    for needle in needles:
        assert needle in text, text


ALLOWED = "allowed: frr (FRRouting), sonic (SONiC), cumulus (NVIDIA Cumulus Linux), eos (Arista EOS)"


@pytest.mark.parametrize("value,message,hint", [
    ("sonik", "unknown NOS 'sonik'", "did you mean sonic? " + ALLOWED),
    ("SONiC", "unknown NOS 'SONiC'", "did you mean sonic? " + ALLOWED),
    ("junos2", "unknown NOS 'junos2'", ALLOWED),
    ("5", "unknown NOS 5", ALLOWED),  # not a string: the same error, not a type error
])
def test_unknown_nos_hint_comes_from_the_registry(value, message, hint):
    text = (SPECS / "roce-2spine-4leaf-sonic.yaml").read_text().replace("nos: sonic", f"nos: {value}")
    with pytest.raises(SpecInvalid) as exc:
        plan_from_text(text, "spec.yaml")
    [d] = exc.value.diagnostics
    assert (d.code, d.path, d.line, d.message, d.hint) == ("SPEC_INVALID", "fabric.nos", 12, message, hint)


def test_unsupported_nos_hint_names_the_switches_that_run_it():
    text = (SPECS / "roce-2spine-4leaf-sonic.yaml").read_text().replace("nos: sonic", "nos: eos")
    with pytest.raises(SpecInvalid) as exc:
        plan_from_text(text, "spec.yaml")
    [d] = exc.value.diagnostics
    assert d.code == "SPEC_NOS_UNSUPPORTED" and d.message == "sn5600 does not run eos (catalog: cumulus, sonic, frr)"
    assert d.hint == "use one of: cumulus, sonic, frr; or a switch that runs it: eos (Arista EOS) runs on arista-7060x6-64pe"


# --- adding a NOS is one descriptor -----------------------------------------------------------
FAKE = Nos.model_validate({
    "id": "fakenos", "name": "Fake NOS", "protocol": "ethernet",
    "port_names": "sonic",  # borrows SONiC's interface names (Ethernet<first lane>)
    "files": [{"path": "bgpd.conf", "template": "frr/frr.conf.j2"},
              {"path": "qos.yaml", "template": "nvue/startup.yaml.j2"}],
    "port_mtu_bytes": 9100, "capabilities": {"bgp_unnumbered": False}, "sources": ["test"],
    "lab": {"containerlab_kind": "fake_kind", "containerlab_image": "fake/nos:1.0", "air_os": "fake-os-1"},
})


@pytest.fixture
def fake_nos(monkeypatch, tmp_path):
    """The fake descriptor registered, and a user catalog whose switch (an SN5600 by
    another id) lists it."""
    monkeypatch.setitem(nos_registry(), FAKE.id, FAKE)
    entry = load_catalog().switches["sn5600"].model_dump(mode="json")
    entry |= {"id": "sn5600-fake", "nos": [FAKE.id]}
    (tmp_path / "hw.yaml").write_text(yaml.safe_dump({"switches": [entry]}))
    return tmp_path


def _spec(folder, extra: str = "") -> str:
    text = (SPECS / "roce-2spine-4leaf-sonic.yaml").read_text()
    text = text.replace("switch: sn5600", "switch: sn5600-fake").replace("nos: sonic", f"nos: {FAKE.id}")
    path = folder / "spec.yaml"
    path.write_text("catalog: hw.yaml\n" + text + extra)
    return path


def test_a_registered_nos_is_taken_by_the_spec_and_written_from_its_templates(fake_nos):
    assert FAKE.id in _nos_enums(spec_schema())[0]
    _, plan = build_plan(_spec(fake_nos))
    assert plan.routing.nos == FAKE.id
    configs = {c.hostname: c for c in switch_configs(plan, plan.routing.nos)}
    leaf = configs["leaf-001"]
    files = render_switch(leaf)
    assert sorted(files) == ["bgpd.conf", "qos.yaml"]
    assert files["bgpd.conf"] == environment().get_template("frr/frr.conf.j2").render(d=leaf)
    assert "router bgp 64512\n" in files["bgpd.conf"]
    # the descriptor's naming key: SONiC names (Ethernet<first lane>, 4 lanes per 400G
    # port), not the SN5600's panel names (swp1s0), on all 128 ports in use
    names = re.findall(r"^interface (\S+)$", files["bgpd.conf"], re.M)
    assert names[1:] == [f"Ethernet{4 * i}" for i in range(128)] and names[0] == "lo"
    assert "          mtu: 9100\n" in files["qos.yaml"]  # the descriptor's port MTU


def test_a_nos_without_unnumbered_bgp_refuses_unnumbered_peering(fake_nos):
    with pytest.raises(SpecInvalid) as exc:
        build_plan(_spec(fake_nos, "addressing:\n  peering: unnumbered\n"))
    [d] = exc.value.diagnostics
    assert d.code == "SPEC_NOS_LACKS_CAPABILITY" and d.path == "addressing.peering" and d.line == 15
    assert "Fake NOS configs cannot spell BGP unnumbered" in d.message
    assert d.hint == "use peering: numbered, or a NOS that can: frr, sonic, cumulus, eos"


def test_a_registered_nos_reaches_the_plan_schema_and_the_labs(fake_nos, tmp_path):
    """The descriptor alone puts the fake NOS into the written plan schema (its plan.json
    validates against it) and its kind, image and Air os into the labs."""
    jsonschema = pytest.importorskip("jsonschema")
    _, plan = build_plan(_spec(fake_nos))
    out = write_outputs(plan, tmp_path / "out", ["plan", "interop"])
    schema = json.loads((out / "plan.schema.json").read_text())
    assert _nos_enums(schema) == [[*nos_ids(), None]] and FAKE.id in nos_ids()
    jsonschema.validate(json.loads((out / "plan.json").read_text()), schema)
    lab = yaml.safe_load((out / "containerlab" / f"{plan.name}.clab.yml").read_text())["topology"]["nodes"]
    assert lab["leaf-001"] == {"kind": "fake_kind", "image": "fake/nos:1.0"}
    assert 'os="fake-os-1"' in (out / "air/topology.dot").read_text()
