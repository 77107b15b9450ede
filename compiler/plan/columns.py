"""Column helpers the plan's views and writers share, where numpy's own call is slow.

numpy 2.3+ answers np.unique(x) on an integer array (no inverse, index or counts asked)
with a hash table that costs ~1 us per element on large arrays with many distinct
values: 0.7 s for 786,432 cage ids at 131,072 GPUs, where a sort takes 0.04 s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np


def distinct(values: np.ndarray) -> np.ndarray:
    """The sorted distinct values of a 1-d array of numbers (np.unique(values), by a sort)."""
    ordered = np.sort(values, kind="stable")
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


# A piece of a row of text: a column (one str per row: an object array or a list) or a
# str every row shares (a separator).
Piece = np.ndarray | list | str

# Rows joined at a time by text_chunks: its matrix holds a reference per piece and row
# (8 bytes each), so a chunk of 8,192 rows of 40 pieces is 2.6 MB, whatever the table's size.
# Small enough that the chunk's string, its encoded bytes and the matrix come back from the
# malloc heap: a GraphML chunk of 65,536 edges was a 32 MB string, above glibc's largest mmap
# threshold, so every chunk was mapped afresh and each of its pages faulted in and zeroed by
# the kernel (graph.graphml at 131,072 GPUs: 113k page faults, 0.35 s system time; at 8,192
# rows 30k and 0.13 s, on tmpfs; user time the same).
CHUNK_ROWS = 1 << 13


def concat(pieces: Sequence[Piece]) -> np.ndarray:
    """Per row, its pieces joined (an object array of str): for short texts such as labels,
    each row's string is built in numpy's loop, not a Python call per row."""
    if all(isinstance(p, str) for p in pieces):
        raise ValueError("concat needs at least one column")
    out: np.ndarray | str = ""
    for piece in pieces:
        out = out + (piece if isinstance(piece, str) else np.asarray(piece, dtype=object))
    assert isinstance(out, np.ndarray)
    return out


def text_chunks(pieces: Sequence[Piece], rows: int, chunk_rows: int = CHUNK_ROWS) -> Iterator[str]:
    """The text of `rows` rows, each its pieces in order, in chunks of `chunk_rows` rows.
    A chunk is one str.join over a (rows, pieces) matrix read row by row: no string is built
    per row or per field (~40 ns a piece, where a format per row costs ~1.4 us)."""
    merged: list[Piece] = []
    for piece in pieces:  # adjacent constant pieces are one
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] = merged[-1] + piece
        elif isinstance(piece, list):  # an array once: a list's slice costs numpy a type check per value per chunk
            column = np.empty(len(piece), dtype=object)
            column[:] = piece
            merged.append(column)
        else:
            merged.append(piece)
    for lo in range(0, rows, chunk_rows):
        hi = min(rows, lo + chunk_rows)
        matrix = np.empty((hi - lo, len(merged)), dtype=object)
        for j, piece in enumerate(merged):
            matrix[:, j] = piece if isinstance(piece, str) else piece[lo:hi]
        yield "".join(matrix.ravel().tolist())
