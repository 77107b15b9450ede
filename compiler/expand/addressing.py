"""Addressing and ASN plan of an Ethernet fabric (RFC 7938 eBGP Clos), from the spec's pools.

Stable under growth: every address derives from a device's *structural slot* (its
place by SU, rail, pod and index, never its position in a list) and from port
numbers, and each role owns a fixed share of each pool. Growing 4 SU to 8 SU adds
addresses; none of the existing ones move (as long as the pools stay the same).

- loopbacks: leaves own the first half of the pool, spines the third quarter, cores
  the last quarter; a switch's loopback is its region's base + slot.
- point-to-point /31s are numbered from the *upper* end of a link, which every link
  has exactly one of: a switch owns a block of 2 x (radix rounded up to a power of
  two) addresses and port p takes the /31 at 2p in it. Server-facing links (leaf is
  the upper end) come from `server_links`; leaf-spine links from the first half of
  `fabric_links` (spine blocks), spine-core links from the second half (core blocks).
  So a leaf's server /31s form one aligned prefix per leaf.
- management: servers the first half, endpoints the next eighth, then leaves,
  spines and cores an eighth each.
- ASNs: top tier shares the range's last ASN; pod p's spines take last - p; leaf
  slot s takes first + s. `auto` uses 2-byte private ASNs while they last, else the
  4-byte private range (RFC 6996).

Cost: O(devices + links), vectorised over links.
"""

from __future__ import annotations

import itertools

import math
import re
from collections.abc import Callable
from ipaddress import IPv4Network

import numpy as np

from ..catalog.nos import TWIN_NOS, descriptor, nos_registry
from ..diagnostics import Diagnostic, SpecInvalid
from ..plan.model import Plan
from ..plan.naming import SWITCH_ROLES
from ..plan.routing import RoutingPlan
from ..spec.load import LoadedSpec
from . import ports
from .resolve import ClosDesign

# pool -> role -> (first share, shares, of denominator)
REGIONS = {
    "loopbacks": ({"leaf": (0, 2), "spine": (2, 1), "core": (3, 1)}, 4),
    "fabric_links": ({"spine": (0, 1), "core": (1, 1)}, 2),
    "server_links": ({"leaf": (0, 1)}, 1),
    "management": ({"server": (0, 4), "endpoint": (4, 1), "leaf": (5, 1), "spine": (6, 1), "core": (7, 1)}, 8),
}
# Everything that reaches a config line: a user catalog could otherwise smuggle a
# newline or a space (a second command) in through a hostname prefix or a port name.
_SAFE_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}"
SAFE_DEVICE = re.compile(rf"^{_SAFE_NAME}$")
_SAFE_LINES = re.compile(rf"(?:{_SAFE_NAME}\n)*{_SAFE_NAME}")  # names joined by newlines, each safe: one match for all
SAFE_PORT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/._:-]{0,31}$")


def _region(pool: IPv4Network, role: str, name: str) -> tuple[int, int]:
    shares, denominator = REGIONS[name]
    first, count = shares[role]
    size = pool.num_addresses // denominator
    return int(pool.network_address) + first * size, count * size


def structural_slots(plan: Plan, design: ClosDesign) -> np.ndarray:
    """Per device, its 0-based place within its role, from structure (SU, rail, pod, index)."""
    if not isinstance(design, ClosDesign):  # a multi-plane fabric numbers its planes' switches itself
        return design.structural_slots(plan)
    s = design.sizing
    leaves_per_su = (design.su_size // design.servers_per_leaf) if (design.su_size and not design.rail_optimized) else None
    endpoint_base: dict[str, int] = {}
    total = 0
    for e in design.endpoints:
        endpoint_base[e.spec.role] = total
        total += e.spec.count
    out = np.empty(len(plan.devices), dtype=np.int64)
    for i, d in enumerate(plan.devices):
        if d.role == "server":  # an extra fabric's view keeps the compute SUs (its slots are unused there)
            slot = (d.su - 1) * design.su_size + d.index - 1 if d.su is not None and design.su_size else d.index - 1
        elif d.role == "leaf":
            if d.rail is not None:
                assert d.su is not None  # a rail leaf belongs to its SU
                slot = (d.su - 1) * design.rails + d.rail - 1
            elif d.su is not None:
                assert leaves_per_su is not None  # a fat-tree leaf carries an SU only where the fabric has SUs
                slot = (d.su - 1) * leaves_per_su + d.index - 1
            else:
                slot = d.index - 1
        elif d.role == "spine":
            slot = (d.pod - 1) * s.spines_per_pod + d.index - 1 if d.pod is not None else d.index - 1
        elif d.role == "core":
            slot = d.index - 1
        else:
            slot = endpoint_base[d.role] + d.index - 1
        out[i] = slot
    return out


def _region_role(role: str) -> str:
    return role if role in ("server", *SWITCH_ROLES) else "endpoint"


def _prefix_for(addresses_needed: int, share: float) -> int:
    return 32 - math.ceil(math.log2(max(1.0, addresses_needed / share)))


def plan_routing(loaded: LoadedSpec, design: ClosDesign, plan: Plan, extra: int | None = None) -> RoutingPlan:
    """The compute fabric's routing plan, or with `extra` = i that of the spec's i-th extra
    fabric (`plan` is then its fabric_plan: its switches and the servers). An extra fabric
    draws from its own `fabrics[i].addressing` and NOS; its servers take no management
    address from it (they have one management address, the compute fabric's)."""
    spec = loaded.spec
    fabric = spec.fabric if extra is None else spec.fabrics[extra]
    where = () if extra is None else ("fabrics", extra)
    addressing = spec.fabrics[extra].addressing if extra is not None else spec.addressing
    pools = addressing.pools()
    errors: list[Diagnostic] = []
    if fabric.nos is not None and addressing.peering == "unnumbered" and not descriptor(fabric.nos).capabilities.bgp_unnumbered:
        able = [n.id for n in nos_registry().values() if n.capabilities.bgp_unnumbered]
        errors.append(loaded.diagnostic(
            "SPEC_NOS_LACKS_CAPABILITY", where + ("addressing", "peering"),
            f"{descriptor(fabric.nos).name} configs cannot spell BGP unnumbered (catalog/data/nos.yaml)",
            "use peering: numbered" + (f", or a NOS that can: {', '.join(able)}" if able else "")))
    slots = structural_slots(plan, design)
    roles = np.array([_region_role(d.role) for d in plan.devices], dtype=object)

    def exhausted(pool_name: str, role: str, needed: int, capacity: int, what: str) -> None:
        shares, denominator = REGIONS[pool_name]
        share = shares[role][1] / denominator
        errors.append(loaded.diagnostic(
            "ADDRESS_POOL_EXHAUSTED", where + ("addressing", pool_name),
            f"{pool_name} {pools[pool_name]}: the {role} share holds {capacity:,} addresses but {what} need {needed:,}",
            f"use a /{_prefix_for(needed, share)} or larger (the {role}s own {shares[role][1]}/{denominator} of the pool)"))

    regions: dict[str, dict[str, str]] = {}
    loopback, management = _device_addresses(pools, slots, roles, extra is not None, regions, exhausted)
    link_net = _link_nets(plan, pools, slots, roles, addressing.peering == "unnumbered", regions, exhausted)
    (first, last), asn = _asns(loaded, design, plan, addressing, slots, roles, where, errors)
    if errors:
        raise SpecInvalid(errors)

    _check_names(loaded, design, plan, fabric.nos, where + ("fabric",) if extra is None else where)
    port_names, lanes = _switch_ports(design, plan, fabric.nos)
    return RoutingPlan(
        nos=fabric.nos, peering=addressing.peering,
        pools={k: str(v) for k, v in pools.items()}, asn_range=(first, last),
        loopback=loopback, asn=asn, management=management, link_net=link_net,
        port_names=port_names, port_lanes=lanes, regions=regions,
        site=_site(loaded, pools["management"], management, extra),
        adaptive_routing=_adaptive_routing(fabric.nos, design, plan),
    )


def _device_addresses(pools: dict, slots: np.ndarray, roles: np.ndarray, extra: bool,
                      regions: dict[str, dict[str, str]], exhausted: Callable[..., None]) -> tuple[np.ndarray, np.ndarray]:
    """Per device its loopback and management address (0: none), each role from its region
    of the pool by its structural slot; an extra fabric's servers take none of its
    management pool (they keep the compute fabric's)."""
    n_dev = len(roles)
    loopback = np.zeros(n_dev, dtype=np.uint32)
    management = np.zeros(n_dev, dtype=np.uint32)
    for pool_name, values in (("loopbacks", loopback), ("management", management)):
        regions[pool_name] = {}
        for role in REGIONS[pool_name][0]:
            if role == "server" and extra:  # servers keep the compute fabric's management address
                continue
            base, size = _region(pools[pool_name], role, pool_name)
            regions[pool_name][role] = f"{IPv4Network((base, 32 - int(math.log2(size))))}" if size else "-"
            mask = roles == role
            if not mask.any():
                continue
            # skip each region's first address (a network address on a management LAN, and
            # 10.0.0.0 reads like a mistake as a router id) and the last (broadcast)
            needed = int(slots[mask].max()) + 3
            if needed > size:
                exhausted(pool_name, role, needed, size, f"{int(mask.sum()):,} {role} devices")
                continue
            values[mask] = (base + 1 + slots[mask]).astype(np.uint32)
    return loopback, management


def _link_nets(plan: Plan, pools: dict, slots: np.ndarray, roles: np.ndarray, unnumbered: bool,
               regions: dict[str, dict[str, str]], exhausted: Callable[..., None]) -> np.ndarray:
    """Per link its /31 (0: none), numbered from the upper end: a block of the upper
    device's ports per device, by its structural slot. Unnumbered peering: switch-to-switch
    links take none."""
    links = plan.links
    link_net = np.zeros(len(links), dtype=np.uint32)
    # roles compared per device, then read per link end: no string comparison per link
    lower_is_switch = np.isin(roles, SWITCH_ROLES)[links.a_dev]
    block = {lid: 2 * (1 << max(0, (len(lay) - 1).bit_length())) for lid, lay in plan.layouts.items()}
    block_of_dev = np.array([block[d.layout] for d in plan.devices], dtype=np.int64)
    first_of_dev = slots * block_of_dev  # a device's first address in its region
    for pool_name, role, sel in (
        ("server_links", "leaf", ~lower_is_switch),
        ("fabric_links", "spine", lower_is_switch & (roles == "spine")[links.b_dev]),
        ("fabric_links", "core", lower_is_switch & (roles == "core")[links.b_dev]),
    ):
        if pool_name == "fabric_links" and unnumbered:
            continue
        if not sel.any():
            continue
        base, size = _region(pools[pool_name], role, pool_name)
        regions.setdefault(pool_name, {})[role] = str(IPv4Network((base, 32 - int(math.log2(size))))) if size else "-"
        up = links.b_dev[sel]
        first_of_up = first_of_dev[up]
        offset = first_of_up + 2 * links.b_port[sel].astype(np.int64)
        needed = int(first_of_up.max() + block_of_dev[up].max())
        if needed > size:
            what = "server-facing /31s" if role == "leaf" else f"{role} downlink /31s"
            exhausted(pool_name, role, needed, size, f"{int(np.unique(up).size):,} {role}s' {what} ({int(block_of_dev[up].max())} addresses each)")
            continue
        link_net[sel] = (base + offset).astype(np.uint32)
    return link_net


def _asns(loaded: LoadedSpec, design: ClosDesign, plan: Plan, addressing, slots: np.ndarray, roles: np.ndarray,
          where: tuple, errors: list[Diagnostic]) -> tuple[tuple[int, int], np.ndarray]:
    """The ASN range used and per device its ASN (RFC 7938 5.2): the top tier one, each
    pod's spines one, each leaf its own."""
    s = design.sizing
    leaf_mask = roles == "leaf"
    leaf_slots = int(slots[leaf_mask].max()) + 1 if leaf_mask.any() else 0
    pods = s.pods if s.tiers == 3 else 0
    needed = 1 + pods + leaf_slots
    first, last = addressing.asn_range(needed)
    asn = np.zeros(len(roles), dtype=np.int64)
    if needed > last - first + 1:
        errors.append(loaded.diagnostic(
            "ASN_RANGE_EXHAUSTED", where + ("addressing", "asn"),
            f"ASNs {first}-{last} hold {last - first + 1:,} but the design needs {needed:,} "
            f"(1 top tier + {pods} pods + {leaf_slots:,} leaves, RFC 7938)",
            "use asn: 4-byte (4200000000-4294967294, RFC 6996) or a wider range"))
        return (first, last), asn
    top_role = "core" if s.tiers == 3 else "spine"
    asn[roles == top_role] = last
    if s.tiers == 3:
        spine_mask = roles == "spine"
        asn[spine_mask] = last - np.array([plan.devices[i].pod for i in np.nonzero(spine_mask)[0]], dtype=np.int64)
    asn[leaf_mask] = first + slots[leaf_mask]
    return (first, last), asn


def _switch_ports(design: ClosDesign, plan: Plan, nos: str | None
                  ) -> tuple[dict[str, dict[str, tuple[str, ...]]], dict[str, list[list[int]]]]:
    """Per NOS (the twin's and the fabric's) each switch layout's port names, and each
    switch layout's lanes per port."""
    port_names: dict[str, dict[str, tuple[str, ...]]] = {}
    lanes: dict[str, list[list[int]]] = {}
    switch_of = _switch_of_layout(design, plan)
    switch_layouts = sorted(switch_of)
    for name in sorted({TWIN_NOS, *([nos] if nos else [])}):
        port_names[name] = {lid: ports.nos_port_names(switch_of[lid], plan.layouts[lid], name) for lid in switch_layouts}
    for lid in switch_layouts:
        lanes[lid] = ports.port_lanes(switch_of[lid], plan.layouts[lid])
    return port_names, lanes


def _adaptive_routing(nos: str | None, design: ClosDesign, plan: Plan) -> bool:
    """The fabric's switches run per-packet adaptive routing: its NOS's files turn it on, on
    every one of its switch models' ASICs (catalog/data/nos.yaml)."""
    if nos is None:
        return False
    caps = descriptor(nos).capabilities
    models = {d.model for d in plan.devices if d.role in SWITCH_ROLES}
    return caps.adaptive_routing and bool(models) and \
        all(design.catalog.switches[m].asic in caps.adaptive_routing_asics for m in models)


def _site(loaded: LoadedSpec, pool: IPv4Network, management: np.ndarray, extra: int | None) -> dict:
    """The spec's `site` for one fabric's switches. The gateway given applies to the compute
    fabric's management network; an extra fabric (own pool) and a spec without one take the
    pool's last usable address, recorded as a default so the configs say so. Either must be
    in the pool and no device's own management address."""
    site = loaded.spec.site
    given = site.management_gateway if extra is None else None
    gateway = given if given is not None else pool.broadcast_address - 1
    where = ("site", "management_gateway")
    if given is not None and given not in pool:
        raise SpecInvalid([loaded.diagnostic("SITE_GATEWAY_OUTSIDE_POOL", where,
                                             f"management gateway {given} is outside the management pool {pool}",
                                             "give an address inside addressing.management, or widen the pool")])
    if (management == int(gateway)).any():
        raise SpecInvalid([loaded.diagnostic("SITE_GATEWAY_IN_USE", where if given is not None else ("addressing", "management"),
                                             f"management gateway {gateway} is already a device's management address",
                                             "give site.management_gateway an address no device takes, or widen the management pool")])
    return {"management_gateway": str(gateway), "gateway_is_default": given is None,
            "dns_servers": [str(a) for a in site.dns_servers], "ntp_servers": [str(a) for a in site.ntp_servers],
            "syslog_servers": [str(a) for a in site.syslog_servers]}


def _switch_of_layout(design: ClosDesign, plan: Plan) -> dict:
    """Switch layout id -> its catalog switch (spine/core tiers may use other models than the leaf)."""
    return {d.layout: design.catalog.switches[d.model] for d in plan.devices if d.role in SWITCH_ROLES}


def _check_names(loaded: LoadedSpec, design: ClosDesign, plan: Plan, nos: str | None, fabric_path: tuple) -> None:
    errors = []
    device_names = [d.name for d in plan.devices]
    joined = "\n".join(device_names)
    all_safe = joined.count("\n") == len(device_names) - 1 and _SAFE_LINES.fullmatch(joined) is not None
    bad_device = None if all_safe else next((n for n in device_names if not SAFE_DEVICE.match(n)), None)
    if bad_device is not None:
        errors.append(loaded.diagnostic(
            "NAME_UNSAFE_FOR_CONFIG", ("server",), f"device name {bad_device!r} cannot go into a switch config",
            "hostname prefixes (catalog) use letters, digits, '.', '_' and '-' only"))
    nos_list = sorted({TWIN_NOS, *([nos] if nos else [])})
    for nos, (lid, switch) in itertools.product(nos_list, sorted(_switch_of_layout(design, plan).items())):
        names = ports.nos_port_names(switch, plan.layouts[lid], nos)
        bad = next((n for n in names if not SAFE_PORT.match(n)), None)
        if bad is not None:
            errors.append(loaded.diagnostic(
                "NAME_UNSAFE_FOR_CONFIG", fabric_path + ("switch",), f"{switch.id} port name {bad!r} ({nos}) cannot go into a switch config",
                "port names (catalog modes / nos_port_names) use letters, digits and / . _ : - only"))
    for lid, layout in plan.layouts.items():
        bad = next((p.name for p in layout.ports if not SAFE_PORT.match(p.name)), None)
        if bad is not None:
            errors.append(loaded.diagnostic(
                "NAME_UNSAFE_FOR_CONFIG", ("server",), f"port name {bad!r} of {lid} cannot go into a switch config (peer descriptions)",
                "port names use letters, digits and / . _ : - only"))
    if errors:
        raise SpecInvalid(errors)
