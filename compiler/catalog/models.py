"""Pydantic models of catalog entries (the catalog is small: validation cost is nil)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Confidence = Literal["vendor", "third-party", "inferred", "unconfirmed"]
FormFactor = Literal["OSFP", "QSFP112", "QSFP-DD", "QSFP28", "RJ45", "backplane"]
Top = Literal["finned", "flat", "none"]
FiberKind = Literal["mmf", "smf", "dac", "lacc", "aec", "aoc", "cat6"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Cage(_Strict):
    """A physical port cage: what a transceiver or cable plugs into."""

    form_factor: FormFactor
    top: Top = "finned"  # finned at switches; flat (riding heat sink) at DGX/HCA
    gbps: int = Field(gt=0)  # total electrical bandwidth of the cage, Gb/s


class PortMode(_Strict):
    """How a switch's cages are split into logical ports at one speed."""

    ports_per_cage: int = Field(ge=1, le=8)
    name: str  # python format with {cage} {lane} (1-based) {lane0} (0-based) {index} (1-based)


class Switch(_Strict):
    id: str
    vendor: str
    model: str
    part_number: str
    asic: str
    protocol: Literal["infiniband", "ethernet"]
    cages: int = Field(gt=0)
    cage: Cage
    modes: dict[int, PortMode]  # logical port speed (Gb/s) -> split
    rack_units: int | None = None
    power_w: int | None = None  # typical without optics; None where no datasheet says
    nos: list[str] = []
    # SerDes lanes behind one cage: SONiC names a port after its first lane (Ethernet0,
    # Ethernet8, ...) and EOS after its first lane in the cage (Ethernet1/5).
    serdes_per_cage: int | None = None
    # NOS -> port-name format (same fields as PortMode.name plus {serdes0}: 0-based first
    # lane of the port on the switch, {cage_serdes1}: 1-based first lane in its cage).
    # A NOS not listed uses the front-panel name (PortMode.name).
    nos_port_names: dict[str, str] = {}
    confidence: Confidence
    sources: list[str]
    notes: str = ""

    def radix(self, speed_gbps: int) -> int:
        return self.cages * self.modes[speed_gbps].ports_per_cage


class NicPort(_Strict):
    """One fabric-facing port of a server, in rail order (first entry = rail 1)."""

    name: str  # front-panel name used on labels, e.g. osfp4-p2
    cage: str  # cage name on the chassis, e.g. osfp4
    lane: int = 1  # logical port within the cage
    gpu: int | None = None  # GPU index this NIC serves (rail-optimized pairing)
    device: str | None = None  # OS RDMA name, e.g. mlx5_0


class NicGroup(_Strict):
    """The ports a server brings to one fabric (compute, storage, management)."""

    nic: str  # NIC model, e.g. ConnectX-7
    nic_part_number: str | None = None
    built_in: bool = True  # part of the server (DGX) rather than ordered separately
    nics: int = Field(ge=1)  # NIC count (a twin-port cage may carry two NICs)
    speed_gbps: int = Field(gt=0)
    cage: Cage
    ports: list[NicPort]
    port_map_confidence: Confidence
    notes: str = ""


class ScaleUp(_Strict):
    kind: str  # nvlink4, nvlink5, xgmi, gaudi-roce, ici
    domain_gpus: int = Field(ge=1)
    gbytes_per_s_per_gpu: int | None = None  # bidirectional, GB/s


class Server(_Strict):
    id: str
    vendor: str
    model: str
    gpu: str
    gpus: int = Field(ge=1)
    hostname_prefix: str
    rack_units: int | None = None
    power_w: int | None = None  # maximum
    scale_up: ScaleUp | None = None
    nic_groups: dict[str, NicGroup]  # "compute", "storage", ...
    confidence: Confidence
    sources: list[str]
    notes: str = ""


class Transceiver(_Strict):
    part_number: str
    description: str
    fiber: FiberKind
    form_factor: FormFactor
    top: Top
    cage_gbps: int
    ports: int = Field(ge=1)  # logical ports it serves (twin-port = 2)
    reach_m: float
    power_w: float | None = None
    connector: str
    confidence: Confidence
    sources: list[str] = []


class Cable(_Strict):
    id: str
    part_number: str  # orderable prefix; length suffix chosen when lengths exist
    description: str
    fiber: FiberKind
    reach_m: float
    lengths_m: list[float] = []
    jacket: str = ""
    confidence: Confidence
    sources: list[str] = []


class Media(_Strict):
    """A way to build one logical link: the cable kind plus transceivers chosen per end."""

    id: str
    description: str
    fiber: FiberKind
    cable: str  # Cable id
    needs_transceivers: bool = True
