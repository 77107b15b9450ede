"""The routing plan of an Ethernet (RoCEv2) fabric: addresses, ASNs and NOS port names.

Columnar like the rest of the plan: one numpy entry per device or per link, so a
131,072-GPU fabric's ~400k /31s cost a few MB. Addresses are IPv4 as uint32; 0 means
"none" (servers have no loopback or ASN; unnumbered fabric links have no /31).

Conventions every output follows:
- a link's /31 is `link_net`; the upper end (leaf toward servers, spine toward leaves,
  core toward spines) takes the even address, the lower end the odd one;
- ASNs follow RFC 7938 section 5.2: all top-tier switches share one ASN, each pod's
  spines share one (three tiers), every leaf has its own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from ipaddress import IPv4Address

import numpy as np

from .columns import Piece


@dataclass
class RoutingPlan:
    nos: str | None  # the NOS configs are written for (None: plan only)
    peering: str  # numbered | unnumbered (switch-to-switch BGP)
    pools: dict[str, str]  # pool name -> prefix, as in the spec
    asn_range: tuple[int, int]  # first, last of the range ASNs were drawn from
    loopback: np.ndarray  # uint32 per device
    asn: np.ndarray  # int64 per device
    management: np.ndarray  # uint32 per device
    link_net: np.ndarray  # uint32 per link: the /31's base address
    # NOS -> switch layout id -> port names in panel order (the twin's NOS, FRR, is always
    # present: the digital twin runs FRR whatever the spec's NOS; catalog/nos.py TWIN_NOS).
    port_names: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    port_lanes: dict[str, list[list[int]]] = field(default_factory=dict)  # layout id -> SerDes lanes per port
    regions: dict[str, dict[str, str]] = field(default_factory=dict)  # pool -> role -> sub-prefix (documentation)
    # management_gateway, gateway_is_default, dns_servers, ntp_servers, syslog_servers (spec `site`)
    site: dict = field(default_factory=dict)
    # Where a management (OOB) network serves the switches' management ports: per device the
    # gateway of the management subnet its port lands on (uint32, 0: the site's gateway) and
    # that subnet's prefix length (expand/management.py); None without one.
    management_gateway: np.ndarray | None = None
    management_prefix: int | None = None
    # The fabric's switches spread traffic by per-packet adaptive routing on their fabric
    # ports: the NOS's files turn it on (catalog/data/nos.yaml capabilities.adaptive_routing).
    # The traffic analysis and every collective estimate route such a fabric `adaptive`.
    adaptive_routing: bool = False
    # Where this fabric is the management network: per management leaf (device index) the
    # subnet it serves and holds the gateway of (plan/fabrics.py serve_management_ports).
    management_subnets: dict[int, ManagementSubnet] = field(default_factory=dict)

    def ip(self, value: int) -> str:
        return str(IPv4Address(int(value)))


@dataclass(frozen=True, slots=True)
class ManagementSubnet:
    """A management leaf's subnet (expand/management.py): the leaf holds its gateway on an
    interface in one access VLAN whose members are every host port it serves, the BMC links
    (links of the plan) and the cords from other switches' management ports (no links: those
    ports are not in the switches' layouts, so they are listed here)."""

    vlan: int  # the access VLAN's id
    network: int  # uint32, the subnet's first address
    prefix: int  # its length
    gateway: int  # uint32, the leaf's own address on it
    # (leaf port index in its layout, "<switch>:<port>" it serves, the cord's orderable length in
    # metres: None without a layout or where none reaches)
    cords: tuple[tuple[int, str, float | None], ...]


def link_end_addresses(link_net: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the upper end's and the lower end's address of its /31 (uint32; 0 for an
    unnumbered link): the upper end (leaf toward servers, spine toward leaves, core toward
    spines) takes the even address, the lower end (a server NIC, a leaf's uplink) the odd one.
    The one place this rule lives: every output that writes a link address calls it."""
    net = link_net.astype(np.uint32)
    return net, np.where(net != 0, net + np.uint32(1), np.uint32(0)).astype(np.uint32)


def dotted(values: np.ndarray, suffix: str = "") -> list[str]:
    """uint32 addresses as dotted quads (each followed by `suffix`, e.g. "/31"): the text of
    each address's upper and lower 16 bits picked from a table of all 65,536 and joined, one
    string concatenation per address instead of formatting four octets (5x faster at a
    million addresses; the tables cost ~30 ms once per process)."""
    v = np.asarray(values).astype(np.int64)
    return (_halves("", ".")[v >> 16] + _halves("", suffix)[v & 0xFFFF]).tolist()


@functools.cache
def _halves(prefix: str, suffix: str) -> np.ndarray:
    """Text of every 16-bit value as two octets, "a.b", between prefix and suffix."""
    octets = [str(i) for i in range(256)]
    return np.array([f"{prefix}{a}.{b}{suffix}" for a in octets for b in octets], dtype=object)
def dotted_pieces(values: np.ndarray) -> list[Piece]:
    """uint32 addresses as the pieces of their dotted quads (columns.text_chunks): each
    octet's text indexed from a table, no format per address."""
    v = values.astype(np.int64)
    return [_OCTETS[(v >> 24) & 255], ".", _OCTETS[(v >> 16) & 255], ".", _OCTETS[(v >> 8) & 255], ".", _OCTETS[v & 255]]


_OCTETS = np.array([str(i) for i in range(256)], dtype=object)
