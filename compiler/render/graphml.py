"""graph.graphml: the plan as a GraphML graph (a node per device, an edge per link, edge
id = cable id) for networkx (`read_graphml`), Gephi and yEd, with the attributes of
`compiler.build(...).to_networkx()` (compiler/plan/multigraph.py).

The XML is spelled in templates/graphml/. A Jinja loop over every edge and attribute
took 14 us per link (0.69 s for 49k links); instead each element *shape* (which
attributes are present) is rendered once by the template's macro, with markers for the
values, and becomes a %-format that every element of that shape fills in (0.29 s for
49k links; 131,072 GPUs, 393k links: 3.6 s wall on a loaded 2-core machine, 197 MB).
Values are escaped here with markupsafe, the function behind the template's `|e`.
Absent attributes consume their argument through `%.0s`, which prints nothing, so every
row passes its full tuple. The file streams out: it is hundreds of MB at 100k+ GPUs.
Link columns drawn from few values (kinds, device and port names, the cable id's two
pieces) come as a table and per link an index (multigraph.link_pieces): escaped and
spelled once per table value, with no Python value made per link and field (user CPU at
524,288 GPUs, 1.6M links: 1.28 s -> 0.73 s).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from markupsafe import escape

from ..check import CheckResults
from ..plan.columns import Coded, Piece, distinct, text_chunks
from ..plan.model import Plan
from ..plan.multigraph import DEVICE_ATTRIBUTES, LINK_ATTRIBUTES, LinkColumn, device_columns, link_pieces
from .templates import environment, format_segments, stream_template
from .writer import OutputDir

# Rows per piece of the file: an edge is ~500 bytes, so 2,048 edges are ~1 MB, which stays in
# cache from join through encode to write; 8,192 edges (4 MB pieces) cost twice the system
# time writing 790 MB at 524,288 GPUs (0.55 s against 0.26 s, user time no worse).
_CHUNK_ROWS = 1 << 11
_MARK = "\x00{}\x00"  # a value's place while a shape renders (values themselves go in through %)


def _escaped(column: list) -> tuple[list, set | None]:
    """Strings escaped for XML (each distinct value once); numbers and None as they are.
    Most columns (names, kinds, numbers) hold nothing to escape: then the column itself.
    Also the column's distinct values where it is not all text (None: every value a str)."""
    try:
        joined = "".join(column)  # a column of text: one scan at C speed, no set of its values
        distinct = None
    except TypeError:  # numbers or None among them: their distinct values (C speed; all hashable)
        distinct = set(column)
        joined = "".join(v for v in distinct if isinstance(v, str))
    if not any(c in joined for c in "&<>'\""):  # nothing XML escaping replaces: one scan at C speed
        return column, distinct
    changed = {}
    for v in set(column) if distinct is None else distinct:
        if isinstance(v, str):
            e = str(escape(v))
            if e != v:
                changed[v] = e
    if not changed:
        return column, distinct
    get = changed.get
    escaped = [get(v, v) if isinstance(v, str) else v for v in column]
    return escaped, None if distinct is None else set(escaped)


def _format(macro, fixed: int, names: list[str], present: tuple[bool, ...]) -> str:
    """The %-format of one shape: `fixed` leading values (id, ends) always present, then
    `names` where `present` says so."""
    marks = [_MARK.format(i) for i in range(fixed + len(names))]
    data = [(n, marks[fixed + i]) for i, (n, p) in enumerate(zip(names, present, strict=True)) if p]
    text = macro(*marks[:fixed], data).replace("%", "%%")
    flags = (True,) * fixed + present
    for i, mark in enumerate(marks):
        if flags[i]:
            # this value, then every absent value up to the next present one (they print nothing)
            skipped = 0
            while i + 1 + skipped < len(flags) and not flags[i + 1 + skipped]:
                skipped += 1
            text = text.replace(mark, "%s" + "%.0s" * skipped)
    return text


def _segments(fmt: str, values: int) -> list[str]:
    """A shape's %-format (_format) as the `values + 1` texts around its values."""
    texts = format_segments(fmt)
    assert len(texts) == values + 1, "every value has exactly one place in the format"
    return texts


def _as_text(column: list, distinct: set | None) -> list[str] | str:
    """Values as %s prints them, None (an absent attribute) as nothing; a column of one value
    as that value. `distinct`: the column's distinct values, None where every value is a str."""
    if distinct is None:  # all str (names, ports, ids): the column as it is, unless one value fills it
        if column and column[-1] == column[0] and column.count(column[0]) == len(column):
            return column[0]
        return column
    if len(distinct) == 1:  # one value in every row (a fabric, a medium): a constant piece
        return "" if column[0] is None else str(column[0])
    spelled = {v: "" if v is None else str(v) for v in distinct}
    return list(map(spelled.__getitem__, column))


def _column(column: LinkColumn, rows: int) -> tuple[list[Piece], int, Callable[[], np.ndarray]]:
    """A column as pieces of escaped text (None as nothing), how many rows lack it, and a
    function giving per row whether it has it (asked only where some rows do and some do
    not). A Coded column is escaped and spelled in its table, once per value."""
    if isinstance(column, tuple):  # pieces laid end to end (a cable id), in every row
        return [_coded_text(c) for c in column], 0, lambda: np.ones(rows, dtype=bool)
    if isinstance(column, Coded):
        has = np.array([v is not None for v in column.table.tolist()], dtype=bool)
        absent = 0 if has.all() else rows - int(np.count_nonzero(has[column.codes]))
        return [_coded_text(column)], absent, lambda: has[column.codes]
    escaped, values = _escaped(column)
    # a column of text holds no None; another counts them only where it has one (C speed)
    absent = 0 if values is None or None not in values else escaped.count(None)
    return [_as_text(escaped, values)], absent, lambda: np.array([v is not None for v in escaped], dtype=bool)


def _coded_text(column: Coded) -> Piece:
    """A Coded column with its table escaped and spelled as %s prints it (None as nothing)."""
    text = _as_text(*_escaped(column.table.tolist()))
    return text if isinstance(text, str) else Coded(np.array(text, dtype=object), column.codes)


def _rows(column: LinkColumn) -> int:
    return len(column[0]) if isinstance(column, tuple) else len(column)


def _elements(macro, fixed_columns: Sequence[LinkColumn], names: list[str], columns: Mapping[str, LinkColumn]) -> tuple[list[Piece], int]:
    """Every row's XML element, in row order, as pieces for plan/columns.py text_chunks, and
    the number of rows. A row's shape is which attributes it has; only the columns that are
    None in some rows and not in others make rows' shapes differ: a text between two
    values that differs by shape is a column of its own, indexed by each row's shape."""
    all_columns = [*fixed_columns, *(columns[n] for n in names)]
    n_rows = _rows(all_columns[0]) if all_columns else 0
    if not n_rows:
        return [], 0
    prepared = [_column(c, n_rows) for c in all_columns]
    fixed = len(fixed_columns)
    absent = [a for _, a, _ in prepared[fixed:]]
    base = tuple(a < n_rows for a in absent)  # present in every row, or (if absent from all) in none
    mixed = [i for i, a in enumerate(absent) if 0 < a < n_rows]
    shape_of_row = np.zeros(n_rows, dtype=np.int64)
    for bit, i in enumerate(mixed):
        shape_of_row |= prepared[fixed + i][2]().astype(np.int64) << bit
    shapes = distinct(shape_of_row)
    texts = []
    for key in shapes.tolist():
        shape = list(base)
        for bit, i in enumerate(mixed):
            shape[i] = bool(key >> bit & 1)
        texts.append(_segments(_format(macro, fixed, names, tuple(shape)), len(prepared)))
    which = np.searchsorted(shapes, shape_of_row)
    pieces: list[Piece] = []
    for j in range(len(prepared) + 1):
        options = [t[j] for t in texts]
        pieces.append(options[0] if len(set(options)) == 1 else np.array(options, dtype=object)[which])
        if j < len(prepared):
            pieces.extend([""] if j >= fixed and absent[j - fixed] == n_rows else prepared[j][0])
    return [p for p in pieces if not isinstance(p, str) or p], n_rows


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    macros: Any = environment().get_template("graphml/elements.j2").module  # its macros are attributes made at run time
    dcols, lcols = device_columns(plan), link_pieces(plan)
    nodes = text_chunks(*_elements(macros.node, [dcols["name"]], list(DEVICE_ATTRIBUTES), dcols), _CHUNK_ROWS)
    edges = text_chunks(*_elements(macros.edge, [lcols["cable"], lcols["a_device"], lcols["b_device"]], list(LINK_ATTRIBUTES), lcols), _CHUNK_ROWS)
    stream = stream_template("graphml/graph.graphml.j2", name=plan.name, node_keys=list(DEVICE_ATTRIBUTES.items()),
                             edge_keys=list(LINK_ATTRIBUTES.items()), nodes=nodes, edges=edges)
    stream.disable_buffering()  # nodes and edges come in chunks of MBs already: buffering would join them all
    out.write_chunks("graph.graphml", stream)
