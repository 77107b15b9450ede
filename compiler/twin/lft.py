"""Unicast forwarding tables (LFTs) as infiniband-diags prints them, read onto the plan.

`dump_fts` (and `ibroute` per switch) print, for every switch, a header
`Unicast lids [0x0-0x218] of switch DR path ... guid 0x0230000200000800 (su2-leaf-r8):`
and one line per destination LID, `0x0001 033 : (Channel Adapter portguid 0x0210000100000101: 'dgx-su1-001 osfp4-p2')`.
The switch is found by its node GUID, the destination CA by its port GUID, and the out
port by the plan's IB port numbering (render/infiniband.py ib_view), so a table becomes
"at this switch, traffic to this endpoint leaves on this plan link". Only destinations
that are CAs are kept: those are what GPU traffic is routed to.
"""

from __future__ import annotations

import re

import numpy as np

from ..plan.guids import ca_port_guid
from ..render.infiniband import ib_view
from ..traffic.fabric import TrafficFabric

_HEADER = re.compile(r"^Unicast lids .* guid (0x[0-9a-fA-F]+) \((.*)\):\s*$")
_ENTRY = re.compile(r"^(0x[0-9a-fA-F]+) (\d+) : \(Channel Adapter portguid (0x[0-9a-fA-F]+): ")


class LftTables:
    """next_link[(switch device, endpoint)] -> plan link, from a dump."""

    def __init__(self, fabric: TrafficFabric, text: str):
        plan = fabric.plan
        view = plan.memo("ib_view", ib_view)
        port_link: dict[tuple[int, int], int] = {}
        for i, (a, ap, b, bp) in enumerate(zip(view.a_node.tolist(), view.a_port.tolist(),
                                               view.b_node.tolist(), view.b_port.tolist(), strict=True)):
            port_link[(a, ap)] = i
            port_link[(b, bp)] = i
        dev_of_guid = {int(g): i for i, g in enumerate(view.device_guid.tolist()) if not view.is_ca[i]}
        ep_guid = ca_port_guid(view.device_guid[fabric.ep_device], fabric.ep_port)
        ep_of_guid = {int(g): e for e, g in enumerate(ep_guid.tolist())}
        self.next_link: dict[tuple[int, int], int] = {}
        self.switches = 0
        switch = None
        for line in text.splitlines():
            m = _HEADER.match(line)
            if m:
                switch = dev_of_guid.get(int(m.group(1), 16))
                self.switches += switch is not None
                continue
            m = _ENTRY.match(line)
            if m and switch is not None:
                ep = ep_of_guid.get(int(m.group(3), 16))
                guid = int(view.device_guid[switch])
                link = port_link.get((guid, int(m.group(2))))
                if ep is not None and link is not None:
                    self.next_link[(switch, ep)] = link
        self.fabric = fabric

    def paths(self, src: np.ndarray, dst: np.ndarray, max_hops: int = 16):
        """(flow, directed link) pairs of every flow's route as the tables forward it, and
        which flows arrive."""
        f = self.fabric
        L = f.plan.links
        flows, links = [], []
        ok = np.zeros(src.size, dtype=bool)
        for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
            hops = [2 * int(f.ep_link[s])]
            dev = int(L.b_dev[f.ep_link[s]])
            for _ in range(max_hops):
                link = self.next_link.get((dev, d))
                if link is None:
                    break
                up = int(L.a_dev[link]) == dev
                hops.append(2 * link + (0 if up else 1))
                dev = int(L.b_dev[link] if up else L.a_dev[link])
                if link == f.ep_link[d]:
                    ok[i] = True
                    break
            if ok[i]:
                flows += [i] * len(hops)
                links += hops
        return np.asarray(flows, dtype=np.int64), np.asarray(links, dtype=np.int64), ok
