"""The published spec schema (`clusterc schema`) accepts every example spec and rejects
what the compiler rejects for type reasons, so editors flag the same mistakes."""

from __future__ import annotations

import json

import jsonschema
import pytest

from compiler.yaml12 import load_yaml_file

from .conftest import SPECS, cli_in_process


@pytest.fixture(scope="module")
def schema():
    r = cli_in_process("schema")
    assert r.returncode == 0
    s = json.loads(r.stdout)
    jsonschema.Draft202012Validator.check_schema(s)
    return s


@pytest.mark.parametrize("spec", sorted(SPECS.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_example_spec_matches_the_schema(schema, spec):
    # Read as the compiler (and a YAML 1.2 editor) reads it: an unquoted 2:1 is text.
    jsonschema.validate(load_yaml_file(spec).data, schema)


@pytest.mark.parametrize("ratio", ["2:1", "16:15", 2, {"leaf": "3:1", "spine": 1}])
def test_schema_accepts_every_ratio_form_the_compiler_takes(schema, ratio):
    spec = {"name": "x", "servers": 8, "server": "dgx-h100",
            "fabric": {"topology": "fat-tree", "switch": "qm9700", "oversubscription": ratio}}
    jsonschema.validate(spec, schema)


@pytest.mark.parametrize("bad", [
    {"fabric": {"topology": "fat-tree", "switch": "qm9700", "oversubscription": "one to one"}},
    {"fabric": {"topology": "fat-tree", "switch": "qm9700", "swich": "x"}},
    {"fabric": {"topology": "fat-tree", "switch": "qm9700", "oversubscription": 1.5}},
    {"servers": "lots"},
    {"servers": "1_024"},
    {"name": "../etc"},
])
def test_schema_rejects_what_the_compiler_rejects(schema, bad):
    spec = {"name": "x", "servers": 8, "server": "dgx-h100", "fabric": {"topology": "fat-tree", "switch": "qm9700"}}
    for key, value in bad.items():
        spec[key] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(spec, schema)
