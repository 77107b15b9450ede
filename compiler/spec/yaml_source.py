"""Read YAML into plain Python values while remembering where each value came from.

PyYAML's composer gives nodes with marks; we build the values ourselves instead of
using its constructor so that (a) every value's (line, column) is kept, keyed by
its path, (b) only plain types come out (no tags, no Python objects), and (c)
anchors and aliases cannot blow up: every expanded node counts against a budget,
so a "billion laughs" spec fails fast with a clear message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from ..diagnostics import Diagnostic, SpecInvalid

MAX_NODES = 50_000  # a real spec has tens of nodes; a catalog a few thousand
MAX_DEPTH = 32
MAX_BYTES = 1024 * 1024  # specs are a few hundred bytes; catalogs a few hundred KB
# libyaml's composer is ~50x faster than PyYAML's pure-Python one: a hostile
# 1 MiB document is rejected in milliseconds rather than seconds.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Path = tuple  # ("fabric", "switch") or ("extra_endpoints", 0, "role")


@dataclass
class Source:
    """A loaded document: its values and the position of every path in it."""

    file: str
    data: object
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[Path, tuple[int, int]] = field(default_factory=dict)

    def where(self, path: Path, key: bool = False) -> tuple[int, int]:
        """Line/column of a path's value (or its key), else of its nearest existing ancestor."""
        path = tuple(path)
        first, second = (self.key_positions, self.positions) if key else (self.positions, self.key_positions)
        while path:
            if path in first:
                return first[path]
            if path in second:
                return second[path]
            path = path[:-1]
        return self.positions.get((), (1, 1))


class _Builder:
    def __init__(self, file: str):
        self.file = file
        self.count = 0
        self.positions: dict[Path, tuple[int, int]] = {}
        self.key_positions: dict[Path, tuple[int, int]] = {}

    def fail(self, node, message, hint=""):
        mark = node.start_mark
        raise SpecInvalid(
            [
                Diagnostic(
                    "SPEC_YAML",
                    message,
                    file=self.file,
                    line=mark.line + 1,
                    column=mark.column + 1,
                    hint=hint,
                )
            ]
        )

    def build(self, node, path: Path, depth: int):
        self.count += 1
        if self.count > MAX_NODES:
            self.fail(
                node,
                f"document expands to more than {MAX_NODES:,} values",
                "anchors/aliases expanding exponentially are rejected; write the values out",
            )
        if depth > MAX_DEPTH:
            self.fail(node, f"nesting deeper than {MAX_DEPTH} levels")
        self.positions.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if isinstance(node, yaml.MappingNode):
            out: dict = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    self.fail(key_node, "mapping keys must be plain strings")
                key = self.scalar(key_node)
                if key == "<<" and key_node.tag == "tag:yaml.org,2002:merge":
                    self.fail(key_node, "YAML merge keys (<<) are not supported", "write the keys out")
                if not isinstance(key, str):
                    key = str(key)
                if key in out:
                    self.fail(key_node, f"duplicate key '{key}'", "each key may appear once")
                self.key_positions[path + (key,)] = (
                    key_node.start_mark.line + 1,
                    key_node.start_mark.column + 1,
                )
                out[key] = self.build(value_node, path + (key,), depth + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        return self.scalar(node)

    def scalar(self, node):
        tag = node.tag
        if tag.startswith("tag:yaml.org,2002:"):
            kind = tag.rsplit(":", 1)[1]
            if kind in ("str", "int", "float", "bool", "null"):
                # Resolve with PyYAML's own safe rules for the core scalar types.
                return yaml.SafeLoader.construct_scalar_value(node, kind)  # type: ignore[attr-defined]
            if kind in ("timestamp", "binary"):
                return node.value  # kept as text; the schema decides
        self.fail(node, f"unsupported YAML tag {tag}", "use plain values")


def _construct_scalar_value(node, kind):
    loader = yaml.SafeLoader("")
    try:
        return {
            "str": loader.construct_yaml_str,
            "int": loader.construct_yaml_int,
            "float": loader.construct_yaml_float,
            "bool": loader.construct_yaml_bool,
            "null": loader.construct_yaml_null,
        }[kind](node)
    finally:
        loader.dispose()


yaml.SafeLoader.construct_scalar_value = staticmethod(_construct_scalar_value)  # type: ignore[attr-defined]


def load_yaml_text(text: str, file: str) -> Source:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise SpecInvalid(
            [Diagnostic("SPEC_TOO_LARGE", f"file is larger than {MAX_BYTES // 1024 // 1024} MiB", file=file)]
        )
    try:
        nodes = list(yaml.compose_all(text, Loader=_LOADER))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise SpecInvalid(
            [
                Diagnostic(
                    "SPEC_YAML",
                    f"not valid YAML: {exc.problem or exc}",
                    file=file,
                    line=(mark.line + 1) if mark else 0,
                    column=(mark.column + 1) if mark else 0,
                )
            ]
        ) from None
    except yaml.YAMLError as exc:
        raise SpecInvalid([Diagnostic("SPEC_YAML", f"not valid YAML: {exc}", file=file)]) from None
    if len(nodes) != 1:
        raise SpecInvalid(
            [Diagnostic("SPEC_YAML", f"expected one YAML document, found {len(nodes)}", file=file, line=1, column=1)]
        )
    builder = _Builder(file)
    data = builder.build(nodes[0], (), 0)
    return Source(file, data, builder.positions, builder.key_positions)


def load_yaml_file(path) -> Source:
    from pathlib import Path as _P

    p = _P(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise SpecInvalid([Diagnostic("SPEC_UNREADABLE", f"cannot read: {exc.strerror}", file=str(path))]) from None
    if len(raw) > MAX_BYTES:
        raise SpecInvalid(
            [Diagnostic("SPEC_TOO_LARGE", f"file is larger than {MAX_BYTES // 1024 // 1024} MiB", file=str(path))]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecInvalid(
            [Diagnostic("SPEC_ENCODING", f"not UTF-8 text (byte {exc.start})", file=str(path))]
        ) from None
    return load_yaml_text(text, str(path))
