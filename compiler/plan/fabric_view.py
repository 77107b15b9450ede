"""The typed contract between expand and every later stage: one frozen view per fabric.

A plan's `design` and `facts` are plain JSON because plan.json writes them as they are; the
stages after expand (check, render, traffic, verify, resilience, explore) read them only
through this view: the design as its family's typed record, the catalog facts as typed
records, and the rules several outputs share, each derived here once:

- the switch model serving a role, and its protocol (`model_id`, `role_model`, `protocol`,
  `model_protocol`);
- the speed of switch-to-switch links (`uplink_gbps`: the design's uplink speed, else its speed);
- each link end's address (`link_end_addresses`: plan/routing.py's /31 rule);
- the server range: servers come first in the device list, and no server follows another
  device. Outputs index servers as `devices[:n]`; the view refuses a plan where that is false.

`Device.pod` and `Device.group` are family coordinates; `device_coordinates` says what each
means in this plan's topology (its descriptor's pod_means, group_means).

Expand's last step seals the plan's view and every fabric's (plan/fabrics.seal_views); a
plan read from plan.json seals its own, and a fabric plan materialised later
(plan/fabrics.fabric_plan) builds its view on first read (Plan.view). Cost: O(devices) for
the server range, O(models + media) for the facts: ~2 ms of CPU on a 131,072-GPU plan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..topology import DesignRecord, design_record, topology
from ..topology.records import uplink_gbps
from .facts import ModelFacts, PlanFacts
from .routing import link_end_addresses

if TYPE_CHECKING:
    from .model import Device
    from .routing import RoutingPlan

SERVER = "server"


class PlanContractError(ValueError):
    """A plan breaks an invariant every stage relies on (a compiler bug, or a hand-edited plan.json)."""


@dataclass(frozen=True, slots=True)
class DeviceCoordinates:
    """What `Device.pod` and `Device.group` mean in a topology (its descriptor's pod_means and
    group_means, compiler/topology/; None: its lowering leaves it unset)."""

    pod: str | None
    group: str | None


@dataclass(frozen=True, slots=True)
class FabricView:
    """One fabric of a plan, typed: read by every stage after expand."""

    design: DesignRecord
    facts: PlanFacts
    servers: range  # the servers in the plan's device list: always first
    fabric: str | None  # an extra fabric's name on its fabric plan; None on the compute fabric's
    routing: RoutingPlan | None  # Ethernet: addresses, ASNs, NOS port names

    # --- the model per role, and its protocol --------------------------------------------
    def model_id(self, role: str) -> str | None:
        """The catalog model of a switch role (per-tier models where the spec gives them)."""
        return self.design.switch_model(role)

    def model(self, model_id: str | None) -> ModelFacts | None:
        return self.facts.model(model_id)

    def role_model(self, role: str) -> ModelFacts | None:
        """The facts of the model serving a role (a switch role, or `server`)."""
        return self.facts.model(self.design.server if role == SERVER else self.model_id(role))

    @property
    def server_model(self) -> ModelFacts | None:
        return self.facts.model(self.design.server)

    @property
    def protocol(self) -> str | None:
        """The fabric's switch protocol (infiniband, ethernet), None for a direct network."""
        rec = self.role_model("leaf")
        return rec.protocol if rec is not None else None

    def model_protocol(self, model_id: str) -> str | None:
        """The protocol of one device model (None: a server, a chip, an endpoint)."""
        rec = self.facts.model(model_id)
        return rec.protocol if rec is not None else None

    @property
    def is_infiniband(self) -> bool:
        return self.protocol == "infiniband"

    # --- speeds --------------------------------------------------------------------------
    @property
    def uplink_gbps(self) -> int:
        """Every leaf-spine and spine-core link's speed: the design's uplink speed where it
        differs from the downlinks' (fabric.uplink_speed_gbps), else the fabric speed."""
        return uplink_gbps(getattr(self.design, "uplink_speed_gbps", None), self.design.speed_gbps)

    @property
    def gpus_per_server(self) -> int:
        return self.design.gpus // self.design.servers if self.design.servers else 0

    # --- addresses -----------------------------------------------------------------------
    def link_end_addresses(self) -> tuple[np.ndarray, np.ndarray]:
        """Per link of this fabric, the upper end's and the lower end's address (uint32, 0:
        unnumbered); plan/routing.py holds the rule."""
        if self.routing is None:
            raise PlanContractError("an unrouted fabric has no link addresses")
        return link_end_addresses(self.routing.link_net)

    # --- device coordinates --------------------------------------------------------------
    @property
    def device_coordinates(self) -> DeviceCoordinates:
        """What Device.pod and Device.group mean in this plan's topology."""
        topo = topology(self.design.topology)
        return DeviceCoordinates(pod=topo.pod_means, group=topo.group_means)


def server_range(devices: list[Device]) -> range:
    """The servers of a device list, checked to come first: `devices[:n]` are every server."""
    n = 0
    while n < len(devices) and devices[n].role == SERVER:
        n += 1
    later = next((d for d in devices[n:] if d.role == SERVER), None)
    if later is not None:
        raise PlanContractError(f"server {later.name} follows {devices[n].name} ({devices[n].role}): "
                                f"servers must come first in the device list")
    return range(n)


def build_view(design: dict[str, Any], facts: dict[str, Any], devices: list[Device],
               routing: RoutingPlan | None) -> FabricView:
    """The view of one plan (a whole plan read as its compute fabric, or one fabric's plan)."""
    return FabricView(design=design_record(design), facts=PlanFacts.from_json(facts), servers=server_range(devices),
                      fabric=design.get("fabric"), routing=routing)
