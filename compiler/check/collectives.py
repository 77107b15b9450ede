"""All-reduce estimates with an alpha-beta model, from the plan's bottleneck bandwidths.

Model (stated in the output):
- t = latency terms + bytes moved / bottleneck bandwidth, no congestion beyond what the
  fabric's worst-cut bisection implies, no compute/communication overlap;
- ring over n ranks: 2(n-1)/n * S / B + 2(n-1) * alpha;
- tree (double binary, pipelined): 2 * S / B + 2 * ceil(log2 n) * alpha;
- hierarchical: reduce-scatter inside the scale-up domain of g GPUs (8 on a DGX/HGX
  baseboard, 72 in an NVL72 rack; plan.scale_up) over NVLink, all-reduce of S/g across the
  M domains on each GPU's own NIC ports, all-gather inside the domain:
  2(g-1)/g * S / B_scaleup + 2(g-1) * alpha + 2(M-1)/M * (S/g) / B_net + 2(M-1) * alpha
  (the domain's ring steps pay alpha like any other ring's; not estimated (None) where the
  catalog has no scale-up bandwidth: a free NVLink stage would make it win by default);
- flat ring: one ring over all n GPUs at the slower of network and scale-up bandwidth;
  `used` names the fastest of ring, tree and hierarchical (what NCCL's tuner would aim for);
- B_net per GPU = NIC bandwidth x fabric factor, where the fabric factor is the worst-cut
  bisection over half the GPUs' injection (1.0 at 1:1, 0.5 at 2:1);
- bus bandwidth (nccl-tests busbw) = algbw * 2(n-1)/n, algbw = S / t.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..topology import topology
from ..traffic.collective_time import (hierarchical_allreduce_s, hierarchical_stages_s, ring_allreduce_s,  # noqa: F401
                                       transfer_time_s, tree_allreduce_s)
from .bisection import BisectionFigures
from .context import CheckContext
from .figures import Figures
from .findings import Finding

MODEL = ("alpha-beta: t = latency + bytes/bottleneck bandwidth; ring 2(n-1)/n*S/B + 2(n-1)a; "
         "tree 2S/B + 2ceil(log2 n)a; hierarchical: reduce-scatter/all-gather inside the scale-up domain of g GPUs "
         "(NVLink, one direction = half the bidirectional GB/s; 2(g-1)a), ring of S/g across the domains per GPU NIC "
         "(none where the scale-up bandwidth is unknown); "
         "used = the fastest; network bandwidth per GPU = NIC Gb/s x (worst-cut bisection / "
         "half the injection); no overlap, no congestion beyond the bisection")


@dataclass(frozen=True)
class AllReduceEstimate:
    """One message size: each algorithm's time, and which is fastest."""

    message_bytes: int
    ring_s: float
    tree_s: float
    hierarchical_s: float | None  # None where the scale-up bandwidth is unknown
    hierarchical_scale_up_s: float | None
    hierarchical_network_s: float
    used: str  # ring | tree | hierarchical
    busbw_gbytes_per_s: float | None
    lower_bound_one_link_s: float


@dataclass(frozen=True)
class CollectivesFigures(Figures):
    model: str
    ranks: int
    gpus_per_server: int
    gpus_per_domain: int
    domains: int
    latency_us: float
    nic_gbps_per_gpu: float
    fabric_factor: float
    network_gbps_per_gpu: float
    scaleup_gbps_per_gpu: float | None
    allreduce: list[AllReduceEstimate]


def check_collectives(ctx: CheckContext, bisection: BisectionFigures) -> tuple[CollectivesFigures, list[Finding]]:
    plan = ctx.plan
    d = plan.design_record
    gpus, servers = d.gpus, d.servers
    g = gpus // servers
    up = plan.scale_up
    if up is not None and not up.in_plan_links and up.domains:
        g = up.gpus_per_domain  # the NVLink domain: the server (DGX) or the rack (NVL72)
    domains = gpus // g
    bis = bisection.worst_cut_gbps
    inj = float(ctx.graph.at_cap_gbps[ctx.graph.at_is_gpu_server].sum())
    if not topology(d.topology).rails_meet:
        # The rails cut is 0 by design; collectives stay rail-aligned (the scale-up domain of
        # g GPUs carries what crosses rails), so the network figure is each rail's own bisection.
        bis = d.per_rail_bisection_gbps * d.rails
    factor = min(1.0, bis / (inj / 2)) if inj else 0.0
    if servers < 2:
        # One server: no cut between servers exists, so nothing limits its NICs (a rail of
        # one port has a "bisection" of 0 Gb/s, which made every estimate divide by zero).
        factor = 1.0
    nic_gbps_per_gpu = inj / gpus
    net = nic_gbps_per_gpu * factor
    scaleup_gbytes = up.gbytes_per_s_per_gpu if up is not None else None  # bidirectional GB/s per GPU
    scaleup_gbps = scaleup_gbytes * 8 / 2 if scaleup_gbytes else None  # one direction, Gb/s
    settings = plan.analysis.get("collectives", {})
    alpha = settings.get("latency_us", 5.0) * 1e-6
    rows = []
    for size in settings.get("message_sizes", []):
        ring = ring_allreduce_s(size, gpus, min(net, scaleup_gbps or net), alpha)
        tree = tree_allreduce_s(size, gpus, min(net, scaleup_gbps or net), alpha)
        intra, inter = hierarchical_stages_s(size, g, domains, scaleup_gbps, net, alpha)
        hier = None if intra is None else intra + inter
        best, used = min([(ring, "ring"), (tree, "tree")] + ([(hier, "hierarchical")] if hier is not None else []))
        rows.append(AllReduceEstimate(
            message_bytes=size,
            ring_s=round(ring, 6), tree_s=round(tree, 6),
            hierarchical_s=None if hier is None else round(hier, 6),
            hierarchical_scale_up_s=None if intra is None else round(intra, 6),
            hierarchical_network_s=round(inter, 6), used=used,
            busbw_gbytes_per_s=round(size / best * 2 * (gpus - 1) / gpus / 1e9, 3) if best > 0 else None,
            lower_bound_one_link_s=round(transfer_time_s(size, nic_gbps_per_gpu), 6),
        ))
    figures = CollectivesFigures(model=MODEL, ranks=gpus, gpus_per_server=gpus // servers, gpus_per_domain=g,
                                 domains=domains, latency_us=alpha * 1e6,
                                 nic_gbps_per_gpu=nic_gbps_per_gpu, fabric_factor=round(factor, 4),
                                 network_gbps_per_gpu=round(net, 3), scaleup_gbps_per_gpu=scaleup_gbps, allreduce=rows)
    findings = []
    for r in rows:
        hier = (f"hierarchical {r.hierarchical_s:.4g} s ({g}-GPU domains: {r.hierarchical_scale_up_s:.4g} s "
                f"scale-up + {r.hierarchical_network_s:.4g} s network)" if r.hierarchical_s is not None else
                f"hierarchical not estimated ({g}-GPU domains: no scale-up bandwidth in the catalog)")
        findings.append(Finding("COLLECTIVE_ESTIMATE", "info",
                                f"all-reduce of {r.message_bytes:,} B over {gpus:,} GPUs: ring {r.ring_s:.4g} s, "
                                f"tree {r.tree_s:.4g} s, {hier}; {r.used} is fastest", "fabric"))
    return figures, findings
