"""The spec: what a network architect writes. Keys here are a contract."""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal

from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, WithJsonSchema, field_validator,
                      model_validator)
from pydantic_core import PydanticCustomError

from ..catalog.nos import nos_ids, unknown_nos_hint
from ..diagnostics import nearest
from ..topology import TOPOLOGIES as TOPOLOGY_DESCRIPTORS
from ..topology import family_keys
from .ratio import MAX_RATIO_TERM, Ratio, parse_ratio

# Limits that stop absurd specs before anything is allocated. A million GPUs is the
# design target; four million leaves headroom while still failing fast on typos.
MAX_GPUS = 4_194_304
MAX_SERVERS = 1_048_576

# Names become folder names, hostnames and config identifiers: no path separators,
# quotes, whitespace or newlines can get through this.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
Role = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,15}$")]
CatalogId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]


def _known_nos(value):
    if not isinstance(value, str) or value not in nos_ids():
        # ctx "hint" becomes the diagnostic's hint (spec/load.py)
        raise PydanticCustomError("unknown_nos", "unknown NOS {nos}", {"nos": repr(value), "hint": unknown_nos_hint(str(value))})
    return value


class _NosEnum:
    """The JSON Schema of a NOS id: the registry's ids (catalog/data/nos.yaml) as an enum,
    read when a schema is made, like the validator reads them when a spec is checked."""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema, handler) -> dict:
        return {"enum": list(nos_ids()), "type": "string"}


# A NOS the compiler writes switch configs for: the allowed values and the hint for a
# wrong one come from the NOS registry, not from a list here.
NosId = Annotated[str, BeforeValidator(_known_nos), _NosEnum]


# The topology values, their families and the keys each owns: compiler/topology/.
TOPOLOGIES = tuple(TOPOLOGY_DESCRIPTORS)
# Known to the roadmap but not built yet: a clear error rather than "unknown".
PLANNED_TOPOLOGIES: tuple[str, ...] = ()
# Extra fabrics (fabrics[].topology) are built by the Clos family only.
CLOS_TOPOLOGIES = tuple(name for name, t in TOPOLOGY_DESCRIPTORS.items() if t.family == "clos")
# Keys that only mean something for some topologies: given for another, they are an error.
FAMILY_KEYS = family_keys()


class _Strict(BaseModel):
    # strict: a value must already be of its field's type as YAML 1.2 reads it. Lax
    # pydantic would turn `servers: 1_024` (text in YAML 1.2) into 1024, `true` into 1,
    # 1024.0 into 1024 and "yes" into True: silent guesses, not a language.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# Ratio fields: "2:1" (quoted or not), or a whole number N meaning N:1 (spec/ratio.py).
RatioValue = Annotated[Ratio, BeforeValidator(parse_ratio)]


class Oversubscription(_Strict):
    leaf: RatioValue = Ratio(down=1, up=1)
    spine: RatioValue = Ratio(down=1, up=1)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value):
        if isinstance(value, (dict, Oversubscription)):
            return value
        return {"leaf": value}  # one ratio: the leaf's


class Twist(_Strict):
    """Twisted torus: the wrap-around links of dimension `dims[0]` land `offset` positions
    further along dimension `dims[1]` (0-based dimension numbers)."""

    dims: Annotated[tuple[int, int], BeforeValidator(lambda v: tuple(v) if isinstance(v, list) else v)]  # YAML has lists
    offset: int = Field(ge=1, le=4096)


# What editors see: ratios are written as text ("2:1", or 2:1 unquoted: YAML 1.2 text)
# or a whole number N (N:1), sizes as "1GiB"; the models parse them, so the published
# schema says so rather than showing the parsed form.
_RATIO_SCHEMA = {"anyOf": [{"type": "string", "pattern": r"^\s*\d{1,4}\s*:\s*\d{1,4}\s*$", "examples": ["1:1", "2:1"]},
                           {"type": "integer", "minimum": 1, "maximum": MAX_RATIO_TERM}]}
_OVERSUB_SCHEMA = WithJsonSchema({"anyOf": [_RATIO_SCHEMA, {"type": "object", "additionalProperties": False,
                                                             "properties": {"leaf": _RATIO_SCHEMA, "spine": _RATIO_SCHEMA}}]})
_RATIO_MAP_SCHEMA = WithJsonSchema({"type": "object", "additionalProperties": False,
                                    "properties": {"leaf": _RATIO_SCHEMA, "spine": _RATIO_SCHEMA}})
_SIZES_SCHEMA = WithJsonSchema({"type": "array", "maxItems": 16, "items": {"anyOf": [
    {"type": "integer", "minimum": 1}, {"type": "string", "pattern": r"^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$"}]}})


class SpineLeafGroup(_Strict):
    """NVIDIA's SuperPOD build (the RA's SLG / CG): a spine-leaf group is one rail's leaves
    across `scalable_units` units and `spines` spines, every leaf joined to every spine; the
    spines at one position of every group form a core group, whose cores join them."""

    scalable_units: int = Field(ge=1, le=4096, description="units whose leaves of one rail form a group, e.g. 8 racks")
    spines: int = Field(ge=1, le=4096, description="spines of a group; they divide a leaf's uplinks evenly")
    cores_per_group: int | None = Field(
        None, ge=1, le=4096, description="cores of a core group; default: the fewest that take every spine uplink evenly")


class Fabric(_Strict):
    topology: str = Field(description=" | ".join(f"{t.name} ({t.note})" if t.note else t.name
                                                 for t in TOPOLOGY_DESCRIPTORS.values()))
    switch: CatalogId | None = Field(
        None, description="catalog id of the switch model (required except for a direct torus/mesh of accelerators; none for ring / full-mesh)")
    tiers: Literal["auto", 1, 2, 3] = Field(
        "auto", description="1 (one switch holds every server port), 2, 3 or auto (the fewest tiers that fit: one "
                            "switch when it holds every port and no unit or growth asks for more)")
    oversubscription: Annotated[Oversubscription, _OVERSUB_SCHEMA] = Field(
        default_factory=Oversubscription,
        description='leaf downlink:uplink bandwidth ("1:1"), or {leaf: "2:1", spine: "1:1"}',
    )
    scalable_unit: int | None = Field(
        None, ge=1, le=4096,
        description="servers per scalable unit (SU); rail-optimized: NIC i of every server in an SU goes to leaf i",
    )
    servers_per_leaf: int | None = Field(
        None, ge=1, le=4096,
        description="fat-tree: servers that share one leaf (ToR), e.g. 2; default: as many as the leaf's downlinks at "
                    "the leaf oversubscription hold. Uplinks follow the ratio; the leaf's other ports stay spare",
    )
    spine_leaf_group: SpineLeafGroup | None = Field(
        None, description="rail-optimized, three tiers as NVIDIA's SuperPOD RA builds them: {scalable_units: 8, spines: 6} "
                          "groups one rail's leaves of 8 units with 6 spines (an SLG), and the spines at one position of "
                          "every group with their cores (a CG). Default: none (the cheapest Clos)")
    spine_switch: CatalogId | None = Field(
        None, description="Clos: catalog id of the spine switch model (e.g. a modular chassis); default: `switch`")
    core_switch: CatalogId | None = Field(
        None, description="Clos, three tiers: catalog id of the core switch model; default: `spine_switch`")
    speed_gbps: int | None = Field(None, gt=0, description="link speed; default: the server's NIC speed")
    media: str | dict[str, str] | None = Field(
        None, description="mmf | smf, or per link kind {server-leaf: mmf, leaf-spine: smf}; default: multimode where the catalog has it",
    )
    nos: NosId | None = Field(
        None, description="Ethernet only: the switch operating system to write configs for (the switch model must run it)",
    )

    # --- torus / mesh (k-ary n-cube) ---------------------------------------------------
    dims: list[Annotated[int, Field(ge=1, le=4096)]] | None = Field(
        None, min_length=1, max_length=3, description="torus/mesh: size of each dimension, e.g. [16, 16, 16]")
    wrap: list[bool] | None = Field(
        None, min_length=1, max_length=3,
        description="torus/mesh: per dimension, true = wrap-around (torus), false = open (mesh); default all true for torus, all false for mesh")
    twist: Twist | None = Field(None, description="torus: twisted wrap-around for one dimension pair")
    links_per_neighbor: int = Field(1, ge=1, le=16, description="torus/mesh: parallel links to each neighbour")
    # --- dragonfly / dragonfly+ ---------------------------------------------------------
    groups: int | None = Field(None, ge=1, le=65_536, description="dragonfly: number of groups (default: the fewest that hold the endpoints)")
    switches_per_group: int | None = Field(None, ge=1, le=4096, description="dragonfly: a, switches per group")
    endpoints_per_switch: int | None = Field(None, ge=1, le=4096, description="dragonfly: p, endpoint ports per switch")
    global_ports_per_switch: int | None = Field(None, ge=1, le=4096, description="dragonfly: h, global ports per switch")
    global_links_per_group_pair: int | None = Field(None, ge=1, le=4096, description="dragonfly: parallel global links between two groups")
    global_arrangement: Literal["circulant", "relative", "absolute"] = Field(
        "circulant", description="dragonfly: which group each global port reaches (Hastings et al., CLUSTER 2015): "
                                 "circulant (ports in pairs to groups x+k and x-k; the default, the best measured here "
                                 "over shift, all-to-all and permutation patterns), relative (port t of group x to "
                                 "group x+t+1 mod g) or absolute (to the groups in order, skipping itself)")
    intra_group: Literal["all-to-all", "fat-tree"] | None = Field(
        None, description="dragonfly: switches of a group fully connected (dragonfly) or leaf/spine (dragonfly+)")
    # --- multi-plane (dual-homed NICs, planes that never meet; Alibaba HPN) --------------
    planes: int | None = Field(None, ge=1, le=8, description="multi-plane: planes (default and only value: ports per NIC)")
    uplink_speed_gbps: int | None = Field(
        None, gt=0, description="fat-tree / rail-optimized: leaf-spine and spine-core link speed, at or above "
                                "speed_gbps, e.g. 800 over 400G server links on an SN5600 (Spectrum-X); "
                                "multi-plane: ToR-aggregation link speed. Default: speed_gbps")

    @model_validator(mode="after")
    def _family_keys(self):
        if self.topology not in TOPOLOGY_DESCRIPTORS:
            return self
        for key in sorted(self.model_fields_set):
            families = FAMILY_KEYS.get(key)
            if families and self.topology not in families:
                raise ValueError(f"key '{key}' applies to {' / '.join(families)}, not to topology '{self.topology}'")
        t = TOPOLOGY_DESCRIPTORS[self.topology]
        if t.switch == "none" and self.switch is not None:
            raise ValueError(f"topology '{self.topology}' cables the servers to each other and has no switch; remove "
                             f"`switch: {self.switch}`, or use rail-only / fat-tree to go through switches")
        if t.switch == "required" and self.switch is None:
            raise ValueError(f"topology '{self.topology}' needs `switch:` (a catalog switch id)")
        if t.needs_dims and self.dims is None:
            raise ValueError(f"topology '{self.topology}' needs `dims:`, e.g. [16, 16, 16]")
        return self

    @field_validator("topology")
    @classmethod
    def _known_topology(cls, value: str) -> str:
        known = tuple(TOPOLOGY_DESCRIPTORS)  # the registry as it stands (a test may register one)
        if value in known:
            return value
        if value in PLANNED_TOPOLOGIES:
            raise ValueError(f"topology '{value}' is not supported yet; supported: {', '.join(known)}")
        # "rail_optimized", "Fat-Tree": the spelling differs, the meaning does not; say which one
        close = nearest(str(value).lower().replace("_", "-").replace(" ", "-"), known)
        hint = close if close.startswith("did you mean") else f"supported: {', '.join(known)}"
        raise PydanticCustomError("unknown_topology", "unknown topology {value}", {"value": repr(value), "hint": hint})


class ExtraFabric(_Strict):
    """A fabric besides the compute one (storage, in-band or out-of-band management), fed
    by one of the server's catalog NIC groups and built as a Clos of its own switches."""

    name: Role = Field(description="storage | inband | oob | another short name ([a-z][a-z0-9]{0,15}); prefixes its switches and link kinds")
    nic_group: Role | None = Field(None, description="the server's catalog NIC group that feeds this fabric (default: name)")
    topology: str = Field("fat-tree", description="fat-tree | rail-optimized (Clos families only)")
    switch: CatalogId = Field(description="catalog id of the switch model")
    spine_switch: CatalogId | None = Field(
        None, description="catalog id of the spine switch model (default: `switch`); for the management network (oob), "
                          "a switch with ports at the leaves' uplink speed (100G for an SN2201 leaf) when more leaves "
                          "are needed than a spine of the leaf model takes")
    homing: Literal["dual", "single"] = Field(
        "dual", description="dual: each NIC of a server's group on a different leaf (so on different cages), as NVIDIA's "
                            "storage and in-band fabrics are cabled, so one lost leaf or transceiver leaves every server "
                            "reachable; single: all of a server's NICs of the group on one leaf (a group of one NIC is "
                            "single-homed either way)")
    tiers: Literal["auto", 1, 2, 3] = Field(
        "auto", description="1 (one switch, its uplinks to the site network outside the plan), 2, 3 or auto: "
                            "one switch when it holds every server port of the fabric, else the fewest tiers that fit")
    oversubscription: Annotated[Oversubscription, _OVERSUB_SCHEMA] = Field(
        default_factory=Oversubscription, description='leaf downlink:uplink bandwidth ("1:1"), or {leaf: "2:1", spine: "1:1"}')
    scalable_unit: int | None = Field(None, ge=1, le=4096, description="servers per scalable unit (SU)")
    speed_gbps: int | None = Field(None, gt=0, description="link speed; default: the NIC group's speed")
    media: str | dict[str, str] | None = Field(None, description="medium, or per link kind {server-leaf: mmf, leaf-spine: smf}")
    extra_endpoints: list[ExtraEndpoint] = Field(
        default_factory=list, max_length=64,
        description="devices on this fabric only, e.g. storage targets: [{role: vast, count: 8, ports: 2}]; "
                    "named <fabric>-<role>-NN, on free leaf downlinks")
    nos: NosId | None = Field(
        None, description="Ethernet only: the switch operating system to write this fabric's configs for (the switch model must run it)")
    addressing: Addressing = Field(
        default_factory=lambda: Addressing.model_validate(extra_fabric_pools(0)),
        description="Ethernet: this fabric's pools, peering and ASN plan. Pools not given default to the k-th extra "
                    "fabric's share of 10.192.0.0/10 (a /13 each, apart from the compute defaults): server_links "
                    "10.x.0.0/14, fabric_links /15, loopbacks /16, management /16, x = 192 + 8(k-1)")

    @field_validator("extra_endpoints")
    @classmethod
    def _unique_roles(cls, value):
        return unique_endpoint_roles(value)

    @field_validator("topology")
    @classmethod
    def _clos_topology(cls, value: str) -> str:
        if value in CLOS_TOPOLOGIES:
            return value
        close = nearest(str(value).lower().replace("_", "-").replace(" ", "-"), CLOS_TOPOLOGIES)
        hint = close if close.startswith("did you mean") else f"use one of: {', '.join(CLOS_TOPOLOGIES)}"
        raise PydanticCustomError("unknown_topology", "topology {value} is not supported for an extra fabric (Clos only)",
                                  {"value": repr(value), "hint": hint})


def extra_fabric_pools(i: int) -> dict[str, IPv4Network]:
    """Default pools of the i-th (0-based) extra fabric: 10.192.0.0/10, which the compute
    defaults leave free, split into eight /13s (one per extra fabric, `fabrics:` holds at
    most 8); each /13 is server_links /14, fabric_links /15, loopbacks /16, management /16."""
    base = int(IPv4Network("10.192.0.0/10").network_address) + i * (1 << 19)
    return {"server_links": IPv4Network((base, 14)), "fabric_links": IPv4Network((base + (1 << 18), 15)),
            "loopbacks": IPv4Network((base + 3 * (1 << 17), 16)), "management": IPv4Network((base + 7 * (1 << 16), 16))}


def _ipv4_network(value):
    hint = "an IPv4 prefix: address/length, like 10.0.0.0/16"
    if isinstance(value, str):
        try:
            return IPv4Network(value.strip())
        except ValueError as exc:  # says why: "has host bits set", "not a valid netmask"
            raise PydanticCustomError("ip_prefix", f"{value!r} is not an IPv4 prefix like 10.0.0.0/16: {exc}",
                                      {"hint": hint}) from None
    if isinstance(value, IPv4Network):
        return value
    raise PydanticCustomError("ip_prefix", f"expected an IPv4 prefix like 10.0.0.0/16, got {value!r}", {"hint": hint})


Pool = Annotated[IPv4Network, BeforeValidator(_ipv4_network)]


def _ipv4_address(value):
    hint = "an IPv4 address, like 192.0.2.1"
    if isinstance(value, str):
        try:
            return IPv4Address(value.strip())
        except ValueError:
            raise PydanticCustomError("ip_address", f"{value!r} is not an IPv4 address", {"hint": hint}) from None
    if isinstance(value, IPv4Address):
        return value
    raise PydanticCustomError("ip_address", f"expected an IPv4 address like 192.0.2.1, got {value!r}", {"hint": hint})


Address = Annotated[IPv4Address, BeforeValidator(_ipv4_address), WithJsonSchema({"type": "string", "format": "ipv4"})]
ASN_RANGES = {"2-byte": (64512, 65534), "4-byte": (4200000000, 4294967294)}  # RFC 6996 private ranges
_ASN_RANGE = re.compile(r"^\s*(\d{1,10})\s*-\s*(\d{1,10})\s*$")


class Addressing(_Strict):
    """Ethernet fabrics: the pools addresses and ASNs are drawn from (RFC 7938 eBGP Clos)."""

    loopbacks: Pool = Field(IPv4Network("10.0.0.0/16"), description="switch loopbacks (/32 each; router ids)")
    fabric_links: Pool = Field(IPv4Network("10.128.0.0/10"), description="switch-to-switch point-to-point /31s")
    server_links: Pool = Field(IPv4Network("10.64.0.0/10"), description="server-facing /31s (one per server NIC port)")
    management: Pool = Field(IPv4Network("172.16.0.0/12"), description="out-of-band management addresses")
    peering: Literal["numbered", "unnumbered"] = Field(
        "numbered", description="switch-to-switch BGP over /31s, or BGP unnumbered (IPv6 link-local, RFC 5549)")
    asn: str = Field("auto", description='auto (2-byte private while it lasts, else 4-byte), 2-byte, 4-byte, or "FIRST-LAST"')

    @field_validator("asn")
    @classmethod
    def _asn_range(cls, value: str) -> str:
        if value in ("auto", *ASN_RANGES):
            return value
        m = _ASN_RANGE.match(value)
        if not m or not 1 <= int(m.group(1)) <= int(m.group(2)) <= 4294967294:
            raise ValueError(f"expected auto, 2-byte, 4-byte or a range like \"65000-65100\" within 1-4294967294, got {value!r}")
        return value

    def asn_range(self, needed: int) -> tuple[int, int]:
        if self.asn == "auto":
            first, last = ASN_RANGES["2-byte"]
            return (first, last) if needed <= last - first + 1 else ASN_RANGES["4-byte"]
        if self.asn in ASN_RANGES:
            return ASN_RANGES[self.asn]
        m = _ASN_RANGE.match(self.asn)
        assert m is not None  # the field's validator accepted only a known name or this form
        first, last = (int(x) for x in m.groups())
        return first, last

    def pools(self) -> dict[str, IPv4Network]:
        return {"loopbacks": self.loopbacks, "fabric_links": self.fabric_links,
                "server_links": self.server_links, "management": self.management}

    @model_validator(mode="after")
    def _no_overlap(self):
        pools = list(self.pools().items())
        for i, (a, net_a) in enumerate(pools):
            for b, net_b in pools[i + 1:]:
                if net_a.overlaps(net_b):
                    raise ValueError(f"pools {a} ({net_a}) and {b} ({net_b}) overlap; give each its own range")
        return self


def unique_endpoint_roles(value: list) -> list:
    """Endpoint roles name devices and cable kinds: not a fabric role, not twice."""
    roles = [e.role for e in value]
    reserved = {"server", "leaf", "spine", "core", "router", "chip"}
    for r in roles:
        if r in reserved:
            raise ValueError(f"role '{r}' is reserved for fabric devices")
    dupes = sorted({r for r in roles if roles.count(r) > 1})
    if dupes:
        raise ValueError(f"role {dupes[0]!r} given twice; merge the entries")
    return value


ATTACH = Literal["leaf", "spine", "core", "management-leaf"]


class ExtraEndpoint(_Strict):
    """Non-GPU devices on the same fabric: fabric managers, storage or service nodes."""

    role: Role = Field(description="e.g. ufm, storage, login; becomes the device role and cable kind")
    count: int = Field(ge=1, le=65_536)
    ports: int = Field(1, ge=1, le=64, description="fabric ports per device")
    speed_gbps: int | None = Field(None, gt=0, description="default: the fabric's link speed")
    form_factor: Literal["OSFP", "QSFP112"] = "OSFP"
    attach: ATTACH = Field(
        "leaf", description="where the ports go (expand/endpoints.py): leaf (default; free leaf downlinks, as NVIDIA's "
                            "SuperPOD puts UFM in a server slot; the default SU leaves room), spine or core (spare ports "
                            "of that tier), management-leaf (leaves of their own, each linked once to every spine)")


ExtraFabric.model_rebuild()  # its extra_endpoints refer to ExtraEndpoint, defined above


class Survive(_Strict):
    """Failures the design must survive: every server stays connected and the worst-cut
    bisection stays at or above `min_bisection_fraction` of the intact design. One key per
    switch role some topology builds (compiler/topology/ switch_roles); a role the design
    does not have is a spec error (expand/requirements.py)."""

    leaf: int = Field(0, ge=0, le=64)
    spine: int = Field(0, ge=0, le=64)
    core: int = Field(0, ge=0, le=64)
    router: int = Field(0, ge=0, le=64, description="dragonfly and switched-torus routers")
    link: int = Field(0, ge=0, le=64, description="fabric links (switch-switch, chip-chip, server-server), placed where they "
                                                   "hurt most: all links of one device or of one bundle when the count allows")
    link_kind: str | None = Field(None, max_length=32, description="only links of this kind, e.g. global (dragonfly), "
                                                                    "leaf-spine; default: any")
    min_bisection_fraction: float = Field(0.5, gt=0, le=1)


TRAFFIC_PATTERNS = ("ring-allreduce", "hierarchical", "all-to-all", "permutation", "shift")


class TrafficRequirement(_Strict):
    """A floor on what a traffic pattern gets under a routing, as `clusterc traffic` measures it."""

    pattern: str = Field(pattern=r"^(ring-allreduce|hierarchical|all-to-all|permutation|shift(:([1-9][0-9]*|switch|group))?)$",
                         description="ring-allreduce, hierarchical, all-to-all, permutation, shift[:K|:switch|:group]")
    routing: Literal["ecmp", "adaptive", "ftree", "minimal", "valiant", "ugal"]
    min_fraction: float = Field(gt=0, le=1, description="of NIC line rate")
    measure: Literal["mean", "slowest"] = Field("mean", description="mean over connections, or the slowest (paces the collective)")
    fail: str | None = Field(None, max_length=200, description="measured after this failure (clusterc traffic --fail), e.g. spine:1")


class Availability(_Strict):
    """An availability objective over the states of a normal day of failures (component
    classes down independently at their steady-state unavailability): in at least `share`
    of them the worst-cut bisection is at least `min_bisection_fraction` of the intact
    design's. Judged by `clusterc resilience` (sampled), not by `clusterc check`."""

    min_bisection_fraction: float = Field(0.9, gt=0, le=1)
    share: float = Field(0.99, gt=0, le=1, description="the share of failure states that must meet the fraction")


class Requirements(_Strict):
    """What must hold; `clusterc check` exits 1 when any is violated."""

    min_bisection_gbps: int | None = Field(None, ge=1, description="worst-cut bisection, one direction, Gb/s")
    max_oversubscription: Annotated[dict[Literal["leaf", "spine"], RatioValue], _RATIO_MAP_SCHEMA] | None = Field(
        None, description='per tier, measured down:up bandwidth, e.g. {leaf: "1:1"}')
    survive: Survive | None = None
    availability: Availability | None = Field(None, description="judged by `clusterc resilience`")
    max_hops: int | None = Field(None, ge=1, le=64, description="switches on the longest GPU-to-GPU path")
    traffic: list[TrafficRequirement] | None = Field(None, max_length=32, description="TRAFFIC_BELOW_REQUIREMENT")
    nos: list[NosId] | None = Field(
        None, min_length=1, max_length=16,
        description="allowed switch operating systems: an Ethernet fabric's nos must be one of them; without one, each of "
                    "its switch models must run one (catalog `nos:`); an InfiniBand switch runs none (NOS_NOT_ALLOWED)")
    switch_models: list[CatalogId] | None = Field(
        None, min_length=1, max_length=64,
        description="allowed switch models (catalog ids), on every tier of every fabric (SWITCH_MODEL_NOT_ALLOWED)")
    rack_power_kw: float | None = Field(
        None, gt=0, le=1000,
        description="the most a rack may draw, kW: its devices at catalog power plus switch-side optics; needs `layout:`. "
                    "A rack holding parts without a published power is reported as unknown, not passed (RACK_POWER_ABOVE_LIMIT)")

    @field_validator("nos", "switch_models")
    @classmethod
    def _listed_once(cls, value):
        if value is not None and len(set(value)) != len(value):
            twice = sorted({v for v in value if value.count(v) > 1})
            raise ValueError(f"{twice[0]!r} is listed twice; list each once")
        return value


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$")
_SIZE_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def parse_bytes(value) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    if isinstance(value, str):
        m = _SIZE.match(value)
        if m:
            return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])
    hint = "a whole number of bytes, or a size like 140GB or 1GiB"
    if isinstance(value, float) and value.is_integer() and 0 < value < 2**63:
        # 1e9 is a float in YAML 1.2: say what to write rather than guess
        n = int(value)
        unit = next((u for u in ("TB", "GB", "MB", "KB") if n % _SIZE_UNITS[u] == 0), None)
        hint = f"write {n // _SIZE_UNITS[unit]}{unit} or {n}" if unit else f"write {n}"
    raise PydanticCustomError("size", f"expected a size like 140GB or 1GiB, got {value!r}", {"hint": hint})


class Collectives(_Strict):
    """All-reduce estimates to report (alpha-beta model; see report/checks.json)."""

    message_sizes: Annotated[list[int], _SIZES_SCHEMA] = Field(
        default_factory=lambda: [2**20, 2**30, 140 * 10**9], max_length=16,
        description='bytes, or sizes like "1GiB", "140GB"')
    latency_us: float = Field(5.0, gt=0, le=1000, description="per-step network latency (alpha), microseconds")

    @field_validator("message_sizes", mode="before")
    @classmethod
    def _sizes(cls, value):
        if isinstance(value, list):
            return [parse_bytes(v) for v in value]
        return value


BOM_CATEGORIES = Literal["switch", "server", "nic", "transceiver", "cable", "scale-up"]


class Bom(_Strict):
    """Bill of materials: what to order beyond the plan (spares) and what it costs (prices)."""

    spares_percent: dict[BOM_CATEGORIES, Annotated[float, Field(ge=0, le=100)]] = Field(
        default_factory=dict,
        description="spares per part of a category, as a percentage of the quantity, rounded up per part "
                    "(e.g. {transceiver: 2, cable: 2}); default: none")
    prices: str | None = Field(
        None, description="a price file (relative to the spec): currency and unit price by part number; "
                          "without one, cost is absent")


class Growth(_Strict):
    """Build the upper tiers for the final size now, so that growing never moves a cable."""

    max_servers: int | None = Field(None, ge=1, le=MAX_SERVERS)
    max_scalable_units: int | None = Field(None, ge=1, le=65_536)

    @model_validator(mode="after")
    def _one(self):
        if (self.max_servers is None) == (self.max_scalable_units is None):
            raise ValueError("give exactly one of `max_servers` or `max_scalable_units`")
        return self
# A DNS subdomain (RFC 1123), the prefix part of a Kubernetes label key (<=253 characters).
_LABEL_PREFIX = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$"


class Site(_Strict):
    """The site services every switch's management plane uses (switch configs): its
    management VRF's default route, and the DNS, NTP and syslog servers it reaches there."""

    management_gateway: Address | None = Field(
        None, description="default gateway of the management network (compute fabric); "
                          "default: the management pool's last usable address, marked as a default in the configs")
    dns_servers: list[Address] = Field(default_factory=list, max_length=3, description="DNS resolvers (reached in the management VRF)")
    ntp_servers: list[Address] = Field(default_factory=list, max_length=8, description="NTP servers (management VRF)")
    syslog_servers: list[Address] = Field(default_factory=list, max_length=8, description="syslog servers (management VRF)")


class Hosts(_Strict):
    """How servers are named and described to schedulers (Slurm, Kubernetes) and NCCL."""

    hostname: str | None = Field(
        None, max_length=128,
        description="server name pattern with {prefix} {su} {index} {n} (global 1-based), optionally padded: "
                    "{prefix}-su{su}-{index:03}; default: <prefix>-su<S>-<NNN>, or <prefix>-<NNNN> without SUs",
    )
    label_prefix: Annotated[str, StringConstraints(pattern=_LABEL_PREFIX, max_length=253)] = Field(
        "topology.clusterc.io", description="prefix of the Kubernetes topology label keys (a DNS subdomain)",
    )
    nccl_topology: Literal["skeleton", "full"] = Field(
        "skeleton", description="NCCL_TOPO_FILE style: skeleton (cpu and pci only, as NVIDIA recommends) or full (gpu, nic, net too)",
    )
LEAF_PLACEMENTS = ("end-of-row", "middle-of-row", "top-of-rack", "network-rack")


class RackSpec(_Strict):
    """One rack type. 48U/600 mm/1,200 mm are industry conventions, not vendor facts
    (no vendor source states them): defaults to be overridden by the site's numbers."""

    height_u: int = Field(48, ge=4, le=60, description="rack height in U")
    power_kw: float = Field(40.0, gt=0, le=1000, description="power budget per rack, kW")
    width_m: float = Field(0.6, gt=0, le=2, description="rack width (pitch along a row), metres")
    depth_mm: int = Field(1200, ge=300, le=2000, description="usable rack depth, mm")
    reserved_u: int = Field(2, ge=0, le=20, description="U kept free at the top (patch panels, management switch)")


class CableModel(_Strict):
    """Constants of the cable-length model (assumptions, configurable)."""

    tray_drop_m: float = Field(0.3, ge=0, le=5, description="from the top of a rack into the overhead tray, per end")
    in_rack_m: float = Field(0.5, ge=0, le=5, description="routing through the rack's cable manager for an in-rack cable")
    slack_fraction: float = Field(0.1, ge=0, le=1, description="service slack as a fraction of the routed length")
    slack_min_m: float = Field(0.5, ge=0, le=10, description="minimum service slack per cable")


class Layout(_Strict):
    """The hall: rows of rack positions, the rack type, and where network racks go."""

    hall: str = Field("DH1", pattern=r"^[A-Z0-9]{1,8}$", description="hall id, the first part of every rack label (TIA-606)")
    rows: int = Field(ge=1, le=52, description="rows of racks (named A, B, ...)")
    racks_per_row: int = Field(ge=1, le=999, description="rack positions per row")
    row_pitch_m: float = Field(3.0, gt=0, le=20, description="row to row distance (hot + cold aisle)")
    rack: RackSpec = Field(default_factory=RackSpec)
    servers_per_rack: int | None = Field(None, ge=1, le=64, description="default: as many as U and power allow")
    leaf_placement: Literal["end-of-row", "middle-of-row", "top-of-rack", "network-rack"] = Field(
        "end-of-row",
        description="end-of-row | middle-of-row: network racks per row; network-rack: beside each SU; top-of-rack: leaves in the compute racks",
    )
    endpoint_rack_units: int = Field(1, ge=1, le=10, description="height of an extra endpoint (UFM, storage head), not in the catalog")
    spine_placement: Literal["auto", "start", "middle", "end", "rows"] = Field(
        "auto", description="where the racks of spines, cores and central switches stand: start | middle | end of the racks the "
                            "fabric fills (at the growth target under `growth:`), rows (the rows `spine_rows` names), or auto: "
                            "whichever of start, middle and end gives the shortest total cable length",
    )
    spine_rows: list[Annotated[str, StringConstraints(pattern=r"^[A-Z]{1,2}$")]] = Field(
        default_factory=list, max_length=52,
        description="with spine_placement: rows, the rows (A, B, ...) that hold the spine, core and central racks, in the order they fill")
    cabling: CableModel = Field(default_factory=CableModel)

    @model_validator(mode="after")
    def _spine_rows(self):
        if self.spine_placement == "rows" and not self.spine_rows:
            raise ValueError("spine_placement: rows needs spine_rows, the rows that hold the spines (e.g. spine_rows: [D])")
        if self.spine_rows and "spine_placement" in self.model_fields_set and self.spine_placement != "rows":
            raise ValueError(f"spine_rows is only read with spine_placement: rows (this layout says {self.spine_placement})")
        if len(set(self.spine_rows)) != len(self.spine_rows):
            raise ValueError(f"spine_rows names a row twice: {', '.join(self.spine_rows)}")
        return self

    @property
    def spine_where(self) -> str:
        """The placement asked: naming rows says where, so `spine_rows` alone means `rows`."""
        return "rows" if self.spine_rows else self.spine_placement


class Spec(_Strict):
    name: Name = Field(description="[a-z0-9][a-z0-9-]*; names the output folder")
    servers: int | None = Field(None, ge=1, le=MAX_SERVERS, description="number of servers (or give gpus)")
    gpus: int | None = Field(None, ge=1, le=MAX_GPUS, description="number of GPUs (or give servers)")
    server: CatalogId = Field(description="catalog id of the server type")
    fabric: Fabric
    fabrics: list[ExtraFabric] = Field(default_factory=list, max_length=8,
                                       description="further fabrics (storage, in-band, out-of-band), each from a server NIC group")
    extra_endpoints: list[ExtraEndpoint] = Field(default_factory=list, max_length=64)
    growth: Growth | None = None
    bom: Bom | None = Field(None, description="spares and prices for the bill of materials")
    requirements: Requirements | None = None
    collectives: Collectives = Field(default_factory=Collectives)
    hosts: Hosts = Field(default_factory=Hosts, description="hostnames, scheduler labels, NCCL topology style")
    addressing: Addressing = Field(default_factory=Addressing, description="Ethernet: address pools, BGP peering and ASN plan")
    site: Site = Field(default_factory=Site, description="Ethernet switch configs: management gateway, DNS, NTP and syslog servers")
    catalog: str | None = Field(None, description="a catalog YAML file (relative to the spec) adding or overriding entries")
    layout: Layout | None = Field(None, description="physical layout: rows, racks, placement; gives rack/U and cable lengths")
    description: str | None = Field(None, max_length=4096)

    @model_validator(mode="after")
    def _one_size(self):
        if (self.servers is None) == (self.gpus is None):
            raise ValueError("give exactly one of `servers` or `gpus`")
        return self

    @field_validator("fabrics", mode="before")
    @classmethod
    def _fabric_pools(cls, value):
        """Each extra fabric's pools not given take its own defaults (extra_fabric_pools), so
        a partial `addressing:` never falls back onto the compute fabric's pools."""
        if not isinstance(value, list):
            return value
        out = []
        for i, item in enumerate(value):
            if isinstance(item, dict) and i < 8:
                given = item.get("addressing")
                if given is None or isinstance(given, dict):
                    defaults = {k: str(v) for k, v in extra_fabric_pools(i).items()}
                    item = {**item, "addressing": {**defaults, **(given or {})}}
            out.append(item)
        return out

    @field_validator("fabrics")
    @classmethod
    def _unique_fabrics(cls, value):
        names = [f.name for f in value]
        if "compute" in names:
            raise ValueError("fabric name 'compute' is the `fabric:` section; name extra fabrics storage, inband, oob, ...")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"fabric {dupes[0]!r} given twice; give each fabric its own name")
        return value

    @field_validator("extra_endpoints")
    @classmethod
    def _unique_roles(cls, value):
        return unique_endpoint_roles(value)
