"""labels.csv and labels.html: one label per cable end (TIA-606 style, both ends).

The label reads `<cable id> <near> / <far>` where a place is `<rack>-<U>:<port>` with a
physical layout; the B end swaps near and far. Written only with a layout: without
one the label text is already in cabling.csv (label_a, label_b), and at 100k+ GPUs a
second 80 MB file of it would double the write time for nothing. labels.html (a printable sheet, one page group per rack, in the
rack sheets' U/port order) only with a layout, and only up to HTML_MAX_LABELS labels:
beyond that a browser will not print one page set, and labels.csv feeds a label printer.
Its HTML and CSS are in templates/labels/.
"""

from __future__ import annotations

import html

import numpy as np

from ..plan.model import Plan
from ..plan.views import cable_ids, cable_labels, device_places, port_table
from .csvtext import csv_field
from .rack_rows import rack_order
from .templates import render_template, row_format
from .writer import OutputDir

HEADER = ["cable_id", "end", "label", "place", "device", "port", "media"]
HTML_MAX_LABELS = 50_000


def render(plan: Plan, out: OutputDir) -> None:
    if plan.physical is None:
        return
    links = plan.links
    ids = plan.memo("cable_ids", cable_ids)
    label_a, label_b = plan.memo("cable_labels", cable_labels)
    places = np.array(plan.memo("device_places", device_places), dtype=object)
    names = plan.memo("port_table", port_table)["name"]
    dev_names = np.array([d.name for d in plan.devices], dtype=object)
    offsets = plan.port_offsets()
    media = np.array([plan.facts["media"][m]["fiber"].upper() for m in plan.media], dtype=object)[links.media]
    # Pre-escaped pieces: per device "place,device", per port "port"; labels quoted only if some name needs it.
    dev_piece = np.array([f"{csv_field(p)},{csv_field(d)}" for p, d in zip(places.tolist(), dev_names.tolist())], dtype=object)
    port_esc = np.array([csv_field(n) for n in names.tolist()], dtype=object) if any(
        any(ch in n for ch in ',"\n\r') for n in names.tolist()) else names
    quote = any(any(ch in t for ch in ',"\n\r') for t in dev_piece.tolist()) or port_esc is not names
    parts = []
    for end, labels in (("A", label_a), ("B", label_b)):
        dev = links.a_dev if end == "A" else links.b_dev
        port = port_esc[offsets[dev] + (links.a_port if end == "A" else links.b_port)]
        text = [csv_field(t) for t in labels] if quote else labels
        parts.append((np.array(ids, dtype=object) + f",{end},") + np.array(text, dtype=object) + ","
                     + dev_piece[dev] + "," + port + "," + media + "\n")
    # One cable's two labels next to each other: the person cutting them pairs them.
    both = np.empty(2 * len(links), dtype=object)
    both[0::2], both[1::2] = parts[0], parts[1]
    body = "".join(both.tolist())
    out.write_text("labels.csv", ",".join(HEADER) + "\n" + body)
    if 2 * len(links) <= HTML_MAX_LABELS:
        out.write_text("labels.html", labels_html(plan, label_a, label_b))


def labels_html(plan: Plan, label_a: list[str], label_b: list[str]) -> str:
    rack, link, end = rack_order(plan)
    racks = plan.physical.racks
    cell = row_format("labels/elements.j2", "label", 2)
    groups = []
    bounds = np.searchsorted(rack, np.arange(len(racks) + 1))
    for r, rec in enumerate(racks):
        lo, hi = int(bounds[r]), int(bounds[r + 1])
        if lo == hi:
            continue
        cells = []
        for i, e in zip(link[lo:hi].tolist(), end[lo:hi].tolist()):
            # In-rack cables are listed once: print both ends' labels there.
            texts = [label_a[i] if e == 0 else label_b[i]]
            if e == 0 and plan.physical.dev_rack[plan.links.b_dev[i]] == r:
                texts.append(label_b[i])
            for t in texts:
                cid, rest = t.split(" ", 1)
                cells.append(cell % (html.escape(cid), html.escape(rest)))
        groups.append((html.escape(rec.name), hi - lo, cells))
    return render_template("labels/labels.html.j2", name=html.escape(plan.name), racks=groups)
