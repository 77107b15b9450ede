"""infiniband/: what the subnet manager and the bring-up tools need, for InfiniBand designs.

- opensm.conf with the routing engine that fits the topology (ftree for Clos fabrics,
  falling back to updn), root.guids (top-tier switches), compute.guids (the servers'
  CA ports), node-name-map (GUID -> name);
- topology.ibnetdiscover: the expected fabric as `ibnetdiscover` prints it (GUIDs, IB
  port numbers, node descriptions); ibsim loads the same file as its net file;
- topology.topo plus ibnl/: the ibdiagnet topology file for cabling validation, by
  names and front-panel ports, with the IBNL system definitions it assumes.

Every server NIC port (and every extra-endpoint port) is its own single-port CA, as a
ConnectX port is to the subnet manager. GUIDs come from `plan.guids` (structural).
Files that need IB port numbers are written only where the catalog establishes the
numbering (`infiniband.ports_per_cage`); the README in the folder says what was left out.
Ethernet designs get nothing here (their switches run a NOS; see the config renderers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..check import CheckResults
from ..plan.facts import IbFacts
from ..plan.guids import MAX_CA_PORTS, ca_node_guid, device_guids
from ..plan.model import Plan
from ..plan.views import per_port
from ..topology import topology
from .templates import render_template
from .writer import OutputDir

FOLDER = "infiniband"
# Where opensm.conf says the other files are; the twin substitutes its own folder.
CONF_DIR = "/etc/opensm"
# Routing engines: ftree needs a fat tree (rank 2..8, CNs at one rank), so a tree topology
# tries it first; updn is deadlock-free on any graph, so it is the fallback everywhere.
TREE_ENGINES = ("ftree", "updn")
DEFAULT_ENGINES = ("updn",)
# Active width x rate as ibnetdiscover prints it (IBTA: EDR 25G, HDR 50G, NDR 100G,
# XDR 200G per lane, 4 lanes). 200G is omitted: it may be 4xHDR or 2xNDR.
LINK_RATE = {100: "4xEDR", 400: "4xNDR", 800: "4xXDR"}


def is_infiniband(plan: Plan) -> bool:
    return plan.view.protocol == "infiniband"


@dataclass
class IbView:
    """The plan as the subnet manager sees it: every link end as (node GUID, IB port)."""

    device_guid: np.ndarray  # per device
    is_ca: np.ndarray  # per device: server or extra endpoint
    a_node: np.ndarray  # per link, uint64 node GUID of end a
    a_port: np.ndarray  # per link, IB port number of end a
    b_node: np.ndarray
    b_port: np.ndarray
    port_numbers_known: bool


def _ib_facts(plan: Plan) -> IbFacts:
    """The catalog's InfiniBand record of the fabric's switch model (port numbering, ibdiag
    system type); an empty one where the catalog has none."""
    rec = plan.view.role_model("leaf")
    return (rec.infiniband if rec is not None else None) or IbFacts()


def ib_view(plan: Plan) -> IbView:
    dev_guid = plan.memo("ib_device_guids", device_guids)
    is_ca = np.fromiter((d.tier == 0 for d in plan.devices), dtype=bool, count=len(plan.devices))
    switch_layouts = {d.layout: d.model for d in plan.devices if d.tier > 0}
    numbers = {}
    known = True
    for lid, lay in plan.layouts.items():
        if lid not in switch_layouts:
            if len(lay) > MAX_CA_PORTS:
                raise ValueError(f"{lid}: {len(lay)} ports exceed the {MAX_CA_PORTS} CAs a device's GUID block holds")
            numbers[lid] = np.ones(len(lay), dtype=np.int64)  # each NIC port is port 1 of its own CA
            continue
        rec = plan.view.facts.model(switch_layouts[lid])
        per_port_number = rec.ib_port_numbers(lay.ports) if rec is not None else None
        known = known and per_port_number is not None
        # unknown numbering: zeros, never written
        numbers[lid] = np.array(per_port_number or [0] * len(lay), dtype=np.int64)
    ib_port = per_port(plan, numbers).astype(np.int64)
    offsets = plan.port_offsets()
    links = plan.links
    ends = []
    for dev, port in ((links.a_dev, links.a_port), (links.b_dev, links.b_port)):
        node = np.where(is_ca[dev], ca_node_guid(dev_guid[dev], port), dev_guid[dev])
        ends += [node.astype(np.uint64), ib_port[offsets[dev] + port]]
    a_node, a_port, b_node, b_port = ends
    return IbView(dev_guid, is_ca, a_node, a_port, b_node, b_port, port_numbers_known=known and bool(switch_layouts))


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if not is_infiniband(plan):
        return
    view = plan.memo("ib_view", ib_view)
    sw_facts = _ib_facts(plan)
    nodes = _nodes(plan, view)
    top_tier = max(d.tier for d in plan.devices)
    roots = [n for n in nodes if not n.ca and plan.devices[n.dev].tier == top_tier]
    computes = [n for n in nodes if n.ca and plan.devices[n.dev].role == "server"]
    engines = TREE_ENGINES if topology(plan.view.design.topology).tree else DEFAULT_ENGINES
    files = {
        "opensm.conf": render_template(
            "infiniband/opensm.conf.j2", name=plan.name, conf_dir=CONF_DIR, engines=engines,
            root_file="root.guids", cn_file="compute.guids", name_map="node-name-map"),
        "root.guids": render_template(
            "infiniband/guids.j2", name=plan.name, what="node GUIDs of the top-tier (root) switches",
            guids=[n.guid for n in roots]),
        "compute.guids": render_template(
            "infiniband/guids.j2", name=plan.name, what="port GUIDs of the compute nodes' CA ports",
            guids=[n.guid + 1 for n in computes]),
        "node-name-map": render_template("infiniband/node-name-map.j2", name=plan.name, nodes=nodes),
    }
    left_out = []
    if view.port_numbers_known:
        files["topology.ibnetdiscover"] = _ibnetdiscover(plan, view, nodes)
        if sw_facts.system_type:
            files.update(_ibdiag(plan, view, nodes, sw_facts.system_type))
        else:
            left_out.append(("topology.topo", f"no ibdiagnet system type for {plan.view.design.switch} in the catalog"))
    else:
        why = f"{plan.view.design.switch}: {sw_facts.notes or 'IB port numbering not in the catalog'}"
        left_out += [("topology.ibnetdiscover", why), ("topology.topo", why)]
    files["README.md"] = render_template(
        "infiniband/README.md.j2", name=plan.name, conf_dir=CONF_DIR, engines=engines, files=sorted(files),
        left_out=left_out, roots=len(roots), computes=len(computes), cas=sum(1 for n in nodes if n.ca),
        switches=sum(1 for n in nodes if not n.ca))
    for rel, text in sorted(files.items()):
        out.write_text(f"{FOLDER}/{rel}", text)


@dataclass(frozen=True, slots=True)
class _Node:
    guid: int
    dev: int  # device index
    ca: bool
    desc: str  # node description: switch name, or "<host> <panel port>" for a CA
    panel: str  # the host's panel port name (CAs)
    port_index: int  # 0-based NIC port (CAs)

    @property
    def id(self) -> str:  # ibnetdiscover node id
        return f"{'H' if self.ca else 'S'}-{self.guid:016x}"


def _nodes(plan: Plan, view: IbView) -> list[_Node]:
    """Switches in plan order, then every CA (host port) in plan order."""
    switches, cas = [], []
    for i, d in enumerate(plan.devices):
        g = int(view.device_guid[i])
        if view.is_ca[i]:
            for k, p in enumerate(plan.layouts[d.layout].ports):
                cas.append(_Node(int(ca_node_guid(g, k)), i, True, f"{d.name} {p.name}", p.name, k))
        else:
            switches.append(_Node(g, i, False, d.name, "", 0))
    return switches + cas


def _peers(plan: Plan, view: IbView) -> dict[int, list[tuple[int, int, int]]]:
    """node GUID -> [(local IB port, peer node GUID, peer IB port)] sorted by local port."""
    local = np.concatenate([view.a_node, view.b_node])
    lport = np.concatenate([view.a_port, view.b_port])
    peer = np.concatenate([view.b_node, view.a_node])
    pport = np.concatenate([view.b_port, view.a_port])
    order = np.lexsort((lport, local))
    out: dict[int, list[tuple[int, int, int]]] = {}
    for g, lp, pg, pp in zip(local[order].tolist(), lport[order].tolist(), peer[order].tolist(), pport[order].tolist(), strict=True):
        out.setdefault(g, []).append((lp, pg, pp))
    return out


def _ibnetdiscover(plan: Plan, view: IbView, nodes: list[_Node]) -> str:
    by_guid = {n.guid: n for n in nodes}
    peers = plan.memo("ib_peers", lambda p: _peers(p, view))
    rate = LINK_RATE.get(int(plan.view.design.speed_gbps), "")
    nports = plan.view.design.switch_radix
    records = []
    for n in nodes:
        ports = []
        for lp, pg, pp in peers.get(n.guid, ()):
            other = by_guid[pg]
            ports.append((lp, other.id, pp, f"{pg + 1:x}" if other.ca else "", other.desc))
        records.append((n, ports))
    return render_template("infiniband/topology.ibnetdiscover.j2", name=plan.name, records=records,
                           switch_ports=nports, rate=rate)


def _ibdiag(plan: Plan, view: IbView, nodes: list[_Node], switch_type: str) -> dict[str, str]:
    """The ibdiagnet topology file (one section per system, each link under both ends)
    and the IBNL definitions of the system types it names."""
    peers = plan.memo("ib_peers", lambda p: _peers(p, view))
    by_guid = {n.guid: n for n in nodes}

    def system_type(dev: int) -> str:
        return plan.devices[dev].model if view.is_ca[dev] else switch_type

    def panel(n: _Node, ib_port: int) -> str:
        return n.panel if n.ca else f"P{ib_port}"

    systems: dict[int, list[tuple[str, str, str, str]]] = {}
    for n in nodes:
        lines = systems.setdefault(n.dev, [])
        for lp, pg, pp in peers.get(n.guid, ()):
            other = by_guid[pg]
            lines.append((panel(n, lp), system_type(other.dev), plan.devices[other.dev].name, panel(other, pp)))
    sections = [(system_type(dev), plan.devices[dev].name, lines) for dev, lines in systems.items()]
    files = {"topology.topo": render_template("infiniband/topology.topo.j2", name=plan.name, sections=sections)}
    # IBNL: the switch as one ASIC with panel ports P1..Pn; a host as one single-port CA per NIC port.
    radix = plan.view.design.switch_radix
    assert radix is not None  # an InfiniBand fabric is switched
    files[f"ibnl/{switch_type}.ibnl"] = render_template(
        "infiniband/system.ibnl.j2", type=switch_type, nodes=[("SW", radix, "U1", [(k, f"P{k}") for k in range(1, radix + 1)])])
    for layout_id in sorted({plan.devices[n.dev].layout for n in nodes if n.ca}):
        dev = next(d for d in plan.devices if d.layout == layout_id)
        files[f"ibnl/{dev.model}.ibnl"] = render_template(
            "infiniband/system.ibnl.j2", type=dev.model,
            nodes=[("CA", 1, f"U{k + 1}", [(1, p.name)]) for k, p in enumerate(plan.layouts[layout_id].ports)])
    return files
