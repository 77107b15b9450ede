"""A diagram as positioned shapes, spelled as SVG or DOT by the templates in
templates/diagrams/.

The layouts (layered.py, ring.py, grid.py) compute every coordinate; the SVG is written
from them directly, and the DOT file carries the same nodes, edges and positions
(`pos="x,y!"` pins each node, `layout=neato` with pinned nodes only routes the edges),
so `neato -Tpdf <file>.dot` redraws the picture with Graphviz's tools.

Coordinates are px from the top left (SVG user units), rounded to 0.1 px when a shape
is made so the files are short and byte-stable; DOT's are points from the bottom left,
1 px = 1 pt. Templates print the fields as they are: a diagram has hundreds of shapes
and a function call per coordinate in a template would cost more than the layout.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import NamedTuple

from markupsafe import escape

from ..templates import render_template
from .style import LINE_PX


def px(v: float) -> float:
    return round(v, 1)


@dataclass(slots=True)
class Box:
    """A device, or a group of devices drawn as one box."""

    id: str  # unique in its diagram: the device name, or a group's "first..last"
    x: float  # top left
    y: float
    w: float
    h: float
    lines: tuple[str, ...]  # text, centred
    fill: str
    stroke: str
    title: str  # tooltip
    members: str = ""  # a group's device names, space-separated (an SVG <desc>); empty for one device
    bold: bool = False
    font: float = 11  # px
    cx: float = 0.0
    cy: float = 0.0
    baselines: tuple[float, ...] = ()

    def __post_init__(self):
        self.x, self.y, self.w, self.h = px(self.x), px(self.y), px(self.w), px(self.h)
        self.cx, self.cy = px(self.x + self.w / 2), px(self.y + self.h / 2)
        self.baselines = _baselines(self.cy, len(self.lines))


@functools.lru_cache(maxsize=4096)
def _baselines(cy: float, n: int) -> tuple[float, ...]:
    """The baselines of n centred lines about cy: the same for every box of a row."""
    return tuple(px(cy + (k - (n - 1) / 2) * LINE_PX + 4) for k in range(n))


class Edge(NamedTuple):
    """A bundle of `count` links between two boxes, drawn as one line (or an arc).
    Coordinates come rounded (layouts round them in bulk). A tuple: the templates unpack
    it in the loop header, which costs a tenth of an attribute lookup per field."""

    a: str  # box ids
    b: str
    count: int  # type: ignore[assignment]  # a field named like tuple.count(): read as .count only
    x1: float
    y1: float
    x2: float
    y2: float
    colour: str
    width: float
    title: str
    label: str = ""  # e.g. "x8"; empty where a caption says what every line carries
    lx: float = 0.0
    ly: float = 0.0
    bend: float = 0.0  # >0: an arc (edges within one row) through the control point mx, my
    mx: float = 0.0
    my: float = 0.0


class Node(NamedTuple):
    """A box as the DOT template prints it (templates.rows): name and label quoted and
    escaped as DOT requires (label lines joined by an escaped newline), position in points
    from the bottom left, size in inches."""

    id_dot: str
    label_dot: str
    x: float
    y: float
    w_in: float
    h_in: float
    fill: str
    stroke: str


class NodePart(NamedTuple):
    """A piece of a box in the SVG (templates.rows picks the macro by part, sized, flag):
    "open" (flag: has a <desc>), "line" (title: the text; flag: bold), "close"."""

    part: str
    sized: bool  # a font size of its own
    flag: bool
    font: float = 11
    title: str = ""
    desc: str = ""
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0
    h: float = 0.0
    fill: str = ""
    stroke: str = ""


_CLOSE = NodePart("close", False, False)


@dataclass(slots=True)
class Text:
    x: float
    y: float  # baseline
    text: str
    size: float = 11
    anchor: str = "start"  # start | middle | end
    bold: bool = False
    colour: str = "#333333"

    def __post_init__(self):
        self.x, self.y = px(self.x), px(self.y)


@dataclass(slots=True)
class Swatch:
    """A legend entry: a coloured line and its meaning."""

    x: float
    y: float
    colour: str
    text: str


@dataclass(slots=True)
class Panel:
    """A background rectangle (a torus slice, a group)."""

    x: float
    y: float
    w: float
    h: float
    fill: str


@dataclass
class Drawing:
    name: str  # the graph's name in DOT
    title: str
    width: float
    height: float
    boxes: list[Box] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    legend: list[Swatch] = field(default_factory=list)
    panels: list[Panel] = field(default_factory=list)

    def svg(self) -> str:
        self.width, self.height = px(self.width), px(self.height)
        edges = self.edges
        columns = {"title_svg": escaped([e.title for e in edges]), "label_svg": escaped([e.label for e in edges]),
                   "arc": [bool(e.bend) for e in edges], "labelled": [bool(e.label) for e in edges]}
        return render_template("diagrams/drawing.svg.j2", d=self, edge_columns=columns, node_parts=self._node_parts())

    def _node_parts(self) -> list[NodePart]:
        """Each box as the SVG template's node macros print it: its opening, a part per
        line of text (title: the line), its end. Texts escaped in one pass."""
        boxes = self.boxes
        ids = escaped([b.id for b in boxes])
        members = escaped([b.members for b in boxes])
        lines = escaped([line for b in boxes for line in b.lines])
        parts: list[NodePart] = []
        at = 0
        for b, title, desc in zip(boxes, ids, members, strict=True):
            parts.append(NodePart("open", b.font != 11, bool(desc), b.font, title, desc, b.x, b.y, b.w, b.h, b.fill,
                                  b.stroke))
            for k, y in enumerate(b.baselines):
                parts.append(NodePart("line", False, b.bold and k == 0, b.font, lines[at + k], "", b.cx, y))
            at += len(b.baselines)
            parts.append(_CLOSE)
        return parts

    def dot(self) -> str:
        self.width, self.height = px(self.width), px(self.height)
        # Graphviz's y grows upward, its node sizes are inches
        boxes = self.boxes
        nodes = list(map(Node._make, zip(quoted([b.id for b in boxes]),
                                         [t.replace("\n", "\\n") for t in quoted(["\n".join(b.lines) for b in boxes])],
                                         [b.cx for b in boxes], [px(self.height - b.cy) for b in boxes],
                                         [round(b.w / 72, 3) for b in boxes], [round(b.h / 72, 3) for b in boxes],
                                         [b.fill for b in boxes], [b.stroke for b in boxes], strict=True)))
        edges = self.edges
        columns = {"a_dot": quoted([e.a for e in edges]), "b_dot": quoted([e.b for e in edges]),
                   "labelled": [bool(e.label) for e in edges]}
        return render_template("diagrams/drawing.dot.j2", d=self, nodes=nodes, edge_columns=columns)


# What the templates' edge macros print beside an edge's fields (templates.rows): title and
# label escaped for SVG (as Jinja's |e), both ends quoted for DOT (as q()), whether it is an
# arc and whether it has a label. Escaped in one pass over the joined texts: a call per
# text (markupsafe's escape, q) was a fifth of a scope diagram's cost.
_SEP = "\x00"  # in no device name; a text holding it is escaped one by one


def escaped(texts: list[str]) -> list[str]:
    """Each text as markupsafe's escape (Jinja's |e) spells it."""
    joined = _SEP.join(texts)
    if joined.count(_SEP) != len(texts) - 1:
        return [str(escape(t)) for t in texts]
    return str(escape(joined)).split(_SEP) if texts else []


def quoted(texts: list[str]) -> list[str]:
    """Each text as q() spells it."""
    return ['"' + t + '"' for t in quoted_bodies(texts)]


def quoted_bodies(texts: list[str]) -> list[str]:
    """Each text as q() spells it, without the quotes around it."""
    joined = _SEP.join(texts)
    if not texts or joined.count(_SEP) != len(texts) - 1:
        return [q(t)[1:-1] for t in texts]
    return joined.replace("\\", "\\\\").replace('"', '\\"').split(_SEP)


def q(text: str) -> str:
    """A DOT quoted string (interop.py's PTM/Air files; the diagram template spells the same)."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'
