"""The plan at the growth target, and day one's physical side taken from it.

With `growth:` the upper tiers are built for the final size from day one (resolve.py),
so growing adds devices and cables and moves none. A physical layout must hold to the
same promise: if racks were placed for today's size, the spine racks would sit after
today's last SU and move when an SU is added, and every leaf-spine cable would change
rack, length and part. So placement, cable lengths and media run on the plan as if the
growth target were built (every extra fabric too), and today's plan takes each
device's rack and U and each cable's medium and length from its namesake there. Day
one's racks are those of the final hall that hold a device today, under the same names.

Cost: one more build and placement of the plan at the final size; O(devices + links).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..plan.model import Plan
from ..plan.physical import Physical
from ..spec.load import LoadedSpec
from . import clos, extra_fabrics
from .resolve import ClosDesign


def grown_design(design: ClosDesign) -> ClosDesign:
    """The compute design with the growth target's servers and leaves built (its upper
    tiers already are: resolve._shrink kept them)."""
    s = design.sizing
    servers = design.final_servers
    if design.rail_optimized:
        assert design.su_size is not None  # a rail-optimized fabric is built of SUs
        leaves = math.ceil(servers / design.su_size) * design.rails
    elif design.su_size:
        leaves = math.ceil(servers / design.su_size) * (design.su_size // design.servers_per_leaf)
    else:
        leaves = math.ceil(servers / design.servers_per_leaf)
    pods = math.ceil(leaves / s.leaves_per_pod) if s.tiers == 3 else s.pods
    return dataclasses.replace(design, servers=servers, sizing=dataclasses.replace(s, leaves=leaves, pods=pods))


def final_plan(loaded: LoadedSpec, design: ClosDesign) -> tuple[Plan, ClosDesign, list[tuple[int, ClosDesign]]]:
    """The whole plan (compute and extra fabrics) at the growth target, its compute design
    and its extra fabrics' designs."""
    grown = grown_design(design)
    plan = clos.build(grown)
    extra: list[tuple[int, ClosDesign]] = []
    if loaded.spec.fabrics:
        plan, extra = extra_fabrics.attach(loaded, grown, plan)
    return plan, grown, extra


def project(final: Plan, plan: Plan) -> None:
    """Give `plan` (today) the physical side and media of `final` (the growth target):
    every device where its namesake is, every cable with its namesake's medium and length.
    A device or cable of today missing from the final plan would be a growth that moves
    something, which resolve.py rules out: our bug, so it raises."""
    phys = final.physical
    assert phys is not None and phys.length_m is not None and phys.order_m is not None
    index = {d.name: i for i, d in enumerate(final.devices)}
    missing = [d.name for d in plan.devices if d.name not in index]
    if missing:
        raise AssertionError(f"device {missing[0]} of today is not in the plan at the growth target")
    dev = np.fromiter((index[d.name] for d in plan.devices), dtype=np.int64, count=len(plan.devices))
    links = plan.links
    offsets = final.port_offsets()
    link_of_port = final.link_of_port()
    at = link_of_port[offsets[dev[links.a_dev]] + links.a_port]
    if (at < 0).any() or (final.links.b_dev[at] != dev[links.b_dev]).any() or (final.links.b_port[at] != links.b_port).any():
        bad = int(np.nonzero((at < 0) | (final.links.b_dev[at] != dev[links.b_dev]) | (final.links.b_port[at] != links.b_port))[0][0])
        raise AssertionError(f"cable {plan.devices[int(links.a_dev[bad])].name} port {int(links.a_port[bad]) + 1} of today "
                             f"is not where the plan at the growth target has it")
    racks_used = np.unique(phys.dev_rack[dev])  # in the final hall's order
    rack_remap = np.full(len(phys.racks), -1, dtype=np.int32)
    rack_remap[racks_used] = np.arange(racks_used.size, dtype=np.int32)
    media_used = np.unique(final.links.media[at])
    media_remap = np.full(len(final.media), -1, dtype=np.int16)
    media_remap[media_used] = np.arange(media_used.size, dtype=np.int16)
    plan.media = [final.media[m] for m in media_used.tolist()]
    plan.links.media = media_remap[final.links.media[at]]
    plan.physical = Physical(
        [phys.racks[r] for r in racks_used.tolist()], rack_remap[phys.dev_rack[dev]], phys.dev_u[dev].copy(),
        phys.dev_height_u[dev].copy(), phys.dev_power_w[dev].copy(), phys.rack_width_m, phys.row_pitch_m, phys.depth_mm,
        length_m=phys.length_m[at].copy(), order_m=phys.order_m[at].copy(), model=dict(phys.model))
