"""Collective times in the alpha-beta model: t = latency + bytes / bottleneck bandwidth.
The one home of these formulas: the compile's collectives check (check/collectives.py)
prices them on the bisection, the traffic analysis on the max-min fair rates it measures."""

from __future__ import annotations

import math
from dataclasses import dataclass


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


def hierarchical_stages_s(size_bytes, gpus_per_domain, domains, scaleup_gbps, net_gbps,
                          alpha_s) -> tuple[float | None, float]:
    """(scale-up stage: reduce-scatter + all-gather inside a domain, a ring of g ranks, so
    2(g-1) steps of alpha; network stage: all-reduce of S/g across the domains). The scale-up
    stage is None where a domain of several GPUs has no known bandwidth."""
    g = gpus_per_domain
    if g <= 1:
        intra = 0.0
    elif not scaleup_gbps:
        intra = None
    else:
        intra = ring_allreduce_s(size_bytes, g, scaleup_gbps, alpha_s)  # RS + AG = 2(g-1)/g S/B + 2(g-1) alpha
    return intra, ring_allreduce_s(size_bytes / g, domains, net_gbps, alpha_s)


def hierarchical_allreduce_s(size_bytes, gpus_per_domain, domains, scaleup_gbps, net_gbps, alpha_s) -> float | None:
    intra, inter = hierarchical_stages_s(size_bytes, gpus_per_domain, domains, scaleup_gbps, net_gbps, alpha_s)
    return None if intra is None else intra + inter


@dataclass(frozen=True)
class AllReduceTimes:
    ring_s: float
    tree_s: float
    hierarchical_s: float | None
    hierarchical_scale_up_s: float | None
    hierarchical_network_s: float
    used: str | None  # the fastest; None where nothing completes
    best_s: float


def flat_ring_s(size_bytes, ranks, net_gbps, scaleup_gbps, alpha_s) -> float:
    """One ring over every GPU at the slower of the network and the scale-up domain
    (infinite where the network gives a connection nothing)."""
    bw = min(net_gbps, scaleup_gbps or net_gbps)
    return math.inf if bw <= 0 and ranks > 1 else ring_allreduce_s(size_bytes, ranks, bw, alpha_s)


def allreduce_times(size_bytes, ranks, gpus_per_domain, net_gbps, scaleup_gbps, alpha_s) -> AllReduceTimes:
    """Ring, tree and hierarchical all-reduce on one network bandwidth per GPU: what the
    check reports and `clusterc traffic` prices its ring-allreduce and hierarchical rows on."""
    ring = flat_ring_s(size_bytes, ranks, net_gbps, scaleup_gbps, alpha_s)
    bw = min(net_gbps, scaleup_gbps or net_gbps)
    tree = math.inf if bw <= 0 and ranks > 1 else tree_allreduce_s(size_bytes, ranks, bw, alpha_s)
    domains = max(1, ranks // gpus_per_domain)
    if net_gbps <= 0 and domains > 1:
        intra, inter = hierarchical_stages_s(size_bytes, gpus_per_domain, 1, scaleup_gbps, 1.0, alpha_s)[0], math.inf
    else:
        intra, inter = hierarchical_stages_s(size_bytes, gpus_per_domain, domains, scaleup_gbps, net_gbps or 1.0, alpha_s)
    hier = None if intra is None else intra + inter
    options = [(ring, "ring"), (tree, "tree")] + ([(hier, "hierarchical")] if hier is not None else [])
    best, used = min(options)
    return AllReduceTimes(ring, tree, hier, intra, inter, used if math.isfinite(best) else None, best)
