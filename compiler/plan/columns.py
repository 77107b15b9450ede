"""Column helpers the plan's views and writers share, where numpy's own call is slow.

numpy 2.3+ answers np.unique(x) on an integer array (no inverse, index or counts asked)
with a hash table that costs ~1 us per element on large arrays with many distinct
values: 0.7 s for 786,432 cage ids at 131,072 GPUs, where a sort takes 0.04 s.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

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


def present(values: np.ndarray, n: int) -> np.ndarray:
    """distinct(values) for values in 0..n-1 (device or switch indices), by marking them: one
    pass, no sort. Values outside that range go through distinct."""
    if values.size and (int(values.min()) < 0 or int(values.max()) >= n):
        return distinct(values)
    seen = np.zeros(n, dtype=bool)
    seen[values] = True
    return np.flatnonzero(seen).astype(values.dtype, copy=False)


def ranges(counts: np.ndarray) -> np.ndarray:
    """0..c-1 for every c in counts, concatenated (each run's positions, no Python step per run)."""
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(int(counts.sum())) - starts


def groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(values, return_index=True, return_inverse=True) of a 1-d array of numbers:
    the sorted distinct values, each one's first position, and each value's group, by a
    stable argsort. That is near linear on the nearly sorted columns a plan's links come in
    (timsort runs), where np.unique's quicksort is not: the 2M-entry switch adjacency of
    524,288 GPUs in 0.03 s instead of 0.16."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.empty(ordered.size, dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(ordered.size, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], order[new], inverse


def row_groups(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(np.stack(columns, axis=1), axis=0, return_index=True, return_inverse=True)
    without the records: a stable lexsort of the integer columns, so the groups come in the
    same (lexicographic) order, each with its lowest row, and the inverse per row."""
    order = np.lexsort(columns[::-1])
    new = np.zeros(order.size, dtype=bool)
    if order.size:
        new[0] = True
        for col in columns:
            ordered = col[order]
            new[1:] |= ordered[1:] != ordered[:-1]
    group = np.cumsum(new) - 1
    sub = np.empty(order.size, dtype=np.int64)
    sub[order] = group
    return order[new], sub


@dataclass(frozen=True, slots=True)
class Coded:
    """A column given as a table of texts and each row's index into it (the column is
    table[codes]): text_chunks joins a constant piece beside it into the table once, so the
    separators around a column drawn from a few values (a kind, a speed, a device's name)
    take no place of their own in every row (each place costs ~16 ns a row)."""

    table: np.ndarray  # object array of str
    codes: np.ndarray  # per row, an index into table

    def __len__(self) -> int:
        return int(self.codes.size)

    def values(self) -> np.ndarray:
        """The column itself, one str per row."""
        return self.table[self.codes]


# A piece of a row of text: a column (one str per row: an object array, a list or Coded)
# or a str every row shares (a separator).
Piece = np.ndarray | list | str | Coded

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
        if isinstance(piece, Coded):
            piece = piece.values()
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
    merged = _constants_into_tables(merged, rows)
    for lo in range(0, rows, chunk_rows):
        hi = min(rows, lo + chunk_rows)
        matrix = np.empty((hi - lo, len(merged)), dtype=object)
        for j, piece in enumerate(merged):
            if isinstance(piece, str):
                matrix[:, j] = piece
            elif isinstance(piece, Coded):
                matrix[:, j] = piece.table[piece.codes[lo:hi]]
            else:
                matrix[:, j] = piece[lo:hi]
        yield "".join(matrix.ravel().tolist())


def _constants_into_tables(pieces: list[Piece], rows: int) -> list[Piece]:
    """The pieces with each constant joined into the table of a Coded column beside it (the
    one before it, else the one after), where the table is small beside the rows (a table
    of a million ports is not copied for 400k rows)."""
    out: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, Coded) and 4 * piece.table.size <= rows:
            if out and isinstance(out[-1], str):
                piece = Coded(out.pop() + piece.table, piece.codes)
            out.append(piece)
        elif isinstance(piece, str) and out and isinstance(out[-1], Coded) and 4 * out[-1].table.size <= rows:
            out[-1] = Coded(out[-1].table + piece, out[-1].codes)
        else:
            out.append(piece)
    return out


def equal_rows(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray | None = None,
               alone: np.ndarray | None = None) -> np.ndarray:
    """Per row of a CSR structure (each row's indices in one canonical order), a class
    numbered in order of its lowest row: rows with the same indices (and `data`, where
    given) share one; rows marked `alone` have their own. Grouped by two random 64-bit
    sums over the row, then compared entry by entry, so a hash collision only leaves a row
    alone: O(entries), where sorting the rows would cost a sort of every entry."""
    n = indptr.size - 1
    deg = np.diff(indptr)
    row = np.repeat(np.arange(n), deg)
    rng = np.random.default_rng(0)  # fixed: classes are verified, the seed only spreads keys
    top = int(indices.max(initial=0)) + 1
    r1, r2 = (rng.integers(1, 2**63, size=top, dtype=np.uint64) for _ in range(2))
    w = np.ones(indices.size, dtype=np.uint64) if data is None else data.astype(np.uint64)
    r1_at = r1[indices]
    h1, h2 = (_row_sums(v, indptr) for v in (r1_at * w, r2[indices] * (w + r1_at)))
    single = np.zeros(n, dtype=bool) if alone is None else alone
    first, cls = row_groups(deg.astype(np.uint64), h1, h2, np.where(single, np.arange(n), 0).astype(np.uint64))
    rep = first[cls]  # the lowest row of each class
    at_rep = indptr[rep[row]] + np.arange(indices.size) - indptr[row]
    differs = indices != indices[at_rep]
    if data is not None:
        differs |= data != data[at_rep]
    bad = np.zeros(n, dtype=bool)
    bad[row[differs]] = True
    rep = np.where(bad, np.arange(n), rep)
    return np.unique(rep, return_inverse=True)[1].ravel()


def _row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Per CSR row, the uint64 sum of its values (wrapping: a hash, not a count; empty rows 0),
    by reduceat where np.add.at is several times slower."""
    deg = np.diff(indptr)
    sums = np.zeros(deg.size, dtype=np.uint64)
    full = deg > 0
    if full.any():  # the non-empty rows' starts rise strictly, each row ending where the next starts
        sums[full] = np.add.reduceat(values, indptr[:-1][full])
    return sums
