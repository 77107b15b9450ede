"""The components that fail, per class, and which fabric elements each takes down.

- switch: every switch of the fabric (a graph node); down, it takes its ports' links.
- transceiver: one per (cage, medium) at a link end whose medium needs optics, as the BOM
  counts them (a twin-port module carries two links; down, it takes both).
- cable: one per link (a splitter's legs count as cables each).
- nic: per GPU server, one per cage on the fabric where the server has as many NICs as cages
  in use (a ConnectX-8 run as two planes: one cage, two links), else one per port (a DGX
  H100's twin-port cages hold two single-port NICs); down, it takes its links.

Held as arrays (unit -> links in CSR form), no per-link Python objects."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..check.context import CheckContext
from ..plan.model import Plan
from ..plan.views import cable_ids, cage_table

CLASSES = ("switch", "transceiver", "cable", "nic")


@dataclass
class Group:
    """The units of one class: per unit its position label index, its name and the links it
    takes down (CSR: links[indptr[i]:indptr[i+1]]); switches also their graph node."""

    cls: str
    positions: list[str]
    position: np.ndarray  # unit -> index into positions
    names: list[str]
    indptr: np.ndarray
    links: np.ndarray  # plan link indices
    node: np.ndarray | None = None  # switch class: unit -> graph node

    @property
    def count(self) -> int:
        return len(self.names)

    def links_of(self, units: np.ndarray) -> np.ndarray:
        if units.size == 0:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.links[self.indptr[u]:self.indptr[u + 1]] for u in units.tolist()])


@dataclass
class Components:
    ctx: CheckContext
    groups: dict[str, Group]
    n_links: int

    @property
    def counts(self) -> dict[str, int]:
        return {c: self.groups[c].count for c in CLASSES}


def _csr(owner: np.ndarray, link: np.ndarray, units: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(owner, kind="stable")
    indptr = np.zeros(units + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner, minlength=units), out=indptr[1:])
    return indptr, link[order].astype(np.int64)


def _group(cls: str, key: np.ndarray, link: np.ndarray, label: np.ndarray, names_of) -> Group:
    """Units are the distinct `key`s (in key order); each takes its `link`s down; its position
    is the `label` of its first link end."""
    uniq, first, owner = np.unique(key, return_index=True, return_inverse=True)
    positions, pos = np.unique(label[first], return_inverse=True) if uniq.size else (np.array([]), np.zeros(0, dtype=np.int64))
    indptr, links = _csr(owner.reshape(-1), link, uniq.size)
    return Group(cls, [str(p) for p in positions], pos.astype(np.int64), names_of(first), indptr, links)


def components_of(ctx: CheckContext) -> Components:
    plan: Plan = ctx.plan
    g = ctx.graph
    L = plan.links
    n = len(L)
    names = [d.name for d in plan.devices]
    roles = np.array([d.role for d in plan.devices], dtype=object)
    kinds = np.array(plan.link_kinds, dtype=object)[L.kind] if n else np.zeros(0, dtype=object)
    ids = np.arange(n)

    # switches: the graph's nodes (none in a direct network, whose nodes are chips or servers);
    # their attached links follow from the graph (flows, reach)
    nodes = np.zeros(0, dtype=np.int64) if plan.view.design.direct else np.nonzero(ctx.switch_tier > 0)[0]
    renum = np.full(g.n, -1, dtype=np.int64)
    renum[nodes] = np.arange(nodes.size)
    sw_links_owner = renum[np.concatenate([g.a, g.b, g.at_switch])]
    sw_links = np.concatenate([g.link, g.link, g.at_link])
    indptr, links = _csr(sw_links_owner[sw_links_owner >= 0], sw_links[sw_links_owner >= 0], nodes.size)
    sw_roles = roles[g.device_of[nodes]].astype(str) if nodes.size else np.zeros(0, dtype=str)
    positions, pos = np.unique(sw_roles, return_inverse=True)
    switch = Group("switch", [str(p) for p in positions], pos.astype(np.int64),
                   [names[int(d)] for d in g.device_of[nodes]], indptr, links, node=nodes)

    cids = cable_ids(plan)
    cable_kinds, cable_pos = np.unique(kinds.astype(str) if n else np.zeros(0, dtype=str), return_inverse=True)
    cable = Group("cable", [f"{k} cable" for k in cable_kinds], cable_pos.astype(np.int64), cids,
                  np.arange(n + 1, dtype=np.int64), ids.astype(np.int64))

    cage_of_port, _, _, _ = plan.memo("cage_table", cage_table)
    offsets = plan.port_offsets()
    end_dev = np.concatenate([L.a_dev, L.b_dev]).astype(np.int64)
    end_port = np.concatenate([L.a_port, L.b_port]).astype(np.int64)
    end_link = np.concatenate([ids, ids])
    end_cage = cage_of_port[offsets[end_dev] + end_port]
    end_media = np.concatenate([L.media, L.media]).astype(np.int64)
    optical = np.array([plan.view.facts.media[m].needs_transceivers for m in plan.media], dtype=bool)
    opt = optical[end_media] if n else np.zeros(0, dtype=bool)
    end_label = np.array([f"{k} optic ({r} end)" for k, r in zip(np.concatenate([kinds, kinds]).tolist(),
                                                                 roles[end_dev].tolist(), strict=True)], dtype=object).astype(str) \
        if n else np.zeros(0, dtype=str)
    key = end_cage[opt] * max(len(plan.media), 1) + end_media[opt]
    def cage_name(first, sel=opt):  # `<device>:cage<label>`, the cage as the switch's faceplate labels it
        return [f"{names[d]}:cage{plan.layouts[plan.devices[d].layout].ports[p].cage}"
                for d, p in zip(end_dev[sel][first].tolist(), end_port[sel][first].tolist(), strict=True)]
    transceiver = _group("transceiver", key, end_link[opt], end_label[opt], cage_name)

    gpu_server = np.array([d.role == "server" for d in plan.devices], dtype=bool)
    nic_end = gpu_server[end_dev] & np.isin(end_link, g.at_link)
    # A NIC is a cage where the server has one NIC per cage in use (ConnectX-8 running two planes
    # from one cage), else a port (DGX H100: two single-port ConnectX-7 behind each twin-port cage).
    dev_e, cage_e = end_dev[nic_end], end_cage[nic_end]
    ports_per_dev = np.bincount(dev_e, minlength=len(names))
    cages_per_dev = np.bincount(np.unique(np.stack([dev_e, cage_e]), axis=1)[0], minlength=len(names))
    models = plan.view.facts.models
    nics_per_dev = np.array([models[d.model].nics or 0 if d.role == "server" else 0
                             for d in plan.devices], dtype=np.int64)
    per_cage = (cages_per_dev == nics_per_dev) & (cages_per_dev < ports_per_dev)
    gport = offsets[dev_e] + end_port[nic_end]
    first_port = np.full(int(cage_e.max(initial=-1)) + 1, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first_port, cage_e, gport)
    nic_key = np.where(per_cage[dev_e], first_port[cage_e], gport)  # named by its first port
    nic = _group("nic", nic_key, end_link[nic_end], np.full(int(nic_end.sum()), "nic", dtype=object).astype(str),
                 lambda first, sel=nic_end: [f"{names[int(d)]}:nic{int(p) + 1}" for d, p in
                                             zip(end_dev[sel][first], end_port[sel][first], strict=True)])
    return Components(ctx, {"switch": switch, "transceiver": transceiver, "cable": cable, "nic": nic}, n)
