"""All-reduce estimates with an alpha-beta model, on the bandwidth the routed traffic
analysis measures (compiler/traffic/estimate.py): the same number `clusterc traffic`
prints for the ring under the same placement and routing, which every output states.

Model (stated in the output):
- t = latency terms + bytes moved / bottleneck bandwidth, no compute/communication overlap;
- B_net per GPU: NCCL's ring over the scale-up domains (one channel per NIC, every server
  in plan order), routed by the fabric's reference routing, links shared as the traffic
  analysis shares them: the slowest connection's share of NIC line rate x NIC Gb/s per GPU.
  A ring on neighbour links does not slow with the network's size, and oversubscription
  costs it only where ring neighbours meet above their leaf;
- ring over n ranks: 2(n-1)/n * S / B + 2(n-1) * alpha, B the slower of B_net and scale-up;
- tree (double binary, pipelined): 2 * S / B + 2 * ceil(log2 n) * alpha, at the ring's B
  (the tree's own flows are not routed);
- hierarchical: reduce-scatter inside the scale-up domain of g GPUs (8 on a DGX/HGX
  baseboard, 72 in an NVL72 rack; plan.scale_up) over NVLink, all-reduce of S/g across the
  M domains on the ring's network bandwidth, all-gather inside the domain:
  2(g-1)/g * S / B_scaleup + 2(g-1) * alpha + 2(M-1)/M * (S/g) / B_net + 2(M-1) * alpha
  (not estimated (None) where the catalog has no scale-up bandwidth: a free NVLink stage
  would make it win by default);
- `used` names the fastest of ring, tree and hierarchical (what NCCL's tuner would aim for);
- bus bandwidth (nccl-tests busbw) = algbw * 2(n-1)/n, algbw = S / t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..traffic.collective_time import allreduce_times, transfer_time_s
from ..traffic.estimate import ring_bandwidth
from ..traffic.text import seconds_text, size_text
from .context import CheckContext
from .figures import Figures
from .findings import Finding

MODEL = ("alpha-beta: t = latency + bytes/bottleneck bandwidth; network bandwidth per GPU = the slowest "
         "connection of NCCL's ring (one channel per NIC, servers in plan order) routed as clusterc traffic routes "
         "it, times NIC Gb/s per GPU; ring 2(n-1)/n*S/B + 2(n-1)a; tree 2S/B + 2ceil(log2 n)a at the ring's B; "
         "hierarchical: reduce-scatter/all-gather inside the scale-up domain of g GPUs (NVLink, one direction = half "
         "the bidirectional GB/s; 2(g-1)a), ring of S/g across the domains (none where the scale-up bandwidth is "
         "unknown); used = the fastest; no overlap")


@dataclass(frozen=True)
class AllReduceEstimate:
    """One message size: each algorithm's time, and which is fastest."""

    message_bytes: int
    ring_s: float | None  # None: a ring connection gets nothing (the collective never completes)
    tree_s: float | None
    hierarchical_s: float | None  # None where the scale-up bandwidth is unknown
    hierarchical_scale_up_s: float | None
    hierarchical_network_s: float | None
    used: str | None  # ring | tree | hierarchical
    busbw_gbytes_per_s: float | None
    lower_bound_one_link_s: float | None

    @property
    def best_s(self) -> float | None:
        """The fastest algorithm's time (`used`), None where nothing completes."""
        return {"ring": self.ring_s, "tree": self.tree_s, "hierarchical": self.hierarchical_s}.get(self.used or "")


@dataclass(frozen=True)
class CollectivesFigures(Figures):
    model: str
    ranks: int
    gpus_per_server: int
    gpus_per_domain: int
    domains: int
    latency_us: float
    nic_gbps_per_gpu: float
    fabric_factor: float  # the ring's slowest connection over NIC line rate (routed)
    network_gbps_per_gpu: float
    scaleup_gbps_per_gpu: float | None
    # what the network figure assumes, as `clusterc traffic` takes it: pattern, placement, routing
    pattern: str
    placement: str
    routing: str | None
    method: str  # routed | no link shared at saturation (a closed form equal to routing) | one domain
    allreduce: list[AllReduceEstimate]


def check_collectives(ctx: CheckContext) -> tuple[CollectivesFigures, list[Finding]]:
    plan = ctx.plan
    d = plan.view.design
    gpus, servers = d.gpus, d.servers
    g = gpus // servers
    up = plan.scale_up
    if up is not None and not up.in_plan_links and up.domains:
        g = up.gpus_per_domain  # the NVLink domain: the server (DGX) or the rack (NVL72)
    domains = gpus // g
    ring = ring_bandwidth(plan, ctx.graph)
    net = ring.network_gbps_per_gpu
    scaleup_gbytes = up.gbytes_per_s_per_gpu if up is not None else None  # bidirectional GB/s per GPU
    scaleup_gbps = scaleup_gbytes * 8 / 2 if scaleup_gbytes else None  # one direction, Gb/s
    settings = plan.analysis.get("collectives", {})
    alpha = settings.get("latency_us", 5.0) * 1e-6
    rows = []
    for size in settings.get("message_sizes", []):
        times = allreduce_times(size, gpus, g, net, scaleup_gbps, alpha)
        rows.append(AllReduceEstimate(
            message_bytes=size,
            ring_s=_s(times.ring_s), tree_s=_s(times.tree_s), hierarchical_s=_s(times.hierarchical_s),
            hierarchical_scale_up_s=_s(times.hierarchical_scale_up_s),
            hierarchical_network_s=_s(times.hierarchical_network_s), used=times.used,
            busbw_gbytes_per_s=round(size / times.best_s * 2 * (gpus - 1) / gpus / 1e9, 3)
            if times.best_s and math.isfinite(times.best_s) else None,
            lower_bound_one_link_s=round(transfer_time_s(size, ring.nic_gbps_per_gpu), 6) if ring.nic_gbps_per_gpu else None,
        ))
    figures = CollectivesFigures(model=MODEL, ranks=gpus, gpus_per_server=gpus // servers, gpus_per_domain=g,
                                 domains=domains, latency_us=alpha * 1e6,
                                 nic_gbps_per_gpu=ring.nic_gbps_per_gpu, fabric_factor=round(ring.min_fraction, 4),
                                 network_gbps_per_gpu=round(net, 3), scaleup_gbps_per_gpu=scaleup_gbps,
                                 pattern=ring.pattern, placement=ring.placement, routing=ring.routing,
                                 method=ring.method, allreduce=rows)
    findings = []
    assumes = (f"network {net:.4g} Gb/s per GPU: {ring.pattern} ({ring.placement})"
               + (f" under {ring.routing} routing, as clusterc traffic --routing {ring.routing} reports it"
                  if ring.routing else "") + (f"; {ring.reason}" if ring.reason else ""))
    for r in rows:
        hier = (f"hierarchical {seconds_text(r.hierarchical_s)} ({g}-GPU domains: {seconds_text(r.hierarchical_scale_up_s)} "
                f"scale-up + {seconds_text(r.hierarchical_network_s)} network)" if r.hierarchical_s is not None else
                f"hierarchical not estimated ({g}-GPU domains: no scale-up bandwidth in the catalog)")
        findings.append(Finding("COLLECTIVE_ESTIMATE", "info",
                                f"all-reduce of {size_text(r.message_bytes)} over {gpus:,} GPUs: ring {seconds_text(r.ring_s)}, "
                                f"tree {seconds_text(r.tree_s)}, {hier}; {r.used} is fastest ({assumes})", "fabric"))
    return figures, findings


def _s(t: float | None) -> float | None:
    """Seconds as checks.json carries them (None: never completes, or not estimated)."""
    return None if t is None or math.isinf(t) else round(t, 6)


def headline(figures: CollectivesFigures) -> dict | None:
    """The all-reduce of the largest message size at its fastest, with what it assumes: the
    one figure summary.json, `clusterc compare` and `clusterc explore` show and rank on."""
    if not figures.allreduce:
        return None
    r = max(figures.allreduce, key=lambda x: x.message_bytes)
    return {"message": size_text(r.message_bytes), "message_bytes": r.message_bytes, "seconds": r.best_s,
            "algorithm": r.used, "network_gbps_per_gpu": figures.network_gbps_per_gpu,
            "assumes": {"pattern": figures.pattern, "placement": figures.placement, "routing": figures.routing}}
