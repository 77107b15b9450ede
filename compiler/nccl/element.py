"""The one tree type for NCCL topology XML: an element with ordered attributes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Element:
    name: str
    attrs: list[tuple[str, str]] = field(default_factory=list)
    children: list[Element] = field(default_factory=list)
    line: int = 0  # 1-based source line when parsed; 0 when built

    def get(self, key: str) -> str | None:
        for k, v in self.attrs:
            if k == key:
                return v
        return None

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.attrs)

    def walk(self):
        """Depth-first, parents before children: (element, parent)."""
        stack: list[tuple[Element, Element | None]] = [(self, None)]
        while stack:
            node, parent = stack.pop()
            yield node, parent
            stack.extend((c, node) for c in reversed(node.children))

    def count(self) -> int:
        return sum(1 for _ in self.walk())
