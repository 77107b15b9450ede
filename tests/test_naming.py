"""compiler/plan/naming.py, the one place that names devices, cables and hostnames: names
follow structure, widths are minimums (an index past them grows the name, never renames
its neighbours), hostname patterns are a checked grammar, and a compiled plan's devices
carry exactly these names. Findings (check/findings.py) serialise field for field."""

from __future__ import annotations

import pytest

from compiler.check.findings import Finding
from compiler.plan import naming

from .conftest import shared_plan


def test_widths_are_minimums_so_growth_renames_nothing():
    assert [naming.server("dgx", i, 1) for i in (1, 999, 1000)] == ["dgx-su1-001", "dgx-su1-999", "dgx-su1-1000"]
    assert naming.server("gpu", 7, None) == "gpu-0007"
    assert naming.leaf(3, None) == "leaf-003" and naming.leaf(3, 2) == "su2-leaf-03"
    assert naming.spine(100, None) == "spine-100" and naming.spine(1, 2) == "pod2-spine-01"
    assert naming.rail_leaf(4, 8) == "su4-leaf-r8"
    assert naming.cable_id("su1-leaf-r1", 33) == "su1-leaf-r1:33"


def test_hostname_patterns_are_a_grammar_not_str_format():
    pieces = naming.parse_hostname_pattern("{prefix}-su{su}-{index:03}")
    assert naming.server_from_pattern(pieces, "gpu", 7, 2, 71) == "gpu-su2-007"
    assert naming.server_from_pattern(naming.parse_hostname_pattern("node{n:4}"), "x", 7, 2, 71) == "node0071"
    for bad, message in (("{prefix.__class__}", "expected text and fields"), ("{host}", "unknown field {host}"),
                         ("Gpu-{n}", "may only hold a-z, 0-9 and '-'"), ("", "expected text and fields")):
        with pytest.raises(naming.PatternError, match=message.replace("{", r"\{").replace("}", r"\}")):
            naming.parse_hostname_pattern(bad)


def test_a_compiled_superpod_names_its_devices_with_these_functions():
    """specs/b200-superpod-4su.yaml: 4 SUs of 32 DGX B200 on rail leaves r1..r8, spines
    numbered across the fabric."""
    plan = shared_plan("b200-superpod-4su")
    for d in plan.devices:
        if d.role == "leaf":
            assert d.name == naming.rail_leaf(d.su, d.rail), d
        elif d.role == "server":
            assert d.name.endswith(f"-su{d.su}-{d.index:03d}"), d
    assert {d.name for d in plan.devices if d.role == "leaf"} == {naming.rail_leaf(su, r) for su in range(1, 5) for r in range(1, 9)}


def test_a_finding_serialises_every_field():
    f = Finding("PORT_REUSED", "error", "port 3 of leaf-001 carries more than one link", "leaf-001:3", "storage")
    assert f.as_dict() == {"code": "PORT_REUSED", "severity": "error", "message": "port 3 of leaf-001 carries more than one link",
                           "where": "leaf-001:3", "fabric": "storage"}
    assert Finding("X", "info", "m").as_dict()["fabric"] == "compute"
