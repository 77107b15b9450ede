"""The spec language means what YAML 1.2's core schema says, not what YAML 1.1 (PyYAML's
default) guesses: every 1.1 trap, in every kind of field the spec has, either reads as
the YAML 1.2 value or fails with file:line and a hint. Never a silent number.

Modules exercised here: yaml12/source.py (values with positions), yaml12/core_schema.py (what a
scalar means), yaml12/value_errors.py (the messages)."""

from __future__ import annotations

import json
import math
from ipaddress import IPv4Network

import pytest

from compiler.catalog.load import load_catalog
from compiler.diagnostics import SpecInvalid
from compiler.spec.load import load_spec_text
from compiler.spec.model import Ratio
from compiler.yaml12 import load_yaml_text

from .conftest import cli_in_process

# --- the loader: plain scalars by YAML 1.2 core rules ---------------------------------
# (written as it appears in a file, YAML 1.2 value, what YAML 1.1 made of it)
PLAIN = [
    ("2:1", "2:1"),                   # 1.1: base 60, 121
    ("1:1", "1:1"),                   # 1.1: 61
    ("16:15", "16:15"),               # 1.1: 975
    ("1:30:00", "1:30:00"),           # 1.1: 5400
    ("1:30.5", "1:30.5"),             # 1.1: float 90.5
    ("on", "on"), ("off", "off"), ("On", "On"), ("OFF", "OFF"),  # 1.1: booleans
    ("yes", "yes"), ("no", "no"), ("Yes", "Yes"), ("NO", "NO"),
    ("y", "y"), ("n", "n"), ("Y", "Y"), ("N", "N"),
    ("010", 10),                      # 1.1: octal 8
    ("0o10", 8),
    ("0x10", 16),
    ("-010", -10),
    ("+12", 12),
    ("0b101", "0b101"),               # 1.1: binary 5
    ("1_000", "1_000"),               # 1.1: 1000
    ("1_000.5", "1_000.5"),           # 1.1: 1000.5
    ("2024-01-01", "2024-01-01"),     # 1.1: a date
    ("2024-01-01T10:00:00Z", "2024-01-01T10:00:00Z"),
    ("1e3", 1000.0),                  # 1.1: text (1.1 floats need a dot)
    ("1.5", 1.5), (".5", 0.5), ("1.", 1.0), ("-1.5e-3", -0.0015),
    ("true", True), ("True", True), ("TRUE", True), ("false", False),
    ("tRue", "tRue"),
    ("null", None), ("Null", None), ("~", None), ("", None),
    ("=", "="),                       # 1.1: the !!value tag
    ("<<", "<<"),                     # as a value: text
    ("+0x10", "+0x10"),               # 1.2 hex has no sign
    ("0o19", "0o19"),
]


@pytest.mark.parametrize("written, value", PLAIN, ids=[w or "empty" for w, _ in PLAIN])
def test_plain_scalar_means_what_yaml_1_2_says(written, value):
    # block, flow sequence, flow mapping (an empty flow item is no item: block only)
    forms = [f"v: {written}\n"] + ([f"v: [{written}]\n", f"v: {{k: {written}}}\n"] if written else [])
    for text in forms:
        got = load_yaml_text(text, "t.yaml").data["v"]
        got = got[0] if isinstance(got, list) else got["k"] if isinstance(got, dict) else got
        assert got == value and type(got) is type(value), (text, got)


def test_special_floats():
    data = load_yaml_text("a: .inf\nb: -.Inf\nc: .NaN\n", "t.yaml").data
    assert data["a"] == math.inf and data["b"] == -math.inf and math.isnan(data["c"])


@pytest.mark.parametrize("written, value", [
    ('"2:1"', "2:1"), ("'010'", "010"), ('"yes"', "yes"), ("'1_000'", "1_000"), ('"true"', "true"),
    ("|\n  2:1\n", "2:1\n"), (">\n  010\n", "010\n"),
    ("!!str 010", "010"), ("!!str yes", "yes"), ("!!int 0o17", 15), ("!!int 010", 10), ("!!int 0x1F", 31),
    ("!!float 1", 1.0), ("!!bool true", True), ("!!null null", None),
])
def test_quoted_block_and_tagged_scalars(written, value):
    got = load_yaml_text(f"v: {written}\n", "t.yaml").data["v"]
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize("written, fragment", [
    ("!!bool yes", "'yes' is not a YAML 1.2 bool"), ("!!int 1_000", "'1_000' is not a YAML 1.2 int"),
    ("!!int 0b101", "not a YAML 1.2 int"), ("!!float 1:30", "not a YAML 1.2 float"),
    ("9" * 200, "more than 100 digits"),
])
def test_a_tag_its_text_does_not_fit_is_an_error(written, fragment):
    with pytest.raises(SpecInvalid) as exc:
        load_yaml_text(f"a: 1\nv: {written}\n", "t.yaml")
    (d,) = exc.value.diagnostics
    assert (d.file, d.line, d.column) == ("t.yaml", 2, 4) and fragment in d.message and d.hint


def test_keys_are_read_as_written():
    data = load_yaml_text("on: 1\nyes: 2\n010: 3\n0x10: 4\n1: 5\nnull: 6\n2:1: 7\n", "t.yaml").data
    assert list(data) == ["on", "yes", "010", "0x10", "1", "null", "2:1"]


# --- every field type of the spec ------------------------------------------------------
def clos(fabric: str = "", top: str = "", name: str = "t", servers: str = "64") -> str:
    """A spec whose trap lines have known numbers: name 1, servers 2, fabric extras from 7."""
    return (f"name: {name}\nservers: {servers}\nserver: dgx-h100\nfabric:\n  topology: fat-tree\n"
            f"  switch: sn5600\n{fabric}{top}")


def torus(fabric: str) -> str:
    """dims/wrap lines from 6."""
    return f"name: t\ngpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n{fabric}"


def r(down, up):
    return Ratio(down=down, up=up)


# (id, spec text, getter, YAML 1.2 value)
VALID = [
    # string fields: names, roles, ids, free text
    ("name yes", clos(name="yes"), lambda s: s.name, "yes"),
    ("name no", clos(name="no"), lambda s: s.name, "no"),
    ("name on", clos(name="on"), lambda s: s.name, "on"),
    ("name y", clos(name="y"), lambda s: s.name, "y"),
    ("name date", clos(name="2024-01-01"), lambda s: s.name, "2024-01-01"),
    ("name quoted number", clos(name='"010"'), lambda s: s.name, "010"),
    ("role off", clos(top="extra_endpoints: [{role: off, count: 2}]\n"), lambda s: s.extra_endpoints[0].role, "off"),
    ("fabric name on", clos(top="fabrics: [{name: on, switch: sn5600}]\n"), lambda s: s.fabrics[0].name, "on"),
    ("switch id n", clos().replace("switch: sn5600", "switch: n"), lambda s: s.fabric.switch, "n"),
    ("description no", clos(top="description: no\n"), lambda s: s.description, "no"),
    ("catalog date", clos(top="catalog: 2024-01-01.yaml\n"), lambda s: s.catalog, "2024-01-01.yaml"),
    ("hall quoted", clos(top='layout: {hall: "010", rows: 1, racks_per_row: 4}\n'), lambda s: s.layout.hall, "010"),
    ("hostname braces", clos(top="hosts:\n  hostname: gpu-{index:03}\n"), lambda s: s.hosts.hostname, "gpu-{index:03}"),
    # int fields
    ("servers 010", clos(servers="010"), lambda s: s.servers, 10),
    ("servers 0o20", clos(servers="0o20"), lambda s: s.servers, 16),
    ("servers 0x40", clos(servers="0x40"), lambda s: s.servers, 64),
    ("scalable_unit 010", clos("  scalable_unit: 010\n"), lambda s: s.fabric.scalable_unit, 10),
    ("tiers 0o2", clos("  tiers: 0o2\n"), lambda s: s.fabric.tiers, 2),
    ("growth 0x100", clos(top="growth: {max_servers: 0x100}\n"), lambda s: s.growth.max_servers, 256),
    # bool fields
    ("wrap true/false", torus("  dims: [4, 4, 4]\n  wrap: [true, False, TRUE]\n"), lambda s: s.fabric.wrap,
     [True, False, True]),
    # ratio fields
    ("ratio 2:1", clos("  oversubscription: 2:1\n"), lambda s: s.fabric.oversubscription.leaf, r(2, 1)),
    ("ratio quoted", clos('  oversubscription: "2:1"\n'), lambda s: s.fabric.oversubscription.leaf, r(2, 1)),
    ("ratio 1:1", clos("  oversubscription: 1:1\n"), lambda s: s.fabric.oversubscription.leaf, r(1, 1)),
    ("ratio 16:15", clos("  oversubscription: 16:15\n"), lambda s: s.fabric.oversubscription.leaf, r(16, 15)),
    ("ratio 64:9", clos("  oversubscription: 64:9\n"), lambda s: s.fabric.oversubscription.leaf, r(64, 9)),
    ("ratio whole number", clos("  oversubscription: 2\n"), lambda s: s.fabric.oversubscription.leaf, r(2, 1)),
    ("ratio lowest terms", clos("  oversubscription: 4:2\n"), lambda s: s.fabric.oversubscription.leaf, r(2, 1)),
    ("ratio leaf flow", clos("  oversubscription: {leaf: 3:1}\n"), lambda s: s.fabric.oversubscription.leaf, r(3, 1)),
    ("ratio spine block", clos("  oversubscription:\n    leaf: 1:1\n    spine: 3:1\n"),
     lambda s: s.fabric.oversubscription.spine, r(3, 1)),
    ("extra fabric ratio", clos(top="fabrics: [{name: storage, switch: sn5600, oversubscription: 2:1}]\n"),
     lambda s: s.fabrics[0].oversubscription.leaf, r(2, 1)),
    ("requirement ratio", clos(top="requirements: {max_oversubscription: {leaf: 1:1, spine: 2}}\n"),
     lambda s: s.requirements.max_oversubscription, {"leaf": r(1, 1), "spine": r(2, 1)}),
    # float fields
    ("float from int", clos(top="collectives: {latency_us: 5}\n"), lambda s: s.collectives.latency_us, 5.0),
    ("float .5", clos(top="collectives: {latency_us: .5}\n"), lambda s: s.collectives.latency_us, 0.5),
    ("float 1e1", clos(top="collectives: {latency_us: 1e1}\n"), lambda s: s.collectives.latency_us, 10.0),
    # sizes
    ("sizes", clos(top="collectives: {message_sizes: [1GiB, 010, 0x100, 140GB]}\n"),
     lambda s: s.collectives.message_sizes, [2**30, 10, 256, 140 * 10**9]),
    # IP pools and ASN text
    ("ip pool", clos(top="addressing: {loopbacks: 10.0.0.0/16, asn: 65000-65100}\n"),
     lambda s: (s.addressing.loopbacks, s.addressing.asn), (IPv4Network("10.0.0.0/16"), "65000-65100")),
    # lists and maps
    ("dims octal-looking", torus("  dims: [010, 0o10, 0x4]\n"), lambda s: s.fabric.dims, [10, 8, 4]),
    ("media map", clos("  media: {server-leaf: mmf, leaf-spine: smf}\n"), lambda s: s.fabric.media,
     {"server-leaf": "mmf", "leaf-spine": "smf"}),
]


@pytest.mark.parametrize("text, get, value", [c[1:] for c in VALID], ids=[c[0] for c in VALID])
def test_field_reads_the_yaml_1_2_value(text, get, value):
    got = get(load_spec_text(text, "spec.yaml").spec)
    assert got == value and type(got) is type(value), got


# (id, spec text, line, fragments of message or hint)
INVALID = [
    # string fields given a number / bool / null
    ("name 010", clos(name="010"), 1, ["name", "010 is read as a number", 'quote it: "010"']),
    ("name 1e3", clos(name="1e3"), 1, ["1e3 is read as a number", 'quote it: "1e3"']),
    ("name true", clos(name="true"), 1, ["true is read as a boolean", 'quote it: "true"']),
    ("name 1_000", clos(name="1_000"), 1, ["'1_000' is not a valid value"]),
    ("description 2024", clos(top="description: 2024\n"), 7, ['quote it: "2024"']),
    ("hall 010", clos(top="layout: {hall: 010, rows: 1, racks_per_row: 4}\n"), 7, ['quote it: "010"']),
    ("asn number", clos(top="addressing: {asn: 65000}\n"), 7, ['quote it: "65000"']),
    # int fields given text, decimals, booleans
    ("servers 1_024", clos(servers="1_024"), 2, ["servers", "'1_024' is not a whole number", "write 1024"]),
    ("servers 1:04", clos(servers="1:04"), 2, ["'1:04' is not a whole number", "base-60"]),  # 1.1: 64
    ("servers quoted", clos(servers='"64"'), 2, ["'64' is text (quoted)", "write 64 without quotes"]),
    ("servers 64.0", clos(servers="64.0"), 2, ["64.0 is not a whole number", "write 64"]),
    ("servers 1e2", clos(servers="1e2"), 2, ["1e2 is not a whole number", "write 100"]),
    ("servers yes", clos(servers="yes"), 2, ["'yes' is not a whole number"]),
    ("servers true", clos(servers="true"), 2, ["true is a boolean, not a whole number"]),
    ("gpus 2:08", clos().replace("servers: 64", "gpus: 2:08"), 2, ["gpus", "'2:08' is not a whole number"]),
    ("scalable_unit 2:0", clos("  scalable_unit: 2:0\n"), 7, ["fabric.scalable_unit", "'2:0' is not a whole number"]),
    ("tiers quoted", clos('  tiers: "2"\n'), 7, ["fabric.tiers", "'auto', 1, 2 or 3"]),
    ("tiers on", clos("  tiers: on\n"), 7, ["fabric.tiers", "'auto', 1, 2 or 3"]),
    ("speed 4_00", clos("  speed_gbps: 4_00\n"), 7, ["fabric.speed_gbps", "write 400"]),
    ("count y", clos(top="extra_endpoints: [{role: ufm, count: y}]\n"), 7, ["extra_endpoints.0.count", "'y'"]),
    ("growth 1_024", clos(top="growth: {max_servers: 1_024}\n"), 7, ["growth.max_servers", "write 1024"]),
    ("dims 1_0", torus("  dims: [4, 4, 1_0]\n"), 6, ["fabric.dims.2", "write 10"]),
    # bool fields given YAML 1.1 booleans (text in 1.2) or numbers
    ("wrap yes", torus("  dims: [4]\n  wrap: [yes]\n"), 7, ["fabric.wrap.0", "'yes' is text, not a boolean",
                                                           "write true or false"]),
    ("wrap off", torus("  dims: [4]\n  wrap: [off]\n"), 7, ["'off' is text", "write true or false"]),
    ("wrap n", torus("  dims: [4]\n  wrap: [n]\n"), 7, ["'n' is text", "write true or false"]),
    ("wrap 1", torus("  dims: [4]\n  wrap: [1]\n"), 7, ["1 is not a boolean", "write true or false"]),
    # ratio fields
    ("ratio decimal", clos("  oversubscription: 1.5\n"), 7, ["fabric.oversubscription", "not as the decimal 1.5",
                                                            'write "3:2"']),
    ("ratio decimal text", clos('  oversubscription: "1.5:1"\n'), 7, ['write "3:2"']),
    ("ratio 1.33", clos("  oversubscription: 1.33\n"), 7, ['"4:3" (the nearest ratio of small whole numbers)']),
    ("ratio zero down", clos("  oversubscription: 0:1\n"), 7, ["ratio 0:1: both sides must be at least 1"]),
    ("ratio zero up", clos("  oversubscription: {leaf: 2:0}\n"), 7, ["fabric.oversubscription.leaf",
                                                                     "ratio 2:0: both sides must be at least 1"]),
    ("ratio zero", clos("  oversubscription: 0\n"), 7, ["both sides must be at least 1"]),
    ("ratio absurd", clos("  oversubscription: 5000:1\n"), 7, ["5000:1", "larger than 1024"]),
    ("ratio yes", clos("  oversubscription: yes\n"), 7, ["expected a ratio like \"2:1\"", "got 'yes'"]),
    ("ratio true", clos("  oversubscription: true\n"), 7, ["expected a ratio like \"2:1\"", "got True"]),
    ("ratio three parts", clos("  oversubscription: 1:30:00\n"), 7, ["got '1:30:00'"]),
    ("requirement ratio decimal", clos(top="requirements: {max_oversubscription: {leaf: 2.5}}\n"), 7,
     ["requirements.max_oversubscription.leaf", 'write "5:2"']),
    # float fields
    ("float 1_0", clos(top="collectives: {latency_us: 1_0}\n"), 7, ["collectives.latency_us", "'1_0' is not a number",
                                                                                  "write 10"]),
    # sizes
    ("size 1_000", clos(top="collectives: {message_sizes: [1_000]}\n"), 7, ["collectives.message_sizes",
                                                                         "expected a size like 140GB"]),
    ("size decimal", clos(top="collectives: {message_sizes: [1e9]}\n"), 7, ["collectives.message_sizes",
                                                                         "write 1GB or 1000000000"]),
    # IP pools
    ("ip pool octal", clos(top="addressing: {loopbacks: 010.0.0.0/16}\n"), 7, ["addressing.loopbacks",
                                                                            "not an IPv4 prefix"]),
    ("ip pool number", clos(top="addressing: {loopbacks: 10}\n"), 7, ["addressing.loopbacks"]),
    # lists
    ("list of yes", clos(top="fabrics: [{name: storage, switch: sn5600, extra_endpoints: [{role: vast, count: 1_0}]}]\n"),
     7, ["fabrics.0.extra_endpoints.0.count", "write 10"]),
]


@pytest.mark.parametrize("text, line, fragments", [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_a_value_wrong_for_its_field_is_a_clear_error(text, line, fragments):
    with pytest.raises(SpecInvalid) as exc:
        load_spec_text(text, "spec.yaml")
    shown = [d.format() for d in exc.value.diagnostics]
    assert len(shown) == 1, shown
    (d,) = exc.value.diagnostics
    assert d.file == "spec.yaml" and d.line == line and d.column >= 1, shown
    assert d.hint, shown
    for fragment in fragments:
        assert fragment in shown[0], (fragment, shown[0])


def test_the_cli_shows_file_line_and_hint_and_exits_2(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(clos(servers="1_024"))
    r = cli_in_process("validate", str(spec))
    assert r.returncode == 2
    assert r.stderr.startswith(f"{spec}:2:10: error: servers: '1_024' is not a whole number"), r.stderr
    assert "hint: write 1024" in r.stderr


# --- user catalogs read the same way ---------------------------------------------------
CATALOG = """switches:
  - id: lab-8port
    vendor: no
    model: on
    part_number: 2024-01-01
    asic: 1:1
    protocol: ethernet
    cages: {cages}
    cage: {{form_factor: OSFP, top: finned, gbps: 800}}
    modes:
      400: {{ports_per_cage: 2, name: "swp{{cage}}s{{lane0}}"}}
    confidence: unconfirmed
    sources: [lab]
"""


def test_a_user_catalog_reads_yaml_1_2(tmp_path):
    path = tmp_path / "cat.yaml"
    path.write_text(CATALOG.format(cages="010"))
    sw = load_catalog(path).switches["lab-8port"]
    assert (sw.vendor, sw.model, sw.part_number, sw.asic) == ("no", "on", "2024-01-01", "1:1")
    assert sw.cages == 10 and sw.radix(400) == 20  # 010 is ten cages, not octal eight
    path.write_text(CATALOG.format(cages="1_0"))
    with pytest.raises(SpecInvalid) as exc:
        load_catalog(path)
    (d,) = exc.value.diagnostics
    assert (d.file, d.line, d.path) == (str(path), 8, "switches.0.cages") and d.hint == "write 10", d.format()


# --- the reported case: unquoted 2:1 compiles the 2:1 fabric --------------------------
RATIO_SPEC = """name: ratio
servers: 64
server: dgx-h100
fabric:
  topology: rail-optimized
  switch: {switch}
  speed_gbps: 400
  oversubscription: {ratio}
"""


@pytest.mark.parametrize("switch", ["sn5600", "qm9700"])
def test_unquoted_ratio_gives_byte_identical_plan_json(tmp_path, switch):
    plans = {}
    for label, ratio in (("quoted", '"2:1"'), ("unquoted", "2:1"), ("whole number", "2")):
        spec = tmp_path / label / "spec.yaml"
        spec.parent.mkdir()
        spec.write_text(RATIO_SPEC.format(switch=switch, ratio=ratio))
        v = cli_in_process("validate", str(spec))
        assert v.returncode == 0 and v.stdout.strip() == f"{spec}: ok", v
        c = cli_in_process("compile", str(spec), "-o", str(tmp_path / label / "out"), "--only", "plan")
        assert c.returncode == 0, c
        plans[label] = (tmp_path / label / "out" / "ratio" / "plan.json").read_bytes()
    assert plans["unquoted"] == plans["quoted"] == plans["whole number"]
    design = json.loads(plans["unquoted"])["design"]
    # 2:1, not 121:1: a leaf's ports split two down for each up.
    assert design["leaf_ports"]["down"] == 2 * design["leaf_ports"]["up"], design["leaf_ports"]
