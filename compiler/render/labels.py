"""labels.csv, labels-print.csv and labels.html: one label per end of each physical cable
and management cord (TIA-606 style, both ends; plan.cables: a twin-port copper cable or
a splitter is one cable, one pair), each carrying the cable id, this end, the far end,
the length as ordered and the part, and in labels.html a QR code of the cable id
(render/qr.py) that a scanner reads to look the cable up or mark it done.

The label reads `<cable id> <near> / <far>` where a place is `<rack>-<U>:<port>` with a
physical layout; the B end swaps near and far. Written only with a layout: without
one the label text is already in cabling.csv (label_a, label_b), and at 100k+ GPUs a
second 80 MB file of it would double the write time for nothing.

labels.csv gains `length_m` (orderable, empty where not modelled) and `part`;
labels-print.csv is the same labels for label-printer software (print_csv).
labels.html is a printable sheet laid out for self-laminating wrap stock (the template
names it), one page group per rack, in the pull sheets' U/port order, holding every label. Beyond PAGE_LABELS labels one HTML file is more than a
browser prints as one job, so the sheets are paged: labels/labels-0001.html, ... each
at most PAGE_LABELS labels, cut between racks (a rack larger than a page is split
across pages and its heading says which part), and labels.html becomes their index.
Its HTML and CSS are in templates/labels/.
"""

from __future__ import annotations

import html
import math

import numpy as np

from ..check import CheckResults
from ..plan.cables import joined, multi_link_cables, physical_cable_ids, physical_cable_labels, physical_cables
from ..plan.fabrics import management_cord_labels, management_cords
from ..plan.model import Plan
from ..plan.views import device_places, floor_port_names
from .csvtext import csv_field
from .floor_rows import FloorRows, floor_rows, rack_entries
from .qr import qr_svg
from .templates import render_template, row_format
from .writer import OutputDir

HEADER = ["cable_id", "end", "label", "place", "device", "port", "media", "length_m", "part"]
PRINT_HEADER = ["cable_id", "end", "rack", "here", "far", "length", "part", "qr"]  # labels-print.csv
PAGE_LABELS = 50_000  # labels per HTML file
QR_HTML_MAX_LABELS = 100_000  # above: labels.html without QR codes (labels-print.csv's `qr` field has them)
QR_MM = 11.5  # the QR code's side: the printable height of the wrap stock (templates/labels/labels.html.j2) less 1.2 mm


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
        parts.append(ids + f",{end}," + text + "," + place_col + "," + dev_col + "," + port_col + "," + media)
    # One cable's two labels next to each other: the person cutting them pairs them.
    both = np.empty(2 * len(cables), dtype=object)
    both[0::2], both[1::2] = parts[0], parts[1]
    rows = floor_rows(plan)  # the cables, then the management cords: labels.csv's order
    lengths = ["" if math.isnan(x) else f"{x:g}" for x in rows.length_m.tolist()]
    tail = [f",{length},{csv_field(part)}\n" for length, part in zip(lengths, rows.part.tolist(), strict=True)]
    labelled = both.tolist() + _management_labels(plan, places)
    body = "".join(row + tail[k // 2] for k, row in enumerate(labelled))
    out.write_text("labels.csv", ",".join(HEADER) + "\n" + body)
    out.write_text("labels-print.csv", print_csv(plan, rows))
    pages = label_pages(plan, rows)
    if len(pages) == 1:
        out.write_text("labels.html", pages[0][1])
        return
    for number, (_, page) in enumerate(pages, 1):
        out.write_text(page_path(number), page)
    out.write_text("labels.html", index_html(plan, [summary for summary, _ in pages]))


def _management_labels(plan: Plan, places: np.ndarray) -> list[str]:
    """Both labels of each management cord (plan.fabrics.management_cords), after the
    plan's cables, as cabling.csv lists them."""
    index = {d.name: i for i, d in enumerate(plan.devices)}
    out = []
    for c, label_a, label_b in zip(management_cords(plan), *management_cord_labels(plan), strict=True):
        for end, label, place, dev, port in (("A", label_a, places[index[c.switch]], c.switch, c.port),
                                             ("B", label_b, places[index[c.leaf]], c.leaf, c.leaf_port)):
            out.append(",".join(csv_field(v) for v in (c.cable_id, end, label, place, dev, port, "CAT6")))
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


def _ends_of(label: str, cable_id: str) -> tuple[str, str]:
    """A label's `<this end> / <far end>` (views.cable_labels) as its two ends."""
    here, _, far = label[len(cable_id) + 1:].partition(" / ")
    return here, far


def print_csv(plan: Plan, rows: FloorRows) -> str:
    """labels-print.csv: one row per label for label-printer software (Brady Workstation,
    BarTender, P-touch Editor: a header row of field names, one record per label, no line
    breaks in a field, each under 256 characters). A layout binds its text objects to
    `cable_id`, `here`, `far`, `length`, `part`, and its QR object to `qr`. Labels in the
    order of labels.csv (a cable's two ends together)."""
    assert plan.physical is not None
    names = [r.name for r in plan.physical.racks]
    lines = [",".join(PRINT_HEADER) + "\n"]
    for i, cid in enumerate(rows.cable_id.tolist()):
        length, part = rows.length_text[i], rows.part[i]
        for end_name, end in (("A", rows.ends[0]), ("B", rows.ends[1])):
            here, far = _ends_of(end.label[i], cid)
            lines.append(",".join(csv_field(v) for v in (cid, end_name, names[end.rack[i]], here, far, length, part, cid))
                         + "\n")
    return "".join(lines)


def label_pages(plan: Plan, rows: FloorRows) -> list[tuple[dict, str]]:
    """The printable sheets: (summary, HTML) per page; one page when every label fits.
    A rack's labels are the ends in it, in its pull sheet's order (render/floor_rows.py);
    a cable with both ends in the rack prints both labels there."""
    rack, row, end = rack_entries(rows)
    phys = plan.physical
    assert phys is not None  # labels are printed only for a plan with a physical layout
    racks = phys.racks
    a, b = rows.ends
    both = a.rack[row] == b.rack[row]
    count = 1 + both.astype(np.int64)
    bounds = _page_bounds(rack, count, PAGE_LABELS)
    rack_lo = np.searchsorted(rack, np.arange(len(racks) + 1))
    paged = len(bounds) > 1
    cell = row_format("labels/elements.j2", "label", 5)
    esc = html.escape
    # A QR code costs ~0.2 ms and ~0.9 kB per cable: at 100k+ GPUs (800k labels) that is
    # minutes and a gigabyte of HTML, so past the cap the sheets are text only and the
    # label printer's software draws the code from labels-print.csv.
    draw_qr = int(count.sum()) <= QR_HTML_MAX_LABELS
    codes = [qr_svg(str(cid), QR_MM) for cid in rows.cable_id.tolist()] if draw_qr else [""] * len(rows)  # once a cable
    pages = []
    for number, (lo, hi) in enumerate(bounds, 1):
        title = f"{plan.name} cable labels" + (f", page {number} of {len(bounds)}" if paged else "")
        groups, page_racks = [], []
        for r in np.unique(rack[lo:hi]).tolist():
            first, last = max(int(rack_lo[r]), lo), min(int(rack_lo[r + 1]), hi)
            whole = int(rack_lo[r + 1] - rack_lo[r])
            cells = []
            for i, e, two in zip(row[first:last].tolist(), end[first:last].tolist(), both[first:last].tolist(), strict=True):
                cid, code = str(rows.cable_id[i]), codes[i]
                fit = f"{esc(str(rows.length_text[i]))} {esc(str(rows.part[i]))}"
                for k in [e] + ([1 - e] if two else []):
                    here, far = _ends_of(str(rows.ends[k].label[i]), cid)
                    cells.append(cell % (code, esc(cid), esc(here), esc(far), fit))
            groups.append((esc(racks[r].name), last - first, "" if last - first == whole else f" of {whole}", cells))
            page_racks.append(racks[r].name)
        text = render_template("labels/labels.html.j2", title=esc(title), racks=groups)
        pages.append(({"racks": page_racks, "labels": int(count[lo:hi].sum())}, text))
    return pages


def index_html(plan: Plan, pages: list[dict]) -> str:
    rows = [(page_path(n), html.escape(p["racks"][0]), html.escape(p["racks"][-1]) if len(p["racks"]) > 1 else "",
             p["labels"]) for n, p in enumerate(pages, 1)]
    return render_template("labels/index.html.j2", title=html.escape(f"{plan.name} cable labels"), pages=rows,
                           total=sum(p["labels"] for p in pages), page_labels=PAGE_LABELS)
