"""Collective times in the alpha-beta model: t = latency + bytes / bottleneck bandwidth.
The one home of these formulas: the compile's collectives check (check/collectives.py)
prices them on the bisection, the traffic analysis on the max-min fair rates it measures."""

from __future__ import annotations

import math


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
