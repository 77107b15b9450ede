"""GPU injection: the bandwidth all GPU-server ports put into the fabric, one direction.
The cap on every closed-form bisection (a cut cannot carry more than its smaller side puts in)."""

from __future__ import annotations

import numpy as np

from ...plan.graph import FabricGraph


def gpu_injection_gbps(g: FabricGraph) -> float:
    gpu = g.at_is_gpu_server
    return float(g.at_cap_gbps[gpu].sum())


def half_injection_gbps(g: FabricGraph) -> float:
    """What the smaller side of a balanced cut injects: half the GPU injection, or with an
    odd number of ports the floor(P/2) ports of least capacity (check/cuts.py by_server puts
    floor(P/2) on side A)."""
    caps = np.sort(g.at_cap_gbps[g.at_is_gpu_server])
    if caps.size % 2 == 0:
        return float(caps.sum()) / 2
    return float(caps[: caps.size // 2].sum())
