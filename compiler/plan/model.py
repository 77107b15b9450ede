"""The plan IR: devices, their ports (used or spare), and every link.

Kept lean for a million GPUs: a port is a (device, index) pair into a `PortLayout`
that every device of the same model shares, and links live in a columnar
`LinkTable` of numpy arrays rather than one Python object each. A 131,072-GPU
three-tier plan has ~390k links and ~790k ports and fits in tens of MB.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..progress import traced
from ..topology import DesignRecord, design_record
from .fabric_record import COMPUTE, SCALE_UP, scale_up_fabric
from .fabric_view import FabricView, build_view
from .physical import Physical  # noqa: F401  (the Plan's physical side)
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .fabric_record import Fabric
    from .routing import RoutingPlan
    from .scale_up import ScaleUpDomains

NO_LINK = -1
DEFAULT_SERDES_GBPS = 100  # 100G-PAM4: NDR, 400GbE, 800GbE (catalog Cage.serdes_gbps default)


@dataclass(frozen=True, slots=True)
class Port:
    """One logical port of a device model, as on its front panel."""

    name: str  # e.g. 1/17/2 (QM9700), swp3s1 (Cumulus), osfp4-p2 (DGX)
    cage: str  # cage label, e.g. 17 or osfp4
    lane: int  # 1-based logical port within the cage (breakout lane)
    speed_gbps: int
    form_factor: str  # OSFP, QSFP112, ...
    top: str  # finned | flat
    cage_gbps: int
    serdes_gbps: int = DEFAULT_SERDES_GBPS  # the cage's electrical lane rate (catalog Cage.serdes_gbps)

    @property
    def cage_key(self) -> str:
        return cage_key(self.form_factor, self.top, self.cage_gbps, self.serdes_gbps)


def cage_key(form_factor: str, top: str, cage_gbps: int, serdes_gbps: int = DEFAULT_SERDES_GBPS) -> str:
    """A cage type, what a transceiver or a copper cable end must fit: `OSFP flat 800G`.
    Lanes other than 100G-PAM4 (the catalog's default) are named, so an XDR cage is
    `OSFP flat 800G 200G-SerDes` and never shares a module with an NDR one."""
    base = f"{form_factor} {top} {cage_gbps}G"
    return base if serdes_gbps == DEFAULT_SERDES_GBPS else f"{base} {serdes_gbps}G-SerDes"


@dataclass(frozen=True, slots=True)
class PortLayout:
    """The ports of one device model at one fabric speed, in panel order."""

    id: str
    ports: tuple[Port, ...]

    def __len__(self) -> int:
        return len(self.ports)

    def cage_ports(self, cage: str) -> int:
        """Logical ports of one cage in this layout (its breakout)."""
        return sum(1 for p in self.ports if p.cage == cage)


@dataclass(slots=True)
class Device:
    name: str
    role: str  # server, leaf, spine, core, or an extra-endpoint role (ufm, storage, ...)
    model: str  # catalog id (or the role for extra endpoints)
    layout: str  # PortLayout id
    tier: int  # 0 endpoints, 1 leaf, 2 spine, 3 core
    index: int  # 1-based within its group (SU, pod, core group)
    su: int | None = None  # scalable unit (Clos, multi-plane)
    # pod and group are family coordinates: what each means per family is
    # its topology descriptor's pod_means / group_means (plan.view.device_coordinates)
    pod: int | None = None  # Clos pod (three tiers); dragonfly group; a management leaf's pod
    rail: int | None = None
    group: int | None = None  # core group (Clos); plane (multi-plane); host server (torus chips); a management leaf's number
    fabric: str = "compute"
    port_offset: int = 0  # first global port id; set by Plan.add_devices


def is_management_leaf(d: Device) -> bool:
    """A leaf of extra endpoints only (UFM, storage heads: expand/endpoints.py), outside every
    SU: placed with the spines, left out of the compute leaves' check figures."""
    # A multi-plane ToR is a leaf with a group (its plane) too, but always of a rail.
    return d.role == "leaf" and d.group is not None and d.rail is None and d.su is None


@dataclass
class LinkTable:
    """Every link as columns. End a is the lower tier, end b the upper tier."""

    a_dev: np.ndarray
    a_port: np.ndarray
    b_dev: np.ndarray
    b_port: np.ndarray
    kind: np.ndarray  # index into Plan.link_kinds
    media: np.ndarray  # index into Plan.media
    speed_gbps: np.ndarray

    @classmethod
    def concat(cls, parts: list[LinkTable]) -> LinkTable:
        if not parts:
            z = np.zeros(0, dtype=np.int32)
            return cls(z, z, z, z, z.astype(np.int16), z.astype(np.int16), z)
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in cls.__dataclass_fields__))

    def __len__(self) -> int:
        return int(self.a_dev.shape[0])


@dataclass
class Plan:
    name: str
    devices: list[Device]
    layouts: dict[str, PortLayout]
    links: LinkTable
    link_kinds: list[str]  # e.g. server-leaf, ufm-leaf, leaf-spine, spine-core
    media: list[str]  # media ids used by links
    design: dict  # resolved structure: tiers, per-tier port splits, counts (plain JSON values)
    notes: list[str] = field(default_factory=list)
    facts: dict = field(default_factory=dict)  # catalog facts in use: models, media, transceivers
    requirements: dict = field(default_factory=dict)  # what must hold (from the spec), plain JSON values
    analysis: dict = field(default_factory=dict)  # analysis settings (collective message sizes, latency)
    physical: Physical | None = None  # racks, rack/U per device, lengths per link (spec `layout`)
    # Ethernet: the routing (addresses, ASNs, NOS port names: plan/routing.py) of the fabric this
    # plan is read as: the compute fabric's on a whole plan (the same object as
    # fabrics["compute"].routing, sized to that fabric), a fabric's own on its fabric plan.
    routing: RoutingPlan | None = None
    # every fabric by name, compute first (plan/fabric_record.py): its devices and links as index
    # ranges, its design and routing; the scale-up domains last (Plan.scale_up). Empty only
    # on a plan a builder has not finished (expand sets it); plan/fabrics.py reads an empty
    # one as a single compute fabric.
    fabrics: dict[str, Fabric] = field(default_factory=dict)
    _by_name: dict[str, int] | None = field(default=None, repr=False)
    _memo: dict = field(default_factory=dict, repr=False)
    _view: FabricView | None = field(default=None, repr=False)

    @property
    def view(self) -> FabricView:
        """The typed view every stage after expand reads (plan/fabric_view.py): this plan's
        design record, its facts as records, its server range (checked), its routing. Built
        by expand's last step (seal_view); a plan read from plan.json or materialised for
        one fabric builds its own on first read."""
        if self._view is None:
            self.seal_view()
        assert self._view is not None
        return self._view

    def seal_view(self) -> FabricView:
        """Build the view from `design`, `facts`, the devices and the routing, as they are now;
        PlanContractError (a ValueError) where the servers do not come first."""
        self._view = build_view(self.design, self.facts, self.devices, self.routing)
        return self._view

    def drop_view(self) -> None:
        """Forget the view: what it is built from changed (expand re-attaching facts)."""
        self._view = None

    @property
    def scale_up(self) -> ScaleUpDomains | None:
        """Which GPUs share an NVLink domain: the scale-up fabric's record (plan/scale_up.py)."""
        rec = self.fabrics.get(SCALE_UP)
        return None if rec is None else rec.domains

    @scale_up.setter
    def scale_up(self, domains: ScaleUpDomains | None) -> None:
        self.fabrics.pop(SCALE_UP, None)
        if domains is not None:
            self.fabrics[SCALE_UP] = scale_up_fabric(domains, self.fabrics.get(COMPUTE))

    @property
    def design_record(self) -> DesignRecord:
        """The design as a typed record of its family (compiler/topology/records.py), built on
        each read: expand's, while it still adds keys to `design`. Every later stage reads
        `view.design`, the record the sealed view holds."""
        return design_record(self.design)

    def memo(self, key: str, compute):
        """Derived data computed once per plan (views, BOM) and shared by every output."""
        if key not in self._memo:
            with traced(f"memo {key}"):  # which process computed it, at what cost ($CLUSTERC_TRACE)
                self._memo[key] = compute(self)
        return self._memo[key]

    def memoized(self, key: str) -> object | None:
        """What memo(key, ...) has computed in this process; None before (computes nothing)."""
        return self._memo.get(key)

    # --- derived views (cheap, cached where used often) ---------------------------------
    def device_index(self, name: str) -> int:
        if self._by_name is None:
            self._by_name = {d.name: i for i, d in enumerate(self.devices)}
        return self._by_name[name]

    def port_count(self) -> int:
        """Ports of every device: the last device's first global port id plus its ports. Every
        builder sets port_offset as the running sum of the ports before (plan_invariants
        checks it), so a sum over every device (0.07 s at 524,288 GPUs, per call) says no more."""
        if not self.devices:
            return 0
        last = self.devices[-1]
        return last.port_offset + len(self.layouts[last.layout])

    def port_offsets(self) -> np.ndarray:
        return np.fromiter((d.port_offset for d in self.devices), dtype=np.int64, count=len(self.devices))

    def link_of_port(self) -> np.ndarray:
        """For every global port id, the link index it carries or NO_LINK (spare)."""
        offsets = self.port_offsets()
        out = np.full(self.port_count(), NO_LINK, dtype=np.int64)
        ids = np.arange(len(self.links), dtype=np.int64)
        out[offsets[self.links.a_dev] + self.links.a_port] = ids
        out[offsets[self.links.b_dev] + self.links.b_port] = ids
        return out

    def roles(self) -> list[str]:
        """Roles in plan order (servers, endpoints, leaf, spine, core)."""
        seen: dict[str, None] = {}
        for d in self.devices:
            seen.setdefault(d.role, None)
        return list(seen)

    def count_by_role(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for d in self.devices:
            out[d.role] = out.get(d.role, 0) + 1
        return out

    def count_by_kind(self) -> dict[str, int]:
        counts = np.bincount(self.links.kind.astype(np.int64), minlength=len(self.link_kinds))
        return {k: int(c) for k, c in zip(self.link_kinds, counts, strict=True) if c}
