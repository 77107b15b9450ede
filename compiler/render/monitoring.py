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
from ..plan.columns import Coded, Piece, distinct, ranges, text_chunks
from ..plan.model import Plan
from ..plan.routing import dotted
from ..plan.serialize import json_strings
from ..plan.views import cable_id_pieces, nos_port_table
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


def _escaped(column: np.ndarray | list[str]) -> np.ndarray | list[str]:
    """A column of label values escaped; as it is when none holds a character to escape
    (one scan of the joined text instead of three replaces per value)."""
    values = column.tolist() if isinstance(column, np.ndarray) else column
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


def _targets(plan: Plan, indices: list[int], port: int) -> Iterator[str]:
    """The file_sd groups, one per device, exactly as json.dumps(groups, indent=1) writes them,
    in chunks, put together column by column from each value's JSON text: json's indenting
    encoder is pure Python, 700,000 calls and most of this output's time at 131,072 GPUs,
    and a string per device grew 5-8x for 4x the devices (tests/test_monitoring.py compares
    the two)."""
    if not indices:
        yield "[]\n"
        return
    sep = np.full(len(indices), ",\n", dtype=object)
    sep[-1] = "\n"
    devices = [plan.devices[i] for i in indices]
    targets = np.array([f"{a}:{port}" for a in _addresses(plan, indices)], dtype=object)
    names = np.array([d.name for d in devices], dtype=object)
    pieces: list[Piece] = [' {\n  "targets": [\n   ', *json_strings(targets, ensure_ascii=True),
                           '\n  ],\n  "labels": {\n   "name": ', *json_strings(names, ensure_ascii=True),
                           *_label_members(plan, indices, devices), "\n  }\n }", sep]
    yield "[\n"
    yield from text_chunks(pieces, len(indices))
    yield "]\n"


def _label_members(plan: Plan, indices: list[int], devices: list) -> list[Piece]:
    """The labels after the name (_device_labels) as the indented JSON members json.dumps
    writes, each a column with its separator in front; the few distinct roles, fabrics,
    groups and racks are encoded once each, and an absent label is an empty text."""
    phys = plan.physical
    columns: list[tuple[str, list]] = [(key, [getattr(d, key) for d in devices]) for key in ("role", "fabric", "su", "pod", "rail")]
    if phys is not None:
        racks = [r.name for r in phys.racks]
        columns.append(("rack", [racks[r] for r in phys.dev_rack[indices].tolist()]))
    pieces: list[Piece] = []
    for key, values in columns:
        always = key in ("role", "fabric")  # every device has them (str(None) where not)
        text = {v: "" if v is None and not always else f',\n   "{key}": {encode_basestring_ascii(str(v))}' for v in set(values)}
        pieces.append(list(map(text.__getitem__, values)))
    return pieces


def _port_rows(plan: Plan, ib: bool) -> tuple[list[Piece], int]:
    """The clusterc_plan_port lines as text_chunks pieces, and how many: per switch end of
    every cable, in global port order (plan order of devices, panel order of ports): the
    switch, its port, the peer, the peer's port, the cable id, as the exporters name them:
    NOS interface names on Ethernet; on InfiniBand the IB port number, and a CA peer as the
    node-name map names it ("<host> <panel port>").
    The rows are put in order as integer columns, and each text piece is then taken once
    from a table per device or per port: a device's name with the text around it, a port's
    name, a cable id's two pieces (views.cable_id_pieces). Gathering per-link strings and
    reordering them cost a pass over scattered objects per column, which grew faster than
    the links (5.6x from 131,072 to 524,288 GPUs)."""
    links = plan.links
    devices = plan.devices
    is_switch = np.array([d.role in SWITCH_ROLES for d in devices], dtype=bool)
    offsets = plan.port_offsets()
    a_rows = np.nonzero(is_switch[links.a_dev])[0]
    b_rows = np.nonzero(is_switch[links.b_dev])[0]
    own_global, end = _in_port_order(np.concatenate([offsets[links.a_dev[a_rows]] + links.a_port[a_rows],
                                                     offsets[links.b_dev[b_rows]] + links.b_port[b_rows]]),
                                     np.concatenate([a_rows * 2, b_rows * 2 + 1]))
    if not len(end):
        return [], 0
    link, from_b = end >> 1, (end & 1).astype(bool)  # the cable, and whether the row is its b end
    a_dev, b_dev, a_port, b_port = links.a_dev[link], links.b_dev[link], links.a_port[link], links.b_port[link]
    own_dev, peer_dev = np.where(from_b, b_dev, a_dev), np.where(from_b, a_dev, b_dev)
    peer_global = offsets[peer_dev] + np.where(from_b, a_port, b_port)
    names = _escaped([d.name for d in devices])
    own_head = np.array([f'clusterc_plan_port{{name="{n}",port="' for n in names], dtype=object)
    own_port: Piece
    peer_port: Piece
    peer_mid: Piece
    if ib:
        view = plan.memo("ib_view", ib_view)
        own_port = _number_texts(np.where(from_b, view.b_port[link], view.a_port[link]))
        peer_port = _number_texts(np.where(from_b, view.a_port[link], view.b_port[link]))
        # a CA peer is "<host> <panel port>": its head ends in the space, the panel name follows
        peer_head = np.array([f'",peer="{n}' + ('' if sw else ' ') for n, sw in zip(names, is_switch.tolist(), strict=True)],
                             dtype=object)
        # panel names from the used layouts' table (escaped there, as the Ethernet port names
        # below), a switch peer's row reading the separator alone (the table's last entry)
        panel_names, place = nos_port_table(plan, None)
        mids = np.concatenate([np.asarray(_escaped(panel_names), dtype=object) + '",peer_port="',
                               np.array(['",peer_port="'], dtype=object)])
        peer_mid = Coded(mids, np.where(is_switch[peer_dev], len(mids) - 1, place[peer_global]))
    else:
        # port names from the used layouts' table (escaped there), indexed per row: no name
        # gathered, listed and scanned per row
        port_names, place = nos_port_table(plan, plan.routing.nos if plan.routing is not None else None)
        port_names = np.asarray(_escaped(port_names), dtype=object)
        own_port = Coded(port_names, place[own_global])
        peer_port = Coded(port_names, place[peer_global])
        peer_head = np.array([f'",peer="{n}' for n in names], dtype=object)
        peer_mid = '",peer_port="'
    id_devices, id_numbers = cable_id_pieces(plan)
    id_devices = np.asarray(_escaped(id_devices), dtype=object)
    pieces: list[Piece] = [Coded(own_head, own_dev), own_port, Coded(peer_head, peer_dev), peer_mid, peer_port, '",cable="',
                           Coded(id_devices, a_dev), Coded(id_numbers, a_port), '"} 1\n']
    return pieces, len(link)


def _in_port_order(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The keys (global port ids) sorted, and the values in their order (a stable sort by
    key). Where no two keys are equal (a port ends one cable), each value is put at its
    key's place and the places read back in order: O(rows + ports), and no gather in a
    random order (a stable argsort grew n log n, then a gather by it missed the cache on
    every row at 524,288 GPUs); where two are equal, the sort."""
    if not len(keys):
        return keys, values
    place = np.full(int(keys.max()) + 1, -1, dtype=values.dtype)
    place[keys] = values
    used = place >= 0
    if int(np.count_nonzero(used)) == len(keys):
        return np.flatnonzero(used), place[used]
    order = np.argsort(keys, kind="stable")
    return keys[order], values[order]


def _number_texts(numbers: np.ndarray) -> np.ndarray:
    """Port numbers as text: each distinct number spelled once."""
    values = distinct(numbers)
    texts = np.array([str(v) for v in values.tolist()], dtype=object)
    return texts[np.searchsorted(values, numbers)]


def _plan_metrics(plan: Plan, ib: bool, port_rows: tuple[list[Piece], int]) -> Iterator[str]:
    """plan.prom's text in chunks: the per-port series (one line per switch port in use,
    most of the file) joined column-wise by text_chunks, not formatted line by line."""
    links = plan.links
    counts = np.bincount(np.concatenate([links.a_dev, links.b_dev]), minlength=len(plan.devices)).tolist()
    lines = ["# HELP clusterc_plan_switch_links Cables the plan puts on this switch.",
             "# TYPE clusterc_plan_switch_links gauge"]
    for i, d in enumerate(plan.devices):
        if d.role in SWITCH_ROLES and counts[i]:
            lines.append(f'clusterc_plan_switch_links{{name="{_escape(d.name)}",role="{d.role}"}} {int(counts[i])}')
    lines += ["# HELP clusterc_plan_port The planned neighbour of a switch port in use "
              + ("(InfiniBand port number; a CA peer as the node-name map names it)." if ib else "(NOS interface names)."),
              "# TYPE clusterc_plan_port gauge"]
    yield "\n".join(lines) + "\n"
    pieces, rows = port_rows
    if rows:
        yield from text_chunks(pieces, rows)
    yield from _host_port_lines(plan)


def _host_port_lines(plan: Plan) -> Iterator[str]:
    """The clusterc_plan_host_port series: per host, a line per port with an RDMA device,
    as a column of host heads and one of per-layout tails (text_chunks), not a string per
    line (a line per host and port grew 5x for 4x the hosts)."""
    tails: dict[str, list[str]] = {}  # per layout: each RDMA port's line after the host's name
    host_names: list[str] = []
    host_layouts: list[str] = []
    for d in plan.devices:
        if d.tier != 0:
            continue
        tail = tails.get(d.layout)
        if tail is None:
            ports_of = plan.layouts[d.layout].ports
            tail = tails[d.layout] = [f'",device="{dev}",port="{_escape(ports_of[k].name)}"}} 1\n'
                                      for k, dev in enumerate(nic_devices(d.layout)) if dev]
        if tail:
            host_names.append(d.name)
            host_layouts.append(d.layout)
    if not host_names:
        return
    layouts = list(tails)
    base = dict(zip(layouts, np.cumsum([0] + [len(tails[lid]) for lid in layouts[:-1]]).tolist(), strict=True))
    count = np.array([len(tails[lid]) for lid in host_layouts], dtype=np.int64)
    first = np.repeat(np.array([base[lid] for lid in host_layouts], dtype=np.int64), count)
    heads = np.asarray(_escaped(host_names), dtype=object)
    yield ("# HELP clusterc_plan_host_port A host fabric port the plan cables, by its RDMA device.\n"
           "# TYPE clusterc_plan_host_port gauge\n")
    pieces: list[Piece] = ["clusterc_plan_host_port{name=\"",
                           Coded(heads, np.repeat(np.arange(len(host_names), dtype=np.int64), count)),
                           Coded(np.array([t for lid in layouts for t in tails[lid]], dtype=object), first + ranges(count))]
    yield from text_chunks(pieces, int(count.sum()))


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
    port_rows = _port_rows(plan, ib) if ib_numbers else ([], 0)
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
                   port_rules=bool(port_rows[1]), pfc_priorities=list(roce.pfc_priorities) if not ib else [],
                   hosts=len(hosts), switches=sum(1 for d in plan.devices if d.role in SWITCH_ROLES),
                   eth_switches=len(eth_switches), plan_ports=port_rows[1], rate=rate)
    out.write_text(f"{FOLDER}/prometheus.yml", render_template("monitoring/prometheus.yml.j2", **context))
    out.write_text(f"{FOLDER}/alerts.rules.yml", render_template("monitoring/alerts.rules.yml.j2", **context))
    out.write_text(f"{FOLDER}/README.md", render_template("monitoring/README.md.j2", **context))
    out.write_chunks(f"{FOLDER}/targets/hosts.json", _targets(plan, hosts, ports_cfg["node"]))
    if eth_switches:
        out.write_chunks(f"{FOLDER}/targets/switches.json", _targets(plan, eth_switches, ports_cfg["node"]))
    out.write_chunks(f"{FOLDER}/plan.prom", _plan_metrics(plan, ib, port_rows))
