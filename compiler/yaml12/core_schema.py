"""What a YAML scalar means: the YAML 1.2 core schema (yaml.org/spec/1.2.2, 10.3.2).

PyYAML resolves plain scalars by YAML 1.1 rules, whose implicit types surprise people
writing network specs: `2:1` is the base-60 integer 121, `on`/`no`/`y` are booleans,
`010` is octal 8, `1_024` is 1024 and `2024-01-01` is a date. A spec (and a catalog)
means what YAML 1.2 says, whichever library reads it: only the forms below are not
text. Quoted and block scalars are always text; an explicit tag (`!!int 0x10`) is
honoured, by the same 1.2 rules.
"""

from __future__ import annotations

import re

NULL = re.compile(r"null|Null|NULL|~|")
TRUE = re.compile(r"true|True|TRUE")
FALSE = re.compile(r"false|False|FALSE")
INT_DECIMAL = re.compile(r"[-+]?[0-9]+")
INT_OCTAL = re.compile(r"0o[0-7]+")
INT_HEX = re.compile(r"0x[0-9a-fA-F]+")
FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
INFINITY = re.compile(r"[-+]?\.(inf|Inf|INF)")
NOT_A_NUMBER = re.compile(r"\.(nan|NaN|NAN)")

# Python refuses to turn more than 4,300 digits into an int (CVE-2020-10735); no value
# in a spec or catalog comes near this, so longer numbers are refused with a message.
MAX_DIGITS = 100


class NotCoreScalar(ValueError):
    """An explicitly tagged scalar whose text is not of that type in YAML 1.2."""


def _int(text: str) -> int:
    digits = text.lstrip("+-")
    if len(digits) > MAX_DIGITS:
        raise NotCoreScalar(f"number with more than {MAX_DIGITS} digits")
    if INT_OCTAL.fullmatch(text):
        return int(text[2:], 8)
    if INT_HEX.fullmatch(text):
        return int(text[2:], 16)
    return int(text, 10)


def _float(text: str) -> float:
    if INFINITY.fullmatch(text):
        return float("-inf") if text.startswith("-") else float("inf")
    if NOT_A_NUMBER.fullmatch(text):
        return float("nan")
    if len(text) > MAX_DIGITS:
        raise NotCoreScalar(f"number with more than {MAX_DIGITS} characters")
    return float(text)


def resolve_plain(text: str):
    """The value of an untagged plain scalar: null, bool, int, float, or the text itself."""
    if NULL.fullmatch(text):
        return None
    if TRUE.fullmatch(text):
        return True
    if FALSE.fullmatch(text):
        return False
    if INT_DECIMAL.fullmatch(text) or INT_OCTAL.fullmatch(text) or INT_HEX.fullmatch(text):
        return _int(text)
    if FLOAT.fullmatch(text) or INFINITY.fullmatch(text) or NOT_A_NUMBER.fullmatch(text):
        return _float(text)
    return text


def resolve_tagged(kind: str, text: str):
    """The value of a scalar tagged !!str, !!int, !!float, !!bool or !!null (YAML 1.2 forms only)."""
    if kind == "str":
        return text
    if kind == "null" and NULL.fullmatch(text):
        return None
    if kind == "bool" and (TRUE.fullmatch(text) or FALSE.fullmatch(text)):
        return bool(TRUE.fullmatch(text))
    if kind == "int" and (INT_DECIMAL.fullmatch(text) or INT_OCTAL.fullmatch(text) or INT_HEX.fullmatch(text)):
        return _int(text)
    if kind == "float" and (FLOAT.fullmatch(text) or INFINITY.fullmatch(text) or NOT_A_NUMBER.fullmatch(text)):
        return _float(text)
    raise NotCoreScalar(f"{text!r} is not a YAML 1.2 {kind}")
