"""The one Jinja2 environment. Vendor and tool syntax lives in templates/<consumer>/ at
the repository root; Python hands templates a structured config and they only spell it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import jinja2
from jinja2.runtime import Macro

from ..plan.columns import Piece

# compiler/templates links to the repository's templates/; a wheel carries a copy.
TEMPLATE_DIR = Path(__file__).parents[1] / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATE_DIR)),
        undefined=jinja2.StrictUndefined,  # a missing key is our bug: fail, never print ""
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.globals["rows"] = rows
    env.globals["same"] = same
    return env


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


def format_segments(fmt: str) -> list[str]:
    """A row's %-format as the texts around its values (one more than the values; `%%` read
    as `%`): a value is `%s`, or `%.0s` where an absent value prints nothing, so every row's
    pieces line up."""
    texts, text, at = [], [], 0
    for m in re.finditer(r"%%|%s|%\.0s", fmt):
        text.append(fmt[at:m.start()])
        if m.group() == "%%":
            text.append("%")
        else:
            texts.append("".join(text))
            text = []
        at = m.end()
    texts.append("".join(text) + fmt[at:])
    return texts


def row_pieces(template: str, macro: str, columns: list[Piece | tuple[Piece, ...]]) -> list[Piece]:
    """One row of a big table as macro `macro` of `template` spells it (row_format), as the
    pieces plan/columns.py text_chunks joins: the macro's text between its arguments, and
    per argument its column (one value per row, escaped for the file's syntax first), a
    str every row shares, or a tuple of pieces that together make the value."""
    texts = format_segments(row_format(template, macro, len(columns)))
    pieces: list[Piece] = [texts[0]]
    for column, after in zip(columns, texts[1:], strict=True):
        pieces += [*(column if isinstance(column, tuple) else (column,)), after]
    return [p for p in pieces if not isinstance(p, str) or p]
# A field's place while a row macro renders once: characters that escaping, quoting and case
# filters all change, so a macro that filters a field is caught, not filled with the raw value.
_ROW_MARK = "\x00\\\"'&<aZ{}\x00"
# (macro code, row fields, constants) -> (%-format, getter of a row's values in the format's order)
_ROW_SPECS: dict[tuple, tuple[str, Callable[[tuple], tuple]]] = {}


def rows(items: Sequence[tuple], macros: Macro | Mapping[Any, Macro], by: str | tuple[str, ...] | None = None,
         sep: str = "", columns: Mapping[str, Sequence] | None = None, **consts: Any) -> str:
    """Template global: the rows of a per-port (per-neighbor) table, each as a macro of the
    calling template spells it, joined by `sep`. `items` are NamedTuples (Interface); each
    macro argument is either a field of theirs, filled per row, or one of `consts`, the same
    for every row. The macro renders once per (macro, constants) with a marker per field
    and each row is then filled in at %-format speed: a Jinja loop spends a lookup and a
    yield per field of every port, which at 655,360 switch ports is most of the switch
    configs' time. So the syntax stays in the template while Python only fills it in.
    With `by` (a field name, or a tuple of them), `macros` maps that field's values (tuples
    of values) to macros: a row whose value has no macro is left out. `columns`: more fields by name, one value per item (a
    NOS's own per-port figures beside the Interface). A macro may use its arguments only as they are
    (no filters or arithmetic on a field: put the figure in the row) and read no template
    variable (pass it in `consts`): both raise here instead of writing one switch's value
    into every switch's file."""
    if not items:
        return ""
    fields = type(items[0])._fields  # type: ignore[attr-defined]
    if columns:
        if any(len(c) != len(items) for c in columns.values()):
            raise ValueError(f"rows(): columns {', '.join(columns)} need one value per row ({len(items)})")
        fields = (*fields, *columns)
        items = list(map(tuple.__add__, items, zip(*columns.values(), strict=True)))
    # a list constant (the lossless queues) keys the cache as a tuple
    const_key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in consts.items())) if consts else ()
    if by is None:
        assert isinstance(macros, Macro)
        return _joined(_row_spec(macros, fields, consts, const_key), items, sep)
    assert isinstance(macros, Mapping)
    key = _by_key(fields, by)
    tail = sep.replace("%", "%%")
    specs: dict[Any, tuple[str, Callable[[tuple], tuple]] | None] = {}
    formats: list[str] = []
    values: list[Iterable[tuple]] = []
    # runs of rows with one value of `by` (a switch's server ports, then its uplinks, or a
    # diagram's box: its opening, its lines, its end): every run's rows go into one
    # %-format, filled once (a format per run cost a call and a parse per run, and a box
    # is three runs)
    for value, run in groupby(items, key):
        if value not in specs:
            macro = macros.get(value)
            specs[value] = _row_spec(macro, fields, consts, const_key) if macro is not None else None
        spec = specs[value]
        if spec is not None:
            run_items = list(run)
            formats.append((spec[0] + tail) * len(run_items))
            values.append(map(spec[1], run_items))
    if not formats:
        return ""
    text = "".join(formats) % tuple(chain.from_iterable(chain.from_iterable(values)))
    return text[:-len(sep)] if sep else text


@functools.cache
def _by_key(fields: tuple[str, ...], by: str | tuple[str, ...]) -> Callable[[tuple], Any]:
    """A row's value of `by`: a tuple of values for several fields (made once per table shape,
    not per switch)."""
    names = (by,) if isinstance(by, str) else by
    return itemgetter(*[fields.index(b) for b in names])


def _joined(spec: tuple[str, Callable[[tuple], tuple]], items: Sequence[tuple], sep: str) -> str:
    """The rows filled in and joined by `sep`: one %-format of the row's format repeated per
    row over every row's values at once (no string per row to join afterwards: 10% quicker
    at a switch's 128 ports)."""
    fmt, get = spec
    if not items:
        return ""
    if sep:
        fmt += sep.replace("%", "%%")
    text = (fmt * len(items)) % tuple(chain.from_iterable(map(get, items)))
    return text[:-len(sep)] if sep else text


def _row_spec(macro: Macro, fields: tuple[str, ...], consts: Mapping[str, Any],
              const_key: tuple) -> tuple[str, Callable[[tuple], tuple]]:
    code = macro._func.__code__
    key = (code, fields, const_key)
    spec = _ROW_SPECS.get(key)
    if spec is not None:
        return spec
    where = f"macro {macro.name}()"
    _reads_only_arguments(macro)
    args: list[Any] = []
    marks: dict[str, int] = {}
    for name in macro.arguments:
        if name in consts:
            args.append(consts[name])
        elif name in fields:
            marks[_ROW_MARK.format(len(marks))] = fields.index(name)
            args.append(list(marks)[-1])
        else:
            raise ValueError(f"{where}: argument {name} is neither a row field ({', '.join(fields)}) nor given")
    text = str(macro(*args)).replace("%", "%%")
    order = []  # per %s of the format, the row field it takes
    parts = []
    pos = 0
    while (start := text.find("\x00", pos)) != -1:
        end = text.find("\x00", start + 1) + 1
        mark = text[start:end]
        if mark not in marks:
            raise ValueError(f"{where} changes an argument it prints (filter or arithmetic on a row field)")
        parts += [text[pos:start], "%s"]
        order.append(marks[mark])
        pos = end
    parts.append(text[pos:])
    if set(order) != set(marks.values()):
        raise ValueError(f"{where} prints every row field it takes")
    get: Callable[[tuple], tuple]
    if len(order) > 1:
        get = itemgetter(*order)
    else:  # itemgetter of one index returns the value itself, not a 1-tuple
        get = (lambda r: (r[order[0]],)) if order else (lambda r: ())
    spec = _ROW_SPECS[key] = ("".join(parts), get)
    return spec


def _reads_only_arguments(macro: Macro) -> None:
    """A macro whose text is kept and reused must depend on its arguments alone."""
    outer = [v[2:].split("_", 1)[-1] for v in macro._func.__code__.co_freevars if v.startswith("l_")]
    if outer:
        raise ValueError(f"macro {macro.name}() reads template variable(s) {', '.join(outer)}: pass them as arguments")


_SAME: dict[tuple, str] = {}


def same(macro: Macro, *args: Any) -> str:
    """Template global: macro(*args), rendered once per process for these arguments and reused
    (a block that is the same on thousands of switches, such as SONiC's 64-entry DSCP map, costs
    a Jinja loop per switch otherwise). The macro may read nothing but its arguments."""
    key = (macro._func.__code__, tuple(tuple(a) if isinstance(a, list) else a for a in args))
    text = _SAME.get(key)
    if text is None:
        _reads_only_arguments(macro)
        text = _SAME[key] = str(macro(*args))
    return text
