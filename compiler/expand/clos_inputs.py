"""What sizing a Clos needs, as typed values: the fabric's shape (topology, tiers, ratios,
unit, growth target), the catalog entries and the counts, built from the spec's `fabric:`
section, from an extra fabric (`fabrics:`) or from one plane of a multi-plane fabric by one
function each, so every Clos is sized by the same code (resolve.py) without a spec made up
for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..catalog.models import NicGroup, Server, Switch
from ..spec.model import ExtraEndpoint, Growth, Ratio, Spec
from . import sizing

# The unit keys a section can set: the compute fabric's `fabric:` both, an extra fabric or a
# plane only the SU.
COMPUTE_UNIT_KEYS = ("scalable_unit", "servers_per_leaf")
SU_ONLY = ("scalable_unit",)


def size_field(spec: Spec) -> tuple[str]:
    """The spec field that sets the cluster size (for diagnostics about it)."""
    return ("servers",) if spec.servers is not None else ("gpus",)


@dataclass(frozen=True)
class Endpoints:
    spec: ExtraEndpoint
    speed_gbps: int


@dataclass(frozen=True)
class UpperSwitches:
    """The switch models of the tiers above the leaf (fabric.spine_switch / core_switch)."""

    spine: Switch
    core: Switch
    speed_gbps: int  # every spine and core port: the uplink speed (fabric.uplink_speed_gbps, default speed_gbps)

    @property
    def spine_radix(self) -> int:
        return self.spine.radix(self.speed_gbps)

    @property
    def core_radix(self) -> int:
        return self.core.radix(self.speed_gbps)

    @property
    def name(self) -> str:
        """For messages: the model, or spine/core models where they differ."""
        return self.spine.id if self.spine.id == self.core.id else f"{self.spine.id} spines / {self.core.id} cores"


@dataclass(frozen=True)
class ClosShape:
    """The shape a spec section asks of a Clos. Error paths of sizing name the section's
    keys as `("fabric", key)`; an extra fabric maps them onto its own entry."""

    topology: str  # fat-tree | rail-optimized (the management network: its own one-tier kind)
    tiers: int | str  # 1, 2, 3 or "auto"
    leaf_ratio: Ratio  # leaf downlink : uplink bandwidth asked
    spine_ratio: Ratio  # spine downlink : uplink bandwidth asked (three tiers)
    scalable_unit: int | None
    servers_per_leaf: int | None
    core_switch: str | None  # the core model the section names (a two-tier design has no core tier for it)
    growth: Growth | None  # the size the upper tiers are built for
    size_path: tuple[str, ...]  # the spec field that sets the cluster size: ("servers",) or ("gpus",)
    unit_keys: tuple[str, ...] = COMPUTE_UNIT_KEYS  # the unit keys the section can set (for the notes' advice)

    @property
    def rail_optimized(self) -> bool:
        return self.topology == "rail-optimized"

    @classmethod
    def of_spec(cls, spec: Spec) -> ClosShape:
        """The compute fabric's shape: the spec's `fabric:` section and `growth:`."""
        fabric = spec.fabric
        return cls(fabric.topology, fabric.tiers, fabric.oversubscription.leaf, fabric.oversubscription.spine,
                   fabric.scalable_unit, fabric.servers_per_leaf, fabric.core_switch, spec.growth, size_field(spec))


@dataclass(frozen=True)
class SizingInputs:
    """Everything a Clos is sized from (resolve.size_clos)."""

    shape: ClosShape
    server: Server
    nics: NicGroup  # the NIC group that feeds the fabric: one rail per port
    switch: Switch  # the leaf model
    upper: UpperSwitches
    speed_gbps: int  # server-leaf links
    servers: int  # today's servers
    endpoints: tuple[Endpoints, ...] = ()

    @property
    def rails(self) -> int:
        return len(self.nics.ports)

    @property
    def leaf(self) -> sizing.LeafPorts:
        return sizing.LeafPorts.of(self.switch, self.speed_gbps, self.upper.speed_gbps)
