"""The design space of a requirements file: an ordinary spec in which `server` and any
`fabric` key may be a list of choices. Expands to one concrete spec per combination.

A key a topology family does not take (scalable_unit on a dragonfly, dims on a Clos) is
left out of that family's candidates rather than failing them: asking "fat tree or dragonfly,
SUs of 32" means SUs of 32 where SUs exist. Each candidate records what was left out.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, SpecInvalid
from ..spec.model import FAMILY_KEYS
from ..yaml12 import Source

# fabric keys whose single value is itself a list: a choice among them is a list of lists
LIST_VALUED = ("dims", "wrap")


@dataclass(frozen=True)
class Candidate:
    """One point of the design space: a concrete spec (plain values) and what was chosen."""

    index: int  # 1-based, in enumeration order (the order the user listed the choices)
    name: str
    spec: dict
    choices: dict  # varied key -> value taken (keys as written: server, fabric.topology, ...)
    left_out: tuple[str, ...] = field(default=())  # fabric keys this topology does not take


def _is_choice(key: str, value) -> bool:
    if not isinstance(value, list):
        return False
    if key in LIST_VALUED:
        return bool(value) and all(isinstance(v, list) for v in value)
    return True


def design_space(source: Source) -> tuple[dict, dict[str, list]]:
    """(the base spec, varied key -> its choices in the order written). Raises SpecInvalid
    (file:line) for a choice list that is empty or not a list of plain values."""
    data = source.data
    if not isinstance(data, dict) or not isinstance(data.get("fabric"), dict):
        raise SpecInvalid([Diagnostic("SPEC_INVALID", "a requirements file is a spec with a `fabric:` mapping",
                                      file=source.file, line=1, column=1,
                                      hint="start from a spec; make any fabric key a list of choices, e.g. tiers: [2, 3]")])
    varied: dict[str, list] = {}
    problems = []
    entries: list[tuple[tuple, str, Any]] = [(("server",), "server", data.get("server"))]
    entries += [(("fabric", k), f"fabric.{k}", v) for k, v in data["fabric"].items()]
    for path, label, value in entries:
        if not _is_choice(path[-1], value):
            continue
        line, col = source.where(path)
        if not value:
            problems.append(Diagnostic("EXPLORE_EMPTY_CHOICE", f"{label}: an empty list of choices", path=label,
                                       file=source.file, line=line, column=col, hint="list at least one value"))
            continue
        if len({repr(v) for v in value}) != len(value):
            problems.append(Diagnostic("EXPLORE_DUPLICATE_CHOICE", f"{label}: a choice is listed twice", path=label,
                                       file=source.file, line=line, column=col, hint="list each value once"))
            continue
        varied[label] = list(value)
    if problems:
        raise SpecInvalid(problems)
    return data, varied


def candidates(source: Source, limit: int) -> list[Candidate]:
    """Every combination of the choices, in the order written (the last key varies fastest).
    More than `limit` combinations is an error, not a silent sample."""
    base, varied = design_space(source)
    keys = list(varied)
    total = 1
    for k in keys:
        total *= len(varied[k])
    if total > limit:
        raise SpecInvalid([Diagnostic(
            "EXPLORE_TOO_MANY", f"{total:,} combinations of choices; the limit is {limit:,}", file=source.file,
            line=1, column=1, hint="narrow a choice list, or raise --max-candidates")])
    out = []
    seen: set[str] = set()
    width = max(3, len(str(total)))
    for i, combo in enumerate(itertools.product(*(varied[k] for k in keys)), start=1):
        spec = copy.deepcopy(base)
        spec.pop("explore", None)
        chosen = dict(zip(keys, combo, strict=True))
        for key, value in chosen.items():
            if key == "server":
                spec["server"] = value
            else:
                spec["fabric"][key.split(".", 1)[1]] = value
        topology = spec["fabric"].get("topology")
        left_out = tuple(k for k in sorted(spec["fabric"]) if k in FAMILY_KEYS and isinstance(topology, str)
                         and topology not in FAMILY_KEYS[k])
        for k in left_out:
            del spec["fabric"][k]
        key = repr(sorted(spec["fabric"].items())) + repr(spec.get("server"))
        if key in seen:  # e.g. tiers: [2, 3] on a dragonfly, which takes no tiers: one design, once
            continue
        seen.add(key)
        name = f"{base.get('name', 'design')}-{i:0{width}d}"
        spec["name"] = name
        chosen = {k: v for k, v in chosen.items() if k.split(".", 1)[-1] not in left_out}
        out.append(Candidate(i, name, spec, chosen, left_out))
    return out
