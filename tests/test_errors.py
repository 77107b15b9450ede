"""Every class of bad input: a clear message with file:line, exit 2, no traceback, nothing written."""

from __future__ import annotations

import json

import pytest

from .conftest import cli_in_process as run_cli

GOOD = """name: good
servers: 64
server: dgx-b200
fabric:
  topology: rail-optimized
  switch: qm9700
  oversubscription: "1:1"
  scalable_unit: 32
"""


def _write(tmp_path, text, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


CASES = {
    # name: (spec text, substrings the message must contain)
    "unknown key": (GOOD.replace("  switch:", "  swich:"), ["spec.yaml:6:3", "fabric.swich", "unknown key", "did you mean switch?"]),
    "unknown switch": (GOOD.replace("qm9700", "qm9701"), ["spec.yaml:6:11", "unknown switch 'qm9701'", "qm9700"]),
    "unknown server": (GOOD.replace("dgx-b200", "dgx-b20"), ["spec.yaml:3:9", "unknown server type", "dgx-b200"]),
    "wrong type": (GOOD.replace("servers: 64", "servers: lots"), ["spec.yaml:2:10", "servers", "not a whole number"]),
    "negative": (GOOD.replace("servers: 64", "servers: -4"), ["servers", "at least 1"]),
    "both sizes": (GOOD.replace("servers: 64", "servers: 64\ngpus: 512"), ["exactly one of `servers` or `gpus`"]),
    "gpus not whole servers": (GOOD.replace("servers: 64", "gpus: 1001"), ["gpus", "not a whole number of dgx-b200", "1000 or 1008"]),
    "bad ratio": (GOOD.replace('"1:1"', '"1:x"'), ["spec.yaml:7:21", "expected a ratio"]),
    "unreachable oversubscription": (GOOD.replace('"1:1"', '"41:30"').replace("  scalable_unit: 32\n", ""),
                                     ["oversubscription 41:30 needs at least 71 ports", "has 64"]),
    "oversubscription not whole uplinks": (GOOD.replace('"1:1"', '"5:3"'), ["32 downlinks per leaf at 5:3 would need 19.2 uplinks"]),
    "oversubscription over radix": (GOOD.replace('"1:1"', '"1:3"'), ["32 downlinks + 96 uplinks", "at most 16 downlinks"]),
    "su too large for radix": (GOOD.replace("scalable_unit: 32", "scalable_unit: 40"), ["fabric.scalable_unit", "80 ports at 1:1", "at most 32 downlinks"]),
    "two tiers too small": (GOOD.replace("servers: 64", "servers: 512") + "  tiers: 2\n", ["fabric.tiers", "128 leaves do not fit two tiers", "at most 64 leaves", "2,048 GPUs"]),
    "more than three tiers hold": (GOOD.replace("servers: 64", "servers: 16416"), ["three tiers of qm9700", "at most 2,048 leaves", "65,536 GPUs"]),
    "clos keys on rail-only": (GOOD.replace("rail-optimized", "rail-only"), ["fabric", "not to topology 'rail-only'"]),
    "unknown topology": (GOOD.replace("rail-optimized", "hypercube"), ["unknown topology 'hypercube'"]),
    "speed the switch lacks": (GOOD.replace("qm9700", "q3400"), ["q3400 has no 400G port mode", "800G"]),
    "absurd size": (GOOD.replace("servers: 64", "servers: 999999999999"), ["servers", "at most 1,048,576"]),
    "path separator in name": (GOOD.replace("name: good", "name: ../../etc"), ["spec.yaml:1:7", "'../../etc' is not a valid value"]),
    "newline in name": (GOOD.replace("name: good", 'name: "a\\nhostname evil"'), ["name", "not a valid value"]),
    "quote in name": (GOOD.replace("name: good", "name: \"x'; rm -rf /\""), ["name", "not a valid value"]),
    "endpoint role injection": (GOOD + 'extra_endpoints:\n  - {role: "ufm\\ninterface", count: 1}\n', ["extra_endpoints.0.role", "not a valid value"]),
    "no free ports for endpoints": (GOOD + "extra_endpoints:\n  - {role: ufm, count: 2, ports: 2}\n",
                                    ["spec.yaml:10:5", "extra_endpoints.0", "need 4 ports but only 0 leaf downlinks are free",
                                     "give up 1 server slot", "servers: 63", "attach: spine (0 spare spine ports)",
                                     "attach: management-leaf", "attach: core (no core tier"]),
    "yaml syntax": ("name: x\nfabric: [unclosed\n", ["spec.yaml:3:1", "not valid YAML"]),
    "not a mapping": ("- 1\n- 2\n", ["a spec is a YAML mapping"]),
    "alias bomb": ("a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\n",
                   ["expands to more than 50,000 values"]),
    "python tag": ("name: !!python/object:os.system x\n", ["unsupported YAML tag"]),
    "unknown media": (GOOD + "  media: copper\n", ["fabric.media", "unknown medium 'copper'"]),
    "layout on a torus": ("name: t\nservers: 16\nserver: tpu-v4\nfabric: {topology: torus, dims: [4, 4, 4]}\n"
                          "layout: {rows: 1, racks_per_row: 4}\n", ["layout", "not supported on topology 'torus'"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_a_clear_error(tmp_path, case):
    text, expected = CASES[case]
    spec = _write(tmp_path, text)
    out = tmp_path / "out"
    r = run_cli("compile", str(spec), "-o", str(out))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    for fragment in expected:
        assert fragment in r.stderr, f"{fragment!r} not in:\n{r.stderr}"
    assert not out.exists() or not any(out.iterdir()), "nothing may be written for an invalid spec"


def test_all_errors_reported_at_once(tmp_path):
    text = GOOD.replace("dgx-b200", "dgx-b20").replace("qm9700", "qm970").replace("  scalable_unit", "  scalable_units")
    r = run_cli("validate", str(_write(tmp_path, text)))
    assert r.returncode == 2
    assert "scalable_units" in r.stderr  # schema errors first, all together
    r = run_cli("validate", str(_write(tmp_path, GOOD.replace("dgx-b200", "dgx-b20").replace("qm9700", "qm970"))))
    assert "unknown server type" in r.stderr and "unknown switch" in r.stderr and "2 error(s)" in r.stderr


def test_schema_and_catalog_errors_together(tmp_path):
    text = GOOD.replace("qm9700", "qm9701").replace("  oversubscription", "  oversub")
    r = run_cli("validate", str(_write(tmp_path, text)))
    assert r.returncode == 2
    assert "unknown key 'oversub'" in r.stderr and "unknown switch 'qm9701'" in r.stderr


def test_json_diagnostics(tmp_path):
    r = run_cli("validate", "--format", "json", str(_write(tmp_path, GOOD.replace("qm9700", "qm9701"))))
    assert r.returncode == 2
    data = json.loads(r.stdout)
    assert data["ok"] is False
    d = data["diagnostics"][0]
    assert (d["line"], d["column"], d["path"], d["code"]) == (6, 11, "fabric.switch", "SPEC_UNKNOWN_SWITCH")
    assert "qm9700" in d["hint"]


def test_missing_file_and_usage(tmp_path):
    r = run_cli("compile", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("compile", "--only", "bogus", str(_write(tmp_path, GOOD)))
    assert r.returncode == 2 and "unknown output" in r.stderr


def test_user_catalog_errors_point_into_catalog(tmp_path):
    (tmp_path / "hw.yaml").write_text("switches:\n  - id: x\n    vendor: v\n")
    r = run_cli("validate", str(_write(tmp_path, GOOD + "catalog: hw.yaml\n")))
    assert r.returncode == 2
    assert "hw.yaml:2:" in r.stderr and "switches.0.model" in r.stderr


# What users actually type, and the fix the message must name (each wrong or missing before).
TYPED = {
    "unit in a number": ("  speed_gbps: 400G\n", ["fabric.speed_gbps", "'400G' is text", "Gb/s", "hint: write 400\n"]),
    "unit with a space": ("  speed_gbps: 400 Gb/s\n", ["hint: write 400\n"]),
    "thousands separator": (None, ["servers", "hint: write 1024\n"]),
    "underscore topology": ("", ["unknown topology 'rail_optimized'", "did you mean rail-optimized?"]),
    "upper-case routing": ("requirements: {traffic: [{pattern: all_to_all, routing: ECMP, min_fraction: 0.5}]}\n",
                           ["did you mean all-to-all?", "did you mean ecmp?"]),
    "underscore placement": ("layout: {rows: 2, racks_per_row: 10, leaf_placement: end_of_row}\n", ["did you mean end-of-row?"]),
    "quoted literal number": ('  tiers: "2"\n', ["'2' is text (quoted)", "write 2 without quotes"]),
    "ten million gpus": (None, ["10000000 is more than clusterc accepts", "at most 4,194,304"]),
}


def _typed_spec(case: str, extra: str | None) -> str:
    text = GOOD
    if case == "thousands separator":
        return text.replace("servers: 64", "servers: 1,024")
    if case == "ten million gpus":
        return text.replace("servers: 64", "gpus: 10000000")
    if case == "underscore topology":
        return text.replace("rail-optimized", "rail_optimized")
    if extra.startswith("  "):
        return text + extra
    return text + extra


@pytest.mark.parametrize("case", sorted(TYPED))
def test_what_users_type_gets_the_fix_named(tmp_path, case):
    extra, fragments = TYPED[case]
    r = run_cli("validate", str(_write(tmp_path, _typed_spec(case, extra))))
    assert r.returncode == 2
    assert "Input should be" not in r.stderr, r.stderr  # pydantic's wording never reaches a user
    for fragment in fragments:
        assert fragment in r.stderr, f"{fragment!r} not in:\n{r.stderr}"


def test_every_error_of_a_file_in_one_run_sorted_by_line(tmp_path):
    text = ("name: bad-one\nservers: many\nserver: dgx-b200\nhosts: {hostname: \"x/{index}\"}\nfabric:\n"
            "  topology: rail-optimized\n  switch: qm9701\n  tiers: 4\n  media: mmx\n")
    r = run_cli("validate", str(_write(tmp_path, text)))
    assert r.returncode == 2
    lines = [int(line.split(":")[1]) for line in r.stderr.splitlines() if ": error: " in line]
    assert lines == sorted(lines) and set(lines) == {2, 4, 7, 8, 9}, r.stderr  # hostname and media too, once each
    assert r.stderr.count("unknown medium 'mmx'") == 1
