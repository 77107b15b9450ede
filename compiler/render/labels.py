"""labels.csv and labels.html: one label per end of each physical cable (TIA-606 style,
both ends; plan.cables: a twin-port copper cable or a splitter is one cable, one pair).

The label reads `<cable id> <near> / <far>` where a place is `<rack>-<U>:<port>` with a
physical layout; the B end swaps near and far. Written only with a layout: without
one the label text is already in cabling.csv (label_a, label_b), and at 100k+ GPUs a
second 80 MB file of it would double the write time for nothing.

labels.html is a printable sheet, one page group per rack, in the rack sheets' U/port
order, holding every label. Beyond PAGE_LABELS labels one HTML file is more than a
browser prints as one job, so the sheets are paged: labels/labels-0001.html, ... each
at most PAGE_LABELS labels, cut between racks (a rack larger than a page is split
across pages and its heading says which part), and labels.html becomes their index.
Its HTML and CSS are in templates/labels/.
"""

from __future__ import annotations

import html

import numpy as np

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.cables import joined, multi_link_cables, physical_cable_ids, physical_cable_labels, physical_cables
from ..plan.fabrics import management_cords
from ..plan.views import device_places, floor_port_names
from .csvtext import csv_field
from .rack_rows import rack_order
from .templates import render_template, row_format
from .writer import OutputDir

HEADER = ["cable_id", "end", "label", "place", "device", "port", "media"]
PAGE_LABELS = 50_000  # labels per HTML file


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    if plan.physical is None:
        return
    links = plan.links
    cables = physical_cables(plan)
    first = cables.first_link
    ids = np.array(physical_cable_ids(plan), dtype=object)
    label_a, label_b = physical_cable_labels(plan)
    places = np.array(plan.memo("device_places", device_places), dtype=object)
    names = plan.memo("floor_port_names", floor_port_names)  # as the switch's NOS names it, like its config
    dev_names = np.array([d.name for d in plan.devices], dtype=object)
    offsets = plan.port_offsets()
    media = np.array([plan.view.facts.media[m].fiber.upper() for m in plan.media], dtype=object)[links.media[first]]
    quote = any(any(ch in t for ch in ',"\n\r') for t in dev_names.tolist() + places.tolist() + names.tolist())
    parts = []
    for end, labels in (("A", label_a), ("B", label_b)):
        dev = links.a_dev if end == "A" else links.b_dev
        port = names[offsets[dev] + (links.a_port if end == "A" else links.b_port)]
        place_col, dev_col, port_col = places[dev[first]], dev_names[dev[first]], port[first]
        for idx, matrix in multi_link_cables(cables):  # an end of several ports: each column joined
            place_col[idx], dev_col[idx], port_col[idx] = (joined(v[matrix]) for v in (places[dev], dev_names[dev], port))
        cols = [labels, place_col.tolist(), dev_col.tolist(), port_col.tolist()]
        if quote:
            cols = [[csv_field(t) for t in col] for col in cols]
        text, place_col, dev_col, port_col = (np.array(col, dtype=object) for col in cols)
        parts.append(ids + f",{end}," + text + "," + place_col + "," + dev_col + "," + port_col + "," + media + "\n")
    # One cable's two labels next to each other: the person cutting them pairs them.
    both = np.empty(2 * len(cables), dtype=object)
    both[0::2], both[1::2] = parts[0], parts[1]
    body = "".join(both.tolist()) + "".join(_management_labels(plan, places))
    out.write_text("labels.csv", ",".join(HEADER) + "\n" + body)
    pages = label_pages(plan, label_a, label_b)
    if len(pages) == 1:
        out.write_text("labels.html", pages[0][1])
        return
    for number, (_, text) in enumerate(pages, 1):
        out.write_text(page_path(number), text)
    out.write_text("labels.html", index_html(plan, [summary for summary, _ in pages]))


def _management_labels(plan: Plan, places: np.ndarray) -> list[str]:
    """Both labels of each management cord (plan.fabrics.management_cords), after the
    plan's cables, as cabling.csv lists them."""
    index = {d.name: i for i, d in enumerate(plan.devices)}
    out = []
    for c in management_cords(plan):
        near, far = f"{places[index[c.switch]]}:{c.port}", f"{places[index[c.leaf]]}:{c.leaf_port}"
        for end, label, place, dev, port in (("A", f"{c.cable_id} {near} / {far}", places[index[c.switch]], c.switch, c.port),
                                             ("B", f"{c.cable_id} {far} / {near}", places[index[c.leaf]], c.leaf, c.leaf_port)):
            out.append(",".join(csv_field(v) for v in (c.cable_id, end, label, place, dev, port, "CAT6")) + "\n")
    return out


def page_path(number: int) -> str:
    return f"labels/labels-{number:04d}.html"


def _page_bounds(rack: np.ndarray, count: np.ndarray, page_labels: int) -> list[tuple[int, int]]:
    """Entry ranges [lo, hi) of at most page_labels labels each, cut at a rack boundary
    where one fits in the page, else inside the rack. O(entries)."""
    cum = np.concatenate([[0], np.cumsum(count)])
    starts = np.nonzero(np.diff(rack, prepend=-1))[0]  # first entry of each rack
    bounds, lo, n = [], 0, len(rack)
    while lo < n:
        hi = int(np.searchsorted(cum, cum[lo] + page_labels, side="right")) - 1  # most entries that fit
        if hi < n:
            cut = int(np.searchsorted(starts, hi, side="right")) - 1
            if starts[cut] > lo:
                hi = int(starts[cut])
        hi = min(max(hi, lo + 1), n)
        bounds.append((lo, hi))
        lo = hi
    return bounds or [(0, 0)]  # no cables: one empty sheet


def cable_rack_order(plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rack, cable, end) in sheet order (render.rack_rows): each physical cable where its
    first logical link ends; the strands of one link next to each other."""
    rack, link, end = rack_order(plan)
    cables = physical_cables(plan)
    n = len(plan.links)
    strands = np.zeros(n, dtype=np.int64)  # per first link: how many cables are named after it
    np.add.at(strands, cables.first_link, 1)
    reps = strands[link]
    first_cable = np.searchsorted(cables.first_link, link)  # cables are in first-link order
    rack, end, base = np.repeat(rack, reps), np.repeat(end, reps), np.repeat(first_cable, reps)
    within = np.arange(base.size) - np.repeat(np.r_[0, np.cumsum(reps)[:-1]].astype(np.int64), reps)
    return rack, base + within, end


def label_pages(plan: Plan, label_a: list[str], label_b: list[str]) -> list[tuple[dict, str]]:
    """The printable sheets: (summary, HTML) per page; one page when every label fits."""
    rack, link, end = cable_rack_order(plan)
    phys = plan.physical
    cables = physical_cables(plan)
    racks = phys.racks
    # In-rack cables are listed once: both ends' labels are printed there.
    both = (end == 0) & (phys.dev_rack[plan.links.b_dev[cables.first_link[link]]] == rack)
    count = 1 + both.astype(np.int64)
    bounds = _page_bounds(rack, count, PAGE_LABELS)
    rack_lo = np.searchsorted(rack, np.arange(len(racks) + 1))
    paged = len(bounds) > 1
    cell = row_format("labels/elements.j2", "label", 2)
    pages = []
    for number, (lo, hi) in enumerate(bounds, 1):
        title = f"{plan.name} cable labels" + (f", page {number} of {len(bounds)}" if paged else "")
        groups, page_racks = [], []
        for r in np.unique(rack[lo:hi]).tolist():
            a, b = max(int(rack_lo[r]), lo), min(int(rack_lo[r + 1]), hi)
            whole = int(rack_lo[r + 1] - rack_lo[r])
            cells = []
            for i, e, two in zip(link[a:b].tolist(), end[a:b].tolist(), both[a:b].tolist()):
                for t in [label_a[i] if e == 0 else label_b[i]] + ([label_b[i]] if two else []):
                    cid, rest = t.split(" ", 1)
                    cells.append(cell % (html.escape(cid), html.escape(rest)))
            groups.append((html.escape(racks[r].name), b - a, "" if b - a == whole else f" of {whole}", cells))
            page_racks.append(racks[r].name)
        text = render_template("labels/labels.html.j2", title=html.escape(title), racks=groups)
        pages.append(({"racks": page_racks, "labels": int(count[lo:hi].sum())}, text))
    return pages


def index_html(plan: Plan, pages: list[dict]) -> str:
    rows = [(page_path(n), html.escape(p["racks"][0]), html.escape(p["racks"][-1]) if len(p["racks"]) > 1 else "",
             p["labels"]) for n, p in enumerate(pages, 1)]
    return render_template("labels/index.html.j2", title=html.escape(f"{plan.name} cable labels"), pages=rows,
                           total=sum(p["labels"] for p in pages), page_labels=PAGE_LABELS)
