"""Read YAML into plain Python values while remembering where each value came from.

PyYAML's composer gives nodes with marks; we build the values ourselves instead of
using its constructor so that (a) every value's (line, column) is kept, keyed by
its path, (b) only plain types come out (no tags, no Python objects), and (c)
anchors and aliases cannot blow up: every expanded node counts against a budget,
so a "billion laughs" spec fails fast with a clear message, and (d) scalars mean what
YAML 1.2's core schema says (core_schema.py), not what PyYAML's YAML 1.1 resolver
says: `oversubscription: 2:1` is the text "2:1", never the base-60 number 121.

This is the one reader of YAML the compiler has: specs, user and built-in catalogs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from ..diagnostics import Diagnostic, SpecInvalid
from .core_schema import NotCoreScalar, resolve_plain, resolve_tagged

MAX_NODES = 50_000  # a real spec has tens of nodes; a catalog a few thousand
MAX_DEPTH = 32
MAX_BYTES = 1024 * 1024  # specs are a few hundred bytes; catalogs a few hundred KB
# libyaml's composer is ~50x faster than PyYAML's pure-Python one: a hostile
# 1 MiB document is rejected in milliseconds rather than seconds.
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# Plain (unquoted, untagged) scalars get this tag instead of PyYAML's YAML 1.1 guess;
# the builder resolves them by YAML 1.2 core rules. Quoted scalars keep !!str.
PLAIN = "tag:clusterc,2024:plain"


class _Loader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    def resolve(self, kind, value, implicit):
        if kind is yaml.ScalarNode and implicit[0]:
            return PLAIN
        return super().resolve(kind, value, implicit)

Path = tuple  # ("fabric", "switch") or ("extra_endpoints", 0, "role")


@dataclass
class Source:
    """A loaded document: its values and the position of every path in it."""

    file: str
    data: object
    positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[Path, tuple[int, int]] = field(default_factory=dict)
    # The text as written of every plain scalar that resolved to something other than
    # text (a number, bool, null), so an error can show it: `name: 010` -> quote "010".
    plain_text: dict[Path, str] = field(default_factory=dict)

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
        self.plain_text: dict[Path, str] = {}

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
                # Keys are names: taken as written (`on:`, `010:` stay "on", "010").
                key = key_node.value
                if key == "<<" and key_node.tag == PLAIN:
                    self.fail(key_node, "YAML merge keys (<<) are not supported", "write the keys out")
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
        value = self.scalar(node)
        if node.tag == PLAIN and not isinstance(value, str):
            self.plain_text[path] = node.value
        return value

    def scalar(self, node):
        tag = node.tag
        try:
            if tag == PLAIN:
                return resolve_plain(node.value)
            if tag.startswith("tag:yaml.org,2002:"):
                kind = tag.rsplit(":", 1)[1]
                if kind in ("str", "int", "float", "bool", "null"):
                    return resolve_tagged(kind, node.value)
                if kind in ("timestamp", "binary"):
                    return node.value  # kept as text; the schema decides
        except NotCoreScalar as exc:
            self.fail(node, str(exc), "YAML 1.2 core forms: 10, 0o12, 0xa, 1.5, true/false, null")
        self.fail(node, f"unsupported YAML tag {tag}", "use plain values")


def load_yaml_text(text: str, file: str) -> Source:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise SpecInvalid(
            [Diagnostic("SPEC_TOO_LARGE", f"file is larger than {MAX_BYTES // 1024 // 1024} MiB", file=file)]
        )
    try:
        nodes = list(yaml.compose_all(text, Loader=_Loader))
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
    return Source(file, data, builder.positions, builder.key_positions, builder.plain_text)


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
