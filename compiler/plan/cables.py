"""Physical cables: what is pulled, as a grouping of the plan's logical links.

The plan's link table is logical (one row per port pair); plan.json, verify and the
checks work on it. A physical cable can carry several logical links, or one logical link
can take several cables:

- twin-port copper (fit `cage`, e.g. MCP4Y10): one cable joins two cages, both ports;
- copper splitters (fit `split`, no modules): one cable per switch cage, a leg per port;
- splitter fibers (fit `split`, optics): one per optical port (MPO) of the grouped end
  (views.splitter_heads), a leg to each end it serves;
- straight fibers (fit `port`): one per MPO pair; where a module carries several logical
  ports on one MPO (a 4 x 200G cage on a twin-port 2 x 400G module) and they all go to
  one peer MPO, one fiber carries them (Gaudi 3: lanes 1-2 of an OSFP on one MPO); where
  they go to different peers they cannot share a fiber (check/physical.py warns) and each
  is counted on its own. A link whose speed fills several MPOs (800G between twin-port
  modules, views.fibers_per_link) is that many fibers, each its own cable ("strand").

The cabling sheet writes one row per physical cable, the labels one pair per physical
cable, and the BOM counts the same cables: all three read this one grouping.
O(links log links) numpy; memoised on the plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .columns import concat, ranges
from .model import Plan
from .views import (cable_id_array, cable_ids, cage_table, device_places, end_module_ports, fibers_per_link, floor_port_labels, label_pieces,
                    link_end_cages, link_ends, place_prefixes, port_table, splitter_heads)


@dataclass(frozen=True, slots=True)
class PhysicalCables:
    """Cables in sheet order (by their first logical link). A cable is one strand of a
    group of logical links: groups of several links are one strand; a single link that
    takes k fibers is k strands of its own group."""

    group: np.ndarray  # int64 per cable: its group (index into indptr)
    strand: np.ndarray  # int64 per cable: 0 where the group is one cable, else 1..k
    indptr: np.ndarray  # int64 per group + 1: the group's links are links[indptr[g]:indptr[g + 1]]
    links: np.ndarray  # int64: logical link indices, grouped, each group ascending
    order_m: np.ndarray | None  # float64 per cable: orderable length (the longest link's); NaN: none reaches
    # Whether the cables are the links one for one, in link order (every link pulled, each
    # its own cable of one strand): then a cable's id and values are its link's, no gather.
    # Found once as the cables are grouped (an O(links) pass every reader would repeat).
    in_link_order: bool
    # int64 per cable: its first logical link (the one it is named after); gathered once
    # (read-only): the cabling sheet's columns each read it
    first_link: np.ndarray

    def __len__(self) -> int:
        return int(self.group.size)

    @property
    def link_count(self) -> np.ndarray:
        """Per cable, how many logical links it carries."""
        return (self.indptr[self.group + 1] - self.indptr[self.group]).astype(np.int64)

    def per_cable(self, column: np.ndarray) -> np.ndarray:
        """A per-link column per cable, its first link's value: the column itself where the
        cables are the links in order (no gather: a copy of a per-link column costs its pages
        at 1.5M links; read it, never write it), else gathered."""
        return column if self.in_link_order else column[self.first_link]

    def links_of(self, cable: int) -> list[int]:
        g = int(self.group[cable])
        return self.links[self.indptr[g]:self.indptr[g + 1]].tolist()


def physical_cables(plan: Plan) -> PhysicalCables:
    """The plan's physical cables (module doc), memoised."""
    return plan.memo("physical_cables", _physical_cables)


def optical_port_ids(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per link and end (a, b): an id of the optical port (MPO) the end uses where its
    module carries several logical ports per MPO (global cage * 8 + MPO index), else -1:
    the end is its own optical port (or copper)."""
    cage_ports = plan.memo("cage_table", cage_table)[3]
    lane = plan.memo("port_table", port_table)["lane"]
    out = []
    for module, gid, end_cage in zip(end_module_ports(plan), link_ends(plan), link_end_cages(plan), strict=True):
        ports_of_cage = cage_ports[end_cage]
        mpo = np.full(gid.size, -1, dtype=np.int64)
        shared = np.nonzero((module > 0) & (ports_of_cage > module))[0]  # few or none: computed there only
        mpo[shared] = end_cage[shared] * 8 + (lane[gid[shared]].astype(np.int64) - 1) * module[shared] // ports_of_cage[shared]
        out.append(mpo)
    return out[0], out[1]


def _physical_cables(plan: Plan) -> PhysicalCables:
    links = plan.links
    n = len(links)
    media = plan.view.facts.media
    pulled = np.array([media[m].field_cable for m in plan.media], dtype=bool)
    fit = [media[m].fit for m in plan.media]
    optical = [media[m].needs_transceivers for m in plan.media]
    # A grouping key per link: (medium, k1, k2); links of one key are one cable.
    k1 = np.arange(n, dtype=np.int64)
    k2 = np.full(n, -1, dtype=np.int64)
    alone = np.zeros(n, dtype=bool)  # a straight link between two ends that are their own MPOs: a group of one
    if n:
        cage, _, _, cage_ports = plan.memo("cage_table", cage_table)
        ga, gb = link_ends(plan)
        ca, cb = link_end_cages(plan)
        mpo_a, mpo_b = optical_port_ids(plan)
        unique_base = int(cage.max(initial=0) + 1) * 8  # above every MPO id: an end that is its own port
        for mi in range(len(plan.media)):
            mask = links.media == mi
            count = int(np.count_nonzero(mask))
            if not count:
                continue
            sel: np.ndarray | slice = slice(None) if count == n else mask  # every link: views, no copies
            if fit[mi] == "cage":  # twin-port copper: one cable per cage pair
                k1[sel], k2[sel] = ca[sel], cb[sel]
            elif fit[mi] == "split" and optical[mi]:  # one splitter fiber per MPO of the grouped end
                k1[sel] = splitter_heads(cage, cage_ports, plan.memo("port_table", port_table)["lane"], ga[sel], gb[sel])
            elif fit[mi] == "split":  # copper splitter: one per cage of the grouped end
                grouped_b = cage_ports[cb[sel]] > cage_ports[ca[sel]]
                k1[sel] = np.where(grouped_b, cb[sel], ca[sel])
            else:  # straight: one per MPO pair (an end that is its own MPO keys on its port)
                a_own, b_own = mpo_a[sel] < 0, mpo_b[sel] < 0
                own = a_own & b_own
                alone[sel] = own
                if own.all():  # each link its own group: its key (medium, link index, -1) is already unique
                    continue
                k1[sel] = np.where(a_own, unique_base + ga[sel], mpo_a[sel])
                k2[sel] = np.where(b_own, unique_base + gb[sel], mpo_b[sel])
    kept = np.nonzero(pulled[links.media])[0] if n else np.zeros(0, dtype=np.int64)
    if alone[kept].all():
        # Keyed on their own two ports (a port carries one link), every link is its own
        # group: the groups in link order are the links, as the grouping below would find.
        members, indptr = kept.astype(np.int64), np.arange(kept.size + 1, dtype=np.int64)
    else:
        members, indptr = _groups(kept, links.media[kept].astype(np.int64), k1[kept], k2[kept])
    n_groups = indptr.size - 1
    # A group of one link that fills k fibers is k cables.
    fibers = plan.memo("fibers_per_link", fibers_per_link) if n else np.ones(0, dtype=np.int64)
    group_first = members[indptr[:-1]] if n_groups else np.zeros(0, dtype=np.int64)
    single = np.diff(indptr) == 1
    strands = np.where(single, fibers[group_first] if n_groups else 1, 1).astype(np.int64)
    one_each = bool((strands == 1).all())  # every group one cable: cable k is group k
    if one_each:
        group, strand = np.arange(n_groups, dtype=np.int64), np.zeros(n_groups, dtype=np.int64)
    else:
        group = np.repeat(np.arange(n_groups, dtype=np.int64), strands)
        within = ranges(strands)
        strand = np.where(np.repeat(strands, strands) > 1, within + 1, 0).astype(np.int64)
    order_m = None
    phys = plan.physical
    if phys is not None and phys.order_m is not None and n_groups:
        if single.all():  # groups of one link: each group's length is its link's
            per_group = phys.order_m[members]
        else:
            per_group = np.maximum.reduceat(phys.order_m[members], indptr[:-1])  # NaN (none reaches) wins
        order_m = per_group if one_each else per_group[group]
    elif phys is not None and phys.order_m is not None:
        order_m = np.zeros(0)
    first = members[indptr[group]]
    first.flags.writeable = False
    in_link_order = group.size == n and members.size == n and not strand.any() and bool((first == np.arange(n)).all())
    return PhysicalCables(group=group, strand=strand, indptr=indptr, links=members, order_m=order_m, in_link_order=in_link_order,
                          first_link=first)


def _groups(kept: np.ndarray, media_k: np.ndarray, k1: np.ndarray, k2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The links `kept` grouped by their key (medium, k1, k2), as a CSR: the groups' links
    (each group ascending) and the groups' starts, the groups in order of their first link."""
    # Sorted by key, each group's links ascending; a group starts where the key changes.
    order = np.lexsort((kept, k2, k1, media_k))
    grouped_links = kept[order]
    m_s, a_s, b_s = media_k[order], k1[order], k2[order]
    starts = np.r_[True, (m_s[1:] != m_s[:-1]) | (a_s[1:] != a_s[:-1]) | (b_s[1:] != b_s[:-1])] if kept.size \
        else np.zeros(0, dtype=bool)
    grouped = np.cumsum(starts) - 1
    first = grouped_links[starts]
    rank = np.argsort(first, kind="stable")
    sizes = np.diff(np.r_[np.nonzero(starts)[0], grouped.size])
    # The CSR in rank order: each group's entries moved to its new place.
    start_idx = np.nonzero(starts)[0]
    new_sizes = sizes[rank]
    indptr = np.r_[0, np.cumsum(new_sizes)].astype(np.int64)
    within = ranges(new_sizes)
    return grouped_links[np.repeat(start_idx[rank], new_sizes) + within].astype(np.int64), indptr


def physical_cable_ids(plan: Plan) -> list[str]:
    """Per physical cable, its id: the id of its first logical link (naming.cable_id), with
    `.1`, `.2`, ... where one link takes several fibers."""
    return plan.memo("physical_cable_ids", _physical_cable_ids)


def _physical_cable_ids(plan: Plan) -> list[str]:
    if physical_cables(plan).in_link_order:
        return plan.memo("cable_ids", cable_ids)  # one cable per link, in link order: the links' ids
    return physical_cable_id_array(plan).tolist()


def physical_cable_id_array(plan: Plan) -> np.ndarray:
    """physical_cable_ids as an object array of str, memoised (shared: read, never written)."""
    return plan.memo("physical_cable_id_array", _physical_cable_id_array)


def _physical_cable_id_array(plan: Plan) -> np.ndarray:
    cables = physical_cables(plan)
    logical = plan.memo("cable_id_array", cable_id_array)
    if cables.in_link_order:
        return logical
    out = logical[cables.first_link]
    numbered = np.nonzero(cables.strand)[0]  # strands of a multi-fiber link: `.1`, `.2`, ... (few suffixes, built once)
    if numbered.size:
        suffix = np.array([f".{s}" for s in range(int(cables.strand.max()) + 1)], dtype=object)
        out[numbered] = out[numbered] + suffix[cables.strand[numbered]]
    return out


def multi_link_cables(cables: PhysicalCables) -> list[tuple[np.ndarray, np.ndarray]]:
    """The cables that carry several logical links, by how many: (cable indices, their links
    as an (n, k) matrix in link order) per k > 1. For column-wise joins without a Python
    loop per cable."""
    count = cables.link_count
    out = []
    for k in np.unique(count[count > 1]).tolist():
        idx = np.nonzero(count == k)[0]
        start = cables.indptr[cables.group[idx]]
        out.append((idx, cables.links[start[:, None] + np.arange(k)]))
    return out


def joined(values: np.ndarray) -> np.ndarray:
    """Several logical links' values of one column on physical cables' rows, an (n, k)
    object array of str: per row the value once where they agree, else all of them in link
    order, `;`-separated (position i of each column is the cable's i-th logical link)."""
    out = values[:, 0].copy()
    differ = ~(values == values[:, :1]).all(axis=1)
    if differ.any():
        rows = values[differ]
        text = rows[:, 0]
        for j in range(1, rows.shape[1]):
            text = text + ";" + rows[:, j]
        out[differ] = text
    return out


def _end_text(places: np.ndarray, ports: np.ndarray) -> np.ndarray:
    """A label's view of one end of several ports, (n, k) arrays: `<place>:<port>+<port>`
    where they are at one place (a twin-port cage), else `<place>:<port>;<place>:<port>`
    (a splitter's legs)."""
    one_place = (places == places[:, :1]).all(axis=1)
    together, apart = places[:, 0] + ":" + ports[:, 0], places[:, 0] + ":" + ports[:, 0]
    for j in range(1, ports.shape[1]):
        together = together + "+" + ports[:, j]
        apart = apart + ";" + places[:, j] + ":" + ports[:, j]
    return np.where(one_place, together, apart)


def physical_cable_labels(plan: Plan) -> tuple[list[str], list[str]]:
    """Per physical cable, the label text of its A and B ends: `<id> <near> / <far>` as
    views.cable_labels, the id the physical cable's, an end of several ports naming them all."""
    return plan.memo("physical_cable_labels", _physical_cable_labels)


def physical_cable_ends(plan: Plan) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """Per physical cable, its id and how a label names its A end and its B end
    (`<place>:<port>`, an end of several ports naming them all), each end as two pieces as
    views.cable_ends gives them (the place with its colon, the port; a cable of several
    links has its whole end text in the first and "" in the second)."""
    a, b = physical_cable_end_pieces(plan)
    return physical_cable_id_array(plan), a, b


def physical_cable_end_pieces(plan: Plan) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """physical_cable_ends without the ids, memoised: a writer that spells the ids as
    pieces (views.cable_id_pieces) builds no id string per cable."""
    return plan.memo("physical_cable_ends", _physical_cable_end_pieces)


def _physical_cable_end_pieces(plan: Plan) -> tuple[list[np.ndarray], list[np.ndarray]]:
    cables = physical_cables(plan)
    links = plan.links
    place = np.array(plan.memo("device_places", device_places), dtype=object)
    prefix = place_prefixes(plan)
    names = plan.memo("floor_port_labels", floor_port_labels)  # NOS name, panel cage beside it (views.cable_labels)
    first: np.ndarray | slice = slice(None) if cables.in_link_order else cables.first_link
    multi = multi_link_cables(cables)
    ends = []
    for dev, gid in zip((links.a_dev, links.b_dev), link_ends(plan), strict=True):
        # gathered on the cables' first links only; a cable of several links: its whole end in the first piece
        head, tail = prefix[dev[first]], names[gid[first]]
        for idx, matrix in multi:
            head[idx] = _end_text(place[dev[matrix]], names[gid[matrix]])
            tail[idx] = ""
        ends.append([head, tail])
    return ends[0], ends[1]


def _physical_cable_labels(plan: Plan) -> tuple[list[str], list[str]]:
    ids, a, b = physical_cable_ends(plan)
    if not len(ids):
        return [], []
    return concat(label_pieces([ids], a, b)).tolist(), concat(label_pieces([ids], b, a)).tolist()
