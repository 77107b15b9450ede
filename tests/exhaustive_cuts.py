"""The true bisection of a small fabric, by trying every balanced cut.

A balanced cut puts half the GPUs on each side (floor(G/2) on side A for an odd count G, as
check/cuts.py by_server does with one-port hosts), and every switch on either side. A GPU is
a server NIC with its ports (one per plane on a multi-plane NIC), or a direct network's node.
For a partition S of the switches, a GPU on side A cuts its ports to switches outside S,
on side B those into S; the cheapest balanced cut that agrees with S puts on side A the
half of the GPUs whose (cost on A - cost on B) is smallest, plus the switch links across S.
So the minimum over every S is the minimum over every balanced cut. S and its complement
cost the same, so switch 0 stays on side A. Independent of the compiler's cut search and
max-flow: plain enumeration, 2^(n-1) partitions of n switches.
"""

from __future__ import annotations

import numpy as np

from compiler.plan.graph import FabricGraph

MAX_NODES = 24
_CHUNK = 1 << 13


def exhaustive_bisection_gbps(g: FabricGraph, ports_per_gpu: int = 1) -> int:
    assert g.n <= MAX_NODES, f"{g.n} nodes: 2^{g.n - 1} partitions is too many"
    gpu = g.at_is_gpu_server
    dev, port = g.at_device[gpu], g.at_port[gpu] // ports_per_gpu
    _, unit = np.unique(np.stack([dev, port]), axis=1, return_inverse=True)
    unit = unit.ravel()
    units = int(unit.max()) + 1
    # units x switches: capacity from each GPU to each switch
    to_switch = np.zeros((units, g.n), dtype=np.int64)
    np.add.at(to_switch, (unit, g.at_switch[gpu]), g.at_cap_gbps[gpu])
    half = units // 2
    best = None
    total = 1 << (g.n - 1)
    bits = np.arange(g.n - 1, dtype=np.int64)
    for start in range(0, total, _CHUNK):
        masks = np.arange(start, min(total, start + _CHUNK), dtype=np.int64)
        in_b = np.zeros((masks.size, g.n), dtype=np.int64)
        in_b[:, 1:] = (masks[:, None] >> bits) & 1  # switch 0 always on side A
        cut = ((in_b[:, g.a] != in_b[:, g.b]) * g.cap_gbps).sum(axis=1)
        cost_a = in_b @ to_switch.T  # a GPU on side A cuts its links into side B
        cost_b = (1 - in_b) @ to_switch.T
        delta = np.sort(cost_a - cost_b, axis=1)
        value = cut + cost_b.sum(axis=1) + delta[:, :half].sum(axis=1)
        if units % 2:  # either side may hold the smaller half
            value = np.minimum(value, cut + cost_b.sum(axis=1) + delta[:, :half + 1].sum(axis=1))
        low = int(value.min())
        best = low if best is None else min(best, low)
    return best
