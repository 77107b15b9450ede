"""From a YAML file to a validated `Spec`, or every problem in it at once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ValidationError

import re
from collections.abc import Mapping
from typing import Any

from ..diagnostics import Diagnostic, SpecInvalid, in_file_order, nearest
from .model import TRAFFIC_PATTERNS, Spec
from ..yaml12.value_errors import describe
from ..yaml12 import Source, load_yaml_file, load_yaml_text


@dataclass(frozen=True)
class LoadedSpec:
    spec: Spec
    source: Source

    @property
    def file(self) -> str:
        return self.source.file

    def diagnostic(self, code: str, path: tuple, message: str, hint: str = "") -> Diagnostic:
        """A diagnostic pointing at `path` in this spec's file."""
        line, col = self.source.where(path)
        return Diagnostic(code, message, path=".".join(map(str, path)), file=self.file,
                          line=line, column=col, hint=hint)


def _fields_at(model: type[BaseModel], loc: tuple) -> list[str]:
    """The keys allowed in the mapping at `loc` (for 'did you mean' on unknown keys)."""
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return []
        ann = field.annotation
        nxt = None
        for cand in (ann, *getattr(ann, "__args__", ())):
            for inner in (cand, *getattr(cand, "__args__", ())):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    nxt = inner
        if nxt is None:
            return []
        current = nxt
    return list(current.model_fields)


def _hint_for(err: Mapping[str, Any], loc: tuple) -> str:
    kind = err["type"]
    if "hint" in err.get("ctx", {}):  # a validator that knows better (e.g. the NOS registry's)
        return err["ctx"]["hint"]
    if kind == "extra_forbidden":
        allowed = _fields_at(Spec, loc[:-1])
        return nearest(str(loc[-1]), allowed) if allowed else ""
    if kind == "missing":
        return "add this key"
    if kind == "string_pattern_mismatch":
        if loc[-1:] == ("pattern",) and "traffic" in loc:
            given = str(err.get("input", "")).lower().replace("_", "-")
            return nearest(given.split(":")[0], TRAFFIC_PATTERNS) + " (shift takes :K, :switch or :group)"
        return "use lower-case letters, digits and '-', starting with a letter or digit (no '/', quotes, spaces)"
    if kind == "literal_error":
        expected = str(err.get("ctx", {}).get("expected", ""))
        values = re.findall(r"'([^']*)'|\b(\d+)\b", expected)
        allowed = [a or b for a, b in values]
        value = err.get("input")
        close = nearest(value.lower().replace("_", "-"), allowed) if allowed and isinstance(value, str) else ""
        return close if close.startswith("did you mean") else "allowed: " + expected
    return ""


def _literal_message(err: Mapping[str, Any], hint: str) -> tuple[str, str]:
    """A value not in a fixed list: '"2"' quoted where the list has the number 2 says so."""
    given, expected = err.get("input"), str(err.get("ctx", {}).get("expected", ""))
    if isinstance(given, str) and given.strip().isdigit() and re.search(rf"(?<!')\b{given.strip()}\b(?!')", expected):
        return f"{given!r} is text (quoted), not the number {given.strip()}; allowed: {expected}", \
            f"write {given.strip()} without quotes"
    return f"{_as_text(given)} is not one of the allowed values ({expected})", hint


def _as_text(value) -> str:
    return repr(value) if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)


def _clean_loc(loc: tuple) -> tuple:
    # pydantic adds validator/union names into loc (e.g. 'function-after[...]'); keep real keys.
    return tuple(p for p in loc if isinstance(p, int) or ("[" not in p and p not in ("str", "int", "dict[str,str]")))


def spec_from_source(source: Source) -> LoadedSpec:
    if not isinstance(source.data, dict):
        raise SpecInvalid([Diagnostic("SPEC_NOT_MAPPING", "a spec is a YAML mapping of keys (name, servers, server, fabric, ...)",
                                      file=source.file, line=1, column=1)])
    try:
        spec = Spec.model_validate(source.data)
    except ValidationError as exc:
        diagnostics = []
        seen = set()
        for err in exc.errors():
            loc = _clean_loc(tuple(err["loc"]))
            msg = err["msg"].removeprefix("Value error, ")
            hint = _hint_for(err, loc)
            if err["type"] == "extra_forbidden":
                msg = f"unknown key '{loc[-1]}'"
            elif err["type"] == "string_pattern_mismatch":
                msg = f"{err['input']!r} is not a valid value here"
            elif err["type"] == "literal_error":
                msg, hint = _literal_message(err, hint)
            elif described := describe(err, loc, source):
                msg, hint = described
            key = (loc, msg)
            if key in seen:
                continue
            seen.add(key)
            line, col = source.where(loc, key=err["type"] in ("extra_forbidden", "missing"))
            diagnostics.append(Diagnostic("SPEC_INVALID", msg, path=".".join(map(str, loc)) or "(top level)",
                                          file=source.file, line=line, column=col, hint=hint))
        raise SpecInvalid(in_file_order(diagnostics)) from None
    return LoadedSpec(spec, source)


def load_spec(path: str | Path) -> LoadedSpec:
    return spec_from_source(load_yaml_file(path))


def load_spec_text(text: str, file: str = "<spec>") -> LoadedSpec:
    return spec_from_source(load_yaml_text(text, file))
