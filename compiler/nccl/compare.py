"""Semantic equality of two NCCL topology trees: same elements, same attributes (order
ignored, as NCCL looks attributes up by name), children compared as a multiset (NCCL
places GPUs and NICs by bus id and name, not by their order in the file)."""

from __future__ import annotations

from .element import Element


def canonical(el: Element) -> tuple:
    return (el.name, tuple(sorted(el.attrs)), tuple(sorted(canonical(c) for c in el.children)))


def same_topology(a: Element, b: Element) -> bool:
    return canonical(a) == canonical(b)


def differences(a: Element, b: Element, path: str = "") -> list[str]:
    """Human-readable differences, for test failure messages."""
    here = f"{path}/{a.name}[{a.get('busid') or a.get('numaid') or a.get('name') or ''}]"
    out = []
    if a.name != b.name:
        return [f"{here}: <{a.name}> vs <{b.name}>"]
    if sorted(a.attrs) != sorted(b.attrs):
        out.append(f"{here}: attributes {sorted(a.attrs)} vs {sorted(b.attrs)}")
    left = sorted(a.children, key=canonical)
    right = sorted(b.children, key=canonical)
    if len(left) != len(right):
        out.append(f"{here}: {len(left)} vs {len(right)} children")
    for x, y in zip(left, right, strict=True):
        out.extend(differences(x, y, here))
    return out
