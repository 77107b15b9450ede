"""Slurm hostlist expressions (the syntax of Nodes=, Switches= and NodeName=).

`compress` writes `dgx-su1-[001-032]` for a run of names that differ only in a trailing
number of the same width; zero padding is kept, as Slurm keeps it. `expand` is the
inverse, used by tests and cross-checked against `scontrol show hostnames`.
Both are O(n). Names must already be valid hostnames (no brackets or commas).
"""

from __future__ import annotations

import re

_TAIL = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str]) -> str:
    groups: list[tuple[str, int, list[list[int]]]] = []  # prefix, width, runs [lo, hi]
    for name in names:
        m = _TAIL.match(name)
        if not m:
            groups.append((name, -1, []))
            continue
        prefix, digits = m.groups()
        num = int(digits)
        # Zero-padded numbers keep their width; unpadded ones (9, 10) share width 0, as
        # Slurm takes the width from the range's lower bound ([9-12] -> 9..12, [001-100]).
        width = len(digits) if digits[0] == "0" and len(digits) > 1 else 0
        if groups and groups[-1][0] == prefix and width == 0 and groups[-1][1] == len(digits):
            width = groups[-1][1]
        if groups and groups[-1][0] == prefix and groups[-1][1] == width:
            runs = groups[-1][2]
            if runs[-1][1] + 1 == num:
                runs[-1][1] = num
            else:
                runs.append([num, num])
        else:
            groups.append((prefix, width, [[num, num]]))
    out = []
    for prefix, width, runs in groups:
        if width < 0:
            out.append(prefix)
        elif len(runs) == 1 and runs[0][0] == runs[0][1]:
            out.append(f"{prefix}{runs[0][0]:0{width}d}")
        else:
            body = ",".join(f"{lo:0{width}d}" if lo == hi else f"{lo:0{width}d}-{hi:0{width}d}" for lo, hi in runs)
            out.append(f"{prefix}[{body}]")
    return ",".join(out)


_BRACKET = re.compile(r"\[([^\[\]]*)\]")


def expand(expr: str) -> list[str]:
    """Names of a hostlist expression (one bracket per name part is enough for ours;
    several brackets, as in dgx-su[1-2]-[001-032], expand as a product)."""
    out: list[str] = []
    for item in _split_top(expr):
        out.extend(_expand_one(item))
    return out


def _split_top(expr: str) -> list[str]:
    items: list[str] = []
    depth = 0
    cur: list[str] = []
    for ch in expr:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        items.append("".join(cur))
    return items


def _expand_one(item: str) -> list[str]:
    m = _BRACKET.search(item)
    if not m:
        return [item]
    head, tail = item[:m.start()], item[m.end():]
    out = []
    for part in m.group(1).split(","):
        lo, _, hi = part.partition("-")
        width = len(lo)
        for n in range(int(lo), int(hi or lo) + 1):
            out.extend(_expand_one(f"{head}{n:0{width}d}{tail}"))
    return out
