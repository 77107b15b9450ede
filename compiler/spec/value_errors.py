"""What to tell a user whose value has the wrong type, as YAML 1.2 read it.

The models are strict (no "1024" -> 1024, no "yes" -> True), so a value YAML 1.1 habits
put in the wrong type lands here: `servers: 1_024` (text in YAML 1.2), `name: 010` (the
number 10), `wrap: [yes]` (text). Each gets a message that shows the value as written and
a hint that says what to write instead.
"""

from __future__ import annotations

import re

from .yaml_source import Source

_DIGITS_WITH_SEPARATORS = re.compile(r"[-+]?[0-9][0-9_]*")
_BASE_60 = re.compile(r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+")  # YAML 1.1's sexagesimal int


def _as_written(source: Source | None, loc: tuple, value) -> str:
    """The value as the file spells it (the plain text of a number), else its repr."""
    if source is not None and loc in source.plain_text:
        return source.plain_text[loc]
    return repr(value)


def describe(err: dict, loc: tuple, source: Source | None = None) -> tuple[str, str] | None:
    """(message, hint) for a pydantic type error, or None to keep pydantic's wording."""
    kind, value = err["type"], err.get("input")
    written = _as_written(source, loc, value)
    if kind == "ratio" or (err.get("ctx") or {}).get("hint"):
        return err["msg"], err["ctx"]["hint"]
    if kind in ("int_type", "int_parsing", "int_from_float"):
        if value is None:
            return "no value given; expected a whole number", "write a whole number, or remove the key"
        if isinstance(value, bool):
            return f"{written} is a boolean, not a whole number", "write a whole number"
        if isinstance(value, float):
            if value.is_integer():
                return f"{written} is not a whole number", f"write {int(value)}"
            return f"{written} is not a whole number", "write a whole number"
        if isinstance(value, str) and "_" in value and _DIGITS_WITH_SEPARATORS.fullmatch(value):
            return (f"{value!r} is not a whole number: YAML 1.2 reads digits with '_' as text",
                    f"write {value.replace('_', '')}")
        if isinstance(value, str) and _DIGITS_WITH_SEPARATORS.fullmatch(value):
            return f"{value!r} is text (quoted), not a whole number", f"write {value} without quotes"
        if isinstance(value, str) and _BASE_60.fullmatch(value):
            return (f"{value!r} is not a whole number: YAML 1.2 reads it as text (YAML 1.1 read it as a base-60 number)",
                    "write a whole number, like 64")
        return f"{written} is not a whole number", "write a whole number, like 64"
    if kind in ("float_type", "float_parsing"):
        if value is None:
            return "no value given; expected a number", "write a number, or remove the key"
        if isinstance(value, str) and "_" in value and re.fullmatch(r"[-+]?[0-9][0-9_]*(\.[0-9_]*)?", value):
            return (f"{value!r} is not a number: YAML 1.2 reads digits with '_' as text",
                    f"write {value.replace('_', '')}")
        return f"{written} is not a number", "a number like 5 or 0.5, without quotes"
    if kind == "bool_type":
        if isinstance(value, str):
            return (f"{value!r} is text, not a boolean: YAML 1.2 reads yes/no/on/off/y/n as text",
                    "write true or false")
        return f"{written} is not a boolean", "write true or false"
    if kind == "string_type":
        if value is None:
            return "no value given; expected text", "give a value, or remove the key"
        if isinstance(value, (bool, int, float)):
            what = "a boolean" if isinstance(value, bool) else "a number"
            return f"{written} is read as {what}, not text", f'quote it: "{written}"'
        return "expected text", ""
    return None
