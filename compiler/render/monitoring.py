"""monitoring/: Prometheus scrape configuration and alert rules that encode the plan.

- prometheus.yml: scrape jobs for the hosts and the Ethernet switches (file_sd target
  files, one target per device by management address where the plan has one, else by
  name, labelled with name, role, SU, pod, rail, rack, fabric), the InfiniBand fabric
  exporter, and the plan itself;
- targets/hosts.json, targets/switches.json: those targets;
- plan.prom: the plan as series (Prometheus text format) for node_exporter's textfile
  collector next to Prometheus: planned cables per switch, the planned neighbour of every
  switch port in use, the RDMA device behind every host fabric port;
- alerts.rules.yml: rules that compare what the exporters report with plan.prom: a
  switch with fewer links up than planned, a planned port down, a port whose neighbour
  is not the planned one (InfiniBand, where the exporter reports neighbours), link flaps,
  symbol errors and link-down counters (InfiniBand), degraded width or speed, PFC pause
  storms and ECN marking (RoCE hosts), a host fabric port not active;
- README.md: the exporters the rules assume and how to deploy the files.

Metric names are the exporters' own (templates/monitoring/alerts.rules.yml.j2 names them
with their sources). Policy numbers (windows, durations) are catalog data
(catalog/data/monitoring.yaml). Cost: O(links) numpy, then one text line per switch
port in use (about 100 bytes each).
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii
from collections.abc import Iterator
from functools import lru_cache

import numpy as np

from ..catalog.load import monitoring_defaults
from ..catalog.nics import nic_devices
from ..check import CheckResults
from ..plan.columns import Piece, text_chunks
from ..plan.model import Plan
from ..plan.routing import dotted
from ..plan.views import cable_ids, nos_port_names, port_table
from .infiniband import LINK_RATE, ib_view
from ..plan.naming import SWITCH_ROLES
from .structured_config import roce_profile
from .templates import render_template
from .writer import OutputDir

FOLDER = "monitoring"
JOBS = {"hosts": "clusterc-hosts", "switches": "clusterc-switches", "infiniband": "clusterc-infiniband",
        "plan": "clusterc-plan"}
# Per-lane rate by InfiniBand speed name as ibqueryerrors prints it (IBTA): the planned
# link's lane rate is the floor below which infiniband_speed means a degraded link.
IB_LANE_GBPS = {"EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}


@lru_cache(maxsize=1)
def defaults() -> dict:
    return monitoring_defaults()


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _escaped(column: np.ndarray) -> np.ndarray | list[str]:
    """A column of label values escaped; as it is when none holds a character to escape
    (one scan of the joined text instead of three replaces per value)."""
    values = column.tolist()
    joined = "".join(values)
    if "\\" in joined or '"' in joined or "\n" in joined:
        return [_escape(v) for v in values]
    return column


def _device_labels(plan: Plan) -> list[dict]:
    phys = plan.physical
    racks = [r.name for r in phys.racks] if phys is not None else None
    out = []
    for i, d in enumerate(plan.devices):
        labels = {"name": d.name, "role": d.role, "fabric": d.fabric}
        for key, value in (("su", d.su), ("pod", d.pod), ("rail", d.rail)):
            if value is not None:
                labels[key] = str(value)
        if racks is not None and phys is not None:
            labels["rack"] = racks[int(phys.dev_rack[i])]
        out.append(labels)
    return out


def _addresses(plan: Plan, indices: list[int]) -> list[str]:
    """Each device's management address, or its name where it has none (resolved by DNS:
    the plan's name is the hostname)."""
    r = plan.routing
    if r is None:
        return [plan.devices[i].name for i in indices]
    management = r.management[indices]
    return [text if int(m) else plan.devices[i].name
            for i, m, text in zip(indices, management.tolist(), dotted(management), strict=True)]


def _targets(plan: Plan, indices: list[int], port: int) -> str:
    """The file_sd groups, one per device, exactly as json.dumps(groups, indent=1) writes them,
    put together from each value's JSON text (the C string encoder's): json's indenting encoder
    is pure Python, 700,000 calls and most of this output's time at 131,072 GPUs
    (tests/test_monitoring.py compares the two)."""
    if not indices:
        return "[]\n"
    return "[\n" + ",\n".join(
        f' {{\n  "targets": [\n   {encode_basestring_ascii(f"{address}:{port}")}\n  ],\n  "labels": {{\n   {labels}\n  }}\n }}'
        for address, labels in zip(_addresses(plan, indices), _label_texts(plan, indices), strict=True)) + "\n]\n"


def _label_texts(plan: Plan, indices: list[int]) -> list[str]:
    """Each listed device's labels (_device_labels) as the indented JSON members json.dumps
    writes; the few distinct roles, fabrics, groups and racks are encoded once each."""
    phys = plan.physical
    racks = [r.name for r in phys.racks] if phys is not None else None
    rack_of = phys.dev_rack[indices].tolist() if phys is not None else None
    members: dict[tuple[str, object], str] = {}

    def member(key: str, value: object) -> str:
        text = members.get((key, value))
        if text is None:
            text = members[(key, value)] = f'"{key}": {encode_basestring_ascii(str(value))}'
        return text

    devices = plan.devices
    out = []
    for n, i in enumerate(indices):
        d = devices[i]
        parts = [f'"name": {encode_basestring_ascii(d.name)}', member("role", d.role), member("fabric", d.fabric)]
        for key, value in (("su", d.su), ("pod", d.pod), ("rail", d.rail)):
            if value is not None:
                parts.append(member(key, value))
        if racks is not None and rack_of is not None:
            parts.append(member("rack", racks[int(rack_of[n])]))
        out.append(",\n   ".join(parts))
    return out


def _switch_ports(plan: Plan, ib: bool) -> list[np.ndarray]:
    """Per switch end of every cable, in port order, five columns: switch, port, peer, peer port, cable id, as the
    exporters name them: NOS interface names on Ethernet; on InfiniBand the IB port
    number, and a CA peer as the node-name map names it ("<host> <panel port>")."""
    links = plan.links
    names = np.array([d.name for d in plan.devices], dtype=object)
    is_switch = np.array([d.role in SWITCH_ROLES for d in plan.devices], dtype=bool)
    ids = np.array(plan.memo("cable_ids", cable_ids), dtype=object)
    offsets = plan.port_offsets()
    if ib:
        view = plan.memo("ib_view", ib_view)
        a_port = np.array([str(n) for n in view.a_port.tolist()], dtype=object)
        b_port = np.array([str(n) for n in view.b_port.tolist()], dtype=object)
        panel = plan.memo("port_table", port_table)["name"]
        a_name = np.where(is_switch[links.a_dev], names[links.a_dev],
                          names[links.a_dev] + " " + panel[offsets[links.a_dev] + links.a_port])
        b_name = np.where(is_switch[links.b_dev], names[links.b_dev],
                          names[links.b_dev] + " " + panel[offsets[links.b_dev] + links.b_port])
    else:
        port_names = nos_port_names(plan, plan.routing.nos if plan.routing is not None else None)
        a_port = port_names[offsets[links.a_dev] + links.a_port]
        b_port = port_names[offsets[links.b_dev] + links.b_port]
        a_name, b_name = names[links.a_dev], names[links.b_dev]
    columns: list[list[np.ndarray]] = [[], [], [], [], []]
    keys = []
    for dev_side, local, port_side, peer_name, peer_port in ((links.a_dev, links.a_port, a_port, b_name, b_port),
                                                             (links.b_dev, links.b_port, b_port, a_name, a_port)):
        sel = is_switch[dev_side]
        for column, values in zip(columns, (names[dev_side[sel]], port_side[sel], peer_name[sel], peer_port[sel],
                                            ids[sel]), strict=True):
            column.append(values)
        keys.append(offsets[dev_side[sel]] + local[sel])  # global port id: plan order of devices, panel order of ports
    # columns, not a (ports, 5) matrix: stacking object columns copies every reference twice
    order = np.argsort(np.concatenate(keys), kind="stable")
    return [np.concatenate(column)[order] for column in columns]


def _plan_metrics(plan: Plan, ib: bool, ports: list[np.ndarray]) -> Iterator[str]:
    """plan.prom's text in chunks: the per-port series (one line per switch port in use,
    most of the file) joined column-wise by text_chunks, not formatted line by line."""
    links = plan.links
    counts = np.bincount(np.concatenate([links.a_dev, links.b_dev]), minlength=len(plan.devices))
    lines = ["# HELP clusterc_plan_switch_links Cables the plan puts on this switch.",
             "# TYPE clusterc_plan_switch_links gauge"]
    for i, d in enumerate(plan.devices):
        if d.role in SWITCH_ROLES and counts[i]:
            lines.append(f'clusterc_plan_switch_links{{name="{_escape(d.name)}",role="{d.role}"}} {int(counts[i])}')
    lines += ["# HELP clusterc_plan_port The planned neighbour of a switch port in use "
              + ("(InfiniBand port number; a CA peer as the node-name map names it)." if ib else "(NOS interface names)."),
              "# TYPE clusterc_plan_port gauge"]
    yield "\n".join(lines) + "\n"
    if len(ports[0]):
        fields = ("name", "port", "peer", "peer_port", "cable")
        pieces: list[Piece] = []
        for k, (field, column) in enumerate(zip(fields, ports, strict=True)):
            pieces += [("clusterc_plan_port{" if k == 0 else '",') + f'{field}="', _escaped(column)]
        pieces.append('"} 1\n')
        yield from text_chunks(pieces, len(ports[0]))
    host_lines = []
    tails: dict[str, list[str]] = {}  # per layout: each RDMA port's line after the host's name
    for d in plan.devices:
        if d.tier != 0:
            continue
        tail = tails.get(d.layout)
        if tail is None:
            ports_of = plan.layouts[d.layout].ports
            tail = tails[d.layout] = [f'",device="{dev}",port="{_escape(ports_of[k].name)}"}} 1'
                                      for k, dev in enumerate(nic_devices(d.layout)) if dev]
        if tail:
            head = f'clusterc_plan_host_port{{name="{_escape(d.name)}'
            host_lines += [head + t for t in tail]
    if host_lines:
        host_lines = ["# HELP clusterc_plan_host_port A host fabric port the plan cables, by its RDMA device.",
                      "# TYPE clusterc_plan_host_port gauge"] + host_lines
        # joined 10,000 lines at a time: one string of them all costs more memory than it saves
        for k in range(0, len(host_lines), 10_000):
            yield "\n".join(host_lines[k:k + 10_000]) + "\n"


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    proto = plan.view.protocol
    if proto is None:
        return  # a direct network: no switches to watch
    ib = proto == "infiniband"
    cfg = defaults()
    ports_cfg = cfg["exporter_ports"]
    hosts = [i for i, d in enumerate(plan.devices) if d.tier == 0]
    eth_switches = [i for i, d in enumerate(plan.devices) if d.role in SWITCH_ROLES
                    and plan.view.model_protocol(d.model) == "ethernet"]
    ib_numbers = not ib or plan.memo("ib_view", ib_view).port_numbers_known
    ports = _switch_ports(plan, ib) if ib_numbers else [np.zeros(0, dtype=object)] * 5
    exporter_host = None
    if ib:
        endpoints = [d.name for d in plan.devices if d.tier == 0 and d.role != "server"]
        exporter_host = (endpoints or [plan.devices[hosts[0]].name])[0]
    speed = plan.view.design.speed_gbps
    rate = LINK_RATE.get(speed, "")
    lane_gbps = IB_LANE_GBPS.get(rate[2:]) if ib and rate else None
    roce = roce_profile()
    context = dict(name=plan.name, ib=ib, jobs=JOBS, cfg=cfg, has_switch_targets=bool(eth_switches),
                   exporter=f"{exporter_host}:{ports_cfg['infiniband']}" if ib else None,
                   lane_gbps=lane_gbps, width=4 if rate.startswith("4x") else None,
                   port_rules=bool(len(ports[0])), pfc_priorities=list(roce.pfc_priorities) if not ib else [],
                   hosts=len(hosts), switches=sum(1 for d in plan.devices if d.role in SWITCH_ROLES),
                   eth_switches=len(eth_switches), plan_ports=len(ports[0]), rate=rate)
    out.write_text(f"{FOLDER}/prometheus.yml", render_template("monitoring/prometheus.yml.j2", **context))
    out.write_text(f"{FOLDER}/alerts.rules.yml", render_template("monitoring/alerts.rules.yml.j2", **context))
    out.write_text(f"{FOLDER}/README.md", render_template("monitoring/README.md.j2", **context))
    out.write_text(f"{FOLDER}/targets/hosts.json", _targets(plan, hosts, ports_cfg["node"]))
    if eth_switches:
        out.write_text(f"{FOLDER}/targets/switches.json", _targets(plan, eth_switches, ports_cfg["node"]))
    out.write_chunks(f"{FOLDER}/plan.prom", _plan_metrics(plan, ib, ports))
