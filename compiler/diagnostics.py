"""Diagnostics: what the compiler tells a user about their input.

A diagnostic always names a place (file, line, column, field path), what is
wrong and, where we can guess, a hint. They are collected, never first-only,
and carried by `SpecInvalid` to the CLI, which prints them and exits 2.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Diagnostic:
    code: str  # stable, e.g. SPEC_UNKNOWN_KEY, DESIGN_RADIX_TOO_SMALL
    message: str
    path: str = ""  # dotted field path, e.g. fabric.switch
    file: str = ""
    line: int = 0  # 1-based; 0 when unknown
    column: int = 0
    hint: str = ""
    severity: str = "error"

    def format(self) -> str:
        where = self.file or "<spec>"
        if self.line:
            where += f":{self.line}:{self.column}"
        text = f"{where}: {self.severity}: "
        if self.path:
            text += f"{self.path}: "
        text += self.message
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text

    def as_dict(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
        }


@dataclass
class SpecInvalid(Exception):
    """Raised with every problem found in a spec; the CLI maps it to exit 2."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(d.format() for d in self.diagnostics)


def in_file_order(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics as a reader meets them: by file, then line and column (a diagnostic
    with no line, 0, comes first in its file); ties keep the order they were found in."""
    return sorted(diagnostics, key=lambda d: (d.file, d.line, d.column))


def nearest(word: str, choices, n: int = 3) -> str:
    """A 'did you mean' hint from the closest known names, or the known names."""
    choices = sorted(set(choices))
    close = difflib.get_close_matches(str(word), choices, n=n, cutoff=0.5)
    # Only near-ties of the best match: "swich" means switch, not also core_switch.
    score = [difflib.SequenceMatcher(None, str(word), c).ratio() for c in close]
    close = [c for c, r in zip(close, score, strict=True) if r >= score[0] - 0.15] if close else close
    if close:
        return "did you mean " + " or ".join(close) + "?"
    shown = ", ".join(choices[:12]) + (", ..." if len(choices) > 12 else "")
    return f"known: {shown}"
