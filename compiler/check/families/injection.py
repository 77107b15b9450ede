"""GPU injection: the bandwidth all GPU-server ports put into the fabric, one direction.
The cap on every closed-form bisection (a cut cannot carry more than half of it)."""

from __future__ import annotations

from ...plan.graph import FabricGraph


def gpu_injection_gbps(g: FabricGraph) -> float:
    gpu = g.at_is_gpu_server
    return float(g.at_cap_gbps[gpu].sum())
