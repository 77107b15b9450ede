"""Failure rates per component class: a user's YAML file over the catalog's defaults."""

from __future__ import annotations

from pathlib import Path

from ..catalog.load import failure_rate_defaults
from ..yaml12 import load_yaml_file
from .errors import ResilienceError

HOURS_PER_YEAR = 8760.0
FIELDS = ("afr", "mttr_hours")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def load_rates(path: str | Path | None, classes: dict[str, int], strict: bool = True) -> dict[str, dict]:
    """Per class the plan has (`classes`: class -> component count): afr, mttr_hours,
    unavailability and where the figure came from (the user's file, or the default and its
    sources). Raises ResilienceError for a file that is unreadable, names a class the plan
    does not have, or gives a rate that is negative or not a number. Not `strict` (one file
    for many designs: compare, explore, every fabric of a plan): a class this plan lacks is
    passed over."""
    defaults = failure_rate_defaults()
    given: dict = {}
    source = None
    if path is not None:
        try:
            source = load_yaml_file(path)
        except Exception as exc:  # unreadable or not YAML: say which file
            raise ResilienceError(f"{path}: cannot read the rates file: {exc}") from None
        if not isinstance(source.data, dict):
            raise ResilienceError(f"{path}: expected a mapping of component class to {{afr, mttr_hours}}")
        given = dict(source.data)

    def at(*keys) -> str:  # file:line:column: the field path
        assert source is not None  # only called on the entries of a file
        line, col = source.where(keys)
        return f"{path}:{line}:{col}: {'.'.join(str(k) for k in keys)}"

    out: dict[str, dict] = {}
    for cls, rec in given.items():
        where = at(cls)
        if strict and (cls not in classes or classes[cls] == 0):
            have = ", ".join(c for c, n in classes.items() if n)
            raise ResilienceError(f"{where}: the plan has no component of class '{cls}' (it has: {have})")
        if not isinstance(rec, dict):
            raise ResilienceError(f"{where}: expected {{afr: <failures per component-year>, mttr_hours: <hours>}}")
        unknown = sorted(set(rec) - set(FIELDS))
        if unknown:
            raise ResilienceError(f"{at(cls, unknown[0])}: unknown field; a class takes {', '.join(FIELDS)}")
        for field in FIELDS:
            value = rec.get(field, defaults[cls][field])
            if not _number(value):
                raise ResilienceError(f"{at(cls, field)}: {value!r} is not a number "
                                      f"({'failures per component-year' if field == 'afr' else 'hours'})")
            if value < 0:
                raise ResilienceError(f"{at(cls, field)}: {value} is negative; a rate and a repair time are >= 0")
    for cls, count in classes.items():
        if count == 0:
            continue
        d = defaults[cls]
        rec = given.get(cls) or {}
        afr = float(rec.get("afr", d["afr"]))
        mttr = float(rec.get("mttr_hours", d["mttr_hours"]))
        u = afr * mttr / HOURS_PER_YEAR
        if u > 1:
            raise ResilienceError(f"{at(cls)}: afr x mttr_hours = {afr * mttr:g} h per year exceeds a year "
                                  f"(unavailability {u:.3g} > 1)")
        out[cls] = {"afr": afr, "mttr_hours": mttr, "unavailability": u,
                    "source": "rates file" if cls in given else "default",
                    "sources": [str(path)] if cls in given else list(d["sources"])}
    return out
