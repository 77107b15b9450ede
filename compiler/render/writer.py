"""The one writer for outputs: everything goes to a hidden temporary folder beside
the target, which replaces the target in a single atomic step only when every file
is written. A failed or killed compile leaves the previous output untouched.

On Linux the swap is renameat2(RENAME_EXCHANGE): old and new trade places at once,
so there is no instant at which `out/<name>` is missing. Elsewhere we fall back to
two renames.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import tempfile
from pathlib import Path

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


class OutputDir:
    """`with OutputDir(out / name) as w: w.write_text("a.csv", ...)` — all or nothing."""

    def __init__(self, target: Path):
        self.target = Path(target)
        self.tmp: Path | None = None

    def __enter__(self) -> "OutputDir":
        parent = self.target.parent
        parent.mkdir(parents=True, exist_ok=True)
        for stale in parent.glob(f".{self.target.name}.tmp-*"):  # left by a killed compile
            shutil.rmtree(stale, ignore_errors=True)
        self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.tmp-", dir=parent))
        return self

    def path(self, relative: str) -> Path:
        assert self.tmp is not None
        rel = Path(relative)
        if rel.is_absolute() or ".." in rel.parts:
            raise ValueError(f"output path escapes the output folder: {relative}")
        full = self.tmp / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        return full

    def write_text(self, relative: str, text: str) -> None:
        with open(self.path(relative), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    def write_chunks(self, relative: str, chunks) -> None:
        """Text written piece by piece: a file of hundreds of MB is never one string."""
        with open(self.path(relative), "w", encoding="utf-8", newline="") as fh:
            fh.writelines(chunks)

    def write_bytes(self, relative: str, data: bytes) -> None:
        with open(self.path(relative), "wb") as fh:
            fh.write(data)

    def __exit__(self, exc_type, exc, tb) -> None:
        assert self.tmp is not None
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return
        os.chmod(self.tmp, 0o755)
        if self.target.exists():
            if _exchange(self.tmp, self.target):
                shutil.rmtree(self.tmp)  # now holds the previous output
                return
            old = self.target.with_name(f".{self.target.name}.tmp-old")
            os.rename(self.target, old)
            os.rename(self.tmp, self.target)
            shutil.rmtree(old)
        else:
            os.rename(self.tmp, self.target)
