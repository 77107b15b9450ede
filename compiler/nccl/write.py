"""The NCCL topology writer: one tag per line, two-space indent, double quotes, no
prolog, ASCII only. NCCL's parser (src/graph/xml.cc) is hand-written and rejects a
prolog, tabs, a tag spread over lines, spaces around '=', and (before 2.27) single
quotes; it decodes no entities. A generic XML serializer may do any of those, so
this writer refuses, rather than escapes, anything NCCL could not read back."""

from __future__ import annotations

import re

from .element import Element

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_VALUE = re.compile(r'^[\x20-\x7e]*$')  # printable ASCII
MAX_VALUE_CHARS = 255  # NCCL's value buffer
MAX_ATTRS = 16  # NCCL drops the 17th and later attributes


def write(root: Element) -> str:
    lines: list[str] = []
    _emit(root, 0, lines)
    return "\n".join(lines) + "\n"


def _tag(el: Element) -> str:
    if not _NAME.match(el.name):
        raise ValueError(f"element name {el.name!r} cannot be written for NCCL")
    if len(el.attrs) > MAX_ATTRS:
        raise ValueError(f"<{el.name}> has {len(el.attrs)} attributes; NCCL keeps {MAX_ATTRS}")
    seen = set()
    parts = [el.name]
    for key, value in el.attrs:
        value = str(value)
        if not _NAME.match(key) or key in seen:
            raise ValueError(f"<{el.name}>: bad or repeated attribute name {key!r}")
        if not _VALUE.match(value) or any(ch in value for ch in '"<>&') or len(value) > MAX_VALUE_CHARS:
            raise ValueError(f"<{el.name} {key}>: value {value!r} cannot be written for NCCL")
        seen.add(key)
        parts.append(f'{key}="{value}"')
    return " ".join(parts)


def _emit(el: Element, depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    if el.children:
        lines.append(f"{pad}<{_tag(el)}>")
        for child in el.children:
            _emit(child, depth + 1, lines)
        lines.append(f"{pad}</{el.name}>")
    else:
        lines.append(f"{pad}<{_tag(el)}/>")
