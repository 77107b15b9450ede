"""What to tell a user whose value has the wrong type, as YAML 1.2 read it.

The models are strict (no "1024" -> 1024, no "yes" -> True), so a value YAML 1.1 habits
put in the wrong type lands here: `servers: 1_024` (text in YAML 1.2), `name: 010` (the
number 10), `wrap: [yes]` (text). Each gets a message that shows the value as written and
a hint that says what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .source import Source

_DIGITS_WITH_SEPARATORS = re.compile(r"[-+]?[0-9][0-9_]*")
# A number written with its unit or thousands separators: "400G", "400 Gb/s", "1,024", "32 ports".
_NUMBER_WITH_UNIT = re.compile(r"\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*([A-Za-z][A-Za-z/]*)?\s*")

# An example per field, for "write a whole number, like N": the value an architect would
# write there, not a number that means nothing in that place.
_EXAMPLES = {"servers": 128, "gpus": 1024, "scalable_unit": 32, "servers_per_leaf": 2, "speed_gbps": 400,
             "uplink_speed_gbps": 800, "groups": 9, "switches_per_group": 8, "endpoints_per_switch": 4,
             "global_ports_per_switch": 4, "global_links_per_group_pair": 1, "planes": 2, "links_per_neighbor": 1,
             "count": 8, "ports": 2, "max_servers": 1024, "max_scalable_units": 8, "height_u": 48, "rows": 4,
             "racks_per_row": 20, "servers_per_rack": 4, "offset": 1, "max_hops": 3, "min_bisection_gbps": 204800,
             "leaf": 1, "spine": 1, "core": 1, "link": 1, "depth_mm": 1200, "endpoint_rack_units": 1, "reserved_u": 2}


def _example(loc: tuple) -> str:
    key = next((p for p in reversed(loc) if isinstance(p, str)), "")
    return f"write a whole number, like {_EXAMPLES.get(key, 64)}"


def _unit_of(loc: tuple) -> str:
    key = next((p for p in reversed(loc) if isinstance(p, str)), "")
    for suffix, unit in (("_gbps", "Gb/s"), ("_kw", "kW"), ("_m", "metres"), ("_mm", "mm"), ("_us", "µs"), ("_u", "U")):
        if key.endswith(suffix):
            return unit
    return ""


def _number_text(value: str) -> str | None:
    """The number in "400G", "400 Gb/s" or "1,024" (as digits), or None."""
    m = _NUMBER_WITH_UNIT.fullmatch(value)
    if not m or ("," not in m.group(1) and not m.group(2)):
        return None
    digits = m.group(1).replace(",", "")
    if m.group(1).count(",") and not re.fullmatch(r"[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?", m.group(1)):
        return None  # "1,5" is not a thousands separator: do not guess
    return digits


def _bound(err: Mapping[str, Any], loc: tuple, written: str) -> tuple[str, str] | None:
    """Limits in our words: what the value is, the limit, and why there is one."""
    kind, ctx = err["type"], err.get("ctx") or {}
    unit = _unit_of(loc)
    unit_text = f" {unit}" if unit else ""
    key = next((p for p in reversed(loc) if isinstance(p, str)), "value")
    if kind in ("less_than_equal", "less_than"):
        limit = ctx.get("le", ctx.get("lt"))
        at_most = "at most" if kind == "less_than_equal" else "below"
        shown = f"{limit:,}" if isinstance(limit, int) else str(limit)
        why = ""
        if key in ("servers", "gpus", "max_servers"):
            why = ": clusterc designs fabrics of up to a million GPUs, with headroom; a larger number is most likely a typo"
        return (f"{written}{unit_text} is more than clusterc accepts for {key} ({at_most} {shown}{unit_text}){why}",
                f"write a value {at_most} {shown}")
    if kind in ("greater_than_equal", "greater_than"):
        limit = ctx.get("ge", ctx.get("gt"))
        at_least = "at least" if kind == "greater_than_equal" else "above"
        return (f"{written}{unit_text} is too small for {key} (it must be {at_least} {limit}{unit_text})",
                f"write a value {at_least} {limit}")
    if kind == "too_long":
        most = ctx.get("max_length")
        return (f"{key} holds {ctx.get('actual_length')} entries; at most {most} are allowed",
                f"list at most {most}")
    if kind == "too_short":
        least = ctx.get("min_length")
        return (f"{key} holds {ctx.get('actual_length', 0)} entries; at least {least} are needed",
                f"list at least {least}, or remove the key")
    return None
_BASE_60 = re.compile(r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+")  # YAML 1.1's sexagesimal int


def _as_written(source: Source | None, loc: tuple, value) -> str:
    """The value as the file spells it (the plain text of a number), else its repr."""
    if source is not None and loc in source.plain_text:
        return source.plain_text[loc]
    return repr(value)


def describe(err: Mapping[str, Any], loc: tuple, source: Source | None = None) -> tuple[str, str] | None:
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
            return f"{written} is not a whole number", _example(loc)
        if isinstance(value, str) and "_" in value and _DIGITS_WITH_SEPARATORS.fullmatch(value):
            return (f"{value!r} is not a whole number: YAML 1.2 reads digits with '_' as text",
                    f"write {value.replace('_', '')}")
        if isinstance(value, str) and _DIGITS_WITH_SEPARATORS.fullmatch(value):
            return f"{value!r} is text (quoted), not a whole number", f"write {value} without quotes"
        if isinstance(value, str) and _BASE_60.fullmatch(value):
            return (f"{value!r} is not a whole number: YAML 1.2 reads it as text (YAML 1.1 read it as a base-60 number)",
                    _example(loc))
        if isinstance(value, str) and (digits := _number_text(value)) is not None:
            unit = _unit_of(loc)
            said = f": the unit ({unit}) is in the key's name" if unit else ""
            if "." in digits:
                return f"{value!r} is text, not a whole number{said}", _example(loc)
            return f"{value!r} is text, not a whole number{said}", f"write {digits}"
        return f"{written} is not a whole number", _example(loc)
    if (bound := _bound(err, loc, written)) is not None:
        return bound
    if kind in ("float_type", "float_parsing"):
        if value is None:
            return "no value given; expected a number", "write a number, or remove the key"
        if isinstance(value, str) and (digits := _number_text(value)) is not None:
            unit = _unit_of(loc)
            said = f": the unit ({unit}) is in the key's name" if unit else ""
            return f"{value!r} is text, not a number{said}", f"write {digits}"
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
