"""Spreadsheets (.xlsx): the one way the renderers write them, byte-identical across runs.

- `table_xlsx`: one sheet holding one plain table (a header row, then rows of text and
  numbers), the shape of a file with hundreds of thousands of rows (the Cable
  Validation Tool's P2P file). Written by rustpy-xlsxwriter (the Rust rust_xlsxwriter,
  constant memory): 400,000 six-column rows take ~1.6 s of CPU where XlsxWriter takes
  ~15 s and openpyxl's write-only mode ~27 s (both spend ~6 us of Python per cell).
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
from collections.abc import Iterable, Iterator, Sequence

import xlsxwriter

# The created/modified date every spreadsheet carries, so two compiles give the same bytes.
FIXED_DATE = _dt.datetime(2000, 1, 1)
_FIXED_W3CDTF = FIXED_DATE.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
_DOS_DATE = ((FIXED_DATE.year - 1980) << 9) | (FIXED_DATE.month << 5) | FIXED_DATE.day
_CORE = "docProps/core.xml"


def table_xlsx(sheet: str, columns: Sequence[str], rows: Iterable[Sequence]) -> bytes:
    """One sheet `sheet`: the header `columns`, then `rows` (str, int, float; None: an empty cell)."""
    from rustpy_xlsxwriter import FastExcel  # imported here: only the outputs that write a table load it

    records = (dict(zip(columns, row, strict=True)) for row in rows)
    buf = io.BytesIO()
    FastExcel(buf).sheet(sheet, _with_header(columns, records)).save()
    return _fixed_core_dates(buf.getvalue())


def _with_header(columns: Sequence[str], records: Iterator[dict]) -> Iterator[dict]:
    """The records, or for a table without rows one record of empty cells: the writer takes
    the header from the first record's keys, and an empty table still has its header."""
    first = next(records, None)
    yield first if first is not None else dict.fromkeys(columns)
    yield from records


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


def _fixed_core_dates(data: bytes) -> bytes:
    """The xlsx (a zip) with docProps/core.xml's created/modified set to FIXED_DATE and every
    entry's time to it; the other entries' compressed bytes copied unchanged."""
    src = zipfile.ZipFile(io.BytesIO(data))
    infos = src.infolist()
    if any(i.file_size >= 0xFFFFFFFF or i.compress_size >= 0xFFFFFFFF for i in infos) or len(infos) >= 0xFFFF:
        return _repacked(src)  # zip64: let zipfile write the records (slower, same content)
    view = memoryview(data)
    local, central = io.BytesIO(), io.BytesIO()
    for info in infos:
        name = info.filename.encode()
        if info.filename == _CORE:
            body = _fixed_core(src.read(info.filename))
            packer = zlib.compressobj(6, zlib.DEFLATED, -15)
            raw: bytes | memoryview = packer.compress(body) + packer.flush()
            crc, size, method = zlib.crc32(body), len(body), zipfile.ZIP_DEFLATED
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


def _fixed_core(core_xml: bytes) -> bytes:
    return re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:\2>)",
                  lambda m: m.group(1) + _FIXED_W3CDTF + m.group(3), core_xml)


def _repacked(src: zipfile.ZipFile) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == _CORE:
                body = _fixed_core(body)
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=FIXED_DATE.timetuple()[:6]), body)
    return buf.getvalue()
