"""Pydantic models of catalog entries (the catalog is small: validation cost is nil)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

Confidence = Literal["vendor", "third-party", "inferred", "unconfirmed"]
FormFactor = Literal["OSFP", "QSFP112", "QSFP-DD", "QSFP28", "RJ45", "backplane"]
Top = Literal["finned", "flat", "none"]
FiberKind = Literal["mmf", "smf", "dac", "lacc", "aec", "aoc", "cat6", "trace", "vendor"]


class _Strict(BaseModel):
    # strict: a value is of its field's type as YAML 1.2 reads it; no "400" -> 400,
    # 1024.0 -> 1024 or true -> 1 behind the user's back (same rule as the spec).
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


def _speed_key(value):
    """Mapping keys are text as written (`400:`); a speed key is its decimal digits."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 6:
        return int(value)
    return value


SpeedKey = Annotated[int, BeforeValidator(_speed_key)]


# Port and NIC names reach cabling sheets and fabric-manager files (node-name maps,
# topology files) inside quotes: no quotes, spaces, '#' or newlines can get through.
PortName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_./:+-]{0,31}$")]
PortNameFormat = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_./:+{}-]{1,48}$")]


class Cage(_Strict):
    """A physical port cage: what a transceiver or cable plugs into."""

    form_factor: FormFactor
    top: Top = "finned"  # finned at switches; flat (riding heat sink) at DGX/HCA
    gbps: int = Field(gt=0)  # total electrical bandwidth of the cage, Gb/s
    # Electrical lane rate: a module runs only at its cage's signalling, so an XDR cage
    # (200G-PAM4 lanes: ConnectX-8, Quantum-X800) never takes an NDR module of the same
    # size (8 x 100G-PAM4), nor a 50G-lane QSFP-DD a 100G one. 100G-PAM4 (NDR, 400GbE,
    # 800GbE; NVIDIA's LinkX 100G-PAM4 line) is what most of the catalog runs, hence the default.
    serdes_gbps: int = Field(100, gt=0)


class PortMode(_Strict):
    """How a switch's cages are split into logical ports at one speed."""

    ports_per_cage: int = Field(ge=1, le=8)
    name: PortNameFormat  # python format with {cage} {lane} (1-based) {lane0} (0-based) {index} (1-based)


class InfinibandFacts(_Strict):
    """How an InfiniBand switch appears to fabric management (OpenSM, ibnetdiscover, ibdiagnet)."""

    # IB port number of logical port `lane` of cage `cage`: ports_per_cage * (cage - 1) + lane.
    # None where the numbering is not established (the files that need it are not written).
    ports_per_cage: int | None = Field(None, ge=1, le=8)
    # ibdiagnet topology-file SYSTEM-TYPE (the IBNL name); None where unknown
    system_type: str | None = Field(None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")
    confidence: Confidence
    sources: list[str] = []
    notes: str = ""


class NosFile(_Strict):
    """One file a switch running the NOS gets in its folder configs/<switch>/."""

    path: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
    template: Annotated[str, StringConstraints(pattern=r"^[a-z0-9_-]+/[A-Za-z0-9._-]+\.j2$")]  # under templates/
    peering: Literal["numbered", "unnumbered"] | None = None  # written only with this peering; None: always


class NosCapabilities(_Strict):
    """What a NOS's files can spell; a spec that asks for more is refused."""

    bgp_unnumbered: bool
    # Per-packet adaptive routing on the fabric ports (Spectrum-X: NVUE `router adaptive-routing`);
    # False where the NOS's files have no way to say it (the file then says so).
    adaptive_routing: bool = False
    # The switch ASICs (switches.yaml `asic`) the NOS runs it on: a fabric is adaptively routed
    # only where every switch has one of them (the files turn it on only there).
    adaptive_routing_asics: list[str] = []
    # Its files set the RoCE profile's QoS (trust DSCP, PFC, ECN, ETS) on the switch ports: the
    # fabric is lossless RoCE, so the servers' NICs on it get the same profile (host-configs/).
    roce_qos: bool = False


class NosLab(_Strict):
    """How lab tools run the NOS: containerlab's kind and image, NVIDIA Air's os (None: Air has no image of it)."""

    containerlab_kind: str
    containerlab_image: str
    air_os: str | None = None


class Nos(_Strict):
    """A network operating system clusterc writes switch configs for (data/nos.yaml)."""

    id: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
    name: str
    protocol: Literal["ethernet"]
    port_names: str  # key in Switch.nos_port_names; a switch without it keeps its panel names
    files: list[NosFile] = Field(min_length=1)
    port_mtu_bytes: int | None = Field(None, ge=68)  # set on every switch port; None: the files set none
    role_types: dict[str, str] = {}  # switch role -> the NOS's device type (SONiC DEVICE_METADATA.type)
    capabilities: NosCapabilities
    # Where the files name the NOS's own RoCE profile (NVUE `qos roce mode lossless`) instead of
    # spelling the values, those built-in values: the RoCE profile must equal them, or the
    # switch would silently run other numbers than the hosts (render/structured_config.py).
    builtin_roce: dict[str, int | list[int]] | None = None
    # Where the NOS sizes lossless headroom from each port's cable length (SONiC CABLE_LENGTH,
    # looked up in the platform's pg_profile_lookup.ini): the lengths its table lists, and the
    # length by the role of the cable's upper end where the plan has no layout (so no lengths)
    cable_length_classes_m: list[int] = []
    default_cable_length_m: dict[str, int] = {}
    lab: NosLab
    sources: list[str]

    def files_for(self, peering: str) -> tuple[tuple[str, str], ...]:
        """(path in the switch's folder, template) of every file a switch gets with this peering."""
        return tuple((f.path, f.template) for f in self.files if f.peering in (None, peering))


class PublishedPower(_Strict):
    """A part's power as its datasheet publishes it: typical and maximum where given, and
    where from. `power_w` beside it stays the one figure budgets add up (see data/*.yaml);
    `source: null` with a `note` records that no datasheet figure was found."""

    typical_w: float | None = None
    max_w: float | None = None
    source: str | None = None
    # vendor: read on the maker's own page; secondary: a third party quoting it (the source
    # names both). None with no figure.
    confidence: Literal["vendor", "secondary"] | None = None
    note: str = ""


class SonicPlatform(_Strict):
    """What SONiC calls a switch model (DEVICE_METADATA platform and hwsku): the hwsku is the
    port split SONiC boots with, so it is per logical port speed."""

    platform: str  # sonic-buildimage device/<vendor>/<platform>/
    hwsku: dict[SpeedKey, str] = {}  # logical port speed (Gb/s) -> hwsku folder under the platform
    # PORT alias as the platform spells it (port_config.ini, platform.json breakout_modes): a format
    # with {cage} (1-based) and {breakout} ('' for a cage of one port, else a, b, c, ... by the
    # port's place in its cage). None: the alias is the front-panel name. SONiC's LLDP sends the
    # alias as port id, so neighbours print it (verify reads it).
    port_alias: PortNameFormat | None = None
    sources: list[str] = []

    @model_validator(mode="after")
    def _alias_fields(self):
        if self.port_alias is not None:
            try:
                self.port_alias.format(cage=1, breakout="a")
            except (KeyError, IndexError, ValueError) as e:
                raise ValueError(f"port_alias {self.port_alias!r}: only {{cage}} and {{breakout}} can be filled in ({e})") from e
        return self


class CageGroup(_Strict):
    """A second group of cages of another type, numbered on after the switch's own (`cages`):
    a management switch's uplinks (SN2201: 4 x 100GbE QSFP28, swp49-52, beside 48 x 1GbE
    RJ45). Its speeds are its own: a speed names one group, so a port's speed says which."""

    cages: int = Field(gt=0)
    cage: Cage
    modes: dict[SpeedKey, PortMode]


class ManagementPort(_Strict):
    """The switch's out-of-band management port (eth0 on Cumulus and SONiC): a separate
    RJ45 beside the data ports, cabled into the management (OOB) network."""

    name: PortName
    cage: Cage
    sources: list[str]


class Switch(_Strict):
    id: str
    vendor: str
    model: str
    part_number: str
    asic: str
    protocol: Literal["infiniband", "ethernet"]
    cages: int = Field(gt=0)
    cage: Cage
    modes: dict[SpeedKey, PortMode]  # logical port speed (Gb/s) -> split
    rack_units: int | None = None
    power_w: int | None = None  # typical without optics; None where no datasheet says
    power: PublishedPower = PublishedPower()
    nos: list[str] = []  # ids in data/nos.yaml of the NOSes this model runs (catalog load checks them)
    infiniband: InfinibandFacts | None = None  # protocol infiniband only
    # SerDes lanes behind one cage: SONiC names a port after its first lane (Ethernet0,
    # Ethernet8, ...) and EOS after its first lane in the cage (Ethernet1/5).
    serdes_per_cage: int | None = None
    # NOS naming key (Nos.port_names in data/nos.yaml) -> port-name format (same fields as
    # PortMode.name plus {serdes0}: 0-based first lane of the port on the switch,
    # {cage_serdes1}: 1-based first lane in its cage). A NOS whose key is not listed uses
    # the front-panel name (PortMode.name).
    nos_port_names: dict[str, str] = {}
    sonic: SonicPlatform | None = None  # DEVICE_METADATA platform/hwsku, where evidenced
    uplink_cages: CageGroup | None = None  # a second cage type after `cages` (a management switch's uplinks)
    # None where no source shows one (the OOB network then has no port to serve for it)
    management_port: ManagementPort | None = None
    confidence: Confidence
    sources: list[str]
    notes: str = ""

    def radix(self, speed_gbps: int) -> int:
        """Ports at `speed_gbps`: of the main cages, or of the uplink group at its speeds."""
        if speed_gbps not in self.modes and self.uplink_cages is not None and speed_gbps in self.uplink_cages.modes:
            return self.uplink_cages.cages * self.uplink_cages.modes[speed_gbps].ports_per_cage
        return self.cages * self.modes[speed_gbps].ports_per_cage

    def uplink_speeds(self) -> list[int]:
        """Speeds of the uplink cage group (none without one)."""
        return sorted(self.uplink_cages.modes) if self.uplink_cages is not None else []

    @model_validator(mode="after")
    def _groups_have_their_own_speeds(self):
        # a port's speed tells its group (layouts and port names are built from it)
        if self.uplink_cages is not None and set(self.uplink_cages.modes) & set(self.modes):
            raise ValueError(f"uplink_cages speeds {sorted(set(self.uplink_cages.modes) & set(self.modes))} are also "
                             f"modes of the main cages: a speed must name one cage group")
        return self

    @model_validator(mode="after")
    def _lanes_fill_the_cage(self):
        # Two statements of one fact (a cage's lanes and their rate): they must agree, or the
        # module chosen by lane rate would not be the one the SerDes count implies.
        if self.serdes_per_cage and self.serdes_per_cage * self.cage.serdes_gbps != self.cage.gbps:
            raise ValueError(f"cage of {self.cage.gbps}G is not serdes_per_cage {self.serdes_per_cage} x "
                             f"serdes_gbps {self.cage.serdes_gbps}G (cage.serdes_gbps defaults to 100)")
        return self


class NicPort(_Strict):
    """One fabric-facing port of a server, in rail order (first entry = rail 1)."""

    name: PortName  # front-panel name used on labels, e.g. osfp4-p2
    cage: PortName  # cage name on the chassis, e.g. osfp4
    lane: int = 1  # logical port within the cage
    gpu: int | None = None  # GPU index this NIC serves (rail-optimized pairing)
    device: PortName | None = None  # OS RDMA name, e.g. mlx5_0


class NicGroup(_Strict):
    """The ports a server brings to one fabric (compute, storage, management)."""

    nic: str  # NIC model, e.g. ConnectX-7
    nic_part_number: str | None = None
    built_in: bool = True  # part of the server (DGX) rather than ordered separately
    nics: int = Field(ge=1)  # NIC count (a twin-port cage may carry two NICs)
    speed_gbps: int = Field(gt=0)
    cage: Cage
    ports: list[NicPort] = Field(max_length=64)  # each becomes a CA: 64 fit a device's GUID block
    port_map_confidence: Confidence
    notes: str = ""


class ScaleUp(_Strict):
    kind: str  # nvlink4, nvlink5, xgmi, gaudi-roce, ici
    domain_gpus: int = Field(ge=1)
    gbytes_per_s_per_gpu: int | None = None  # bidirectional, GB/s
    # Accelerators whose own links form the network (TPU ICI, Gaudi scale-up Ethernet):
    ports_per_gpu: int | None = Field(None, ge=1)  # chip-to-chip ports per accelerator
    port_gbps: int | None = Field(None, gt=0)  # one direction, per port
    port_gbps_confidence: Confidence | None = None
    wiring: Literal["switched", "torus", "full-mesh"] = "switched"
    host_grid: list[int] | None = None  # how a host's chips sit in a torus, e.g. [2, 2, 1]
    # A domain larger than one server is switched by parts outside the servers (NVL72: 9 NVLink
    # switch trays and the cable-cartridge backplane per rack): ScaleUpPart ids. None: the
    # switch chips sit inside the chassis (DGX/HGX baseboard NVSwitches), no BOM line of their own.
    switch_tray: str | None = None
    switch_trays_per_domain: int | None = Field(None, ge=1)
    backplane: str | None = None  # one set per domain
    domain_name: str | None = None  # what one multi-server domain is called, e.g. "NVL72 rack"
    gbytes_per_s_per_gpu_confidence: Confidence | None = None
    sources: list[str] = []


class ScaleUpPart(_Strict):
    """A part of a scale-up fabric that is not a server: in the BOM, never a field cable."""

    id: str
    kind: Literal["switch-tray", "backplane"]
    vendor: str
    model: str
    part_number: str | None = None  # None: no orderable number in our sources (ships with the rack)
    part_of: str = ""  # what it ships with, e.g. "GB200 NVL72 rack"
    rack_units: int | None = None
    switch_asics: int | None = None  # NVSwitch chips per tray
    power_w: int | None = None
    confidence: Confidence
    sources: list[str]
    notes: str = ""


class Server(_Strict):
    id: str
    vendor: str
    model: str
    gpu: str
    gpus: int = Field(ge=1)
    hostname_prefix: str
    rack_units: int | None = None
    depth_mm: int | None = None  # chassis depth; a rack must be at least this deep
    power_w: int | None = None  # maximum
    scale_up: ScaleUp | None = None
    nic_groups: dict[str, NicGroup]  # "compute", "storage", ...
    no_host_topology: str = ""  # why the catalog has no host_topology entry (NCCL file) for this server
    confidence: Confidence
    sources: list[str]
    notes: str = ""

    @model_validator(mode="after")
    def _whole_servers_per_domain(self):
        # A scale-up domain is whole servers (the plan finds a server's domain by division).
        if self.scale_up and (self.scale_up.domain_gpus < self.gpus or self.scale_up.domain_gpus % self.gpus):
            raise ValueError(f"scale_up.domain_gpus {self.scale_up.domain_gpus} is not a whole number of servers "
                             f"of {self.gpus} GPUs")
        return self


class Transceiver(_Strict):
    # The catalog key. Where the vendor publishes no part number (XDR modules: none found
    # in NVIDIA's lists) the id names the module and `part_number` is null: the BOM then says
    # "part number not published" rather than print a name where a number belongs.
    id: str
    part_number: str | None
    description: str
    fiber: FiberKind
    form_factor: FormFactor
    top: Top
    cage_gbps: int
    serdes_gbps: int = Field(100, gt=0)  # electrical lane rate it runs (Cage.serdes_gbps)
    ports: int = Field(ge=1)  # optical ports (MPO/LC), each one engine: twin-port = 2
    reach_m: float
    power_w: float | None = None
    power: PublishedPower = PublishedPower()
    connector: str
    confidence: Confidence
    sources: list[str] = []

    @model_validator(mode="before")
    @classmethod
    def _id_defaults_to_part_number(cls, data):
        # Entries with a published number are keyed by it (user catalogs written so keep working).
        if isinstance(data, dict) and "id" not in data and isinstance(data.get("part_number"), str):
            return {"id": data["part_number"], **data}
        return data


class CableEnd(_Strict):
    """The cage a cable's own connector plugs into (copper cables carry their ends)."""

    form_factor: FormFactor
    top: Top
    cage_gbps: int
    serdes_gbps: int = Field(100, gt=0)  # Cage.serdes_gbps


class Cable(_Strict):
    id: str
    part_number: str  # orderable prefix; length suffix chosen when lengths exist
    description: str
    fiber: FiberKind
    reach_m: float
    lengths_m: list[float] = []
    # False: the vendor sells fixed lengths but our sources list none (NVIDIA's splitter
    # fibers); ordered like a cable without lengths (the need rounded up to a whole metre)
    # and the BOM says to confirm the length. True with no lengths: made or bought per site.
    lengths_published: bool = True
    # Orderable part per length ("3": MFP7E10-N003); where absent the prefix stands.
    parts: dict[str, str] = {}
    power_w: float | None = None  # drawn from the host port, per cable (passive copper ~0)
    power: PublishedPower = PublishedPower()
    # Copper with integral connectors: the cage each end plugs into (end b = the
    # upper tier, the switch side of a splitter). Empty for fiber (transceivers decide).
    end_a: CableEnd | None = None
    end_b: CableEnd | None = None
    jacket: str = ""
    confidence: Confidence
    sources: list[str] = []

    def part_for(self, length_m: float) -> str:
        return self.parts.get(f"{length_m:g}", self.part_number)


class Media(_Strict):
    """A way to build one logical link: the cable kind plus transceivers chosen per end."""

    id: str
    description: str
    fiber: FiberKind
    cable: str  # Cable id
    needs_transceivers: bool = True
    # How one cable maps to logical links: `port` one link per cable (optics, a
    # transceiver per cage at each end); `cage` one cable joins two whole cages
    # (twin-port copper: both ports of a cage go to the same peer cage); `split`
    # one cable head feeds several ends: a copper splitter takes a whole switch cage at
    # end b; a fiber splitter (with transceivers) one optical port of the module at the
    # end that groups two logical ports per optical port, its legs one port each.
    fit: Literal["port", "cage", "split"] = "port"
    # Lower is preferred when several media reach: cost and power, cheapest first.
    preference: int = 100
    field_cable: bool = True  # false: board trace or backplane, in the plan but never pulled on the floor


# --- host topology: what NCCL_TOPO_FILE describes (NCCL's src/graph/topo.cc and xml.cc) ----
# Every bus id here must be evidenced (a dump, a vendor table, a published file); a
# switch that sysfs cannot show is marked virtual and uses NCCL's ffff domain.
BUSID_PATTERN = r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$"
HexId = Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{4}$")]
PciClass = Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{6}$")]
BusId = Annotated[str, StringConstraints(pattern=BUSID_PATTERN)]
# NCCL's kvDictPciGen keys (src/graph/topo.cc); anything else silently means Gen3.
PCI_LINK_SPEEDS = ("2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe", "5.0 GT/s PCIe",
                   "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe")
PciLinkSpeed = Literal["2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe", "5.0 GT/s PCIe",
                       "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe"]


class PciIds(_Strict):
    vendor: HexId
    device: HexId
    subsystem_vendor: HexId
    subsystem_device: HexId


class PciLink(_Strict):
    link_speed: PciLinkSpeed
    link_width: int = Field(ge=1, le=32)


class HostCpu(_Strict):
    """One NUMA node as NCCL's <cpu> (familyid/modelid as NCCL computes them: base + ext << 4)."""

    numaid: int = Field(ge=0)
    arch: Literal["x86_64", "arm64", "ppc64"]
    vendor: Literal["GenuineIntel", "AuthenticAMD", "CentaurHauls"] | None = None
    familyid: int | None = None
    modelid: int | None = None
    cpulist: str | None = Field(None, pattern=r"^\d+(-\d+)?(,\d+(-\d+)?)*$")  # Linux cpulist -> affinity


class HostPciSwitch(_Strict):
    busid: BusId
    cpu: int  # numaid of the CPU it hangs off
    parent: BusId | None = None  # an upper switch, for chained switches
    virtual: bool  # not a real device: a grouping sysfs cannot show (NCCL fills nothing for it)
    pci_class: PciClass = "0x060400"
    ids: PciIds | None = None
    link: PciLink


class HostGpu(_Strict):
    index: int = Field(ge=0)  # NVML / nvidia-smi index
    busid: BusId
    cpu: int
    switch: BusId | None = None
    pci_class: PciClass
    ids: PciIds | None = None
    link: PciLink
    sm: int | None = None  # compute capability x 10; needed for the full style


class HostNic(_Strict):
    name: str | None = Field(None, pattern=r"^[A-Za-z0-9_.-]{1,64}$")  # RDMA device name (mlx5_0): NCCL matches nets by it
    busid: BusId
    cpu: int
    switch: BusId | None = None
    pci_class: PciClass
    ids: PciIds | None = None
    link: PciLink
    speed_mbps: int | None = Field(None, gt=0)  # net@speed, Mb/s
    port: int = 1
    near_gpus: list[int] = []  # GPUs this NIC serves (rail pairing)


class HostTopology(_Strict):
    """A server type's PCIe/NUMA layout: the facts an NCCL topology file is written from."""

    id: str  # a server id in the catalog, or a cloud VM type
    description: str
    logical_cpus: int | None = Field(None, ge=1)  # nr_cpu_ids: sets the affinity mask width
    cpus: list[HostCpu]
    switches: list[HostPciSwitch] = []
    gpus: list[HostGpu]
    nics: list[HostNic] = []
    confidence: dict[str, str]  # per field group: how sure, and why
    sources: list[str]
    notes: list[str] = []
    # "virtual switches": the grouping is a modelling choice, not a board fact; said in every note
    reproduces: str | None = None  # a published NCCL file this entry must reproduce (tests)

    @model_validator(mode="after")
    def _consistent(self):
        numa = [c.numaid for c in self.cpus]
        if len(set(numa)) != len(numa):
            raise ValueError("cpu numaid given twice")
        busids = [s.busid for s in self.switches] + [g.busid for g in self.gpus] + [n.busid for n in self.nics]
        dup = sorted({b for b in busids if busids.count(b) > 1})
        if dup:
            raise ValueError(f"busid {dup[0]} given twice")
        switches = {s.busid for s in self.switches}
        items: list[HostPciSwitch | HostGpu | HostNic] = [*self.switches, *self.gpus, *self.nics]
        for item in items:
            if item.cpu not in numa:
                raise ValueError(f"{item.busid}: cpu {item.cpu} is not a listed numaid")
            up = item.parent if isinstance(item, HostPciSwitch) else item.switch
            if up is not None and up not in switches:
                raise ValueError(f"{item.busid}: switch {up} is not listed")
        gpus = {g.index for g in self.gpus}
        for nic in self.nics:
            bad = [i for i in nic.near_gpus if i not in gpus]
            if bad:
                raise ValueError(f"{nic.busid}: near_gpus {bad} are not listed GPUs")
        return self
