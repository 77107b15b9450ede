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


def cable_id(a_device: str, a_port_number: int) -> str:
    """A cable is named by its lower (A) end: device and 1-based logical port, e.g.
    dgx-su1-001:3 or su1-leaf-r1:33. Unique (a port carries one cable) and stable
    under growth: a cable keeps its id as long as it stays where it was pulled."""
    return f"{a_device}:{a_port_number}"
