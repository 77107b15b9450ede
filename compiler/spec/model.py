"""The spec: what a network architect writes. Keys here are a contract."""

from __future__ import annotations

import re
from ipaddress import IPv4Network
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, field_validator, model_validator

# Limits that stop absurd specs before anything is allocated. A million GPUs is the
# design target; four million leaves headroom while still failing fast on typos.
MAX_GPUS = 4_194_304
MAX_SERVERS = 1_048_576

# Names become folder names, hostnames and config identifiers: no path separators,
# quotes, whitespace or newlines can get through this.
Name = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
Role = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,15}$")]
CatalogId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]

_RATIO = re.compile(r"^\s*(\d{1,4})\s*:\s*(\d{1,4})\s*$")
TOPOLOGIES = ("fat-tree", "rail-optimized")
# Known to the roadmap but not built yet: a clear error rather than "unknown".
PLANNED_TOPOLOGIES = ("torus", "mesh", "dragonfly", "dragonfly+", "rail-only")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Ratio(_Strict):
    """Oversubscription as downlink:uplink bandwidth, e.g. 1:1 or 2:1."""

    down: int = Field(ge=1)
    up: int = Field(ge=1)

    def __str__(self) -> str:
        return f"{self.down}:{self.up}"


def parse_ratio(value) -> Ratio:
    if isinstance(value, Ratio):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return Ratio(down=value, up=1)
    if isinstance(value, str):
        m = _RATIO.match(value)
        if m and int(m.group(1)) >= 1 and int(m.group(2)) >= 1:
            return Ratio(down=int(m.group(1)), up=int(m.group(2)))
    raise ValueError(f"expected a ratio like \"1:1\" or \"2:1\" (downlink:uplink), got {value!r}")


class Oversubscription(_Strict):
    leaf: Ratio = Ratio(down=1, up=1)
    spine: Ratio = Ratio(down=1, up=1)

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value):
        if isinstance(value, (str, int)) and not isinstance(value, bool):
            return {"leaf": parse_ratio(value)}
        if isinstance(value, dict):
            return {k: (parse_ratio(v) if k in ("leaf", "spine") else v) for k, v in value.items()}
        return value


class Fabric(_Strict):
    topology: str = Field(description="fat-tree | rail-optimized")
    switch: CatalogId = Field(description="catalog id of the switch model")
    tiers: Literal["auto", 2, 3] = Field("auto", description="2, 3 or auto (the fewest tiers that fit)")
    oversubscription: Oversubscription = Field(
        default_factory=Oversubscription,
        description='leaf downlink:uplink bandwidth ("1:1"), or {leaf: "2:1", spine: "1:1"}',
    )
    scalable_unit: int | None = Field(
        None, ge=1, le=4096,
        description="servers per scalable unit (SU); rail-optimized: NIC i of every server in an SU goes to leaf i",
    )
    speed_gbps: int | None = Field(None, gt=0, description="link speed; default: the server's NIC speed")
    media: str | dict[str, str] | None = Field(
        None, description="mmf | smf, or per link kind {server-leaf: mmf, leaf-spine: smf}; default: multimode where the catalog has it",
    )
    nos: Literal["frr", "sonic", "cumulus", "eos"] | None = Field(
        None, description="Ethernet only: the switch operating system to write configs for (the switch model must run it)",
    )

    @field_validator("topology")
    @classmethod
    def _known_topology(cls, value: str) -> str:
        if value in TOPOLOGIES:
            return value
        if value in PLANNED_TOPOLOGIES:
            raise ValueError(f"topology '{value}' is not supported yet; supported: {', '.join(TOPOLOGIES)}")
        raise ValueError(f"unknown topology '{value}'; supported: {', '.join(TOPOLOGIES)}")


def _ipv4_network(value):
    if isinstance(value, str):
        try:
            return IPv4Network(value.strip())
        except ValueError as exc:  # says why: "has host bits set", "not a valid netmask"
            raise ValueError(f"{value!r} is not an IPv4 prefix like 10.0.0.0/16: {exc}") from None
    return value


Pool = Annotated[IPv4Network, BeforeValidator(_ipv4_network)]
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
        first, last = (int(x) for x in _ASN_RANGE.match(self.asn).groups())
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


class ExtraEndpoint(_Strict):
    """Non-GPU devices on the same fabric: fabric managers, storage or service nodes."""

    role: Role = Field(description="e.g. ufm, storage, login; becomes the device role and cable kind")
    count: int = Field(ge=1, le=65_536)
    ports: int = Field(1, ge=1, le=64, description="fabric ports per device")
    speed_gbps: int | None = Field(None, gt=0, description="default: the fabric's link speed")
    form_factor: Literal["OSFP", "QSFP112"] = "OSFP"


class Spec(_Strict):
    name: Name = Field(description="[a-z0-9][a-z0-9-]*; names the output folder")
    servers: int | None = Field(None, ge=1, le=MAX_SERVERS, description="number of servers (or give gpus)")
    gpus: int | None = Field(None, ge=1, le=MAX_GPUS, description="number of GPUs (or give servers)")
    server: CatalogId = Field(description="catalog id of the server type")
    fabric: Fabric
    extra_endpoints: list[ExtraEndpoint] = Field(default_factory=list, max_length=64)
    addressing: Addressing = Field(default_factory=Addressing, description="Ethernet: address pools, BGP peering and ASN plan")
    catalog: str | None = Field(None, description="a catalog YAML file (relative to the spec) adding or overriding entries")
    description: str | None = Field(None, max_length=4096)

    @model_validator(mode="after")
    def _one_size(self):
        if (self.servers is None) == (self.gpus is None):
            raise ValueError("give exactly one of `servers` or `gpus`")
        return self

    @field_validator("extra_endpoints")
    @classmethod
    def _unique_roles(cls, value):
        roles = [e.role for e in value]
        reserved = {"server", "leaf", "spine", "core"}
        for r in roles:
            if r in reserved:
                raise ValueError(f"role '{r}' is reserved for fabric devices")
        dupes = sorted({r for r in roles if roles.count(r) > 1})
        if dupes:
            raise ValueError(f"role {dupes[0]!r} given twice; merge the entries")
        return value
