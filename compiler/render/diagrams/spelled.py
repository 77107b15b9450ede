"""Drawings of one shape spelled once: the SVG and DOT of a scope diagram as a %-format
with a place for each text (names, titles, labels), filled per drawing.

A fabric's scope diagrams (one per scalable unit, pod or run of leaves) mostly share one
shape: the same boxes, coordinates, colours and lines, other names. Spelling each through
the templates cost about a millisecond per diagram, most of the diagrams' time beside the
layout; here a shape is spelled once with a mark in place of every text, the marks found
in the result (in the form the templates and drawing.py escaped them to: as they are,
escaped for SVG, quoted for DOT) become the format's places, and each drawing of that
shape only escapes its own texts into them.

A shape is everything of the drawing but its texts (every number, colour, flag, count of
lines, and whether a box has members or an edge a label, since those choose the markup).
The first drawing of each shape is also spelled the ordinary way and compared with the
filled format: a shape whose format does not give the same bytes is never filled.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from operator import itemgetter

from .drawing import Drawing, escaped, quoted_bodies

# A text's place while a shape is spelled: characters that SVG escaping, DOT quoting and
# case filters all change, so the form a place took says which of them the text needs.
_SAMPLE = "\\\"'&<aZ"
_MARK = "\x00" + _SAMPLE + "{}\x00"
_FOUND = re.compile("\x00(.*?)aZ([0-9]+)\x00", re.DOTALL)


# a format and the getter of its places' values from _pool(texts)
Format = tuple[str, Callable[[list[str]], tuple]]
# shape -> (svg format, dot format), or None: a shape whose format did not spell its first
# drawing exactly. A few shapes per fabric; cleared past 64 as the edge geometry's table.
_SPELLED: dict[tuple, tuple[Format, Format] | None] = {}


def svg_and_dot(d: Drawing) -> tuple[str, str]:
    """d.svg(), d.dot(): filled in from the format of d's shape where one was made."""
    shape, texts = _shape(d)
    if "\n" in "".join(texts):  # a DOT label turns a line's newline into \n, other places keep it: not one form
        return d.svg(), d.dot()
    if shape in _SPELLED:
        formats = _SPELLED[shape]
        if formats is not None:
            pool = _pool(texts)
            return _filled(formats[0], pool), _filled(formats[1], pool)
        return d.svg(), d.dot()
    svg, dot = d.svg(), d.dot()
    made = _formats(d, len(texts))
    if len(_SPELLED) >= 64:
        _SPELLED.clear()
    pool = _pool(texts)
    ok = made is not None and _filled(made[0], pool) == svg and _filled(made[1], pool) == dot
    _SPELLED[shape] = made if ok else None
    return svg, dot


_EDGE_SHAPE = itemgetter(2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15)  # an Edge's fields but a, b, title, label
_EDGE_ENDS = itemgetter(0, 1, 9)  # a, b, title


def _shape(d: Drawing) -> tuple[tuple, list[str]]:
    """What the drawing's markup depends on beside its texts, and its texts in a fixed order
    (_marked puts its marks in the same order): the drawing's name and title; per box its
    id, lines and title; the members of boxes that have them; per edge its ends and title;
    the labels of edges that have them; the texts; the legend's texts."""
    boxes, edges = d.boxes, d.edges
    texts: list[str] = [d.name, d.title]
    for b in boxes:
        texts.append(b.id)
        texts += b.lines
        texts.append(b.title)
    texts += [b.members for b in boxes if b.members]
    texts += [x for e in map(_EDGE_ENDS, edges) for x in e]
    labels = [e.label for e in edges]
    texts += [label for label in labels if label]
    texts += [t.text for t in d.texts]
    texts += [s.text for s in d.legend]
    shape = (d.width, d.height,
             tuple([(b.x, b.y, b.w, b.h, len(b.lines), b.fill, b.stroke, bool(b.members), b.bold, b.font, b.cx, b.cy,
                     b.baselines) for b in boxes]),
             tuple(map(_EDGE_SHAPE, edges)), tuple(map(bool, labels)),
             tuple([(t.x, t.y, t.size, t.anchor, t.bold, t.colour) for t in d.texts]),
             tuple([(s.x, s.y, s.colour) for s in d.legend]), tuple([(p.x, p.y, p.w, p.h, p.fill) for p in d.panels]))
    return shape, texts


def _marked(d: Drawing) -> Drawing:
    """A copy of d with a mark in place of every text _shape lists, in its order."""
    count = 0

    def mark() -> str:
        nonlocal count
        count += 1
        return _MARK.format(count - 1)

    out = copy.copy(d)
    out.name, out.title = mark(), mark()
    out.boxes = []
    for b in d.boxes:
        c = copy.copy(b)
        c.id = mark()
        c.lines = tuple(mark() for _ in b.lines)
        c.title = mark()
        out.boxes.append(c)
    for c in out.boxes:
        if c.members:
            c.members = mark()
    ends = [(mark(), mark(), mark()) for _ in d.edges]
    labels = [mark() if e.label else "" for e in d.edges]
    out.edges = [e._replace(a=a, b=b, title=title, label=label)
                 for e, (a, b, title), label in zip(d.edges, ends, labels, strict=True)]
    out.texts = []
    for t in d.texts:
        text = copy.copy(t)
        text.text = mark()
        out.texts.append(text)
    out.legend = []
    for s in d.legend:
        swatch = copy.copy(s)
        swatch.text = mark()
        out.legend.append(swatch)
    out.panels = list(d.panels)
    return out


def _formats(d: Drawing, n: int) -> tuple[Format, Format] | None:
    marked = _marked(d)
    svg, dot = _format(marked.svg(), n), _format(marked.dot(), n)
    return (svg, dot) if svg is not None and dot is not None else None


def _format(text: str, n: int) -> Format | None:
    """The spelled text as a %-format and the getter of its values from the pool of a
    drawing's n texts in each form; None where a mark came out in a form not known here
    (a filter this module does not spell)."""
    parts: list[str] = []
    places: list[int] = []
    at = 0
    for m in _FOUND.finditer(text):
        form = _FORMS.get(m.group(1))
        if form is None:
            return None
        parts += [text[at:m.start()].replace("%", "%%"), "%s"]
        places.append(form * n + int(m.group(2)))
        at = m.end()
    parts.append(text[at:].replace("%", "%%"))
    fmt = "".join(parts)
    if "\x00" in fmt:
        return None
    if len(places) == 1:
        return fmt, lambda pool: (pool[places[0]],)
    return fmt, (itemgetter(*places) if places else lambda pool: ())


def _pool(texts: list[str]) -> list[str]:
    """The texts as they are, escaped for SVG, quoted for DOT (without the quotes): each
    form in one pass over them all (drawing.escaped, drawing.quoted)."""
    return texts + escaped(texts) + quoted_bodies(texts)


# the forms a text is printed in (as is, SVG-escaped, DOT-quoted), by their third of _pool:
# the sample's form, without its last two characters (the 'aZ' a place's number follows)
_FORMS: dict[str, int] = {text[:-2]: k for k, text in enumerate(_pool([_SAMPLE]))}


def _filled(fmt: Format, pool: list[str]) -> str:
    pattern, values = fmt
    return pattern % values(pool)
