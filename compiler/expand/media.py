"""Which medium each kind of link is built from, and the transceiver at each end.

With a physical layout (`choose_by_length`) each link gets the cheapest medium that
reaches its modelled length and fits both ends. Without one there are no lengths,
so the choice is per link kind by what the ends accept: multimode optics where the catalog has a transceiver for both ends' cages
(NVIDIA's SuperPOD compute fabrics are optical), single-mode where only that exists
(XDR's 200G lanes have no multimode). A spec may name the medium per link kind.

Optics come straight or as 1:2 splitter fibers, and that is not a choice: it follows from
how each end groups logical ports onto the optical ports (MPOs) of its module. A twin-port
2 x 400G module in a cage split 4 x 200G puts two 200G ports on each MPO; a single-port
400G module in a one-port cage puts one. Such a link needs a splitter fiber (one MPO at
the grouped end, a leg to each single end: NVIDIA MFP7E20/MFP7E40), one per MPO of the
grouped end, so a 4 x 200G cage takes two splitters for its four links. Ends grouped alike
take straight fibers (`optical_variant`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..catalog import Catalog
from ..catalog.models import CableEnd, Transceiver
from ..plan.model import Plan, Port, cage_key
from ..plan.sparse import connected_components, coo_matrix
from ..plan.views import SPLIT_WAYS, cage_table, port_table, splitter_heads

AUTO_ORDER = ("mmf", "smf")


def transceiver(catalog: Catalog, media_id: str, port: Port) -> Transceiver | None:
    medium = catalog.media[media_id]
    if not medium.needs_transceivers:
        return None
    return catalog.transceiver_for(medium.fiber, port.form_factor, port.top, port.cage_gbps, port.serdes_gbps)


def split_needed(cage_ports_a, module_ports_a, cage_ports_b, module_ports_b):
    """Whether a link needs a 1:2 splitter fiber, from each end's logical ports in its cage
    and optical ports (MPOs) of its module (0: no module): one end puts SPLIT_WAYS ports on
    each MPO (4 x 200G on a twin-port), the other one (a single-port module with one port).
    Ends grouped alike take straight fibers: 2 x 400G on twin-ports, or one 800G port over
    both MPOs of a twin-port at each end. Scalars or numpy arrays alike."""
    pa, ma, pb, mb = cage_ports_a, module_ports_a, cage_ports_b, module_ports_b
    return (ma > 0) & (mb > 0) & (((pa == ma) & (pb == SPLIT_WAYS * mb)) | ((pb == mb) & (pa == SPLIT_WAYS * ma)))


def splitter_of(catalog: Catalog, fiber: str) -> str | None:
    """The splitter-fiber medium of a fiber kind (mmf-split for mmf), None if the catalog has none."""
    for media_id, medium in sorted(catalog.media.items()):
        if medium.fiber == fiber and medium.needs_transceivers and medium.fit == "split":
            return media_id
    return None


def straight_of(catalog: Catalog, fiber: str) -> str | None:
    for media_id, medium in sorted(catalog.media.items()):
        if medium.fiber == fiber and medium.needs_transceivers and medium.fit == "port":
            return media_id
    return None


def _straight(catalog: Catalog, fiber: str) -> str:
    """straight_of a fiber kind taken from the catalog's straight (port-fit) optics, which has one."""
    media_id = straight_of(catalog, fiber)
    assert media_id is not None, fiber
    return media_id


def optical_variant(catalog: Catalog, media_id: str, end_a: Port, end_b: Port, cage_ports_a: int, cage_ports_b: int) -> str:
    """For optics, the straight or splitter medium of the same fiber kind that the two ends'
    grouping calls for (see the module docstring); any other medium as given. A spec naming
    `mmf` for 200G hosts on 4 x 200G switch cages gets `mmf-split`: a straight fiber cannot
    connect them."""
    medium = catalog.media[media_id]
    if not medium.needs_transceivers:
        return media_id
    ta, tb = transceiver(catalog, media_id, end_a), transceiver(catalog, media_id, end_b)
    if ta is None or tb is None:
        return media_id  # no module: the BOM says NOT IN CATALOG; nothing to group
    split = bool(split_needed(cage_ports_a, ta.ports, cage_ports_b, tb.ports))
    return (splitter_of(catalog, medium.fiber) if split else straight_of(catalog, medium.fiber)) or media_id


def choose(catalog: Catalog, requested: str | None, end_a: Port, end_b: Port, cage_ports_a: int = 1, cage_ports_b: int = 1) -> str:
    """The medium of a link kind without lengths. `cage_ports_*`: logical ports of each
    end's cage in its layout (they decide straight or splitter optics)."""
    if requested:
        return optical_variant(catalog, requested, end_a, end_b, cage_ports_a, cage_ports_b)
    # A cable with its own connectors made for both ends' cages (Cat6 RJ45 for a 1GbE BMC);
    # twin-port copper and splitters need lengths, so only per-port cables are picked here.
    for media_id, medium in catalog.media.items():
        cable = catalog.cables[medium.cable]
        if medium.fit == "port" and not medium.needs_transceivers and cable.end_a and cable.end_b \
                and _end_key(cable.end_a) == end_a.cage_key and _end_key(cable.end_b) == end_b.cage_key:
            return media_id
    for media_id in AUTO_ORDER:
        if transceiver(catalog, media_id, end_a) and transceiver(catalog, media_id, end_b):
            return optical_variant(catalog, media_id, end_a, end_b, cage_ports_a, cage_ports_b)
    return AUTO_ORDER[0]


# --- with a physical layout: media per link by length --------------------------------

def _end_key(end: CableEnd) -> str:
    return cage_key(end.form_factor, end.top, end.cage_gbps, end.serdes_gbps)


def orderable(lengths_m: list[float], need_m: np.ndarray, reach_m: float) -> np.ndarray:
    """The shortest orderable length >= need; NaN where none is long enough. A cable the
    catalog lists no lengths for (a generic Cat6 patch cord, made or bought per site) is
    ordered at the need rounded up to a whole metre, up to its reach."""
    if not lengths_m:
        return np.where(np.ceil(need_m - 1e-9) <= reach_m, np.ceil(need_m - 1e-9), np.nan)
    table = np.array(sorted(lengths_m), dtype=np.float64)
    idx = np.searchsorted(table, need_m - 1e-9, side="left")
    out = np.full(need_m.shape, np.nan)
    ok = idx < table.size
    out[ok] = table[idx[ok]]
    return out


def _cable_reach(cable) -> float:
    """How far a cable goes as ordered: its reach, capped by its longest listed length."""
    return min(cable.reach_m, max(cable.lengths_m or [cable.reach_m]))


@dataclass(frozen=True)
class _LinkCages:
    """Per link its two ends' ports (ga, gb), cages (ca, cb) and cage types (ta, tb); per
    cage its ports, ports in use (as either end, as end b) and the least and greatest
    cage its links reach (equal: every link of the cage goes to one cage)."""

    cage: np.ndarray
    keys: list[str]  # cage types: the index ta, tb hold
    cage_ports: np.ndarray
    ga: np.ndarray
    gb: np.ndarray
    ca: np.ndarray
    cb: np.ndarray
    ta: np.ndarray
    tb: np.ndarray
    used: np.ndarray
    used_as_b: np.ndarray
    peer_min: np.ndarray
    peer_max: np.ndarray

    @property
    def n_cages(self) -> int:
        return self.cage_ports.size

    @classmethod
    def of(cls, plan: Plan) -> _LinkCages:
        links = plan.links
        cage, ctype, keys, cage_ports = plan.memo("cage_table", cage_table)
        offsets = plan.port_offsets()
        ga, gb = offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port
        ca, cb = cage[ga], cage[gb]
        n_cages = cage_ports.size
        ends = np.concatenate([ca, cb])
        peers = np.concatenate([cb, ca])
        peer_min = np.full(n_cages, np.iinfo(np.int64).max)
        peer_max = np.full(n_cages, -1)
        np.minimum.at(peer_min, ends, peers)
        np.maximum.at(peer_max, ends, peers)
        return cls(cage, list(keys), cage_ports, ga, gb, ca, cb, ctype[ga], ctype[gb],
                   np.bincount(ends, minlength=n_cages), np.bincount(cb, minlength=n_cages), peer_min, peer_max)


def choose_by_length(plan: Plan, catalog: Catalog, requested: dict[str, str], length_m: np.ndarray
                     ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Media per link: the most preferred medium (catalog `preference`: cost and power)
    that fits both ends and reaches; returns (media ids, media index per link, ordered length).

    Copper is decided per whole cage (a twin-port cable or a splitter takes every port
    of its cage). Optics are decided per connected group of cages: a twin-port module
    is one medium, so every link through a cage uses the same fiber, and that spreads
    along the cages the links join. Links no medium reaches keep the longest-reach
    optics of their group with no orderable length (NaN); check.physical reports them.
    O(links) numpy plus scipy's connected components.
    """
    lc = _LinkCages.of(plan)
    media_ids = sorted(catalog.media, key=lambda m: (catalog.media[m].preference, m))
    choice = _requested_media(plan, requested, media_ids)
    need = length_m.astype(np.float64).copy()
    auto = choice < 0
    for mi, media_id in enumerate(media_ids):
        _choose_cable(catalog, mi, media_id, lc, auto, choice, need, length_m)
    fibers, split_of, reach_of = _fiber_reaches(plan, catalog, media_ids, lc)
    _choose_optics(catalog, media_ids, lc, choice, length_m, fibers, reach_of)
    # Every optical link, chosen or requested, takes the straight or splitter fiber its ends call for.
    for fiber in fibers:
        _straight_or_splitter(plan, catalog, media_ids, lc, fiber, split_of[fiber], choice, need, length_m)
    order = np.full(len(plan.links), np.nan)
    for mi, media_id in enumerate(media_ids):
        sel = choice == mi
        if sel.any():
            cable = catalog.cables[catalog.media[media_id].cable]
            order[sel] = orderable(cable.lengths_m, need[sel], cable.reach_m)
    used_media = [m for mi, m in enumerate(media_ids) if (choice == mi).any()]
    remap = np.array([used_media.index(m) if m in used_media else -1 for m in media_ids], dtype=np.int16)
    return used_media, remap[choice], order


def _requested_media(plan: Plan, requested: dict[str, str], media_ids: list[str]) -> np.ndarray:
    """Per link the index of the medium the spec asks for its kind; -1 where it asks none."""
    links = plan.links
    kind_names = np.array(plan.link_kinds, dtype=object)
    link_kind = kind_names[links.kind]
    choice = np.full(len(links), -1, dtype=np.int64)
    for kind, media_id in requested.items():
        choice[link_kind == kind] = media_ids.index(media_id) if media_id in media_ids else -1
    if requested.get("endpoint-leaf"):  # the compute fabric's endpoints (an extra fabric's have its own kinds)
        is_endpoint = np.array([d.tier == 0 and d.role != "server" and d.fabric == "compute" for d in plan.devices])[links.a_dev]
        choice[is_endpoint] = media_ids.index(requested["endpoint-leaf"])
    return choice


def _choose_cable(catalog: Catalog, mi: int, media_id: str, lc: _LinkCages, auto: np.ndarray, choice: np.ndarray,
                  need: np.ndarray, length_m: np.ndarray) -> None:
    """Medium `mi` for the links still free (`auto`, no choice yet) where it is a cable
    with its own connectors: a port cable (Cat6 RJ45), a whole-cage cable (DAC, ACC) or a
    splitter over whole cages, where both ends' cages take it and it reaches."""
    medium = catalog.media[media_id]
    cable = catalog.cables[medium.cable]
    type_index = {k: i for i, k in enumerate(lc.keys)}
    ca, cb, ta, tb, used, cage_ports = lc.ca, lc.cb, lc.ta, lc.tb, lc.used, lc.cage_ports
    if medium.fit == "port" and not medium.needs_transceivers and cable.end_a and cable.end_b:
        # A cable with its own connectors for both ends' cages (Cat6 RJ45 for a 1GbE BMC):
        # the only thing those ports take, so theirs at any length (beyond its reach
        # the order is NaN and check.physical reports it), as choose() does without lengths.
        key_a, key_b = type_index.get(_end_key(cable.end_a)), type_index.get(_end_key(cable.end_b))
        if key_a is not None and key_b is not None:
            choice[auto & (choice < 0) & (ta == key_a) & (tb == key_b)] = mi
        return
    if medium.fit == "port" or cable.end_a is None or cable.end_b is None:
        return
    key_a, key_b = type_index.get(_end_key(cable.end_a)), type_index.get(_end_key(cable.end_b))
    if key_a is None or key_b is None:
        return
    longest = max(cable.lengths_m or [cable.reach_m])
    free = auto & (choice < 0)
    if medium.fit == "cage":
        ok = (free & (ta == key_a) & (tb == key_b) & (used[ca] == cage_ports[ca]) & (used[cb] == cage_ports[cb])
              & (cage_ports[ca] == cage_ports[cb]) & (lc.peer_min[ca] == lc.peer_max[ca])
              & (lc.peer_min[cb] == lc.peer_max[cb]) & (length_m <= longest))
        # all links of the cage pair must qualify (same devices, so same length: they do together)
        cnt = np.bincount(ca[ok], minlength=lc.n_cages)
        ok &= cnt[ca] == cage_ports[ca]
    else:  # split: one b cage feeds single-port a cages, one leg each
        # as many legs as the b cage has ports (800G to 2 x 400G: a 1:2 splitter never
        # serves a cage broken out 4 x 200G)
        legs = cable.end_b.cage_gbps // cable.end_a.cage_gbps
        elig = free & (ta == key_a) & (tb == key_b) & (cage_ports[ca] == 1) & (cage_ports[cb] == legs)
        cnt = np.bincount(cb[elig], minlength=lc.n_cages)
        group_max = np.zeros(lc.n_cages)
        np.maximum.at(group_max, cb[elig], length_m[elig])
        ok = (elig & (cnt[cb] == used[cb]) & (lc.used_as_b[cb] == used[cb]) & (used[cb] == cage_ports[cb])
              & (group_max[cb] <= longest))
        need[ok] = group_max[cb[ok]]  # the legs of one splitter share its length
    choice[ok] = mi


def _fiber_reaches(plan: Plan, catalog: Catalog, media_ids: list[str], lc: _LinkCages
                   ) -> tuple[list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Optics: per fiber kind (cheapest straight optics first), the module each cage type
    takes and whether each link needs a splitter fiber under it (module docstring); per
    fiber, which links need a splitter and how far each link reaches (-1: no module)."""
    rep: dict[str, Port] = {}
    for layout in plan.layouts.values():
        for p in layout.ports:
            rep.setdefault(p.cage_key, p)
    fibers: list[str] = sorted({m.fiber for m in catalog.media.values() if m.needs_transceivers and m.fit == "port"},
                    key=lambda f: media_ids.index(_straight(catalog, f)))
    split_of: dict[str, np.ndarray] = {}
    reach_of: dict[str, np.ndarray] = {}
    for fiber in fibers:
        straight_cable = catalog.cables[catalog.media[_straight(catalog, fiber)].cable]
        splitter = splitter_of(catalog, fiber)
        module_ports = np.zeros(len(lc.keys), dtype=np.int64)  # 0: no transceiver for this cage type
        module_reach = np.full(len(lc.keys), -1.0)
        for k, key in enumerate(lc.keys):
            t = transceiver(catalog, _straight(catalog, fiber), rep[key])
            if t is not None:
                module_ports[k], module_reach[k] = t.ports, t.reach_m
        split = split_needed(lc.cage_ports[lc.ca], module_ports[lc.ta], lc.cage_ports[lc.cb], module_ports[lc.tb])
        split_of[fiber] = split
        cable_reach = np.where(split, _cable_reach(catalog.cables[catalog.media[splitter].cable]) if splitter else -1.0,
                               _cable_reach(straight_cable))
        reach_of[fiber] = np.minimum(np.minimum(module_reach[lc.ta], module_reach[lc.tb]), cable_reach)
    return fibers, split_of, reach_of


def _choose_optics(catalog: Catalog, media_ids: list[str], lc: _LinkCages, choice: np.ndarray, length_m: np.ndarray,
                   fibers: list[str], reach_of: dict[str, np.ndarray]) -> None:
    """The links still without a medium: per connected group of cages, the first fiber
    whose optics reach the group's longest link, else the longest-reaching one."""
    rest = np.nonzero(choice < 0)[0]
    if not rest.size:
        return
    graph = coo_matrix((np.ones(rest.size), (lc.ca[rest], lc.cb[rest])), shape=(lc.n_cages, lc.n_cages))
    n_comp, label = connected_components(graph, directed=False)
    comp = label[lc.ca[rest]]
    comp_need = np.zeros(n_comp)
    np.maximum.at(comp_need, comp, length_m[rest])
    best = np.full(n_comp, -1, dtype=np.int64)
    fallback = np.full(n_comp, -1, dtype=np.int64)
    fallback_reach = np.full(n_comp, -1.0)
    for fi, fiber in enumerate(fibers):
        comp_reach = np.full(n_comp, np.inf)
        np.minimum.at(comp_reach, comp, reach_of[fiber][rest])
        fits = comp_reach >= 0
        take = (best < 0) & fits & (comp_need <= comp_reach)
        best[take] = fi
        longer = fits & (comp_reach > fallback_reach)
        fallback[longer] = fi
        fallback_reach[longer] = comp_reach[longer]
    # No transceiver at all: the first optical medium (the BOM then says NOT IN CATALOG).
    best = np.where(best >= 0, best, np.where(fallback >= 0, fallback, 0))
    straight_index = np.array([media_ids.index(_straight(catalog, f)) for f in fibers], dtype=np.int64)
    choice[rest] = straight_index[best[comp]]


def _straight_or_splitter(plan: Plan, catalog: Catalog, media_ids: list[str], lc: _LinkCages, fiber: str,
                          split: np.ndarray, choice: np.ndarray, need: np.ndarray, length_m: np.ndarray) -> None:
    """Every link of `fiber` takes its straight fiber, or its splitter fiber where its ends
    need one; the legs of one splitter share its length: the longest of them."""
    straight, splitter = media_ids.index(_straight(catalog, fiber)), splitter_of(catalog, fiber)
    of_fiber = np.isin(choice, [mi for mi, m in enumerate(media_ids)
                                if catalog.media[m].needs_transceivers and catalog.media[m].fiber == fiber])
    choice[of_fiber & ~split] = straight
    if splitter is None:
        return
    choice[of_fiber & split] = media_ids.index(splitter)
    sel = of_fiber & split
    if sel.any():
        head = splitter_heads(lc.cage, lc.cage_ports, plan.memo("port_table", port_table)["lane"], lc.ga[sel], lc.gb[sel])
        _, group = np.unique(head, return_inverse=True)
        group_max = np.zeros(int(group.max()) + 1)
        np.maximum.at(group_max, group, length_m[sel])
        need[sel] = group_max[group]
