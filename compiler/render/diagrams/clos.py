"""Layered diagrams of switched fabrics: one per scope (scalable unit, pod, run of leaves)
and the fabric overview of a Clos, in the manner of NVIDIA's DGX SuperPOD reference
architecture figures: servers in a row, rail leaves above them in rail order, spines
(then cores) on top in index order, links coloured by rail and bundled per pair of boxes.

A row holds at most a screen's worth of boxes (the CAPS) and sends at most its BUDGET of
lines to the next row; past that, devices are drawn as runs (groups.py), so a diagram's
size and edge count are bounded whatever the fabric's size.
"""

from __future__ import annotations

import numpy as np

from ...plan.columns import distinct
from ...plan.model import Plan
from .drawing import Drawing
from .groups import counted, device_cells, plural, runs
from .layered import Bundles, Cell, Row, layered
from .scopes import scope_index
from .style import EDGE_COLOUR, ENDPOINT_FILL, ROLE_FILL, rail_colour

# boxes per row of a scope diagram: 32 servers one by one (a DGX SuperPOD SU), else
# groups; 32 switches one by one (the 32 spines of a 3-tier pod)
SCOPE_CAPS = {0: 32, 1: 32, 2: 32, 3: 16}
# edges a row may send to its neighbour row: 64 from the servers (8 groups of 4 DGX to 8
# rail leaves), 128 from a row of switches (8 leaves to 16 spines)
SCOPE_BUDGETS = {0: 64, 1: 128, 2: 128, 3: 128}
# ... of an overview: one box per SU (or run of SUs), pod, spine or core group
OVERVIEW_CAPS = {0: 16, 1: 16, 2: 16, 3: 16}
OVERVIEW_BUDGETS = {0: 64, 1: 128, 2: 128, 3: 128}
ROW_NAMES = {0: "servers", 1: "leaves", 2: "spines", 3: "cores"}
# _both_shown: the links with both ends shown, and their ends' positions in `shown`
Shown = tuple[np.ndarray, np.ndarray, np.ndarray]


def fabric_label(plan: Plan) -> str:
    """' · storage fabric' for an extra fabric's view, '' for the compute fabric."""
    fabric = plan.view.fabric
    return f" · {fabric} fabric" if fabric else ""


def overview_title(plan: Plan) -> str:
    return f"{plan.name}{fabric_label(plan) or ' · fabric'}"


def _kind_name(kind: str) -> str:
    return kind.split(":", 1)[-1]  # an extra fabric's kinds are "<fabric>:<kind>"; the title names the fabric


def _leaf_order(plan: Plan, idx: list[int]) -> list[int]:
    """Leaves left to right in rail order (rail 1 first), then plane, then plan order."""
    devs = plan.devices
    return sorted(idx, key=lambda i: (devs[i].rail or 0, devs[i].group or 0, i))


def _partition(plan: Plan, i: int) -> tuple:
    d = plan.devices[i]
    return (d.pod or 0, d.group or 0)


def _whole_names(plan: Plan, order: list[int]) -> dict:
    """Labels for runs that are a whole pod, plane (a multi-plane fabric's leaves and
    spines carry their plane in `group`) or core group."""
    out = {}
    for i in order:
        d = plan.devices[i]
        key = _partition(plan, i)
        if key not in out:
            out[key] = f"pod{d.pod}" if d.pod else (
                (f"core group {d.group}" if d.role == "core" else f"plane {d.group}") if d.group else "")
    return {k: v for k, v in out.items() if v}


def tier_rows(plan: Plan, shown: np.ndarray, link_ids: np.ndarray, caps: dict[int, int],
              budgets: dict[int, int], whole: bool = False, both: Shown | None = None) -> tuple[list[Row], np.ndarray]:
    """Rows (top tier first) of the devices `shown` (sorted indices), and each shown
    device's cell index over all rows (-1: not drawn).

    Built from the leaves out: a row's box count is capped by the screen (caps[tier]) and
    by its edge budget: budgets[tier] // the most boxes of the row below (or, for the
    servers, above) that one of its devices links to, so the edges between two rows never
    exceed the budget however many devices there are. `whole`: switches past the cap are
    drawn a box per pod or plane where those fit (overviews). `both`: _both_shown(plan,
    shown, link_ids) where the caller has it."""
    devs = plan.devices
    shown_list = shown.tolist()
    by_tier: dict[int, list[int]] = {}
    for i in shown_list:
        by_tier.setdefault(devs[i].tier, []).append(i)
    _, a_pos, b_pos = both or _both_shown(plan, shown, link_ids)
    cell_local = np.full(len(shown_list), -1, dtype=np.int64)  # cell index within its own row
    pos = {i: k for k, i in enumerate(shown_list)}
    built: dict[int, tuple[Row, list[list[int]]]] = {}
    order_of_build = sorted(by_tier, key=lambda t: (t != 1, t))  # leaves, then servers, then upward
    for tier in order_of_build:
        idx = by_tier[tier]
        neighbour = tier + 1 if tier == 0 else tier - 1
        fan = _max_fan(shown, a_pos, b_pos, cell_local, by_tier.get(neighbour, []), idx) if neighbour in built else 1
        cap = max(1, min(caps.get(tier, 16), budgets.get(tier, 128) // max(fan, 1)))
        if tier == 0:
            leaf_cell = {i: int(cell_local[pos[i]]) for i in by_tier.get(1, [])}
            row, members = _endpoint_row(plan, idx, cap, leaf_cell)
        else:
            order = _leaf_order(plan, idx) if tier == 1 else idx
            keys = [_partition(plan, i) for i in order]
            role = _row_role(plan, order)
            cells, members, prefix = device_cells(devs, order, keys, cap, role, _whole_names(plan, order), whole)
            row = Row(_row_label(role, tier), prefix + "…" if prefix else "", cells)
        for c, m in enumerate(members):
            for i in m:
                cell_local[pos[i]] = c
        built[tier] = (row, members)
    tiers_desc = sorted(built, reverse=True)
    rows = [built[t][0] for t in tiers_desc]
    cell_of = np.full(len(shown_list), -1, dtype=np.int64)
    tier_of = np.fromiter((devs[i].tier for i in shown_list), dtype=np.int64, count=len(shown_list))
    base = 0
    for t in tiers_desc:
        sel = tier_of == t
        cell_of[sel] = cell_local[sel] + base
        base += len(built[t][0].cells)
    return rows, cell_of


def _both_shown(plan: Plan, shown: np.ndarray, link_ids: np.ndarray) -> Shown:
    """The links among `link_ids` with both ends in `shown` (sorted device indices), and
    the positions of their ends in `shown`."""
    links = plan.links
    a, b = links.a_dev[link_ids], links.b_dev[link_ids]
    if len(link_ids) > len(plan.devices):  # an overview's links: a table of positions beats a search per end
        pos = np.full(len(plan.devices), -1, dtype=np.int64)
        pos[shown] = np.arange(len(shown))
        a_pos, b_pos = pos[a], pos[b]
        ok = (a_pos >= 0) & (b_pos >= 0)
        return link_ids[ok], a_pos[ok], b_pos[ok]
    # a scope's few links: a search in `shown`, never a table the size of the fabric per scope
    a_pos = np.minimum(np.searchsorted(shown, a), len(shown) - 1)
    b_pos = np.minimum(np.searchsorted(shown, b), len(shown) - 1)
    ok = (shown[a_pos] == a) & (shown[b_pos] == b)
    return link_ids[ok], a_pos[ok], b_pos[ok]


def _max_fan(shown: np.ndarray, a_pos: np.ndarray, b_pos: np.ndarray, cell_local: np.ndarray,
             neighbours: list[int], row: list[int]) -> int:
    """The most distinct neighbour-row cells one device of `row` links to."""
    if not neighbours or not row:
        return 1
    in_row = np.zeros(len(shown), dtype=bool)
    in_row[np.searchsorted(shown, row)] = True
    in_nb = np.zeros(len(shown), dtype=bool)
    in_nb[np.searchsorted(shown, neighbours)] = True
    mine = np.concatenate([a_pos[in_row[a_pos] & in_nb[b_pos]], b_pos[in_row[b_pos] & in_nb[a_pos]]])
    theirs = np.concatenate([b_pos[in_row[a_pos] & in_nb[b_pos]], a_pos[in_row[b_pos] & in_nb[a_pos]]])
    if not len(mine):
        return 1
    width = int(cell_local.max()) + 2
    seen = np.zeros(len(shown) * width, dtype=bool)  # (device, neighbour cell) pairs: a small range, marked
    seen[mine * width + cell_local[theirs] + 1] = True
    return int(np.bincount(np.nonzero(seen)[0] // width).max())


def _row_role(plan: Plan, order: list[int]) -> str:
    roles = list(dict.fromkeys(plan.devices[i].role for i in order))
    return roles[0] if len(roles) == 1 else "switch"


def _row_label(role: str, tier: int) -> str:
    """A row of one role is named after it (leaves, spines, routers); of mixed roles, by its tier."""
    return ROW_NAMES.get(tier, f"tier {tier}") if role == "switch" else plural(role, 2)


def _endpoint_row(plan: Plan, idx: list[int], cap: int, leaf_cell: dict[int, int]) -> tuple[Row, list[list[int]]]:
    """Servers in index order, grouped by the leaf box they reach first (so a group's
    edges read as one bundle per leaf box), then each extra-endpoint role."""
    devs = plan.devices
    servers = [i for i in idx if devs[i].role == "server"]
    others = [i for i in idx if devs[i].role != "server"]
    first_leaf = plan.memo("diagram_first_upper", _first_upper)
    keys = [leaf_cell.get(int(first_leaf[i]), -1) for i in servers]
    extra_cells, extra_members = [], []
    for role in dict.fromkeys(devs[i].role for i in others):  # a box each, or two runs per role
        mine = [i for i in others if devs[i].role == role]
        c, m, _ = device_cells(devs, mine, [0] * len(mine), 2, role)
        for cell in c:
            cell.fill = ENDPOINT_FILL
            cell.short = cell.lines if len(cell.lines) == 1 else (cell.lines[0].split(" – ")[0] + " …", cell.lines[1])
        extra_cells += c
        extra_members += m
    cells, members, prefix = device_cells(devs, servers, keys, max(1, cap - len(extra_cells)), "server")
    cells += extra_cells
    members += extra_members
    return Row("servers" if servers else "endpoints", prefix + "…" if prefix else "", cells), members


def _first_upper(plan: Plan) -> np.ndarray:
    """Per device, the upper end of its first link (-1 if none): a server's first leaf."""
    links = plan.links
    out = np.full(len(plan.devices), -1, dtype=np.int64)
    lower, first = np.unique(links.a_dev, return_index=True)  # return_index: the first occurrence
    out[lower] = links.b_dev[first]
    return out


def bundles_of(plan: Plan, link_ids: np.ndarray, shown: np.ndarray, cell_of: np.ndarray,
               cells: list[Cell], both: Shown | None = None) -> Bundles:
    """Links between cells, one bundle per pair of cells (both ends shown), coloured by the
    rail of its leaf end. Vectorised over the links."""
    links = plan.links
    link_ids, a_pos, b_pos = both or _both_shown(plan, shown, link_ids)
    ca, cb = cell_of[a_pos], cell_of[b_pos]
    keep = (ca >= 0) & (cb >= 0) & (ca != cb)
    n = max(len(cells), 1)
    # a pair of cells as one number below n * n (a diagram has at most a few hundred cells):
    # counted by bincount in one pass, where np.unique sorted every link (a whole fabric's
    # links in the overview)
    key = ca[keep] * n + cb[keep]
    per_key = np.bincount(key, minlength=n * n)
    pairs = np.nonzero(per_key)[0]
    counts = per_key[pairs]
    gbps = np.bincount(key, weights=links.speed_gbps[link_ids][keep].astype(np.float64), minlength=n * n)[pairs]
    a, b = np.divmod(pairs, n)
    rails = [c.rail for c in cells]
    colours = [rail_colour(rails[x] if rails[x] is not None else rails[y]) for x, y in zip(a.tolist(), b.tolist(), strict=True)]
    return Bundles(a, b, counts, gbps.astype(np.int64), colours)


def gap_notes(plan: Plan, link_ids: np.ndarray, rows: list[Row], shown: np.ndarray, cell_of: np.ndarray,
              both: Shown | None = None) -> dict[int, str]:
    """Per gap between adjacent rows, the links crossing it by kind ('256 leaf-spine')."""
    links = plan.links
    row_of_cell = np.concatenate([np.full(len(r.cells), k) for k, r in enumerate(rows)]) if rows else np.zeros(0, np.int64)
    link_ids, a_pos, b_pos = both or _both_shown(plan, shown, link_ids)
    ca, cb = cell_of[a_pos], cell_of[b_pos]
    keep = (ca >= 0) & (cb >= 0)
    upper = np.minimum(row_of_cell[ca[keep]], row_of_cell[cb[keep]])
    lower = np.maximum(row_of_cell[ca[keep]], row_of_cell[cb[keep]])
    kinds = links.kind[link_ids][keep].astype(np.int64)
    adjacent = lower == upper + 1
    key = upper[adjacent] * len(plan.link_kinds) + kinds[adjacent]
    per_key = np.bincount(key, minlength=len(rows) * len(plan.link_kinds))  # (gap, kind) pairs: a small range
    pairs = np.nonzero(per_key)[0]
    counts = per_key[pairs]
    notes: dict[int, list[str]] = {}
    for p, c in zip(pairs.tolist(), counts.tolist(), strict=True):
        gap, kind = divmod(p, len(plan.link_kinds))
        notes.setdefault(gap, []).append(f"{c:,} {_kind_name(plan.link_kinds[kind])}")
    return {gap: ", ".join(v) for gap, v in notes.items()}


def rails_of(rows: list[Row]) -> list[int]:
    return sorted({c.rail for r in rows for c in r.cells if c.rail is not None})


def scope_drawing(plan: Plan, scope: str, members: list[int], link_ids: np.ndarray,
                  caps: dict[int, int] = SCOPE_CAPS, budgets: dict[int, int] = SCOPE_BUDGETS,
                  title: str | None = None) -> Drawing:
    """One scope: its servers, endpoints and leaves and the switches their links reach."""
    links = plan.links
    shown = distinct(np.concatenate([np.asarray(members, dtype=np.int64), links.a_dev[link_ids].astype(np.int64),
                                     links.b_dev[link_ids].astype(np.int64)]))
    both = _both_shown(plan, shown, link_ids)  # the three steps below read the same links
    rows, cell_of = tier_rows(plan, shown, link_ids, caps, budgets, both=both)
    cells = [c for r in rows for c in r.cells]
    bundles = bundles_of(plan, link_ids, shown, cell_of, cells, both)
    counts: dict[str, int] = {}
    for i in shown.tolist():
        role = plan.devices[i].role
        counts[role] = counts.get(role, 0) + 1
    subtitle = " · ".join(counted(role, n) for role, n in counts.items()) + f" · {len(link_ids):,} links"
    footnote = "A box of several devices is a run of them, labelled with its range." if any(c.members for c in cells) else ""
    title = title or f"{plan.name}{fabric_label(plan)} · {scope}"
    return layered(f"{plan.name} {scope}", title, subtitle, rows, bundles, rails_of(rows),
                   gap_notes(plan, link_ids, rows, shown, cell_of, both), footnote)


def clos_overview(plan: Plan) -> Drawing:
    """The whole Clos: one box per scope (its servers and leaves; runs of scopes past the
    cap), one per extra-endpoint role, and above them spines and cores, by pod or plane
    where the fabric has them. A fabric with no tier above its leaves is drawn like a
    scope, as a whole."""
    devs = plan.devices
    tiers = np.fromiter((d.tier for d in devs), dtype=np.int64, count=len(devs))
    if not (tiers >= 2).any():
        return scope_drawing(plan, "fabric", list(range(len(devs))), np.arange(len(plan.links)), OVERVIEW_CAPS,
                             OVERVIEW_BUDGETS, title=overview_title(plan))
    names, dev_scope, _ = plan.memo("diagram_scopes", scope_index)
    # the bottom row: scopes (runs of them, never across a pod), then extra-endpoint roles
    scope_pod = [0] * len(names)
    scope_leaves = [0] * len(names)
    scope_servers = [0] * len(names)
    for i, d in enumerate(devs):
        s = int(dev_scope[i])
        if s < 0:
            continue
        if d.role == "leaf":
            scope_pod[s] = d.pod or 0
            scope_leaves[s] += 1
        elif d.role == "server":
            scope_servers[s] += 1
    unit_of_scope = np.full(len(names) + 1, -1, dtype=np.int64)  # last slot: no scope
    units: list[Cell] = []
    for start, end in runs(scope_pod, OVERVIEW_CAPS[1]):
        first, last = names[start], names[end - 1]
        servers, leaves = sum(scope_servers[start:end]), sum(scope_leaves[start:end])
        label = first if end - start == 1 else f"{first} – {last}"
        pod = scope_pod[start]
        whole = pod and end - start == scope_pod.count(pod) and end - start > 1 and not first.startswith("pod")
        tail = (counted("server", servers), counted("leaf", leaves))
        short = (label.replace(" – ", "–"),) + tail
        lines = ((f"pod{pod}: {label}",) if whole else (label,)) + tail
        units.append(Cell(first if end - start == 1 else f"{first}..{last}", lines, short, ROLE_FILL["unit"],
                          title=f"{label}: {counted('server', servers)}, {counted('leaf', leaves)}", bold=True, size=0))
        unit_of_scope[start:end] = len(units) - 1
    # upper rows: spines, cores (by pod or plane), capped by their fan to the units (the
    # most units one spine reaches) as well as by the screen
    low = tiers <= 1
    servers_and_leaves = low & np.fromiter((d.role == "server" or d.tier == 1 for d in devs), dtype=bool, count=len(devs))
    unit_of_dev = np.full(len(devs), -1, dtype=np.int64)
    unit_of_dev[servers_and_leaves] = unit_of_scope[dev_scope[servers_and_leaves]]
    links = plan.links
    to_units = (tiers[links.b_dev] == 2) & (unit_of_dev[links.a_dev] >= 0)
    seen = np.zeros(len(devs) * (len(units) + 1), dtype=bool)  # (spine, unit) pairs, marked: no sort of the links
    seen[links.b_dev[to_units].astype(np.int64) * (len(units) + 1) + unit_of_dev[links.a_dev[to_units]]] = True
    pairs = np.nonzero(seen)[0]
    fan = int(np.bincount(pairs // (len(units) + 1)).max()) if len(pairs) else 1
    caps = dict(OVERVIEW_CAPS)
    caps[2] = max(1, min(caps[2], OVERVIEW_BUDGETS[2] // fan))
    uppers = np.nonzero(tiers >= 2)[0]
    rows_up, cell_up = tier_rows(plan, uppers, np.arange(len(links)), caps, OVERVIEW_BUDGETS, whole=True)
    n_up = sum(len(r.cells) for r in rows_up)
    cell_of_dev = np.full(len(devs), -1, dtype=np.int64)
    cell_of_dev[uppers] = cell_up
    cell_of_dev[servers_and_leaves] = np.where(unit_of_dev[servers_and_leaves] >= 0,
                                               unit_of_dev[servers_and_leaves] + n_up, -1)
    rows = rows_up + [Row("scalable units" if names and names[0].startswith("su") else "leaves and servers", "", units)]
    # extra endpoints (UFM, storage targets): a box per role in a row of their own below
    roles = [d.role for d in devs]
    endpoints: list[Cell] = []
    for role in dict.fromkeys(r for r, d in zip(roles, devs, strict=True) if d.tier == 0 and r != "server"):
        idx = [i for i, r in enumerate(roles) if r == role]
        endpoints.append(Cell(role, (role, counted(role, len(idx))), (role, counted(role, len(idx))), ENDPOINT_FILL,
                              title=f"{counted(role, len(idx))}: {devs[idx[0]].name} …", size=0))
        cell_of_dev[idx] = n_up + len(units) + len(endpoints) - 1
    if endpoints:
        rows.append(Row("endpoints", "", endpoints))
    shown = np.arange(len(devs))
    cells = [c for r in rows for c in r.cells]
    both = _both_shown(plan, shown, np.arange(len(links)))
    bundles = bundles_of(plan, np.arange(len(links)), shown, cell_of_dev, cells, both)
    bundles.colour = [EDGE_COLOUR] * len(bundles)  # a unit holds every rail: no rail colour here
    counts = plan.count_by_role()
    design = plan.view.design
    subtitle = (f"{design.gpus:,} GPUs · " if design.gpus else "") + \
        " · ".join(counted(role, n) for role, n in counts.items()) + f" · {len(links):,} links"
    if design.planes:
        subtitle += f" · {design.planes} planes"
    footnote = (f"Each box of the {rows[len(rows_up)].label} row is drawn in detail in a diagram of its own "
                f"({names[0]}.svg{'' if len(names) == 1 else f' … {names[-1]}.svg'}): its servers, leaves and their links.")
    return layered(f"{plan.name} fabric", overview_title(plan), subtitle, rows, bundles, [],
                   gap_notes(plan, np.arange(len(links)), rows, shown, cell_of_dev, both), footnote)
