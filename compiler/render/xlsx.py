"""Spreadsheets (.xlsx): the one way the renderers write them, byte-identical across runs.

- `table_xlsx`: one sheet holding one plain table (a header row, then rows of text and
  numbers), the shape of a file with hundreds of thousands of rows (the Cable
  Validation Tool's P2P file). Written by rustpy-xlsxwriter (the Rust rust_xlsxwriter,
  constant memory): 400,000 six-column rows take ~1.6 s of CPU where XlsxWriter takes
  ~15 s and openpyxl's write-only mode ~27 s (both spend ~6 us of Python per cell).
  Where every value is plain text, the writer writes the package around the header row
  only and the rows are joined here from the columns in its own XML (plan/columns.py
  text_chunks), deflated at zlib level 1 (SHEET_LEVEL): 393,216 rows in ~1.1 s of CPU
  instead of ~2.3 s, the file 12.4 MB instead of 9.2 MB, every entry's content the same.
- `workbook`: a workbook of several laid-out sheets (widths, frozen header, filters,
  print setup, rows of different shapes: cabling.xlsx), through XlsxWriter in
  constant-memory mode, which streams each row to disk as it is written.

Reproducible: XlsxWriter takes a fixed created date (core.xml and the zip entries' times);
rust_xlsxwriter stamps the time of the save into docProps/core.xml, so that one entry is
rewritten with the fixed date and every other entry's compressed bytes are copied as
they are (re-compressing a 140 MB sheet would cost more than writing it).
"""

from __future__ import annotations

import datetime as _dt
import io
import re
import struct
import zipfile
import zlib
from contextlib import contextmanager
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import xlsxwriter

from ..plan.columns import Coded, text_chunks

# The created/modified date every spreadsheet carries, so two compiles give the same bytes.
FIXED_DATE = _dt.datetime(2000, 1, 1)
_FIXED_W3CDTF = FIXED_DATE.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
_DOS_DATE = ((FIXED_DATE.year - 1980) << 9) | (FIXED_DATE.month << 5) | FIXED_DATE.day
_CORE = "docProps/core.xml"
_SHEET = "xl/worksheets/sheet1.xml"
# zlib's fastest level for a table's sheet (table_xlsx): its XML is hundreds of MB of
# repeated markup; level 1 deflates 142 MB (393,216 rows) in 0.3 s of CPU to 12.4 MB,
# where level 6 takes 1.45 s for 9.4 MB (zlib-rs inside rust_xlsxwriter: 9.2 MB).
SHEET_LEVEL = 1


def table_xlsx(sheet: str, columns: Sequence[str], values: Sequence[np.ndarray | Coded]) -> bytes:
    """One sheet `sheet`: the header `columns`, then a row per index of the columns `values`
    (one object array per column of str, int, float; None: an empty cell; or a Coded column
    of str, whose table takes the XML around its cells once: plan/columns.py)."""
    from rustpy_xlsxwriter import FastExcel  # imported here: only the outputs that write a table load it

    rows = len(values[0]) if len(values) else 0
    plain = rows > 0 and all(_plain_text(v) for v in values)
    # A table of plain text: rust_xlsxwriter writes the package around a header-only sheet,
    # and the sheet's rows are joined here from the columns, in the writer's own XML.
    records = (dict(zip(columns, row, strict=True))
               for row in zip(*((v.values() if isinstance(v, Coded) else v).tolist() for v in values), strict=True))
    buf = io.BytesIO()
    FastExcel(buf).sheet(sheet, _with_header(columns, iter(()) if plain else records)).save()
    return _fixed_core_dates(buf.getvalue(), _sheet_rows(columns, values) if plain else None)


def _with_header(columns: Sequence[str], records: Iterator[dict]) -> Iterator[dict]:
    """The records, or for a table without rows one record of empty cells: the writer takes
    the header from the first record's keys, and an empty table still has its header."""
    first = next(records, None)
    yield first if first is not None else dict.fromkeys(columns)
    yield from records


def _plain_text(column: np.ndarray | Coded) -> bool:
    """Every value a non-empty ASCII str that the writer spells as it is in an inline string:
    nothing XML escapes, no control character (the writer spells them _xHHHH_), no space at
    either end (which it marks xml:space="preserve"). Checked by substring scans of one join
    of the distinct values (of a Coded column, the values of its table that rows use)."""
    if isinstance(column, Coded):
        used = np.zeros(column.table.size, dtype=bool)
        used[column.codes] = True
        column = column.table[used]
    try:  # each distinct value once: a column gathered from a few thousand names is a short text to scan
        joined = "\x01" + "\x01".join(set(column.tolist())) + "\x01"
    except TypeError:  # numbers or None
        return False
    if not joined.isascii() or any(s in joined for s in ('&', '<', '>', '"', "\x01\x01", "\x01 ", " \x01")):
        return False
    return _CONTROL.search(joined) is None


_CONTROL = re.compile("[\x00\x02-\x1f\x7f]")  # a character class: one fast scan (\x01 separates the values)


def _column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def _sheet_rows(columns: Sequence[str], values: Sequence[np.ndarray | Coded]) -> Callable[[bytes], Iterator[bytes]]:
    """The sheet's XML from the header-only sheet the writer wrote: its head (through the
    header row, the dimension set to the whole table), the rows as the writer spells
    inline strings, and its tail."""
    rows = len(values[0])
    last = _column_letter(len(columns) - 1)

    def sheet(header_only: bytes) -> Iterator[bytes]:
        head, tail = header_only.split(b"</row>", 1)
        head = re.sub(rb'<dimension ref="[^"]*"/>', f'<dimension ref="A1:{last}{rows + 1}"/>'.encode(), head, count=1)
        yield head + b"</row>"
        numbers = np.empty(rows, dtype=object)
        numbers[:] = list(map(str, range(2, rows + 2)))  # half the time of arange().astype(str).astype(object)
        pieces: list = ["<row r=\"", numbers, "\">"]
        for i, column in enumerate(values):
            pieces += [f'<c r="{_column_letter(i)}', pieces[1], '" t="inlineStr"><is><t>', column, "</t></is></c>"]
        pieces.append("</row>")
        for chunk in text_chunks(pieces, rows):
            yield chunk.encode("utf-8")
        yield tail[tail.index(b"</sheetData>"):]
    return sheet


@contextmanager
def workbook() -> Iterator[tuple[xlsxwriter.Workbook, io.BytesIO]]:
    """`with workbook() as (wb, buf): ...`, then buf.getvalue() is the file (XlsxWriter, constant memory)."""
    buf = io.BytesIO()
    # Text stays text (a port or label that starts with "=" or "http" is not a formula or a
    # link), and a NaN figure is an error cell rather than an exception.
    wb = xlsxwriter.Workbook(buf, {"constant_memory": True, "strings_to_formulas": False, "strings_to_urls": False,
                                   "nan_inf_to_errors": True})
    wb.set_properties({"created": FIXED_DATE})  # also the zip entries' times
    yield wb, buf
    wb.close()


def _fixed_core_dates(data: bytes, sheet: Callable[[bytes], Iterator[bytes]] | None = None) -> bytes:
    """The xlsx (a zip) with docProps/core.xml's created/modified set to FIXED_DATE and every
    entry's time to it; the other entries' compressed bytes copied unchanged. `sheet`: the
    first worksheet's XML made from the one written (table_xlsx), compressed here."""
    src = zipfile.ZipFile(io.BytesIO(data))
    infos = src.infolist()
    if any(i.file_size >= 0xFFFFFFFF or i.compress_size >= 0xFFFFFFFF for i in infos) or len(infos) >= 0xFFFF:
        return _repacked(src, sheet)  # zip64: let zipfile write the records (slower, same content)
    view = memoryview(data)
    local, central = io.BytesIO(), io.BytesIO()
    for info in infos:
        name = info.filename.encode()
        raw: bytes | memoryview
        if info.filename == _CORE:
            raw, crc, size = _deflated([_fixed_core(src.read(info.filename))], 6)
            method = zipfile.ZIP_DEFLATED
        elif info.filename == _SHEET and sheet is not None:
            raw, crc, size = _deflated(sheet(src.read(info.filename)), SHEET_LEVEL)
            if size >= 0xFFFFFFFF or len(raw) >= 0xFFFFFFFF:
                return _repacked(src, sheet)
            method = zipfile.ZIP_DEFLATED
        else:
            # the local header is 30 bytes, then the name and the extra field (lengths at 26 and 28)
            n_name, n_extra = struct.unpack_from("<HH", data, info.header_offset + 26)
            start = info.header_offset + 30 + n_name + n_extra
            raw = view[start:start + info.compress_size]
            crc, size, method = info.CRC, info.file_size, info.compress_type
        offset = local.tell()
        local.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, _DOS_DATE, crc, len(raw), size,
                                len(name), 0))
        local.write(name)
        local.write(raw)
        central.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, _DOS_DATE, crc, len(raw),
                                  size, len(name), 0, 0, 0, 0, 0, offset))
        central.write(name)
    directory = central.getvalue()
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(infos), len(infos), len(directory), local.tell(), 0)
    return local.getvalue() + directory + end


def _deflated(chunks: Iterable[bytes], level: int) -> tuple[bytes, int, int]:
    """Raw deflate of the chunks joined (as a zip entry holds it), their CRC-32 and size."""
    packer = zlib.compressobj(level, zlib.DEFLATED, -15)
    parts, crc, size = [], 0, 0
    for chunk in chunks:
        parts.append(packer.compress(chunk))
        crc, size = zlib.crc32(chunk, crc), size + len(chunk)
    parts.append(packer.flush())
    return b"".join(parts), crc, size


def _fixed_core(core_xml: bytes) -> bytes:
    return re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)",
                  lambda m: m.group(1) + _FIXED_W3CDTF + m.group(3), core_xml)


def _repacked(src: zipfile.ZipFile, sheet: Callable[[bytes], Iterator[bytes]] | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == _CORE:
                body = _fixed_core(body)
            elif info.filename == _SHEET and sheet is not None:
                body = b"".join(sheet(body))
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=FIXED_DATE.timetuple()[:6]), body)
    return buf.getvalue()
