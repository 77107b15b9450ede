"""The one place that names devices. Names derive from structure (role, SU, pod,
rail, index), never from iteration order, so they are stable when a design grows.

Indices are 1-based as printed on racks and in vendor guides; widths are minimums
(`{:03d}` keeps 001..999 and simply grows past it, so existing names never change).
"""

from __future__ import annotations


def server(prefix: str, index: int, su: int | None) -> str:
    if su is None:
        return f"{prefix}-{index:04d}"
    return f"{prefix}-su{su}-{index:03d}"


def rail_leaf(su: int, rail: int) -> str:
    return f"su{su}-leaf-r{rail}"


def leaf(index: int, su: int | None) -> str:
    if su is None:
        return f"leaf-{index:03d}"
    return f"su{su}-leaf-{index:02d}"


def spine(index: int, pod: int | None) -> str:
    if pod is None:
        return f"spine-{index:02d}"
    return f"pod{pod}-spine-{index:02d}"


def core(index: int) -> str:
    return f"core-{index:03d}"


def endpoint(role: str, index: int) -> str:
    return f"{role}-{index:02d}"


def cable_id(index: int, total: int) -> str:
    """C000001...; six digits minimum, more only for plans with over a million cables."""
    return f"C{index:0{max(6, len(str(total)))}d}"


def coordinate(prefix: str, coord: tuple[int, ...]) -> str:
    """A torus position, 0-based as in the k-ary n-cube literature: tpuv4-x03-y15-z00."""
    return prefix + "".join(f"-{axis}{c:02d}" for axis, c in zip("xyz", coord))


def group_switch(role: str, group: int, index: int) -> str:
    """A switch of a dragonfly group: g12-router-07, g3-leaf-01."""
    return f"g{group}-{role}-{index:02d}"
