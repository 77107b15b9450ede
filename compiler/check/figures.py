"""Typed figures: what a check measures, as a frozen dataclass that serialises to its
entry of report/checks.json.

Field order is JSON key order, so a record reads the same in code and in the file. A
field made with `omitted_if_none()` is a figure only some designs have (a switchless
network's hop unit, the failure cuts of a sampled graph): it is left out of the JSON
while it is None, as the key was absent before figures were typed. Any other None is
written as null.
"""

from __future__ import annotations

from dataclasses import field, fields, is_dataclass

_OMIT_IF_NONE = "omit_if_none"


def omitted_if_none():
    """A figure that only some designs have: absent from the JSON while None."""
    return field(default=None, metadata={_OMIT_IF_NONE: True})


def to_json(value):
    """Plain JSON values (dict, list, str, numbers, None) of figures and the records in them."""
    if isinstance(value, Figures):
        return value.as_json()  # a Figures subclass may shape its own entry
    if is_dataclass(value):
        return record_json(value)
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return value


def record_json(record) -> dict:
    out = {}
    for f in fields(record):
        value = getattr(record, f.name)
        if value is None and f.metadata.get(_OMIT_IF_NONE):
            continue
        out[f.name] = to_json(value)
    return out


class Figures:
    """Base of every check's figures record (each a frozen dataclass)."""

    def as_json(self) -> dict:
        return record_json(self)
