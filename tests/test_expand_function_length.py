"""No function in compiler/expand/ is over 60 lines: lowering is a chain of named steps,
each saying what it decides. Read from the source's syntax tree (decorators not counted,
docstrings counted)."""

from __future__ import annotations

import ast
from pathlib import Path

EXPAND = Path(__file__).resolve().parent.parent / "compiler" / "expand"
MAX_LINES = 60


def function_lengths(folder: Path) -> dict[str, int]:
    """'module.py::function' (nested: 'outer.inner') -> lines from `def` to its last line."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str, module: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out[f"{module}::{name}"] = child.end_lineno - child.lineno + 1
                visit(child, name + ".", module)
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".", module)
            else:
                visit(child, prefix, module)

    for path in sorted(folder.rglob("*.py")):
        visit(ast.parse(path.read_text()), "", path.relative_to(folder).as_posix())
    return out


def test_no_function_in_expand_is_over_60_lines():
    long = {name: n for name, n in function_lengths(EXPAND).items() if n > MAX_LINES}
    assert long == {}, f"split these into named steps of at most {MAX_LINES} lines: {long}"


def test_the_measure_counts_a_function_from_def_to_its_last_line(tmp_path):
    (tmp_path / "m.py").write_text("def f():\n" + "    x = 1\n" * 60 + "\n\nclass C:\n    def g(self):\n        pass\n")
    assert function_lengths(tmp_path) == {"m.py::f": 61, "m.py::C.g": 2}
