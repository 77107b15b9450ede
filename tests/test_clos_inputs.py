"""compiler/expand/clos_inputs.py and resolve.size_clos: a Clos is sized from typed inputs
(ClosShape, SizingInputs), so the compute fabric, an extra fabric and a plane of a
multi-plane fabric share the sizing without a spec made up for them."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from compiler.catalog import load_catalog
from compiler.expand.clos_inputs import SU_ONLY, ClosShape, SizingInputs, UpperSwitches
from compiler.expand.planes import plane_shape
from compiler.expand.resolve import size_clos
from compiler.spec.model import Growth, Ratio, Spec

EXPAND = Path(__file__).resolve().parent.parent / "compiler" / "expand"

SPEC = Spec.model_validate({"name": "inputs", "server": "dgx-b200", "servers": 128,
                            "fabric": {"topology": "rail-optimized", "switch": "qm9700", "scalable_unit": 32}})


def _inputs(servers: int, shape: ClosShape) -> SizingInputs:
    catalog = load_catalog()
    server, qm9700 = catalog.servers["dgx-b200"], catalog.switches["qm9700"]
    nics = server.nic_groups["compute"]
    return SizingInputs(shape, server, nics, qm9700, UpperSwitches(qm9700, qm9700, 400), 400, servers)


@pytest.mark.parametrize("sus, leaves, spines, cores", [(2, 16, 8, 0), (4, 32, 16, 0), (8, 64, 32, 0),
                                                        (16, 128, 128, 64)])
def test_superpod_b200_table_from_typed_inputs(sus, leaves, spines, cores):
    # NVIDIA DGX SuperPOD (DGX B200, QM9700) component counts (reference designs.md):
    # SU = 32 nodes, rail-optimized, 1:1; two tiers up to 8 SU, three from 16 SU.
    shape = ClosShape("rail-optimized", "auto", Ratio(down=1, up=1), Ratio(down=1, up=1), 32, None, None, None,
                      ("servers",))
    design = size_clos(_inputs(32 * sus, shape), SPEC, load_catalog(), {})
    s = design.sizing
    assert (s.leaves, s.spines, s.cores) == (leaves, spines, cores)
    assert design.rail_optimized and design.su_size == 32


def test_of_spec_reads_the_fabric_section_and_growth():
    spec = Spec.model_validate({"name": "x", "server": "dgx-b200", "gpus": 1024, "growth": {"max_servers": 256},
                                "fabric": {"topology": "fat-tree", "switch": "qm9700", "tiers": 3,
                                           "oversubscription": {"leaf": "2:1", "spine": "1:1"},
                                           "servers_per_leaf": 4, "core_switch": "qm9700"}})
    shape = ClosShape.of_spec(spec)
    assert (shape.topology, shape.tiers, str(shape.leaf_ratio), shape.servers_per_leaf, shape.core_switch) == \
        ("fat-tree", 3, "2:1", 4, "qm9700")
    assert shape.growth.max_servers == 256 and shape.size_path == ("gpus",) and not shape.rail_optimized


def test_plane_shape_counts_rail_groups():
    # A plane over rail groups of g rails counts g rail groups per server: SU and growth target times g.
    spec = SPEC.model_copy(update={"growth": Growth(max_servers=256)})
    shape = plane_shape(spec, 2)
    assert (shape.topology, shape.scalable_unit, shape.growth.max_servers, shape.unit_keys) == \
        ("rail-optimized", 64, 512, SU_ONLY)


def test_growth_target_is_read_from_the_shape_not_a_spec():
    # The same inputs with a growth target in the shape build the upper tiers for it: 4 SU
    # today, 16 SU at the target (three tiers), whatever the spec carried into the design says.
    shape = ClosShape("rail-optimized", "auto", Ratio(down=1, up=1), Ratio(down=1, up=1), 32, None, None, None,
                      ("servers",))
    grown = dataclasses.replace(shape, growth=Growth(max_servers=512))
    design = size_clos(_inputs(128, grown), SPEC, load_catalog(), {})
    assert design.final_servers == 512 and design.sizing.tiers == 3 and design.sizing.leaves == 32


def test_no_spec_is_made_up_in_expand():
    # Sizing reads typed inputs: no module of compiler/expand/ copies the spec with a new
    # fabric section (or new growth) to reuse the Clos sizing.
    made_up = []
    for path in sorted(EXPAND.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "model_copy"
                    and isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "spec"):
                made_up.append(f"{path.name}:{node.lineno}")
    assert made_up == []
