"""One fabric of a plan, as a record: what it is, which devices and links are its own, its
design and its routing.

A plan holds every fabric in `Plan.fabrics` (compute first, then the spec's `fabrics:` in
order). Servers are shared: every fabric reaches them, each through its own NIC group's
ports (`server_ports`, a range of the servers' port layout). The plan lists the compute
fabric's devices first (servers, then its switches and endpoints), then each extra
fabric's switches and endpoints; links likewise. So a fabric's own devices and links are
index ranges, never copies, and the compute fabric's are prefixes of the plan's tables.

Routing is sized to its fabric, not to the plan: its per-device arrays are indexed by a
device's position in `device_ids()` (the servers, then the fabric's own devices), its
per-link arrays by position in `links`. For the compute fabric both are the plan's own
indices (prefixes); reading past them is an IndexError, never a silent "no address".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .routing import RoutingPlan
    from .scale_up import ScaleUpDomains

COMPUTE = "compute"
SCALE_UP = "scale-up"
# What a fabric carries. An extra fabric's kind is its spec name when that is one of these
# (storage, inband, oob); any other name is an "other" fabric built the same way.
# scale-up: the GPUs' NVLink (xGMI, ICI) domains; their wiring is inside the servers or
# racks, not in the plan's tables (Fabric.domains says how), except a chip torus whose
# links are the plan's own (ScaleUpDomains.in_plan_links).
KINDS = ("compute", "storage", "inband", "oob", "other", SCALE_UP)
# the fabrics of switches and cables in the plan's tables (every kind but scale-up)
NETWORK_KINDS = KINDS[:-1]


def kind_of(name: str) -> str:
    return name if name in NETWORK_KINDS else "other"


@dataclass(slots=True)
class Fabric:
    name: str  # compute, or the spec's fabrics[].name
    kind: str  # one of KINDS
    nic_group: str  # the servers' catalog NIC group that feeds it
    servers: range  # the shared servers in plan.devices (every fabric reaches all of them)
    devices: range  # its own devices in plan.devices: for compute, the servers too (they come first)
    links: range  # its links in plan.links (end b is always one of its own switches)
    server_ports: tuple[int, int]  # [first, end) of the servers' ports that are this fabric's NICs
    design: dict  # its resolved design (plain JSON): compute's is Plan.design; an extra fabric's its own record
    routing: RoutingPlan | None = None  # Ethernet: addresses and ASNs, sized to this fabric (module doc)
    domains: ScaleUpDomains | None = None  # scale-up only: which GPUs share a domain (plan/scale_up.py)

    @property
    def management_ports(self) -> dict | None:
        """The switches' management ports this fabric's management leaves serve (expand/management.py)."""
        return self.design.get("management_ports")

    @property
    def management_network(self) -> dict | None:
        """The management (OOB) network's subnets and BMC rows, on the fabric that carries it."""
        return self.design.get("management_network")

    @property
    def is_network(self) -> bool:
        """Switches and cables of its own in the plan's tables (not the scale-up domains)."""
        return self.kind != SCALE_UP

    def device_ids(self) -> np.ndarray:
        """Plan device indices of the fabric: the servers, then its own devices. The index
        space of its routing arrays and of its fabric plan (plan/fabrics.py)."""
        if self.devices.start <= self.servers.start:  # compute: its devices include the servers
            return np.arange(self.devices.start, self.devices.stop, dtype=np.int64)
        return np.concatenate([np.arange(self.servers.start, self.servers.stop, dtype=np.int64),
                               np.arange(self.devices.start, self.devices.stop, dtype=np.int64)])

    def json_record(self) -> dict:
        """Its entry under plan.json's design.fabrics: the design record, NIC group and
        server port range (the compute fabric's design is the plan's own, not repeated)."""
        if self.name == COMPUTE:
            return {"server_ports": list(self.server_ports)}
        return {**self.design, "nic_group": self.nic_group, "server_ports": list(self.server_ports)}


def scale_up_fabric(domains: ScaleUpDomains, compute: Fabric | None) -> Fabric:
    """The scale-up fabric's record: the compute fabric's servers; no devices of its own (NVLink
    switch trays are counted in its domains, not listed as devices); as links, the compute
    fabric's where those are the scale-up wiring (a chip torus), else none."""
    servers = compute.servers if compute is not None else range(0)
    links = compute.links if compute is not None and domains.in_plan_links else range(0)
    return Fabric(SCALE_UP, SCALE_UP, "", servers, range(0), links, (0, 0), domains.as_json(), domains=domains)
