"""Devices into boxes: one box per device while a row has room, else runs of devices
(a power-of-two count, never across a partition such as a pod or plane), each box
labelled with its range and count. Short labels drop the name prefix a row shares
(`su1-leaf-r1` -> `r1`); the row's caption names that prefix once."""

from __future__ import annotations

import os

from ...plan.model import Device
from .layered import Cell
from .style import BOX_STROKE, rail_colour, role_fill

PLURAL = {"server": "servers", "leaf": "leaves", "spine": "spines", "core": "cores", "switch": "switches",
          "router": "routers", "chip": "chips"}


def plural(role: str, n: int) -> str:
    return role if n == 1 else PLURAL.get(role, role + "s")


def counted(role: str, n: int) -> str:
    return f"{n:,} {plural(role, n)}"


def token_prefix(names: list[str]) -> str:
    """The longest prefix all names share that ends at a '-' (never a whole name)."""
    if len(names) < 2:
        return ""
    p = os.path.commonprefix(names)
    cut = p.rfind("-")
    return p[:cut + 1] if cut >= 0 else ""


MAX_RUNS = 16  # a run's label ("001–008", "8 servers") needs about a sixteenth of a screen


def runs(keys: list, cap: int, whole: bool = False) -> list[tuple[int, int]]:
    """[start, end) runs over items in display order: single items if they fit `cap`, else
    runs of equal keys at most `size` long, size the smallest power of two giving at most
    min(cap, MAX_RUNS) runs; runs span keys where there are more keys than that.
    `whole`: one run per key where there are several keys and they fit (an overview's pods
    or planes), before any split of a key."""
    n = len(keys)
    if n <= cap:
        return [(i, i + 1) for i in range(n)]
    cap = min(cap, MAX_RUNS)
    if whole and 1 < len(set(keys)) <= cap:
        return _runs(keys, n)
    if len(set(keys)) > cap:  # more partitions than room: runs may span them
        keys = [None] * n
    size = 2
    while True:
        out = _runs(keys, size)
        if len(out) <= cap or size >= n:
            return out
        size *= 2


def _runs(keys: list, size: int) -> list[tuple[int, int]]:
    out = []
    start = 0
    for i in range(1, len(keys) + 1):
        if i == len(keys) or keys[i] != keys[start] or i - start == size:
            out.append((start, i))
            start = i
    return out


def device_cells(devices: list[Device], order: list[int], keys: list, cap: int, role: str,
                 whole: dict | None = None, whole_runs: bool = False) -> tuple[list[Cell], list[list[int]], str]:
    """Cells for `order` (device indices in display order) and the device indices of each;
    the row's shared name prefix. `whole[key]`: a name for a run that is a whole partition
    (e.g. "pod1"), with its size, used as the label instead of the range.

    Short labels drop the row's shared prefix, and a range's end drops the prefix of its
    partition too: `p1-agg-01–08` in a row of two planes' spines, `001–008` for servers."""
    names = [devices[i].name for i in order]
    prefix = token_prefix(names)
    size_of: dict = {}
    part_names: dict = {}
    for k, name in zip(keys, names, strict=True):
        size_of[k] = size_of.get(k, 0) + 1
        part_names.setdefault(k, []).append(name)
    part_prefix = {k: token_prefix(v) or prefix for k, v in part_names.items()}
    spans = runs(keys, cap, whole_runs)
    grouped = any(end - start > 1 for start, end in spans)
    cells, members = [], []
    for start, end in spans:
        idx = order[start:end]
        first, last = names[start], names[end - 1]
        rails = {devices[i].rail for i in idx}
        rail = rails.pop() if len(rails) == 1 else None
        fill = role_fill(role, rail)
        stroke = rail_colour(rail) if rail is not None else BOX_STROKE
        if len(idx) == 1:
            tail = (counted(role, 1),) if grouped else ()  # as many lines as the runs beside it
            cells.append(Cell(first, (first,) + tail, (first[len(prefix):],) + tail, fill, stroke,
                              title=f"{first} ({devices[idx[0]].model})", rail=rail))
        else:
            n = counted(role, len(idx))
            span = f"{first} – {last}"
            short = f"{first[len(prefix):]}–{last[len(part_prefix[keys[start]]):]}"
            key = keys[start]
            if whole and key in whole and size_of[key] == len(idx):
                cells.append(Cell(f"{first}..{last}", (whole[key], n), (whole[key], n), fill, stroke,
                                  title=f"{whole[key]}: {span} ({n})", members=" ".join(names[start:end]), rail=rail,
                                  size=len(idx)))
            else:
                cells.append(Cell(f"{first}..{last}", (span, n), (short, n), fill, stroke, title=f"{span} ({n})",
                                  members=" ".join(names[start:end]), rail=rail, size=len(idx)))
        members.append(idx)
    return cells, members, prefix
