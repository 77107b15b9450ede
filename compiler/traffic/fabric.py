"""The plan as the traffic analysis sees it: directed links with capacities, the GPU NIC
ports that send and receive (endpoints), and what a failure removes.

Every plan link is full duplex, so it is two directed links: id 2i carries traffic from
end a to end b (upward: a is the lower tier), 2i + 1 from b to a. A server's NIC port is an
endpoint; its attachment link is the first and last hop of every flow it takes part in, so
NIC line rate limits flows through the same max-min sharing as any switch link.

Built from the columnar link table and the switch graph (plan/graph.py); no per-link
Python objects. Cost O(devices + links).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..plan.graph import FabricGraph, fabric_graph
from ..plan.model import Plan
from ..plan.views import cable_ids
from ..diagnostics import nearest


@dataclass(frozen=True)
class Failure:
    """What --fail removed: plan devices and plan links, and how a reader names it."""

    text: str
    devices: np.ndarray  # plan device indices
    links: np.ndarray  # plan link indices

    @staticmethod
    def none() -> Failure:
        return Failure("", np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def server_devices(plan: Plan) -> np.ndarray:
    """Plan device indices of the servers, in plan order (read-only: shared by every fabric
    built on the plan)."""
    servers = np.fromiter((i for i, d in enumerate(plan.devices) if d.role == "server"), dtype=np.int64)
    servers.flags.writeable = False
    return servers


class TrafficFabric:
    """The compute fabric of a plan with its failures applied."""

    def __init__(self, plan: Plan, failure: Failure | None = None, graph: FabricGraph | None = None):
        self.plan = plan
        self.failure = failure or Failure.none()
        self.graph = graph if graph is not None else fabric_graph(plan)
        g = self.graph
        L = plan.links
        dead_dev = np.zeros(len(plan.devices), dtype=bool)
        dead_dev[self.failure.devices] = True
        if self.failure.devices.size:
            alive = ~(dead_dev[L.a_dev] | dead_dev[L.b_dev])
        else:  # no failed device: no pass over both ends of every link to learn it
            alive = np.ones(len(L), dtype=bool)
        alive[self.failure.links] = False
        self.link_alive = alive  # per plan link
        self.n_links = 2 * len(L)
        self.switch_alive = ~dead_dev[g.device_of]
        # endpoints: GPU servers' NIC ports (extra endpoints such as UFM send no collective traffic)
        gpu = g.at_is_gpu_server
        self.ep_device = g.at_device[gpu]
        self.ep_port = g.at_port[gpu]
        self.ep_switch = g.at_switch[gpu]
        self.ep_link = g.at_link[gpu]
        self.ep_gbps = g.at_cap_gbps[gpu].astype(np.float64)
        # a direct network's node is its own endpoint, with no attachment link (ep_link -1)
        self.ep_alive = np.where(self.ep_link >= 0, alive[self.ep_link], True) & self.switch_alive[self.ep_switch]
        servers = plan.memo("server_devices", server_devices)  # a loop over every device, once per plan
        ordinal = np.full(len(plan.devices), -1, dtype=np.int64)
        ordinal[servers] = np.arange(servers.size)
        self.server_devices = servers  # server ordinal -> plan device
        self.ep_server = ordinal[self.ep_device]  # endpoint -> server ordinal (plan order)
        chips = self.ep_server < 0
        if chips.any():  # a direct torus's chips: their host is the server of their group (expand/torus.py)
            host = np.fromiter((plan.devices[int(d)].group or 0 for d in self.ep_device[chips]), dtype=np.int64)
            self.ep_server[chips] = host - 1
        s, p = self.ep_server, self.ep_port
        # keep endpoints in (server, port) order; they usually are, which one pass tells without a sort
        if not np.all((s[1:] > s[:-1]) | ((s[1:] == s[:-1]) & (p[1:] >= p[:-1]))):
            order = np.lexsort((p, s))
            for name in ("ep_device", "ep_port", "ep_switch", "ep_link", "ep_gbps", "ep_alive", "ep_server"):
                setattr(self, name, getattr(self, name)[order])
        self.ep_first = np.searchsorted(self.ep_server, np.arange(servers.size + 1))  # server -> first endpoint

    # --- structure ---------------------------------------------------------------------
    @cached_property
    def cap_gbps(self) -> np.ndarray:
        """Per directed link: its cable's Gb/s (both directions alike). Built when first read:
        a check that solves a few links reads them through cap_of (25 MB at 524,288 GPUs)."""
        return np.repeat(self.plan.links.speed_gbps.astype(np.float64), 2)

    def cap_of(self, directed: np.ndarray) -> np.ndarray:
        """cap_gbps[directed], without building cap_gbps."""
        return self.plan.links.speed_gbps[np.asarray(directed) >> 1].astype(np.float64)

    @cached_property
    def tier(self) -> np.ndarray:
        """Per switch (graph index): 1 leaf, 2 spine, 3 core; routers 1."""
        return np.fromiter((self.plan.devices[int(d)].tier for d in self.graph.device_of), dtype=np.int64,
                           count=self.graph.n)

    @cached_property
    def gpus_per_server(self) -> int:
        return self.plan.view.gpus_per_server

    @cached_property
    def ports_per_server(self) -> int:
        counts = np.diff(self.ep_first)
        return int(counts.max()) if counts.size else 0

    def domain_of_server(self, servers: np.ndarray) -> np.ndarray:
        """Scale-up domain (NVLink) of each server ordinal; a server is its own domain
        where the plan records none."""
        up = self.plan.scale_up
        per = up.servers_per_domain if up is not None and not up.in_plan_links and up.domains else 1
        return np.asarray(servers) // per

    def directed(self, links: np.ndarray, upward: np.ndarray | bool) -> np.ndarray:
        """Directed link ids of plan links, taken upward (a -> b) or downward."""
        return 2 * np.asarray(links, dtype=np.int64) + np.where(upward, 0, 1)

    def attach_out(self, ep: np.ndarray) -> np.ndarray:
        """Directed id of an endpoint's NIC link, server to switch."""
        return 2 * self.ep_link[ep]

    def attach_in(self, ep: np.ndarray) -> np.ndarray:
        return 2 * self.ep_link[ep] + 1

    def switch_links_alive(self) -> np.ndarray:
        """Per switch-to-switch graph link (FabricGraph.a/b order): both ends and the cable alive."""
        g = self.graph
        if not self.failure.devices.size and not self.failure.links.size:  # nothing failed: no gathers
            return np.ones(g.a.size, dtype=bool)
        return self.link_alive[g.link] & self.switch_alive[g.a] & self.switch_alive[g.b]

    def describe_links(self, directed: np.ndarray) -> list[dict]:
        """How a reader names directed links: cable id, from device, to device, kind."""

        ids = self.plan.memo("cable_ids", cable_ids)
        L = self.plan.links
        link = np.asarray(directed) // 2
        up = np.asarray(directed) % 2 == 0
        names = [d.name for d in self.plan.devices]
        out = []
        for li, u in zip(link.tolist(), up.tolist(), strict=True):
            a, b = names[int(L.a_dev[li])], names[int(L.b_dev[li])]
            out.append({"cable": ids[li], "from": a if u else b, "to": b if u else a,
                        "kind": self.plan.link_kinds[int(L.kind[li])]})
        return out


def parse_failure(plan: Plan, text: str | None) -> Failure:
    """--fail: `ROLE:N` (N switches of that role from one group, as the survive requirement
    counts them: the clustered loss is the worst), `link:N` (N uplinks of the first leaf),
    or comma-separated device names and cable ids. Raises ValueError with a hint."""
    if not text:
        return Failure.none()

    devices: list[int] = []
    links: list[int] = []
    roles = plan.roles()
    L = plan.links
    ids = None
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        role, sep, count = item.partition(":")
        if sep and count.isdigit() and (role in roles or role == "link"):
            k = int(count)
            if role == "link":
                tier = np.fromiter((d.tier for d in plan.devices), dtype=np.int64, count=len(plan.devices))
                up = np.flatnonzero((tier[L.a_dev] == 1) & (tier[L.b_dev] > 1))
                if up.size == 0:
                    raise ValueError("link:N fails leaf uplinks; this fabric has none")
                first_leaf = L.a_dev[up].min()
                links += up[L.a_dev[up] == first_leaf][:k].tolist()
            else:
                of_role = [i for i, d in enumerate(plan.devices) if d.role == role]
                if k > len(of_role):
                    raise ValueError(f"{item}: the fabric has {len(of_role)} {role} switches")
                devices += of_role[:k]
            continue
        try:
            devices.append(plan.device_index(item))
            continue
        except KeyError:
            pass
        if ids is None:
            ids = {c: i for i, c in enumerate(plan.memo("cable_ids", cable_ids))}
        if item in ids:
            links.append(ids[item])
            continue

        raise ValueError(f"--fail: '{item}' is no role:count, device or cable; "
                         f"{nearest(item, [f'{r}:1' for r in roles if r != 'server'] + ['link:1'])}")
    return Failure(text, np.asarray(sorted(set(devices)), dtype=np.int64), np.asarray(sorted(set(links)), dtype=np.int64))
