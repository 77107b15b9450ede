"""The plan as simulators read it, so nobody writes their topology by hand.

- `simai`: SimAI's ns-3 topology file (aliyun/SimAI 1.7, commit cef83f9d; read by
  astra-sim-alibabacloud/astra-sim/network_frontend/ns3/common.h SetupNetwork, written by
  its inputs/topo/gen_Topo_Template.py): a header `node_num gpus_per_server nvswitch_num
  switch_num link_num gpu_type`, a line with the NVSwitch node ids then the switch ids, and
  one `src dst rate delay error_rate` line per link (ns-3 DataRate and Time strings). GPU
  nodes are 0..G-1 (GPU g of the plan's server order), one NVSwitch node per scale-up
  domain, then every plan switch in plan order; every cable of the plan is a link (a NIC
  port joins its GPU's node to its leaf), but extra endpoints' (UFM, storage: SimAI's
  nodes are GPUs and switches). Exact wiring, cable for cable.
- `htsim`: a fat-tree config for csg-htsim (Broadcom/csg-htsim, commit 841d9e7; read by
  FatTreeTopology::load in sim/datacenter/fat_tree_topology.cpp, examples in
  sim/datacenter/topologies/*.topo): Nodes, Tiers, Podsize and per tier the down/up radix,
  bundle (cables per switch pair), link speed and oversubscription. htsim builds the wiring
  from these, so only a uniform Clos of full leaves with a whole-number oversubscription
  can be written; node i is the i-th NIC port in fabric order (nodes.csv). With it, what a
  run needs (htsim_run_files): each pattern's connection matrix, per routing a matrix that
  pins htsim_ndp's flows to the routes traffic chose, and run.sh with the command lines.
- `astra-sim`: the analytical network backend's network.yml (astra-sim/astra-network-analytical,
  commit 599a047; NetworkParser::parse_network_config_yml): one Switch dimension for the
  scale-up domain (NVLink GB/s per GPU, one direction) and one for the network (NIC GB/s per
  GPU). A hierarchical abstraction: it keeps no wiring, so routing and oversubscription
  are not in it (comments give clusterc's measured all-to-all fractions to derate it by).

Latencies are not in the plan; the files use SimAI's defaults (gen_Topo_Template.py: NIC
0.0005 ms, NVSwitch 0.000025 ms) and say so. Error rate 0.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..plan.fabrics import fabric_plan
from ..plan.model import Plan
from . import TrafficError
from ..diagnostics import nearest
from .fabric import TrafficFabric, parse_failure
from .patterns import build_pattern, fabric_order, placement
from .routing import Router
from . import DEFAULT_PATTERNS, traffic_report
from ..topology import ClosRecord, PlanesRecord, is_tree

FORMATS = ("simai", "htsim", "astra-sim")
NIC_LATENCY_NS = 500  # SimAI gen_Topo_Template.py default, 0.0005 ms
NVLINK_LATENCY_NS = 25  # SimAI gen_Topo_Template.py default, 0.000025 ms
SIMAI_GPU_TYPES = ("A100", "A800", "H100", "H800")  # what SimAI 1.7 recognises; anything else reads as NONE


class ExportError(ValueError):
    """A format that cannot express this plan; the message says why."""


def write_exports(plan: Plan, spec: str, **traffic) -> dict[str, str]:
    """--export FORMAT[,FORMAT]:DIR -> writes DIR/<format>/..., returns format -> folder.
    `traffic`: the analysis' patterns, routings, servers, order, seed and fail, from which
    the htsim folder's traffic matrices and routes are written."""

    formats, sep, folder = spec.rpartition(":")
    if not sep or not folder:
        raise TrafficError(f"--export {spec}: write FORMAT[,FORMAT]:DIR, e.g. simai,htsim:sim-out")
    wanted = [f.strip() for f in formats.split(",") if f.strip()]
    unknown = [f for f in wanted if f not in FORMATS]
    if unknown or not wanted:
        raise TrafficError(f"--export: unknown format {', '.join(unknown) or '(none)'}; "
                           f"{nearest(unknown[0] if unknown else '', FORMATS)}")
    view = fabric_plan(plan)
    written = {}
    for fmt in wanted:
        try:
            files = {"simai": simai_files, "htsim": htsim_files, "astra-sim": astra_sim_files}[fmt](view)
            if fmt == "htsim":
                files.update(htsim_run_files(view, **traffic))
        except ExportError as exc:
            raise TrafficError(f"--export {fmt}: {exc}") from exc
        target = Path(folder) / fmt
        try:
            target.mkdir(parents=True, exist_ok=True)
            for name, text in files.items():
                (target / name).write_text(text)
        except OSError as exc:
            raise TrafficError(f"--export: cannot write {target}: {exc.strerror}") from exc
        written[fmt] = str(target)
    return written


def _simai_gpu_type(plan: Plan) -> str:
    """SimAI's GPU type where the server is one it knows (its latency tables), else NONE."""
    server = plan.view.server_model
    text = f"{plan.view.design.server} {server.model if server is not None else ''}".upper()
    return next((t for t in SIMAI_GPU_TYPES if t in text), "NONE")


def _nvlink_gbps(plan: Plan) -> float | None:
    up = plan.scale_up
    if up is None or up.in_plan_links or not up.gbytes_per_s_per_gpu:
        return None
    return up.gbytes_per_s_per_gpu * 8 / 2  # bidirectional GB/s -> one direction Gb/s


def _gbps(v: float) -> str:
    return f"{v:g}Gbps"


def simai_files(plan: Plan) -> dict[str, str]:
    if plan.view.design.direct:
        raise ExportError("a direct network (no switches) has no SimAI switch nodes")
    f = TrafficFabric(plan)
    L = plan.links
    g_per = f.gpus_per_server
    servers = f.server_devices.size
    gpus = servers * g_per
    up = plan.scale_up
    per_domain_servers = up.servers_per_domain if up is not None and not up.in_plan_links and up.domains else 1
    nv = _nvlink_gbps(plan)
    domains = -(-servers // per_domain_servers) if nv and g_per * per_domain_servers > 1 else 0
    switches = [i for i, d in enumerate(plan.devices) if d.tier > 0]
    switch_id = {dev: gpus + domains + k for k, dev in enumerate(switches)}
    lines = []
    names = [f"{i},gpu,{plan.devices[int(f.server_devices[i // g_per])].name} gpu{i % g_per}" for i in range(gpus)]
    # GPU <-> NVSwitch of its domain
    nv_gbps = nv or 0.0  # domains is 0 without an NVLink figure, and the loop below does not run
    for g in range(gpus if domains else 0):
        lines.append(f"{g} {gpus + (g // g_per) // per_domain_servers} {_gbps(nv_gbps)} {NVLINK_LATENCY_NS}ns 0")
    names += [f"{gpus + k},nvswitch,scale-up domain {k + 1}" for k in range(domains)]
    names += [f"{switch_id[d]},switch,{plan.devices[d].name}" for d in switches]
    # NIC ports: the GPU each port serves (port p of R on a server of G GPUs serves GPU p*G//R)
    ports = np.diff(f.ep_first)
    local = f.ep_port * g_per // ports[f.ep_server]
    gpu_of_ep = f.ep_server * g_per + local
    for g, link in zip(gpu_of_ep.tolist(), f.ep_link.tolist(), strict=True):
        lines.append(f"{g} {switch_id[int(L.b_dev[link])]} {_gbps(float(L.speed_gbps[link]))} {NIC_LATENCY_NS}ns 0")
    inner = np.flatnonzero(np.isin(L.a_dev, switches) & np.isin(L.b_dev, switches))
    for link in inner.tolist():
        lines.append(f"{switch_id[int(L.a_dev[link])]} {switch_id[int(L.b_dev[link])]} "
                     f"{_gbps(float(L.speed_gbps[link]))} {NIC_LATENCY_NS}ns 0")
    gpu_type = _simai_gpu_type(plan)
    node_num = gpus + domains + len(switches)
    per_server = g_per * per_domain_servers if domains else g_per
    head = f"{node_num} {per_server} {domains} {len(switches)} {len(lines)} {gpu_type}"
    ids = " ".join(str(i) for i in range(gpus, node_num))
    topo = "\n".join([head, ids, *lines]) + "\n"
    return {"topology.txt": topo, "nodes.csv": "id,kind,name\n" + "\n".join(names) + "\n"}


def htsim_files(plan: Plan) -> dict[str, str]:
    d = plan.view.design
    if not is_tree(d.topology) or d.tiers not in (2, 3) or not isinstance(d, ClosRecord) or d.leaf_ports is None:
        raise ExportError(f"htsim's fat tree takes two- or three-tier Clos fabrics; this is {d.topology} "
                          f"with {d.tiers} tier(s)")
    f = TrafficFabric(plan)
    L = plan.links
    kinds = plan.link_kinds
    if np.any(~f.graph.at_is_gpu_server):
        raise ExportError("extra endpoints (UFM, storage) sit on leaf ports; htsim's fat tree has GPU hosts only")
    down, up = d.leaf_ports.down, d.leaf_ports.up
    per_leaf = np.bincount(f.ep_switch, minlength=f.graph.n)[np.flatnonzero(f.tier == 1)]
    if np.any(per_leaf != down):
        raise ExportError(f"htsim's fat tree needs every leaf full ({down} hosts); this plan has leaves with "
                          f"{int(per_leaf.min())} (a partial scalable unit or pod)")
    def speed(kind: str) -> int:
        sel = L.kind == kinds.index(kind)
        values = np.unique(L.speed_gbps[sel])
        if values.size != 1:
            raise ExportError(f"{kind} cables run at several speeds ({', '.join(map(str, values))} Gb/s)")
        return int(values[0])

    # htsim's `Oversubscribed` is bandwidth: it derives a tier's uplinks as ports x its downlink
    # speed / (the next tier's downlink speed x Oversubscribed) (FatTreeTopology::set_custom_params),
    # so with uplinks faster than downlinks (fabric.uplink_speed_gbps) it is not the port ratio.
    def oversub(what: str, d_ports: int, d_gbps: int, u_ports: int, u_gbps: int) -> int:
        if (d_ports * d_gbps) % (u_ports * u_gbps):
            ratio = f"{d_ports}:{u_ports}" if d_gbps == u_gbps else f"{d_ports * d_gbps}:{u_ports * u_gbps} Gb/s"
            raise ExportError(f"htsim takes a whole-number oversubscription; the {what} are {ratio}")
        return d_ports * d_gbps // (u_ports * u_gbps)

    leaf_oversub = oversub("leaves", down, speed("server-leaf"), up, speed("leaf-spine"))

    nodes = len(f.ep_link)
    tiers = d.tiers
    pod = nodes if tiers == 2 else (d.leaves_per_pod or 0) * down
    spine_down = int(np.bincount(L.b_dev[L.kind == kinds.index("leaf-spine")]).max())
    lat = NIC_LATENCY_NS
    out = [f"# csg-htsim fat tree config (FatTreeTopology::load) for {plan.name}, written by clusterc.",
           "# Node i is the i-th GPU NIC port in fabric order (nodes.csv). Latencies: SimAI's default",
           f"# NIC latency ({lat} ns); the plan has no cable delays. Queue sizes: set with htsim's -q.",
           f"Nodes {nodes}", f"Tiers {tiers}", f"Podsize {pod}", "",
           "Tier 0", f"Downlink_speed_Gbps {speed('server-leaf')}", f"Radix_Down {down}", f"Radix_Up {up}",
           f"Oversubscribed {leaf_oversub}", f"Downlink_Latency_ns {lat}", "",
           "Tier 1", f"Downlink_speed_Gbps {speed('leaf-spine')}", f"Radix_Down {spine_down}",
           f"Bundle {d.leaf_spine_links_per_pair}", f"Downlink_Latency_ns {lat}"]
    if tiers == 3:
        assert d.spine_ports is not None  # three tiers
        s_down, s_up = d.spine_ports.down, d.spine_ports.up
        spine_oversub = oversub("spines", s_down, speed("leaf-spine"), s_up, speed("spine-core"))
        core_down = int(np.bincount(L.b_dev[L.kind == kinds.index("spine-core")]).max())
        out += [f"Radix_Up {s_up}", f"Oversubscribed {spine_oversub}", "",
                "Tier 2", f"Downlink_speed_Gbps {speed('spine-core')}", f"Radix_Down {core_down}",
                f"Bundle {d.spine_core_links_per_pair}", f"Downlink_Latency_ns {lat}"]
    order = fabric_order(f, np.arange(nodes))
    names = [d_.name for d_ in plan.devices]
    rows = [f"{i},{names[int(f.ep_device[e])]},{plan.layouts[plan.devices[int(f.ep_device[e])].layout].ports[int(f.ep_port[e])].name},"
            f"{names[int(L.b_dev[f.ep_link[e]])]}" for i, e in enumerate(order.tolist())]
    return {"fat_tree.topo": "\n".join(out) + "\n", "nodes.csv": "node,server,port,leaf\n" + "\n".join(rows) + "\n"}


def astra_sim_files(plan: Plan) -> dict[str, str]:
    f = TrafficFabric(plan)
    up = plan.scale_up
    g = up.gpus_per_domain if up is not None and not up.in_plan_links and up.domains else f.gpus_per_server
    gpus = plan.view.design.gpus
    nic_gbytes = float(f.ep_gbps.sum()) / gpus / 8
    nv = _nvlink_gbps(plan)
    dims = []
    if g > 1:
        if nv is None:
            raise ExportError(f"the scale-up domain of {g} GPUs has no bandwidth in the catalog; ASTRA-sim needs one")
        dims.append(("Switch", g, nv / 8, NVLINK_LATENCY_NS))
    if gpus // g > 1:
        dims.append(("Switch", gpus // g, nic_gbytes, NIC_LATENCY_NS))
    if not dims:
        raise ExportError("one GPU: nothing to simulate")
    measured = ""
    try:
        res = traffic_report(plan, ["all-to-all"])["results"]
        measured = "; ".join(f"{r['routing']} {r['fraction']:.1%} (slowest {r['min_fraction']:.1%})" for r in res)
    except Exception:  # noqa: BLE001 - a comment only; the network file stands without it
        measured = "not measured for this fabric"
    text = "\n".join([
        f"# ASTRA-sim analytical network backend (astra-network-analytical NetworkParser) for {plan.name},",
        "# written by clusterc. Dimensions: the scale-up domain (NVLink, one direction per GPU), then the",
        "# network (NIC line rate per GPU). A Switch dimension is non-blocking: routing and oversubscription",
        f"# are not modelled. clusterc's all-to-all on this fabric, as a share of NIC line rate: {measured}.",
        f"# Latencies: SimAI's defaults (NIC {NIC_LATENCY_NS} ns, NVSwitch {NVLINK_LATENCY_NS} ns); not in the plan.",
        f"topology: [ {', '.join(t for t, *_ in dims)} ]",
        f"npus_count: [ {', '.join(str(n) for _, n, *_ in dims)} ]",
        f"bandwidth: [ {', '.join(f'{b:.1f}' for *_, b, _ in dims)} ]  # GB/s",
        f"latency: [ {', '.join(f'{lt:.1f}' for *_, lt in dims)} ]  # ns",
    ]) + "\n"
    return {"network.yml": text}


# --- htsim runs: the pattern's traffic matrix and the routes traffic chose ------------------------------------
HTSIM_COMMIT = "841d9e7"
HTSIM_SEED = 1
HTSIM_FLOW_BYTES = 4_000_000  # per connection: ~80 us at 400G, many round trips, so rates settle
HTSIM_DUMMY_START_PS = 10 ** 15  # a placeholder connection starting after the run ends sends nothing
HTSIM_MTU_BYTES = 9000  # htsim's default packet size (-mtu)
INT_MAX = 0x7FFFFFFF


def htsim_nodes(f: TrafficFabric) -> np.ndarray:
    """Endpoint -> htsim node (its rank in fabric order: leaf by leaf, as nodes.csv lists)."""
    order = fabric_order(f, np.arange(f.ep_link.size))
    node = np.empty(order.size, dtype=np.int64)
    node[order] = np.arange(order.size)
    return node


def htsim_path_choice(plan: Plan, f: TrafficFabric, flow: np.ndarray, link: np.ndarray,
                      n_flows: int) -> tuple[np.ndarray, np.ndarray]:
    """Per flow of a two-tier Clos, given its directed links: (index of its path in htsim's
    FatTreeTopology::get_bidir_paths, number of paths). htsim lists the paths between hosts
    under different ToRs as agg k, then the ToR->agg cable b_up of the bundle, then the
    agg->ToR cable b_down: index (k B + b_up) B + b_down; under one ToR there is one path.
    htsim's agg k is the plan's k-th spine, its bundle cable b the b-th plan cable (plan
    order) between that leaf and spine: the same wiring up to names."""
    L = plan.links
    ls = plan.link_kinds.index("leaf-spine")
    cable = np.flatnonzero(L.kind == ls)
    spines = np.unique(L.b_dev[cable])
    design = plan.view.design
    assert isinstance(design, (ClosRecord, PlanesRecord)) and design.leaf_spine_links_per_pair is not None
    bundle = design.leaf_spine_links_per_pair
    rank = np.zeros(len(L), dtype=np.int64)  # a cable's place in its leaf-spine bundle
    key = L.a_dev[cable].astype(np.int64) * (int(L.b_dev.max()) + 1) + L.b_dev[cable]
    srt = np.lexsort((cable, key))
    starts = np.r_[0, np.flatnonzero(np.diff(key[srt])) + 1]
    rank[cable[srt]] = np.arange(srt.size) - np.repeat(starts, np.diff(np.r_[starts, srt.size]))
    on = L.kind[link // 2] == ls
    up = on & (link % 2 == 0)
    down = on & (link % 2 == 1)
    k = np.full(n_flows, -1, dtype=np.int64)
    b_up = np.zeros(n_flows, dtype=np.int64)
    b_down = np.zeros(n_flows, dtype=np.int64)
    k[flow[up]] = np.searchsorted(spines, L.b_dev[link[up] // 2])
    b_up[flow[up]] = rank[link[up] // 2]
    b_down[flow[down]] = rank[link[down] // 2]
    crosses = k >= 0
    index = np.where(crosses, (k * bundle + b_up) * bundle + b_down, 0)
    return index, np.where(crosses, spines.size * bundle * bundle, 1)


def _first_of_permutation(draws: np.ndarray, at: int, n: int) -> int:
    """seq[0] after sim/ndp.cpp permute_sequence (seq = 0..n-1; for i: swap seq[r_i % (n - i)]
    and seq[n - 1 - i]) on draws[at:at + n]: follow position 0 back through the swaps."""
    pos = 0
    r = draws[at:at + n].tolist()
    for i in range(n - 1, -1, -1):
        ix, j = r[i] % (n - i), n - 1 - i
        pos = j if pos == ix else ix if pos == j else pos
    return pos


def htsim_pinned_order(index: np.ndarray, n_paths: np.ndarray, seed: int, draws_before: int) -> list[int]:
    """The connection order (-1: a placeholder) under which `htsim_ndp -strat perm -paths 1`
    puts every connection on its path. For each connection in file order htsim_ndp draws
    random() (mt19937(seed) & INT_MAX, sim/rng.cpp): P draws to permute the source's P
    paths (it keeps the first), 1 to shuffle that one, and P draws as the sink shuffles
    the P return paths; before the first, one per switch (its ECMP salt, `draws_before`).
    So at each point of the stream the next connection's path is known: it goes to a
    waiting connection that wants that path, else a flow under one ToR (any draw suits it)
    or a placeholder takes three draws. numpy's RandomState(seed) is std::mt19937(seed)."""
    waiting: dict[tuple[int, int], list[int]] = {}
    for c in range(len(index) - 1, -1, -1):
        waiting.setdefault((int(n_paths[c]), int(index[c])), []).append(c)
    local = waiting.pop((1, 0), [])
    sizes = sorted({n for n, _ in waiting})
    left = len(index) - len(local)
    rng = np.random.RandomState(seed)
    draws = np.zeros(0, dtype=np.int64)
    at = draws_before
    order: list[int] = []
    while left:
        if at + 2 * max(sizes) + 2 > draws.size:
            more = rng.randint(0, 2 ** 32, size=max(65536, draws_before), dtype=np.uint32).astype(np.int64) & INT_MAX
            draws = np.concatenate([draws, more])
            continue
        for n in sizes:
            bucket = waiting.get((n, _first_of_permutation(draws, at, n)))
            if bucket:
                order.append(bucket.pop())
                at += 2 * n + 1
                left -= 1
                break
        else:
            order.append(local.pop() if local else -1)
            at += 3
    return order + local[::-1]


def htsim_matrix(nodes: int, src: np.ndarray, dst: np.ndarray, size_bytes: int, order: list[int] | None = None) -> str:
    """A connection matrix (ConnectionMatrix::load): `Nodes`, `Connections`, then one
    `src->dst start PS size BYTES` per connection; `order` (-1: a placeholder that starts
    after the run and sends nothing) as htsim_single_path_order gives it."""
    order = list(range(src.size)) if order is None else order
    filler = (0, 1) if nodes > 1 else (0, 0)
    rows = [f"{int(src[c])}->{int(dst[c])} start 0 size {size_bytes}" if c >= 0
            else f"{filler[0]}->{filler[1]} start {HTSIM_DUMMY_START_PS} size 1" for c in order]
    return "\n".join([f"Nodes {nodes}", f"Connections {len(rows)}", *rows]) + "\n"


def htsim_run_files(plan: Plan, patterns: list[str] | None = None, routings: list[str] | None = None,
                    servers: str | None = None, order: str = "plan", seed: int = 1, fail: str | None = None,
                    flow_bytes: int = HTSIM_FLOW_BYTES) -> dict[str, str]:
    """Traffic matrices of each pattern (all-to-all: its fullest analysed phase), per Clos routing the matrix that
    pins htsim_ndp's flows to the routes traffic chose, and run.sh with the
    command lines (host link speed, node count and end time included)."""
    pinned = plan.view.design.tiers == 2  # the path index below is agg x bundle x bundle: two tiers
    intact = TrafficFabric(plan)
    node = htsim_nodes(intact)
    n = node.size
    host_gbps = np.unique(intact.ep_gbps)
    if host_gbps.size != 1:
        raise ExportError(f"NICs run at several speeds ({', '.join(f'{v:g}' for v in host_gbps)} Gb/s); htsim has one host speed")
    host_mbps = int(host_gbps[0] * 1000)
    end_us = max(1000, int(100 * flow_bytes * 8 / (host_gbps[0] * 1e3)))  # 100 x a flow at line rate
    # a window of 10 us at the host rate in 9,000 B packets: NDP's default 15 packets cover
    # ~3 us, which caps a lone flow at ~0.55 of 400G over this fabric's round trip
    cwnd = max(15, math.ceil(host_gbps[0] * 1e9 * 10e-6 / 8 / HTSIM_MTU_BYTES))
    switches = sum(1 for d in plan.devices if d.tier > 0)
    scenarios = [("", intact)]
    if fail:
        scenarios.append(("-fail", TrafficFabric(plan, parse_failure(plan, fail), graph=intact.graph)))
    chosen = placement(intact, servers, order, seed)
    files: dict[str, str] = {}
    common = f"-topo fat_tree.topo -nodes {n} -linkspeed {host_mbps} -end {end_us}"
    runs = [f"# csg-htsim {HTSIM_COMMIT}, sim/datacenter binaries; set HTSIM to their folder.",
            f"# -linkspeed {host_mbps}: the host link in Mb/s (htsim's default, 100G, would pace every host below the fabric)",
            f"# -nodes {n}: htsim_ndp sizes its path tables before it reads the matrix",
            f"# -cwnd {cwnd}: packets of {HTSIM_MTU_BYTES:,} B (htsim's MTU) in flight, 10 us at the host rate",
            "# Each flow prints 'finished at <us>'; its rate is size x 8 / that time.",
            'HTSIM=${HTSIM:-.}', "set -e"]
    if not pinned:
        runs.insert(-2, "# Three tiers: htsim hashes every route (flows are pinned to traffic's routes on two tiers only)")
    for name in patterns or DEFAULT_PATTERNS:
        for label, fabric in scenarios:
            router = Router(fabric, seed=seed)
            pat = build_pattern(fabric, name, chosen, seed)
            if not pat.phases:
                continue
            phase = max(pat.phases, key=lambda ph: ph.src.size)  # all-to-all: its fullest phase (first of equals)
            if phase.src.size == 0:
                continue
            stem = name.replace(":", "-") + label
            if not label:
                files[f"{stem}.cm"] = htsim_matrix(n, node[phase.src], node[phase.dst], flow_bytes)
                runs.append(f'"$HTSIM/htsim_eqds" {common} -tm {stem}.cm -cwnd {cwnd} -paths 1 -seed {HTSIM_SEED} -o {stem}.eqds.log '
                            f'> {stem}.eqds.out  # htsim hashes the routes itself')
                runs.append(f'"$HTSIM/htsim_roce" {common} -tm {stem}.cm -strat ecmp_host -paths 1 -seed {HTSIM_SEED} -o {stem}.roce.log '
                            f'> {stem}.roce.out  # htsim hashes the routes itself')
            for routing in routings or router.available():
                if not pinned or routing not in ("ecmp", "ftree") or routing not in router.available():
                    continue
                routed = router.route(routing, phase)
                if not routed.active.all():
                    continue  # a flow without a route: htsim would still send it
                m = routed.inc.terms[0].chain[0].tocoo()
                index, paths = htsim_path_choice(plan, fabric, m.col, m.row, phase.src.size)
                seq = htsim_pinned_order(index, paths, HTSIM_SEED, switches)
                files[f"{stem}-{routing}.cm"] = htsim_matrix(n, node[phase.src], node[phase.dst], flow_bytes, seq)
                runs.append(f'"$HTSIM/htsim_ndp" {common} -tm {stem}-{routing}.cm -cwnd {cwnd} -strat perm -paths 1 -seed {HTSIM_SEED} '
                            f'-o {stem}-{routing}.ndp.log > {stem}-{routing}.ndp.out  # the routes traffic chose ({routing})')
    if any(r.startswith('"$HTSIM') for r in runs):
        files["run.sh"] = "#!/bin/sh\n" + "\n".join(runs) + "\n"
    return files
