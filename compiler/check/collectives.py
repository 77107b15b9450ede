"""All-reduce estimates with an alpha-beta model, from the plan's bottleneck bandwidths.

Model (stated in the output):
- t = latency terms + bytes moved / bottleneck bandwidth, no congestion beyond what the
  fabric's worst-cut bisection implies, no compute/communication overlap;
- ring over n ranks: 2(n-1)/n * S / B + 2(n-1) * alpha;
- tree (double binary, pipelined): 2 * S / B + 2 * ceil(log2 n) * alpha;
- hierarchical: reduce-scatter and all-gather inside the server over the scale-up
  domain (NVLink), all-reduce of S/g across servers on each GPU's own NIC:
  2(g-1)/g * S / B_scaleup + 2(M-1)/M * (S/g) / B_net + 2(M-1) * alpha;
- B_net per GPU = NIC bandwidth x fabric factor, where the fabric factor is the worst-cut
  bisection over half the GPUs' injection (1.0 at 1:1, 0.5 at 2:1);
- bus bandwidth (nccl-tests busbw) = algbw * 2(n-1)/n, algbw = S / t.
"""

from __future__ import annotations

import math

from .context import CheckContext
from .findings import Finding

MODEL = ("alpha-beta: t = latency + bytes/bottleneck bandwidth; ring 2(n-1)/n*S/B + 2(n-1)a; "
         "tree 2S/B + 2ceil(log2 n)a; hierarchical: NVLink reduce-scatter/all-gather inside the server, "
         "ring of S/g across servers per GPU NIC; network bandwidth per GPU = NIC Gb/s x (worst-cut bisection / "
         "half the injection); no overlap, no congestion beyond the bisection")


def transfer_time_s(size_bytes: float, gbps: float) -> float:
    """The textbook lower bound: bytes on one link of `gbps` (140 GB at 100 Gb/s = 11.2 s)."""
    return size_bytes * 8 / (gbps * 1e9)


def ring_allreduce_s(size_bytes, ranks, gbps, alpha_s) -> float:
    if ranks < 2:
        return 0.0
    return 2 * (ranks - 1) / ranks * transfer_time_s(size_bytes, gbps) + 2 * (ranks - 1) * alpha_s


def tree_allreduce_s(size_bytes, ranks, gbps, alpha_s) -> float:
    if ranks < 2:
        return 0.0
    return 2 * transfer_time_s(size_bytes, gbps) + 2 * math.ceil(math.log2(ranks)) * alpha_s


def hierarchical_allreduce_s(size_bytes, gpus_per_server, servers, scaleup_gbps, net_gbps, alpha_s) -> float:
    g = gpus_per_server
    intra = 2 * (g - 1) / g * transfer_time_s(size_bytes, scaleup_gbps) if g > 1 and scaleup_gbps else 0.0
    return intra + ring_allreduce_s(size_bytes / g, servers, net_gbps, alpha_s)


def check_collectives(ctx: CheckContext) -> tuple[dict, list[Finding]]:
    plan = ctx.plan
    d = plan.design
    gpus, servers = d["gpus"], d["servers"]
    g = gpus // servers
    bis = ctx.figures["bisection"]["worst_cut_gbps"]
    inj = float(ctx.graph.at_cap_gbps[ctx.graph.at_is_gpu_server].sum())
    if d["topology"] == "rail-only":
        # The rails cut is 0 by design; collectives stay rail-aligned (the scale-up domain
        # carries what crosses rails), so the network figure is each rail's own bisection.
        bis = d["per_rail_bisection_gbps"] * d["rails"]
    factor = min(1.0, bis / (inj / 2)) if inj else 0.0
    nic_gbps_per_gpu = inj / gpus
    net = nic_gbps_per_gpu * factor
    server_rec = plan.facts["models"].get(d["server"], {})
    scaleup_gbytes = server_rec.get("scale_up_gbytes_per_s")  # bidirectional GB/s per GPU
    scaleup_gbps = scaleup_gbytes * 8 / 2 if scaleup_gbytes else None  # one direction, Gb/s
    settings = plan.analysis.get("collectives", {})
    alpha = settings.get("latency_us", 5.0) * 1e-6
    rows = []
    for size in settings.get("message_sizes", []):
        ring = ring_allreduce_s(size, gpus, min(net, scaleup_gbps or net), alpha)
        tree = tree_allreduce_s(size, gpus, min(net, scaleup_gbps or net), alpha)
        hier = hierarchical_allreduce_s(size, g, servers, scaleup_gbps, net, alpha)
        best = min(ring, tree, hier)
        rows.append({
            "message_bytes": size,
            "ring_s": round(ring, 6), "tree_s": round(tree, 6), "hierarchical_s": round(hier, 6),
            "busbw_gbytes_per_s": round(size / best * 2 * (gpus - 1) / gpus / 1e9, 3) if best > 0 else None,
            "lower_bound_one_link_s": round(transfer_time_s(size, nic_gbps_per_gpu), 6),
        })
    figures = {"model": MODEL, "ranks": gpus, "gpus_per_server": g, "latency_us": alpha * 1e6,
               "nic_gbps_per_gpu": nic_gbps_per_gpu, "fabric_factor": round(factor, 4),
               "network_gbps_per_gpu": round(net, 3), "scaleup_gbps_per_gpu": scaleup_gbps, "allreduce": rows}
    findings = []
    for r in rows:
        findings.append(Finding("COLLECTIVE_ESTIMATE", "info",
                                f"all-reduce of {r['message_bytes']:,} B over {gpus:,} GPUs: ring {r['ring_s']:.4g} s, "
                                f"tree {r['tree_s']:.4g} s, hierarchical {r['hierarchical_s']:.4g} s", "fabric"))
    return figures, findings
