"""The catalog facts a plan carries, as typed records: what `Plan.facts` holds (expand/facts.py
writes it, plan.json keeps it as that plain dict, byte for byte), read back by attribute.

`PlanFacts.from_json` reads the dict of a fresh plan and of a loaded plan.json alike; keys
that older plan.json files lack take the defaults below. Stages after expand read facts only
through these records (FabricView.facts), never by string key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from collections.abc import Iterable, Sequence


if TYPE_CHECKING:
    from .model import Port


def _known(cls: type, rec: dict[str, Any]) -> dict[str, Any]:
    """The keys of `rec` that are fields of `cls` (a record may carry keys of a newer writer)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in rec.items() if k in names}


@dataclass(frozen=True, slots=True)
class IbFacts:
    """How an InfiniBand switch model appears to fabric management (catalog InfinibandFacts)."""

    ports_per_cage: int | None = None  # None: the port numbering is not established
    system_type: str | None = None  # ibdiagnet's SYSTEM-TYPE (IBNL name); None where unknown
    notes: str = ""

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> IbFacts | None:
        return None if rec is None else cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class SonicFacts:
    """What SONiC calls a switch model (catalog `sonic:`): its platform, the hwsku of each
    logical port speed where one is evidenced, and its PORT alias format."""

    platform: str  # sonic-buildimage device/<vendor>/<platform>/
    hwsku: dict[int, str]  # logical port speed (Gb/s) -> hwsku (plan.json's keys are text)
    port_alias: str | None = None  # None: the alias is the front-panel name

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> SonicFacts | None:
        if rec is None:
            return None
        return cls(rec["platform"], {int(k): v for k, v in rec.get("hwsku", {}).items()}, rec.get("port_alias"))

    def hwsku_for(self, speeds_gbps: Iterable[int]) -> str | None:
        """The hwsku of a switch whose ports in use run `speeds_gbps`. An hwsku is the port
        split SONiC boots with, so only a switch whose ports all run one speed gets one, and
        only where the catalog names the hwsku of that split; None elsewhere (config_db.json
        then leaves it out and the box keeps its own, catalog/sonic.py)."""
        speeds = set(speeds_gbps)
        return self.hwsku.get(speeds.pop()) if len(speeds) == 1 else None


@dataclass(frozen=True, slots=True)
class ManagementPortFacts:
    """A switch's out-of-band management port (catalog `management_port`), not in its port layout."""

    name: str
    form_factor: str
    gbps: int

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> ManagementPortFacts | None:
        return None if rec is None else cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class ModelFacts:
    """One catalog model in use: a switch, a server, a chip (part of its host) or an extra
    endpoint (UFM, storage head: no catalog model). Fields of other kinds are None."""

    kind: str  # switch | server | chip | endpoint
    vendor: str
    model: str
    part_number: str
    power_w: float | None
    rack_units: int | None
    confidence: str
    # switch
    protocol: str | None = None  # infiniband | ethernet
    nos: tuple[str, ...] | None = None  # None: a plan.json from before the facts recorded it
    infiniband: IbFacts | None = None  # an InfiniBand switch's port numbering and ibdiagnet type
    sonic: SonicFacts | None = None  # None: the catalog names no SONiC platform
    power_confidence: str | None = None
    power_source: str | None = None
    management_port: ManagementPortFacts | None = None  # None: no source shows one
    # server
    gpus: int | None = None
    nic: str | None = None
    nic_part_number: str | None = None
    nics: int = 0
    nics_built_in: bool = True
    scale_up_kind: str | None = None
    scale_up_domain_gpus: int | None = None
    scale_up_gbytes_per_s: float | None = None
    scale_up_wiring: str | None = None
    scale_up_ports_per_gpu: int | None = None
    scale_up_port_gbps: int | None = None
    # chip
    part_of: str | None = None  # its host server's catalog id

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> ModelFacts:
        known = _known(cls, rec)
        if known.get("nos") is not None:
            known["nos"] = tuple(known["nos"])
        if known.get("nics") is None:
            known.pop("nics", None)
        known["infiniband"] = IbFacts.from_json(known.get("infiniband"))
        known["sonic"] = SonicFacts.from_json(known.get("sonic"))
        known["management_port"] = ManagementPortFacts.from_json(known.get("management_port"))
        return cls(**known)

    def ib_port_numbers(self, ports: Sequence[Port]) -> list[int] | None:
        """The InfiniBand port number of each port (what ibnetdiscover and OpenSM print):
        cage c, lane l is `ports_per_cage * (c - 1) + l` where the catalog establishes the
        numbering (`infiniband.ports_per_cage`), None where it does not. The one place the
        rule lives: the InfiniBand files and verify's name matching both call it."""
        per_cage = self.infiniband.ports_per_cage if self.infiniband is not None else None
        return [per_cage * (int(p.cage) - 1) + p.lane for p in ports] if per_cage else None

    @property
    def sonic_port_alias(self) -> str | None:
        """The SONiC port alias style of a switch (catalog sonic.port_alias), None without one."""
        return self.sonic.port_alias if self.sonic is not None else None


@dataclass(frozen=True, slots=True)
class MediumFacts:
    """One medium (cable type) in use, with the transceiver each cage type takes on it."""

    description: str
    fiber: str
    cable_part_number: str
    cable_description: str
    reach_m: float | None
    jacket: str | None
    transceivers: dict[str, str | None]  # cage key -> transceiver id (None: the catalog has none)
    needs_transceivers: bool
    fit: str = "port"  # port | cage | split: what one cable serves
    lengths_m: tuple[float, ...] = ()
    parts: dict[str, str] = field(default_factory=dict)  # orderable length (`{:g}`) -> part number
    cable_power_w: float | None = None
    cable_confidence: str | None = None
    field_cable: bool = True  # pulled on the floor (False: a backplane or in-rack cord)
    end_form_factor: str | None = None  # a cable with its own connectors other than OSFP or RJ45
    lengths_published: bool = True

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> MediumFacts:
        known = _known(cls, rec)
        if "lengths_m" in known:
            known["lengths_m"] = tuple(known["lengths_m"] or ())
        return cls(**known)


@dataclass(frozen=True, slots=True)
class TransceiverFacts:
    description: str
    fiber: str | None
    ports: int  # optical ports of one module (a twin-port OSFP: 2)
    reach_m: float | None
    power_w: float | None
    connector: str | None
    confidence: str
    part_number: str | None  # None: the vendor publishes none (from_json resolves "same as the id")

    @classmethod
    def from_json(cls, part: str, rec: dict[str, Any]) -> TransceiverFacts:
        # plan.json records part_number only where it is not the id (null: not published)
        return cls(**{**_known(cls, rec), "part_number": rec.get("part_number", part)})


@dataclass(frozen=True, slots=True)
class HostNicFacts:
    """A NIC of a server's host topology: its RDMA device, PCI address and nearest GPUs."""

    name: str | None  # the RDMA device (mlx5_0); None where the catalog does not name it
    busid: str
    near_gpus: tuple[int, ...]  # GPU indices on its PCIe switch; empty for a NIC near none


@dataclass(frozen=True, slots=True)
class HostTopologyFacts:
    """A server type's PCIe/NUMA layout (catalog host_topology/): its NICs as records, and
    the whole catalog record for the NCCL topology file (render/nccl.py reads it back as the
    catalog's HostTopology: the plan may not import the catalog's models)."""

    nics: tuple[HostNicFacts, ...]
    catalog_record: dict[str, Any]  # the catalog entry as plan.json holds it (model_dump)

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> HostTopologyFacts | None:
        if rec is None:
            return None
        nics = tuple(HostNicFacts(n.get("name"), n["busid"], tuple(n.get("near_gpus") or ())) for n in rec.get("nics", []))
        return cls(nics, rec)


@dataclass(frozen=True, slots=True)
class ScaleUpPartFacts:
    """An NVLink switch tray or backplane outside the servers (catalog scale_up_parts): a BOM line."""

    kind: str  # switch-tray | backplane
    vendor: str
    model: str
    confidence: str
    part_number: str | None = None  # None: no orderable number (ships with the rack)
    part_of: str = ""  # what it ships with, e.g. "GB200 NVL72 rack"
    rack_units: int | None = None
    switch_asics: int | None = None  # NVSwitch chips per tray
    power_w: int | None = None  # None: not published

    @classmethod
    def from_json(cls, rec: dict[str, Any]) -> ScaleUpPartFacts:
        return cls(**_known(cls, rec))


@dataclass(frozen=True, slots=True)
class PriceFacts:
    """The user's price file as the plan carries it (catalog/prices.py PriceList.as_facts)."""

    currency: str  # ISO 4217
    source: str | None  # where the prices come from, as the file says
    file: str | None  # the price file's name
    parts: dict[str, Decimal]  # unit price by part number, exact (plan.json keeps decimal strings)

    @classmethod
    def from_json(cls, rec: dict[str, Any] | None) -> PriceFacts | None:
        if rec is None:
            return None
        return cls(rec["currency"], rec.get("source"), rec.get("file"),
                   {k: Decimal(v) for k, v in rec.get("parts", {}).items()})


@dataclass(frozen=True, slots=True)
class BomFacts:
    """The spec's `bom:` as the plan carries it (expand/facts.attach_bom)."""

    spares_percent: dict[str, float] = field(default_factory=dict)
    prices: PriceFacts | None = None  # None: the spec names no price file


@dataclass(frozen=True, slots=True)
class PlanFacts:
    models: dict[str, ModelFacts]
    media: dict[str, MediumFacts]
    transceivers: dict[str, TransceiverFacts]
    host_topology: dict[str, HostTopologyFacts | None]  # server model -> its host topology (None: not in the catalog)
    scale_up_parts: dict[str, ScaleUpPartFacts]  # NVLink switch trays, backplanes: BOM lines
    bom: BomFacts | None  # None: the spec has no `bom:`

    @classmethod
    def from_json(cls, facts: dict[str, Any]) -> PlanFacts:
        bom = facts.get("bom")
        return cls(
            models={k: ModelFacts.from_json(v) for k, v in facts.get("models", {}).items()},
            media={k: MediumFacts.from_json(v) for k, v in facts.get("media", {}).items()},
            transceivers={k: TransceiverFacts.from_json(k, v) for k, v in facts.get("transceivers", {}).items()},
            host_topology={k: HostTopologyFacts.from_json(v) for k, v in facts.get("host_topology", {}).items()},
            scale_up_parts={k: ScaleUpPartFacts.from_json(v) for k, v in facts.get("scale_up_parts", {}).items()},
            bom=None if bom is None else BomFacts(dict(bom.get("spares_percent", {})), PriceFacts.from_json(bom.get("prices"))))

    def model(self, model_id: str | None) -> ModelFacts | None:
        """The facts of a catalog model, None where the plan has none (no switch, unknown id)."""
        return None if model_id is None else self.models.get(model_id)

    @property
    def prices(self) -> PriceFacts | None:
        return None if self.bom is None else self.bom.prices

    @property
    def spares_percent(self) -> dict[str, float]:
        return {} if self.bom is None else self.bom.spares_percent
