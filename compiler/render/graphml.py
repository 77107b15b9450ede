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
"""

from __future__ import annotations

from typing import Any
from markupsafe import escape

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.multigraph import DEVICE_ATTRIBUTES, LINK_ATTRIBUTES, device_columns, link_columns
from .templates import environment, stream_template
from .writer import OutputDir

_MARK = "\x00{}\x00"  # a value's place while a shape renders (values themselves go in through %)


def _escaped(column: list) -> list:
    """Strings escaped for XML (each distinct value once); numbers and None as they are.
    Most columns (names, kinds, numbers) hold nothing to escape: then the column itself."""
    distinct = set(column)  # C speed; every value is hashable (str, int, float, None)
    joined = "".join(v for v in distinct if isinstance(v, str))
    if not any(c in joined for c in "&<>'\""):  # nothing XML escaping replaces: one scan at C speed
        return column
    changed = {}
    for v in distinct:
        if isinstance(v, str):
            e = str(escape(v))
            if e != v:
                changed[v] = e
    if not changed:
        return column
    get = changed.get
    return [get(v, v) if isinstance(v, str) else v for v in column]


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


def _elements(macro, fixed_columns: list[list], names: list[str], columns: dict[str, list]):
    """Every row's XML element, in row order. A row's shape is which attributes it has; only
    the columns that are None in some rows and not in others make rows' shapes differ."""
    cols = [_escaped(c) for c in fixed_columns] + [_escaped(columns[n]) for n in names]
    fixed = len(fixed_columns)
    n_rows = len(cols[0]) if cols else 0
    absent = [c.count(None) for c in cols[fixed:]]  # C speed
    base = tuple(a < n_rows for a in absent)  # present in every row, or (if absent from all) in none
    mixed = [i for i, a in enumerate(absent) if 0 < a < n_rows]
    rows = zip(*cols, strict=True)
    if not mixed:
        fmt = _format(macro, fixed, names, base)
        yield from map(fmt.__mod__, rows)
        return
    formats: dict[tuple[bool, ...], str] = {}
    keys = zip(*[[v is not None for v in cols[fixed + i]] for i in mixed], strict=True)
    for row, key in zip(rows, keys, strict=True):
        known = formats.get(key)
        if known is None:
            shape = list(base)
            for i, present in zip(mixed, key, strict=True):
                shape[i] = present
            known = formats[key] = _format(macro, fixed, names, tuple(shape))
        yield known % row


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    macros: Any = environment().get_template("graphml/elements.j2").module  # its macros are attributes made at run time
    dcols, lcols = device_columns(plan), link_columns(plan)
    nodes = _elements(macros.node, [dcols["name"]], list(DEVICE_ATTRIBUTES), dcols)
    edges = _elements(macros.edge, [lcols["cable"], lcols["a_device"], lcols["b_device"]], list(LINK_ATTRIBUTES), lcols)
    out.write_chunks("graph.graphml", stream_template(
        "graphml/graph.graphml.j2", name=plan.name, node_keys=list(DEVICE_ATTRIBUTES.items()),
        edge_keys=list(LINK_ATTRIBUTES.items()), nodes=nodes, edges=edges))
