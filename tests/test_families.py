"""A topology family is one registered unit: a descriptor (compiler/topology/) with its
spec keys and traits, its lowering (expand/families.py) and its closed forms and cuts
(check/families/). These tests fail when a family misses a part in some layer, when a
descriptor names a key the spec does not have, or when a stage compares topology names
instead of reading a trait.

Design records are topology/records.py's; every family's injection bandwidth is
check/families/injection.py's."""

from __future__ import annotations

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from compiler.check import families as check_families
from compiler.check import run_checks
from compiler.check.hops import HopsFigures
from compiler.expand import families as expand_families
from compiler.pipeline import build_plan
from compiler.spec.model import FAMILY_KEYS, TOPOLOGIES, Fabric
from compiler.topology import FAMILY_NAMES, TOPOLOGIES as DESCRIPTORS, topologies_where
from compiler.topology.records import NESTED_RECORDS

from .conftest import cli_in_process, shared_checks, shared_plan

ROOT = Path(__file__).resolve().parent.parent


def test_every_family_has_every_layer():
    assert set(expand_families.FAMILIES) == set(FAMILY_NAMES)
    assert set(check_families.FAMILIES) == set(FAMILY_NAMES)
    for name in FAMILY_NAMES:
        lowering, checks = expand_families.FAMILIES[name], check_families.FAMILIES[name]
        assert callable(lowering.resolve) and callable(lowering.build), name
        assert callable(checks.bisection_gbps) and callable(checks.cuts), name


def test_every_family_brings_its_routes_to_the_traffic_analysis():
    """compiler/traffic/routing.py's registry: every family's routes, each with the routings
    it takes, the one collective estimates assume, and a route for a phase."""
    from compiler.traffic.routing import ROUTES

    assert set(ROUTES) == set(FAMILY_NAMES)
    for name, model in ROUTES.items():
        for method in ("available", "reference", "route"):
            assert callable(getattr(model, method)), (name, method)
        assert model.headline_max_gpus > 0, name


def test_spec_values_and_family_keys_come_from_the_descriptors():
    assert TOPOLOGIES == ("fat-tree", "rail-optimized", "torus", "mesh", "dragonfly", "dragonfly+", "rail-only",
                          "multi-plane", "ring", "full-mesh")
    clos, torus, dfly = ("fat-tree", "rail-optimized"), ("torus", "mesh"), ("dragonfly", "dragonfly+")
    # The table spec/model.py spelled out by hand before the descriptors: same keys, same order.
    assert FAMILY_KEYS == {
        "tiers": clos + ("multi-plane",), "oversubscription": clos + ("multi-plane",), "scalable_unit": clos + ("multi-plane",),
        "servers_per_leaf": ("fat-tree",), "spine_switch": clos + ("multi-plane",), "core_switch": clos + ("multi-plane",),
        "planes": ("multi-plane",), "uplink_speed_gbps": clos + ("multi-plane",),
        "dims": torus, "wrap": torus, "twist": torus, "links_per_neighbor": torus,
        "groups": dfly, "switches_per_group": dfly, "endpoints_per_switch": dfly, "global_ports_per_switch": dfly,
        "global_links_per_group_pair": dfly, "intra_group": dfly, "global_arrangement": dfly,
        "spine_leaf_group": ("rail-optimized",),
    }
    assert set(FAMILY_KEYS) <= set(Fabric.model_fields)  # a descriptor cannot own a key the spec lacks


def test_traits():
    assert topologies_where("tree") == ("fat-tree", "rail-optimized")
    assert topologies_where("supports_layout") == topologies_where("supports_growth") == ("fat-tree", "rail-optimized",
                                                                                         "multi-plane")
    assert topologies_where("servers_as_nodes") == ("ring", "full-mesh")
    assert [n for n, t in DESCRIPTORS.items() if not t.rails_meet] == ["rail-only"]
    # The overview layouts of render/diagrams/ (rail-only and multi-plane draw as tiers).
    assert {n: t.diagram for n, t in DESCRIPTORS.items() if t.diagram != "tiers"} == {
        "torus": "grid", "mesh": "grid", "dragonfly": "circle", "dragonfly+": "circle", "ring": "servers",
        "full-mesh": "servers"}


# Files that spell a topology name as a string, and why that is not a stage comparing names.
NAME_ALLOWED = {
    "compiler/topology/__init__.py": "the descriptors",
    "compiler/expand/families.py": "family names (the registry)",
    "compiler/check/families/__init__.py": "family names (the registry)",
    # a family's own code may tell its own topologies apart
    "compiler/expand/resolve.py": "clos", "compiler/expand/clos_inputs.py": "clos",
    "compiler/expand/torus.py": "torus", "compiler/expand/dragonfly.py": "dragonfly",
    "compiler/expand/planes.py": "planes", "compiler/expand/direct.py": "direct",
    "compiler/check/families/direct.py": "direct", "compiler/check/families/dragonfly.py": "intra_group: fat-tree",
    "compiler/catalog/models.py": "scale-up wiring values (torus, full-mesh), not topologies",
    "compiler/expand/scale_up.py": "scale-up wiring values",
    "compiler/check/collectives.py": "'ring' is NCCL's ring algorithm",
    "compiler/traffic/collective_time.py": "'ring' is NCCL's ring algorithm",
    "compiler/traffic/routing.py": "family names (the registry)",
    "compiler/spec/model.py": "intra_group's value fat-tree; an extra fabric's default topology",
    "compiler/expand/extra_fabrics.py": "an extra fabric's one-switch rule (fabrics are another task's rework)",
    "compiler/render/diagrams/grid.py": "a default title word ('torus') when the design has no topology",
}


def test_stages_read_traits_not_topology_names():
    found = set()
    for path in sorted((ROOT / "compiler").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in DESCRIPTORS and rel not in NAME_ALLOWED:
                found.add(f"{rel}:{node.lineno}: {node.value!r}")
    assert not found, "compare traits (compiler/topology/), not names:\n" + "\n".join(sorted(found))


TPU_TORUS = "name: t\ngpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [4, 4, 4]\n"


@pytest.mark.parametrize("text,expected", [
    # Before the traits, a torus or dragonfly took `nos:` and silently wrote no configs.
    (TPU_TORUS + "  nos: sonic\n", ["fabric.nos", "switch configs (fabric.nos) are not generated for topology 'torus'"]),
    # Every refused section at once, with the family's own problems (collected, not first-only).
    ("name: r\nservers: 2\nserver: dgx-h100\nfabric:\n  topology: ring\n  nos: sonic\nlayout: {rows: 1, racks_per_row: 2}\n"
     "extra_endpoints: [{role: vast, count: 2, ports: 1}]\n",
     ["layout", "use a fat-tree or rail-optimized or multi-plane fabric", "extra_endpoints", "no switch OS to configure",
      "a ring needs 3 or more servers"]),
])
def test_unsupported_sections_are_refused_by_trait(tmp_path, text, expected):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    r = cli_in_process("validate", str(path))
    assert r.returncode == 2, r.stdout
    for part in expected:
        assert part in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


SPEC_OF = {  # one example spec per topology (mesh: a TPU mesh written here)
    "fat-tree": "lab-3tier-frr.yaml", "rail-optimized": "h100-superpod-1su-multi-fabric.yaml",
    "torus": "torus-switched-512.yaml", "dragonfly": "dragonfly-2k.yaml", "dragonfly+": "dragonfly-plus-2k.yaml",
    "rail-only": "rail-only-h100-64.yaml", "multi-plane": "alibaba-hpn-pod.yaml", "ring": "dgx-h100-6node-ring.yaml",
    "full-mesh": "dgx-h100-4node-mesh.yaml",
}
# Keys of the design dict that other stages own (plan/fabrics.py), not the family's record.
NOT_IN_RECORD = {"fabrics", "fabric"}


@pytest.mark.parametrize("topology", list(DESCRIPTORS))
def test_design_record_types_every_key_the_builder_writes(tmp_path, topology):
    if topology == "mesh":
        path = tmp_path / "mesh.yaml"
        path.write_text("name: m\ngpus: 32\nserver: tpu-v4\nfabric:\n  topology: mesh\n  dims: [4, 8]\n")
    else:
        path = ROOT / "specs" / SPEC_OF[topology]
    plan = build_plan(path)[1]
    assert plan.design["topology"] == topology
    record = plan.design_record
    assert type(record) is DESCRIPTORS[topology].record
    assert set(plan.design) - NOT_IN_RECORD <= {f.name for f in fields(record)}
    # Every key the builder wrote reads back unchanged as an attribute (a nested record as
    # that record: a tier's port split, the hosts, the unit fill).
    for key, value in plan.design.items():
        if key not in NOT_IN_RECORD:
            nested = NESTED_RECORDS.get(key)
            assert getattr(record, key) == (value if nested is None else nested(value)), key


HOPS_CASES = [
    # (spec text, expected closed form): every GPU pair's longest path, counted by hand.
    *[(f"name: t\nservers: {n}\nserver: dgx-h100\nfabric:\n  topology: ring\n", n // 2) for n in (3, 4, 5, 7, 8)],
    *[(f"name: t\nservers: {n}\nserver: dgx-h100\nfabric:\n  topology: full-mesh\n", 1) for n in (2, 5)],
    # TPU v4: 4 chips per host along x; a torus's diameter is sum of floor(k/2), a mesh's sum of k - 1.
    ("name: t\ngpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [4, 4, 4]\n", 6),
    ("name: t\ngpus: 32\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [8, 4]\n", 6),
    ("name: t\ngpus: 32\nserver: tpu-v4\nfabric:\n  topology: mesh\n  dims: [4, 8]\n", 10),
    ("name: t\ngpus: 64\nserver: tpu-v4\nfabric:\n  topology: torus\n  dims: [4, 4, 4]\n  wrap: [true, false, true]\n", 7),
]


@pytest.mark.parametrize("text,closed", HOPS_CASES)
def test_hops_closed_form_matches_bfs(tmp_path, text, closed):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    plan = build_plan(path)[1]
    assert check_families.family_of(plan).max_hops(plan, 2) == closed
    results = run_checks(plan)
    assert results.of(HopsFigures).max == closed
    assert "HOPS_METHODS_DISAGREE" not in {f.code for f in results.findings}


@pytest.mark.parametrize("spec,closed", [("lab-3tier-frr.yaml", 5), ("roce-2spine-4leaf-frr.yaml", 3),
                                         ("b200-superpod-16su.yaml", 5), ("h100-superpod-1su.yaml", 3)])
def test_clos_hops_closed_form_matches_bfs(spec, closed):
    plan = shared_plan(ROOT / "specs" / spec)
    assert check_families.family_of(plan).max_hops(plan, 2) == closed
    assert shared_checks(plan).of(HopsFigures).max == closed


def test_hops_disagreement_is_a_warning(tmp_path):
    # A ring with its closing cable(s) removed is a path: BFS finds n - 1, the closed form n/2.
    path = tmp_path / "spec.yaml"
    path.write_text("name: t\nservers: 6\nserver: dgx-h100\nfabric:\n  topology: ring\n")
    plan = build_plan(path)[1]
    a, b = plan.links.a_dev, plan.links.b_dev
    keep = ~(((a == 0) & (b == 5)) | ((a == 5) & (b == 0)))
    assert (~keep).any()
    plan.links = type(plan.links)(*(getattr(plan.links, f)[keep] for f in
                                    ("a_dev", "a_port", "b_dev", "b_port", "kind", "media", "speed_gbps")))
    results = run_checks(plan)
    assert results.of(HopsFigures).max == 5
    assert "HOPS_METHODS_DISAGREE" in {f.code for f in results.findings}
