"""Spec generators for the metamorphic tests (tests/test_metamorphic.py).

Specs are plain dicts, written to YAML by `spec_yaml`, so a test controls exactly how a
design is spelled (key order, quoted ratios, defaults written out or left out). The
strategies draw from the real catalog (servers and switches whose NIC speed the switch
runs) and mostly feasible knob combinations; what the compiler refuses must come back
as diagnostics, which the tests check too.
"""

from __future__ import annotations

import copy
import hashlib
import math
import random
from pathlib import Path

import yaml
from hypothesis import strategies as st

from compiler.catalog import load_catalog

CATALOG = load_catalog()
# Servers with a compute NIC group that a Clos can attach (the TPU hosts are direct-torus
# only; the dual-port HPN host is for multi-plane).
CLOS_SERVERS = sorted(s.id for s in CATALOG.servers.values()
                      if "compute" in CATALOG.servers[s.id].nic_groups and s.id != "hpn-8x2x200g")
# Per server: the switch models that run its NIC speed (no 1G management switch in a compute fabric).
SWITCHES_FOR = {s: sorted(w.id for w in CATALOG.switches.values()
                          if CATALOG.servers[s].nic_groups["compute"].speed_gbps in w.modes and w.id != "sn2201")
                for s in CLOS_SERVERS}
RATIOS = ["1:1", "2:1", "3:1", "4:1", "3:2", "5:3", "7:1"]
# Extra fabrics each server's catalog NIC groups can feed, with a switch that runs their speed.
EXTRA_FABRICS = {"storage": "sn5600", "inband": "sn5400", "oob": "sn2201"}


def domain_servers(server: str) -> int:
    """Servers per multi-server scale-up domain (NVL72: 18 trays), else 1."""
    up = CATALOG.servers[server].scale_up
    return max(1, up.domain_gpus // CATALOG.servers[server].gpus) if up and up.kind.startswith("nvlink") else 1


def ratio_text(r: tuple[int, int]) -> str:
    return f"{r[0]}:{r[1]}"


def ratio_of(text: str) -> tuple[int, int]:
    down, up = text.split(":")
    return int(down), int(up)


# --------------------------------------------------------------------------------------
# YAML spelling


def shuffled(value, rng: random.Random):
    """The same document with every mapping's keys in another order (lists keep theirs:
    their order means something)."""
    if isinstance(value, dict):
        keys = list(value)
        rng.shuffle(keys)
        return {k: shuffled(value[k], rng) for k in keys}
    if isinstance(value, list):
        return [shuffled(v, rng) for v in value]
    return value


def spec_yaml(spec: dict, flow: bool = False) -> str:
    """YAML text of a spec dict, keys in dict order; ratios come out quoted ('2:1')."""
    return yaml.safe_dump(spec, sort_keys=False, default_flow_style=flow, width=1000)


def unquote_ratios(text: str) -> str:
    """`oversubscription: '2:1'` -> `oversubscription: 2:1` (what many people type)."""
    import re

    return re.sub(r"'(\d+:\d+)'", r"\1", text)


def write_spec(folder: Path, text: str) -> Path:
    """A spec file named after its content, so equal texts share a file and different
    ones never collide (hypothesis runs many examples in one folder)."""
    path = folder / f"s-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.exists():
        path.write_text(text)
    return path


# --------------------------------------------------------------------------------------
# Strategies


@st.composite
def clos_specs(draw, topology: str | None = None, with_extras: bool = True, tiers=None, servers_from=None,
               switches_from=None) -> dict:
    """A fat-tree or rail-optimized spec over the catalog's servers and switches (or the
    ones given)."""
    server = draw(st.sampled_from(servers_from or CLOS_SERVERS))
    switch = draw(st.sampled_from([w for w in SWITCHES_FOR[server] if switches_from is None or w in switches_from]))
    topology = topology or draw(st.sampled_from(["fat-tree", "rail-optimized"]))
    dom = domain_servers(server)
    servers = dom * draw(st.integers(1, 8)) if dom > 1 else draw(st.integers(1, 160))
    fabric: dict = {"topology": topology, "switch": switch}
    ratio = draw(st.sampled_from(RATIOS))
    if ratio != "1:1" or draw(st.booleans()):
        fabric["oversubscription"] = ratio
    t = tiers if tiers is not None else draw(st.sampled_from(["auto", "auto", "auto", 2, 3]))
    if t != "auto":
        fabric["tiers"] = t
    if topology == "rail-optimized" or draw(st.booleans()):
        if dom > 1:
            fabric["scalable_unit"] = dom * draw(st.integers(1, 2))
        elif draw(st.booleans()):
            fabric["scalable_unit"] = draw(st.sampled_from([4, 8, 16, 20, 32]))
    if topology == "fat-tree" and "scalable_unit" not in fabric and draw(st.integers(0, 3)) == 0:
        fabric["servers_per_leaf"] = draw(st.integers(1, 4))
    sw = CATALOG.switches[switch]
    if sw.protocol == "ethernet" and sw.nos and draw(st.booleans()):
        fabric["nos"] = draw(st.sampled_from(sw.nos))
    spec = {"name": "mm", "servers": servers, "server": server, "fabric": fabric}
    if with_extras:
        groups = CATALOG.servers[server].nic_groups
        extra = [f for f in EXTRA_FABRICS if f in groups and draw(st.integers(0, 4)) == 0]
        if extra:
            spec["fabrics"] = [{"name": f, "switch": EXTRA_FABRICS[f]} for f in extra]
            if extra[0] == "storage" and draw(st.booleans()):
                spec["fabrics"][0]["extra_endpoints"] = [{"role": "vast", "count": draw(st.integers(1, 4)),
                                                         "ports": draw(st.integers(1, 2))}]
        if draw(st.integers(0, 2)) == 0:
            spec["extra_endpoints"] = [{"role": role, "count": draw(st.integers(1, 3)), "ports": draw(st.integers(1, 2))}
                                       for role in draw(st.lists(st.sampled_from(["ufm", "login", "vast"]), min_size=1,
                                                                 max_size=2, unique=True))]
    return spec


@st.composite
def torus_specs(draw) -> dict:
    if draw(st.booleans()):  # direct: the TPUs' own ICI links
        server = draw(st.sampled_from(["tpu-v4", "tpu-v5p"]))
        dims = draw(st.sampled_from([[4, 4, 4], [4, 4, 8], [2, 2, 4], [4, 4], [8, 4]]))
        # the host's 2x2x1 block must tile the dims; two dimensions fold it into the last
        fabric = {"topology": draw(st.sampled_from(["torus", "mesh"])), "dims": dims}
        spec = {"name": "mm", "gpus": math.prod(dims), "server": server, "fabric": fabric}
    else:
        dims = draw(st.sampled_from([[4, 4, 4], [2, 2, 2], [3, 3], [4, 2], [6]]))
        fabric = {"topology": draw(st.sampled_from(["torus", "mesh"])), "switch": "qm9700", "dims": dims}
        nodes = math.prod(dims)
        spec = {"name": "mm", "servers": draw(st.integers(max(1, nodes // 2), nodes)), "server": "dgx-h100",
                "fabric": fabric}
    if draw(st.booleans()):
        fabric["links_per_neighbor"] = draw(st.integers(1, 2))
    return spec


@st.composite
def dragonfly_specs(draw) -> dict:
    topology = draw(st.sampled_from(["dragonfly", "dragonfly+"]))
    server = draw(st.sampled_from(["dgx-h100", "hgx-h100", "dgx-b200"]))
    switch = draw(st.sampled_from(["qm9700", "sn5400"]))
    return {"name": "mm", "servers": draw(st.integers(1, 96)), "server": server,
            "fabric": {"topology": topology, "switch": switch}}


@st.composite
def planes_specs(draw) -> dict:
    if draw(st.booleans()):
        return {"name": "mm", "servers": draw(st.integers(1, 96)), "server": draw(st.sampled_from(["dgx-h100", "hgx-h100"])),
                "fabric": {"topology": "rail-only", "switch": draw(st.sampled_from(["qm9700", "sn5600"]))}}
    seg = draw(st.sampled_from([16, 32, 64]))
    return {"name": "mm", "servers": seg * draw(st.integers(1, 3)), "server": "hpn-8x2x200g",
            "fabric": {"topology": "multi-plane", "switch": "tomahawk5", "speed_gbps": 200, "uplink_speed_gbps": 400,
                       "scalable_unit": seg, "oversubscription": draw(st.sampled_from(["1:1", "2:1", "16:15"]))}}


@st.composite
def direct_specs(draw) -> dict:
    topology = draw(st.sampled_from(["ring", "full-mesh"]))
    n = draw(st.integers(3, 8)) if topology == "ring" else draw(st.integers(2, 8))
    return {"name": "mm", "servers": n, "server": draw(st.sampled_from(["dgx-h100", "dgx-b200", "hgx-h100"])),
            "fabric": {"topology": topology}}


@st.composite
def with_sections(draw, specs) -> dict:
    """A spec, sometimes with the sections every family takes: requirements, collectives, hosts."""
    spec = draw(specs)
    if draw(st.integers(0, 3)) == 0:
        spec["requirements"] = draw(st.sampled_from([{"survive": {"spine": 1}}, {"max_hops": 5},
                                                     {"max_oversubscription": {"leaf": "4:1"}}]))
    if draw(st.integers(0, 3)) == 0:
        spec["collectives"] = {"message_sizes": ["1MiB", "1GiB"]}
    if draw(st.integers(0, 3)) == 0:
        spec["hosts"] = {"nccl_topology": "full"}
    return spec


def any_specs() -> st.SearchStrategy[dict]:
    """Every family, the Clos ones most often (they have the most knobs)."""
    return with_sections(st.one_of(clos_specs(), clos_specs(), clos_specs(), torus_specs(), dragonfly_specs(),
                                   planes_specs(), direct_specs()))


# A physical layout needs heights (and takes power) from the catalog.
LAYOUT_SERVERS = sorted(s for s in CLOS_SERVERS if CATALOG.servers[s].rack_units is not None)
LAYOUT_SWITCHES = sorted(w.id for w in CATALOG.switches.values() if w.rack_units is not None)


@st.composite
def layout_specs(draw) -> dict:
    """A Clos spec the hall can hold, placed by each leaf placement."""
    spec = draw(clos_specs(with_extras=False, servers_from=LAYOUT_SERVERS, switches_from=LAYOUT_SWITCHES))
    if draw(st.booleans()):
        spec["extra_endpoints"] = [{"role": "ufm", "count": draw(st.integers(1, 2)), "ports": 1}]
    return with_layout(spec, draw(st.sampled_from(["end-of-row", "middle-of-row", "top-of-rack", "network-rack"])))


def with_layout(spec: dict, placement: str = "end-of-row") -> dict:
    """The spec placed in a hall large enough for it (rows of 16 racks)."""
    out = copy.deepcopy(spec)
    out["layout"] = {"rows": 40, "racks_per_row": 16, "leaf_placement": placement}
    return out
