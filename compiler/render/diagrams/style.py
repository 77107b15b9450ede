"""How diagrams look: sizes in px (SVG user units) and colours, in one place so every
diagram agrees. Widths are chosen so a diagram fits one screen: a 1600 x 1000 window
shows it whole, and the tests hold every diagram to at most MAX_WIDTH_PX x MAX_HEIGHT_PX.
"""

from __future__ import annotations

import functools
import math

MAX_WIDTH_PX = 1600  # the widest diagram we draw (the one-screen test allows 2,000)
MAX_HEIGHT_PX = 1400
MARGIN_PX = 16
ROW_LABEL_PX = 128  # left column naming each row (role and the name prefix its boxes drop)
TITLE_PX = 15
FONT_PX = 11
SMALL_PX = 10
LINE_PX = 13  # one line of box text
BOX_PAD_PX = 8
BOX_GAP_PX = 6  # between boxes of one row
ROW_GAP_PX = 150  # between rows: room for the fans of edges
CHAR_EM = 0.6  # mean advance of a Helvetica character, in em: box widths are estimated, no font is read

# Rail r is RAIL_COLOURS[(r - 1) % 8]: Tableau 10's first eight, yellow darkened to read
# as a thin line on white. The same rail has the same colour in every diagram.
RAIL_COLOURS = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#c9a227", "#b07aa1", "#ff9da7")
# ... a box of that rail is filled with its colour mixed this far toward white.
RAIL_TINT = 0.82
EDGE_COLOUR = "#78909c"  # links of no single rail
BOX_STROKE = "#546e7a"
ROLE_FILL = {"server": "#e8f5e9", "leaf": "#eef3fb", "spine": "#fff3e0", "core": "#fce4ec", "router": "#eef3fb",
             "chip": "#e8f5e9", "unit": "#f1f8e9"}
ENDPOINT_FILL = "#f3e5f5"  # extra endpoints (UFM, storage targets, ...)


def text_px(text: str, size_px: float = FONT_PX) -> float:
    """Estimated width of a line of text (no font metrics: deterministic on every machine)."""
    return len(text) * size_px * CHAR_EM


@functools.cache
def rail_colour(rail: int | None) -> str:
    return EDGE_COLOUR if rail is None else RAIL_COLOURS[(rail - 1) % len(RAIL_COLOURS)]


@functools.cache
def tint(colour: str, amount: float = RAIL_TINT) -> str:
    """`colour` mixed `amount` of the way toward white (a fill that keeps text legible)."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(c + (255 - c) * amount):02x}" for c in rgb)


def role_fill(role: str, rail: int | None = None) -> str:
    if rail is not None:
        return tint(rail_colour(rail))
    return ROLE_FILL.get(role, ENDPOINT_FILL)


@functools.cache
def edge_width(count: int) -> float:
    """A bundle of many links draws thicker, on a log scale (1 link: 1.2 px, 1,000: 4.2 px)."""
    return round(1.2 + min(3.0, math.log10(max(count, 1))), 2)
