"""The discovery a plan predicts: what ibnetdiscover or the switches' LLDP tables would
show if every cable were where the plan puts it. Used to test the matcher (apply known
mistakes to the cables, verify against the untouched plan, expect exactly those) and
to write inputs for the benchmarks.

`links` replaces the plan's link table (a miscabled floor); `labels` renames devices as
they would announce themselves; `rates` sets (lanes, lane Gb/s) per link index.
Cost: O(links) tuples, two per link for the InfiniBand style (each end prints it).
"""

from __future__ import annotations

import numpy as np

from ..plan.guids import ca_node_guid, device_guids
from ..plan.model import LinkTable, Plan
from .discovery import Discovery
from .ibnetdiscover import LANE_GBPS
from .lldp import node_key as lldp_key
from .names import ib_port_numbers


def expected_discovery(plan: Plan, *, style: str = "ib", links: LinkTable | None = None,
                       labels: dict[int, str] | None = None, rates: dict[int, tuple[int, float]] | None = None) -> Discovery:
    links = plan.links if links is None else links
    labels = labels or {}
    rates = rates or {}
    names = [labels.get(i, d.name) for i, d in enumerate(plan.devices)]
    disc = Discovery(formats=[f"expected-{style}"], files=["<plan>"])
    if style == "ib":
        disc.complete = True
        _ib(plan, disc, links, names, rates)
    elif style == "lldp":
        _lldp(plan, disc, links, names, rates)
    else:
        raise ValueError(style)
    return disc


def _ib(plan, disc, links, names, rates):
    guids = device_guids(plan)
    numbers = ib_port_numbers(plan)
    per_lane = LANE_GBPS["NDR"]
    def end(dev: int, port: int):
        d = plan.devices[dev]
        if d.tier == 0:
            g = int(ca_node_guid(guids[dev], port))
            key = f"guid:0x{g:016x}"
            if key not in disc.nodes:
                n = disc.node(key, f"{names[dev]} {plan.layouts[d.layout].ports[port].name}", "ca", "<plan>")
                n.reported, n.guid = True, g
            return key, 1
        key = f"guid:0x{int(guids[dev]):016x}"
        if key not in disc.nodes:  # a switch nothing reaches is not discovered
            n = disc.node(key, names[dev], "switch", "<plan>")
            n.reported, n.guid = True, int(guids[dev])
        return key, ib_number[d.layout].get(port, port + 1)

    ib_number = {lid: {i: n for n, i in table.items()} for lid, table in numbers.items()}
    for c, (a, pa, b, pb, speed) in enumerate(zip(links.a_dev.tolist(), links.a_port.tolist(), links.b_dev.tolist(),
                                                   links.b_port.tolist(), links.speed_gbps.tolist(), strict=True)):
        ka, na = end(a, pa)
        kb, nb = end(b, pb)
        lanes, lane = rates.get(c, (4, speed / 4 if speed / 4 in LANE_GBPS.values() else per_lane))
        disc.link(ka, na, kb, nb, "<plan>", lane, lanes)
        disc.link(kb, nb, ka, na, "<plan>", lane, lanes)


def _lldp(plan, disc, links, names, rates):
    """Switches report their neighbours (port id = interface name); hosts send LLDP too
    (their port description is the panel name) but their tables are not collected."""
    for i, d in enumerate(plan.devices):
        if d.tier > 0:
            disc.node(lldp_key(names[i]), names[i], "system", "<plan>").reported = True
    port_names = {lid: [p.name for p in lay.ports] for lid, lay in plan.layouts.items()}
    layouts = [d.layout for d in plan.devices]
    tiers = np.array([d.tier for d in plan.devices])
    for c, (a, pa, b, pb) in enumerate(zip(links.a_dev.tolist(), links.a_port.tolist(), links.b_dev.tolist(),
                                            links.b_port.tolist(), strict=True)):
        speed = rates.get(c, (None, None))[1]
        for (x, px), (y, py) in (((a, pa), (b, pb)), ((b, pb), (a, pa))):
            if tiers[x] == 0:
                continue
            disc.node(lldp_key(names[y]), names[y], "system", "<plan>")
            disc.link(lldp_key(names[x]), (port_names[layouts[x]][px],), lldp_key(names[y]),
                      (port_names[layouts[y]][py],), "<plan>", speed, None)
