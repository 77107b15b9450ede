"""The one Jinja2 environment. Vendor and tool syntax lives in templates/<consumer>/ at
the repository root; Python hands templates a structured config and they only spell it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from itertools import accumulate, chain, compress, groupby
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
    marks = row_marks(arity)
    text = str(getattr(environment().get_template(template).module, macro)(*marks))
    return marked_format(text, marks, f"{template} {macro}()")


def row_marks(arity: int) -> list[str]:
    """A placeholder per argument, for a row macro rendered once (row_format, marked_format)."""
    return [_MARK.format(i) for i in range(arity)]


def marked_format(text: str, marks: list[str], where: str) -> str:
    """The %-format of a macro's text rendered with `marks` (row_marks) in place of its
    values: each mark must be there exactly once, in order."""
    at = [text.find(m) for m in marks]
    if any(text.count(m) != 1 for m in marks) or at != sorted(at):
        raise ValueError(f"{where}: every argument once, in order")
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
    pieces plan/columns.py text_chunks joins (format_pieces)."""
    return format_pieces(row_format(template, macro, len(columns)), columns)


def format_pieces(fmt: str, columns: list[Piece | tuple[Piece, ...]]) -> list[Piece]:
    """A row's %-format (one %s per column) as the pieces text_chunks joins: the format's
    text between its values, and per value its column (one value per row, escaped for the
    file's syntax first), a str every row shares, or a tuple of pieces that together make
    the value."""
    texts = format_segments(fmt)
    pieces: list[Piece] = [texts[0]]
    for column, after in zip(columns, texts[1:], strict=True):
        pieces += [*(column if isinstance(column, tuple) else (column,)), after]
    return [p for p in pieces if not isinstance(p, str) or p]


# A field's place while a row macro renders once: characters that escaping, quoting and case
# filters all change, so a macro that filters a field is caught, not filled with the raw value.
_ROW_MARK = "\x00\\\"'&<aZ{}\x00"
# (macro code, row fields, constants) -> (%-format, getter of a row's values in the format's order, that order)
_ROW_SPECS: dict[tuple, tuple[str, Callable[[tuple], tuple], tuple[int, ...]]] = {}


class ColumnTable:
    """Records of one NamedTuple type (`kind`) held as columns, one list per field: a table of
    every switch port, of which each switch reads its rows (`rows(lo, hi)`). rows() fills a
    macro from the columns' slices, so no record is made per row unless a template iterates."""

    def __init__(self, kind: type, columns: Sequence[list | Callable[[], list] | None],
                 source: tuple[ColumnTable, list[bool]] | None = None):
        fields = kind._fields  # type: ignore[attr-defined]
        if len(columns) != len(fields) or len({len(c) for c in columns if isinstance(c, list)}) > 1:
            raise ValueError(f"ColumnTable: one column of equal length per field of {kind.__name__}")
        self.kind, self._source = kind, source
        self._columns: list[list | Callable[[], list] | None] = list(columns)
        self._where: dict[tuple[str, Any], tuple[ColumnTable, list[int]]] = {}

    def column(self, j: int) -> list:
        """Field j's column. A column given as a function is made on first use (a field few
        NOSes print costs nothing where none does); in a filtered table (where()) it is
        picked from its source's on first use."""
        column = self._columns[j]
        if isinstance(column, list):
            return column
        if column is None:
            assert self._source is not None
            source, keep = self._source
            made = list(compress(source.column(j), keep))
        else:
            made = column()
        if self._columns and isinstance(self._columns[0], list) and len(made) != len(self._columns[0]):
            raise ValueError(f"ColumnTable: column {self.kind._fields[j]} has {len(made)} rows, not {len(self._columns[0])}")  # type: ignore[attr-defined]
        self._columns[j] = made
        return made

    def rows(self, lo: int, hi: int) -> ColumnRows:
        return ColumnRows(self, lo, hi)

    def where(self, field: str, value: Any) -> tuple[ColumnTable, list[int]]:
        """The table of the rows whose `field` is `value` (made once; each of its columns when
        first read), and per row of this table how many of the rows before it are kept (its
        place in that table)."""
        found = self._where.get((field, value))
        if found is None:
            keep = list(map(value.__eq__, self.column(self.kind._fields.index(field))))  # type: ignore[attr-defined]
            found = self._where[(field, value)] = (ColumnTable(self.kind, [None] * len(self._columns), (self, keep)),
                                                   list(accumulate(keep, initial=0)))
        return found


class ColumnRows(Sequence):
    """Rows [lo, hi) of a ColumnTable: iterating or indexing gives its records (made on first
    use); rows() reads the columns instead."""

    __slots__ = ("table", "lo", "hi", "_records")

    def __init__(self, table: ColumnTable, lo: int, hi: int):
        self.table, self.lo, self.hi = table, lo, hi
        self._records: list | None = None

    def __len__(self) -> int:
        return self.hi - self.lo

    def column(self, j: int) -> list:
        return self.table.column(j)[self.lo:self.hi]

    def records(self) -> list:
        if self._records is None:
            make = partial(tuple.__new__, self.table.kind)
            width = len(self.table.kind._fields)  # type: ignore[attr-defined]
            self._records = list(map(make, zip(*(self.column(j) for j in range(width)), strict=True)))
        return self._records

    def __iter__(self) -> Iterator:
        return iter(self.records())

    def __getitem__(self, i: int | slice) -> Any:
        return self.records()[i]

    def where(self, field: str, value: Any) -> ColumnRows:
        """These rows whose `field` is `value`, as rows of the table's filtered table."""
        table, before = self.table.where(field, value)
        return ColumnRows(table, before[self.lo], before[self.hi])

    def __repr__(self) -> str:
        return f"ColumnRows({self.table.kind.__name__}, {self.lo}:{self.hi})"


def rows(items: Sequence[tuple], macros: Macro | Mapping[Any, Macro], by: str | tuple[str, ...] | None = None,
         sep: str = "", columns: Mapping[str, Sequence] | None = None, **consts: Any) -> str:
    """Template global: the rows of a per-port (per-neighbor) table, each as a macro of the
    calling template spells it, joined by `sep`. `items` are NamedTuples (Interface), or a
    ColumnRows of them; each
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
    if columns and any(len(c) != len(items) for c in columns.values()):
        raise ValueError(f"rows(): columns {', '.join(columns)} need one value per row ({len(items)})")
    # a list constant (the lossless queues) keys the cache as a tuple
    const_key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in consts.items())) if consts else ()
    if isinstance(items, ColumnRows):
        return _rows_of_columns(items, macros, by, sep, columns, consts, const_key)
    fields = type(items[0])._fields  # type: ignore[attr-defined]
    if columns:
        fields = (*fields, *columns)
        items = list(map(tuple.__add__, items, zip(*columns.values(), strict=True)))
    if by is None:
        assert isinstance(macros, Macro)
        fmt, get, _ = _row_spec(macros, fields, consts, const_key)  # each row's values read by the spec's getter
        return _fill(fmt, sep, len(items), tuple(chain.from_iterable(map(get, items))))
    assert isinstance(macros, Mapping)
    key = _by_key(fields, by)
    tail = sep.replace("%", "%%")
    specs: dict[Any, tuple[str, Callable[[tuple], tuple], tuple[int, ...]] | None] = {}
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


def _rows_of_columns(items: ColumnRows, macros: Macro | Mapping[Any, Macro], by: str | tuple[str, ...] | None,
                     sep: str, columns: Mapping[str, Sequence] | None, consts: Mapping[str, Any],
                     const_key: tuple) -> str:
    """rows() of a ColumnRows: each run filled from slices of the columns its macro prints,
    zipped (no record per row, no getter per row)."""
    base = items.table.kind._fields  # type: ignore[attr-defined]
    fields = (*base, *columns) if columns else base
    extra = list(columns.values()) if columns else []
    sliced: dict[int, Sequence] = {}

    def column(j: int) -> Sequence:
        if j not in sliced:
            sliced[j] = items.column(j) if j < len(base) else extra[j - len(base)]
        return sliced[j]

    def filled(macro: Macro, lo: int, hi: int) -> str:
        fmt, _, order = _row_spec(macro, fields, consts, const_key)
        whole = lo == 0 and hi == len(items)
        values = [column(j) if whole else column(j)[lo:hi] for j in order]
        return _fill(fmt, sep, hi - lo, tuple(chain.from_iterable(zip(*values, strict=True))) if values else ())

    if by is None:
        assert isinstance(macros, Macro)
        return filled(macros, 0, len(items))
    assert isinstance(macros, Mapping)
    names = (by,) if isinstance(by, str) else by
    keys = [column(fields.index(b)) for b in names]
    if len(keys) == 1 and keys[0].count(keys[0][0]) == len(items):  # one run (every port numbered, say)
        macro = macros.get(keys[0][0])
        return filled(macro, 0, len(items)) if macro is not None else ""
    out: list[str] = []
    at = 0
    for value, run in groupby(keys[0] if len(keys) == 1 else zip(*keys, strict=True)):
        n = len(list(run))
        macro = macros.get(value)
        if macro is not None:
            out.append(filled(macro, at, at + n))
        at += n
    return sep.join(out)


@functools.cache
def _by_key(fields: tuple[str, ...], by: str | tuple[str, ...]) -> Callable[[tuple], Any]:
    """A row's value of `by`: a tuple of values for several fields (made once per table shape,
    not per switch)."""
    names = (by,) if isinstance(by, str) else by
    return itemgetter(*[fields.index(b) for b in names])


def _fill(fmt: str, sep: str, n: int, values: tuple) -> str:
    """n rows of `fmt` filled with `values` (every row's, in order) and joined by `sep`: one
    %-format of the row's format repeated per row (no string per row to join afterwards: 10%
    quicker at a switch's 128 ports)."""
    if not n:
        return ""
    if sep:
        fmt += sep.replace("%", "%%")
    text = (fmt * n) % values
    return text[:-len(sep)] if sep else text


def _row_spec(macro: Macro, fields: tuple[str, ...], consts: Mapping[str, Any],
              const_key: tuple) -> tuple[str, Callable[[tuple], tuple], tuple[int, ...]]:
    """(%-format of the macro's row, getter of a row's values in the format's order, and
    that order as field indexes)."""
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
    spec = _ROW_SPECS[key] = ("".join(parts), get, tuple(order))
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
