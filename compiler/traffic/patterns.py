"""Traffic patterns as flows between NIC ports (endpoints), with NCCL's structure.

A pattern is one or more phases; a phase is a set of flows that run at the same time
(numpy arrays: source endpoint, destination endpoint, connection). A connection is what
the collective waits for: NCCL moves the same amount of data over each port a GPU pair
uses, so a connection of k flows runs at k times its slowest flow.

- ring-allreduce: NCCL's ring over the scale-up domains in rank order, one channel per
  NIC: slot s of domain d (server s of the domain, NIC i) talks to slot s of domain d+1
  (NIC i to NIC i, the rail-optimised layout NCCL's topology search finds). With one
  server per domain (DGX/HGX) this is server k NIC i -> server k+1 NIC i.
- hierarchical: the same network flows (the ring across domains carries 1/g of the data
  after the reduce-scatter over NVLink inside each domain of g GPUs); only the time differs.
- all-to-all: NCCL's point-to-point schedule, phase d: GPU rank r sends to rank r + d
  (mod n). With PXN the data first crosses NVLink to the GPU of the sender's server on the
  destination's rail, so every network flow is rail-aligned and every NIC sends and
  receives one flow per phase. Pairs inside one scale-up domain go over NVLink (no flow).
  Above `max_phases` network phases, a seeded sample of phases is analysed (stated). By
  default 16, fewer above 16,384 GPUs (16 x 16,384 / GPUs, at least 4): every phase is a
  rail-aligned permutation of every NIC, so at that size phases differ little from one
  another and each costs a full max-min solve.
- permutation: a seeded random permutation of the endpoints (one flow per GPU NIC pair);
  pairs inside one scale-up domain are dropped (NVLink).
- shift[:k|:group]: endpoint i -> i + k in fabric order (by edge switch, then switch port):
  default k = the endpoints on the first edge switch, so every flow leaves its switch;
  `group` = the endpoints under one pod or dragonfly group (the adversarial pattern).

Placement: the whole cluster or a set of servers (plan order or a given order).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fabric import TrafficFabric
from ..diagnostics import nearest
from ..plan.columns import ranges

PATTERNS = ("ring-allreduce", "hierarchical", "all-to-all", "permutation", "shift")
DEFAULT_MAX_PHASES = 16


def default_phases(gpus: int) -> int:
    return max(4, min(DEFAULT_MAX_PHASES, DEFAULT_MAX_PHASES * 16_384 // max(1, gpus)))


@dataclass
class Phase:
    src: np.ndarray  # endpoint ids
    dst: np.ndarray
    conn: np.ndarray  # connection id per flow (0..n_conn-1)
    weight: float = 1.0  # how many phases of the schedule this one stands for
    # per flow: the share of its source endpoint's line rate it stands for (None: all of it);
    # below 1 where several GPUs send through one port (a direct network's node)
    share: np.ndarray | None = None


@dataclass
class Pattern:
    name: str  # as asked, e.g. shift:32
    kind: str  # ring-allreduce | hierarchical | all-to-all | permutation | shift
    phases: list[Phase]
    gpus: int  # GPUs taking part
    servers: np.ndarray  # server ordinals, rank order
    notes: list[str] = field(default_factory=list)
    nvlink_phases: int = 0  # all-to-all phases that never reach the network
    total_phases: int = 1  # phases in the full schedule


class PatternError(ValueError):
    """A pattern name or placement that cannot be built; the message says why."""


def placement(fabric: TrafficFabric, servers: str | None, order: str, seed: int) -> np.ndarray:
    """Server ordinals taking part, in rank order. `servers`: None/all, first:N, random:N,
    or comma-separated names; `order`: plan (as listed) or random (a scheduler that
    scatters ranks). Servers cut off by a failure still take part (their flows are lost)."""
    n = fabric.server_devices.size
    rng = np.random.default_rng(seed)
    if not servers or servers == "all":
        chosen = np.arange(n)
    else:
        kind, sep, count = servers.partition(":")
        if sep and kind in ("first", "random"):
            if not count.isdigit() or not 2 <= int(count) <= n:
                raise PatternError(f"--servers {servers}: N must be 2 to {n:,}")
            k = int(count)
            chosen = np.arange(k) if kind == "first" else np.sort(rng.choice(n, size=k, replace=False))
        else:
            names = [s.strip() for s in servers.split(",") if s.strip()]
            idx = []
            server_of = {int(d): i for i, d in enumerate(fabric.server_devices.tolist())}
            for name in names:
                try:
                    dev = fabric.plan.device_index(name)
                except KeyError:
                    dev = -1
                if dev not in server_of:
                    raise PatternError(f"--servers: no server '{name}'; "
                                       f"{nearest(name, [fabric.plan.devices[int(d)].name for d in fabric.server_devices])}")
                idx.append(server_of[dev])
            if len(set(idx)) != len(idx) or len(idx) < 2:
                raise PatternError("--servers: name at least two different servers")
            chosen = np.asarray(idx, dtype=np.int64)
    if order == "random":
        chosen = rng.permutation(chosen)
    elif order != "plan":
        raise PatternError(f"--order takes plan or random, not '{order}'")
    return chosen


def build_pattern(fabric: TrafficFabric, name: str, servers: np.ndarray, seed: int,
                  max_phases: int | None = None) -> Pattern:
    kind, _, arg = name.partition(":")
    if kind not in PATTERNS:
        raise PatternError(f"unknown pattern '{name}'; {nearest(kind, PATTERNS)}")
    if arg and kind != "shift":
        raise PatternError(f"pattern {kind} takes no argument (got '{name}')")
    gpus = int(servers.size * fabric.gpus_per_server)
    if kind in ("ring-allreduce", "hierarchical"):
        return Pattern(name, kind, [_domain_ring(fabric, servers)], gpus, servers)
    if kind == "permutation":
        return Pattern(name, kind, [_permutation(fabric, servers, seed)], gpus, servers)
    if kind == "shift":
        phase, stride = _shift(fabric, servers, arg)
        return Pattern(name, kind, [phase], gpus, servers, notes=[f"shift by {stride:,} endpoints in fabric order"])
    return _all_to_all(fabric, servers, seed, max_phases or default_phases(gpus))


def _endpoints_of(fabric: TrafficFabric, servers: np.ndarray) -> np.ndarray:
    """Endpoint ids of these servers, server by server in the given order, ports in order."""
    first, last = fabric.ep_first[servers], fabric.ep_first[servers + 1]
    counts = last - first
    return np.repeat(first, counts) + ranges(counts)


def _phase(src: np.ndarray, dst: np.ndarray, conn: np.ndarray | None = None, weight: float = 1.0) -> Phase:
    if conn is None:
        conn = np.arange(src.size)
    else:
        _, conn = np.unique(conn, return_inverse=True)
    return Phase(src.astype(np.int64), dst.astype(np.int64), conn.astype(np.int64).reshape(-1), weight)


def _domain_ring(fabric: TrafficFabric, servers: np.ndarray) -> Phase:
    """Slot s of domain d -> slot s of the next domain in rank order, on every NIC port."""
    dom = fabric.domain_of_server(servers)
    _, first_at, which = np.unique(dom, return_index=True, return_inverse=True)
    by_rank = np.argsort(first_at)
    domains = dom[first_at[by_rank]]  # domains in rank order of their first server
    if domains.size < 2:
        return _phase(np.zeros(0), np.zeros(0))
    rank_of_domain = np.empty(domains.size, dtype=np.int64)  # per distinct domain (sorted): its rank
    rank_of_domain[by_rank] = np.arange(domains.size)
    # slot = position of the server inside its domain (plan order)
    up = fabric.plan.scale_up
    per = up.servers_per_domain if up is not None and not up.in_plan_links and up.domains else 1
    slot = servers % per
    nxt_domain = domains[(rank_of_domain[which.reshape(-1)] + 1) % domains.size]
    target_server = nxt_domain * per + slot
    taking_part = np.zeros(fabric.server_devices.size, dtype=bool)  # server ordinals: a mark, not np.isin's sort
    taking_part[servers] = True
    inside = (target_server >= 0) & (target_server < taking_part.size)
    present = inside & taking_part[np.where(inside, target_server, 0)]
    src_srv, dst_srv = servers[present], target_server[present]
    p_src = np.diff(fabric.ep_first)[src_srv]
    p_dst = np.diff(fabric.ep_first)[dst_srv]
    k = np.minimum(p_src, p_dst)
    src = np.repeat(fabric.ep_first[src_srv], k) + ranges(k)
    dst = np.repeat(fabric.ep_first[dst_srv], k) + ranges(k)
    return _phase(src, dst)


def _permutation(fabric: TrafficFabric, servers: np.ndarray, seed: int) -> Phase:
    eps = _endpoints_of(fabric, servers)
    rng = np.random.default_rng(seed)
    dst = eps[rng.permutation(eps.size)]
    dom = fabric.domain_of_server(fabric.ep_server)
    keep = dom[eps] != dom[dst]
    return _phase(eps[keep], dst[keep])


def fabric_order(fabric: TrafficFabric, eps: np.ndarray) -> np.ndarray:
    """Endpoints sorted by edge switch, then the switch port they land on."""
    link = fabric.ep_link[eps]
    port = np.where(link >= 0, fabric.plan.links.b_port[np.maximum(link, 0)], 0)  # a direct node: no port
    return eps[np.lexsort((port, fabric.ep_switch[eps]))]


def _shift(fabric: TrafficFabric, servers: np.ndarray, arg: str) -> tuple[Phase, int]:
    eps = fabric_order(fabric, _endpoints_of(fabric, servers))
    n = eps.size
    if arg in ("", "switch"):
        stride = int(np.count_nonzero(fabric.ep_switch[eps] == fabric.ep_switch[eps[0]]))
    elif arg == "group":
        stride = _group_size(fabric, eps)
    elif arg.isdigit() and 0 < int(arg) < n:
        stride = int(arg)
    else:
        raise PatternError(f"shift:{arg}: the stride is a number 1 to {n - 1:,}, 'switch' or 'group'")
    if not 0 < stride < n:
        raise PatternError(f"shift by {stride:,} of {n:,} endpoints moves nothing; place more servers")
    dst = eps[(np.arange(n) + stride) % n]
    return _phase(eps, dst), stride


def _group_size(fabric: TrafficFabric, eps: np.ndarray) -> int:
    """Endpoints under the first pod (Clos, 3 tiers) or dragonfly group; an SU otherwise."""
    devs = fabric.plan.devices
    sw = fabric.graph.device_of[fabric.ep_switch[eps]]
    key = np.array([devs[int(d)].pod if devs[int(d)].pod is not None else (devs[int(d)].su or 0) for d in sw.tolist()])
    return int(np.count_nonzero(key == key[0]))


def _all_to_all(fabric: TrafficFabric, servers: np.ndarray, seed: int, max_phases: int) -> Pattern:
    g_per = fabric.gpus_per_server
    n = servers.size * g_per
    ports = np.diff(fabric.ep_first)
    dom = fabric.domain_of_server(servers)
    # phases whose every pair stays inside a scale-up domain never reach the network
    deltas = np.arange(1, n)
    per_dom = np.bincount(np.unique(dom, return_inverse=True)[1]) * g_per
    nvlink_only = deltas < 0  # none, unless the placement is one domain
    if per_dom.size == 1:
        nvlink_only = np.ones(deltas.size, dtype=bool)
    network = deltas[~nvlink_only]
    notes = [f"all-to-all over {n:,} GPUs: {n - 1:,} phases of NCCL's peer schedule (rank r -> r + d), "
             "rail-aligned by PXN"]
    weight = 1.0
    if network.size > max_phases:
        rng = np.random.default_rng(seed)
        picked = np.sort(rng.choice(network, size=max_phases, replace=False))
        weight = network.size / max_phases
        notes.append(f"sampled {max_phases} of {network.size:,} phases (seed {seed}); "
                     f"each stands for {weight:.4g} phases")
        network = picked
    rank = np.arange(n)
    srv_of_rank, local = np.divmod(rank, g_per)
    phases = []
    for d in network.tolist():
        dst_rank = (rank + d) % n
        a_srv, b_srv = servers[srv_of_rank], servers[srv_of_rank[dst_rank]]
        cross = dom[srv_of_rank] != dom[srv_of_rank[dst_rank]]
        if not cross.any():
            continue
        r = rank[cross]
        dl = local[dst_rank[cross]]
        a, b = a_srv[cross], b_srv[cross]
        # ports serving the destination's local GPU (rail-aligned on both ends)
        pa, pb = ports[a], ports[b]
        lo = dl * pa // g_per
        k = np.maximum(1, (dl + 1) * pa // g_per - lo)
        src = np.repeat(fabric.ep_first[a] + lo, k) + ranges(k)
        dst = np.repeat(fabric.ep_first[b] + np.minimum(lo, pb - 1), k) + np.minimum(ranges(k), np.repeat(pb - 1, k))
        ph = _phase(src, dst, np.repeat(r, k), weight)
        if np.any(pa < g_per):  # several GPUs send through one port: each stands for its part
            ph.share = np.repeat(np.minimum(1.0, pa / g_per), k)
        phases.append(ph)
    pat = Pattern("all-to-all", "all-to-all", phases, int(n), servers, notes=notes,
                  nvlink_phases=int(nvlink_only.sum()), total_phases=int(n - 1))
    return pat
