"""Lab files (containerlab, NVIDIA Air) run the design's NOS: the switches get the kind and
image of the NOS the spec names (catalog/data/nos.yaml), and no lab is written for a design
that names no NOS. containerlab files follow the rules of its published schema."""

from __future__ import annotations

import re

import pytest
import yaml

from compiler.pipeline import build_plan, write_outputs

from .conftest import SPECS

# What containerlab's own code names each NOS (srl-labs/containerlab 39ff2b7c nodes/*/*.go
# kindNames; FRR as in lab-examples/frr01): copied by hand, not read from the registry.
KINDS = {"sonic": ("sonic-vs", "docker-sonic-vs:latest"), "eos": ("arista_ceos", "ceos:4.32.0F"),
         "cumulus": ("nvidia_cumulusvx", "vrnetlab/nvidia_cumulusvx:5.x"), "frr": ("linux", "quay.io/frrouting/frr:10.5.1")}

# Rules of containerlab's published schema (schemas/clab.schema.json at 39ff2b7c), restated for the
# keys clusterc writes: required name/topology, nodes with a known kind, links of >= 2 unique
# "node:interface" endpoints.
CLAB_RULES = {
    "type": "object", "required": ["name", "topology"], "additionalProperties": False,
    "properties": {
        "name": {"type": "string"},
        "topology": {"type": "object", "required": ["nodes"], "properties": {
            "nodes": {"type": "object", "patternProperties": {".*": {
                "type": "object", "required": ["kind", "image"], "additionalProperties": False, "properties": {
                    "kind": {"enum": ["nokia_srlinux", "ceos", "arista_ceos", "sonic-vs", "linux", "nvidia_cumulusvx", "cvx"]},
                    "image": {"type": "string"}}}}},
            "links": {"type": "array", "minItems": 1, "items": {"type": "object", "properties": {
                "endpoints": {"type": "array", "minItems": 2, "uniqueItems": True,
                              "items": {"type": "string", "pattern": r"^\S+:\S+$"}}}}}}}},
}


@pytest.mark.parametrize("nos", sorted(KINDS))
def test_lab_switches_run_the_designs_nos(tmp_path, nos):
    jsonschema = pytest.importorskip("jsonschema")
    _, plan = build_plan(SPECS / f"roce-2spine-4leaf-{nos}.yaml")
    out = write_outputs(plan, tmp_path, ["interop"])
    doc = yaml.safe_load((out / "containerlab" / f"{plan.name}.clab.yml").read_text())
    jsonschema.validate(doc, CLAB_RULES)
    nodes = doc["topology"]["nodes"]
    kind, image = KINDS[nos]
    switches = {d.name for d in plan.devices if d.tier >= 1}
    assert len(switches) == 6 and len(nodes) == len(plan.devices)
    for name, node in nodes.items():
        assert (node["kind"], node["image"]) == ((kind, image) if name in switches else ("linux", "alpine:latest")), name
    seen = set()
    for link in doc["topology"]["links"]:
        for ep in link["endpoints"]:
            node, ifname = ep.split(":")
            assert node in nodes and re.fullmatch(r"eth[1-9][0-9]*", ifname) and ep not in seen
            seen.add(ep)
    assert len(doc["topology"]["links"]) == len(plan.links)
    # NVIDIA Air has an image of Cumulus only
    air = out / "air/topology.dot"
    assert air.exists() == (nos == "cumulus")
    if nos == "cumulus":
        assert len(re.findall(r'os="cumulus-vx-5.x"', air.read_text())) == 6


def test_no_lab_without_a_nos(tmp_path):
    """A design without fabric.nos has no switch configs, so no lab could boot it; PTM's
    expected cabling (no image) is still written."""
    _, plan = build_plan(SPECS / "h100-roce-2su-hall.yaml")
    assert plan.routing.nos is None
    out = write_outputs(plan, tmp_path, ["interop"])
    assert not (out / "containerlab").exists() and not (out / "air").exists()
    assert (out / "ptm/topology.dot").exists()
