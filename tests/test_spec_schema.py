"""The published spec schema (`clusterc schema`) accepts every example spec and rejects
what the compiler rejects for type reasons, so editors flag the same mistakes."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml

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
    jsonschema.validate(yaml.safe_load(spec.read_text()), schema)


@pytest.mark.parametrize("bad", [
    {"fabric": {"topology": "fat-tree", "switch": "qm9700", "oversubscription": "one to one"}},
    {"fabric": {"topology": "fat-tree", "switch": "qm9700", "swich": "x"}},
    {"servers": "lots"},
    {"name": "../etc"},
])
def test_schema_rejects_what_the_compiler_rejects(schema, bad):
    spec = {"name": "x", "servers": 8, "server": "dgx-h100", "fabric": {"topology": "fat-tree", "switch": "qm9700"}}
    for key, value in bad.items():
        spec[key] = value
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(spec, schema)
