"""The one Jinja2 environment. Vendor and tool syntax lives in templates/<consumer>/ at
the repository root; Python hands templates a structured config and they only spell it."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import jinja2

from ..plan.columns import Piece

# compiler/templates links to the repository's templates/; a wheel carries a copy.
TEMPLATE_DIR = Path(__file__).parents[1] / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,  # a missing key is our bug: fail, never print ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render_template(template: str, /, **context) -> str:
    return environment().get_template(template).render(**context)


def stream_template(template: str, /, **context):
    """The rendered text in pieces, for files too large to hold as one string (graph.graphml)."""
    stream = environment().get_template(template).stream(**context)
    stream.enable_buffering(64)  # join 64 small pieces per write
    return stream


_MARK = "\x00{}\x00"  # an argument's place while a row macro renders once


@functools.cache
def row_format(template: str, macro: str, arity: int) -> str:
    """The %-format of one row of a big table, as macro `macro` of `template` spells it:
    the macro renders once with a placeholder per argument, and each row is then filled
    in at %-format speed (a Jinja call per row costs microseconds, at a million rows
    seconds). The macro must use every argument exactly once, in order; values go in as
    they are, so escape them for the file's syntax first (csv_field, diagrams.q)."""
    marks = [_MARK.format(i) for i in range(arity)]
    text = str(getattr(environment().get_template(template).module, macro)(*marks))
    where = [text.find(m) for m in marks]
    if any(text.count(m) != 1 for m in marks) or where != sorted(where):
        raise ValueError(f"{template} {macro}(): every argument once, in order")
    text = text.replace("%", "%%")
    for m in marks:
        text = text.replace(m, "%s")
    return text


def row_pieces(template: str, macro: str, columns: list[Piece | tuple[Piece, ...]]) -> list[Piece]:
    """One row of a big table as macro `macro` of `template` spells it (row_format), as the
    pieces plan/columns.py text_chunks joins: the macro's text between its arguments, and
    per argument its column (one value per row, escaped for the file's syntax first), a
    str every row shares, or a tuple of pieces that together make the value."""
    fmt = row_format(template, macro, len(columns))
    texts, text, at = [], [], 0
    for m in re.finditer("%%|%s", fmt):
        text.append(fmt[at:m.start()])
        if m.group() == "%%":
            text.append("%")
        else:
            texts.append("".join(text))
            text = []
        at = m.end()
    text.append(fmt[at:])
    pieces: list[Piece] = [texts[0]]
    for column, after in zip(columns, texts[1:] + ["".join(text)], strict=True):
        pieces += [*(column if isinstance(column, tuple) else (column,)), after]
    return [p for p in pieces if not isinstance(p, str) or p]
