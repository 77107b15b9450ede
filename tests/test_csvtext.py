"""compiler/render/csvtext.py: the CSV every table output writes (cabling, BOM, hosts, cable
validation), and the pre-escaped fields big tables are joined from, which must be what
Python's csv writer would write for the same value."""

from __future__ import annotations

import csv
import io

import pytest

from compiler.render.csvtext import csv_field, csv_text

VALUES = ["leaf-001", "Ethernet0", "a,b", 'say "hi"', "two\nlines", "", " spaced ", "ü-ß", 42, 0.5]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v) for v in VALUES])
def test_a_pre_escaped_field_is_what_the_csv_writer_writes(value):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(["x", value])
    assert "x," + csv_field(value) + "\n" == buf.getvalue()


def test_a_carriage_return_is_quoted_so_readers_keep_it_in_its_field():
    """The csv writer leaves a lone CR unquoted when rows end in LF; a reader splits the
    record there. csv_field quotes it."""
    assert csv_field("cr\rhere") == '"cr\rhere"'
    assert list(csv.reader(io.StringIO("x," + csv_field("cr\rhere") + "\n", newline=""))) == [["x", "cr\rhere"]]


def test_csv_text_has_unix_line_ends_and_reads_back():
    text = csv_text(["a", "b"], [["x,y", 'q"'], ["two\nlines", 3]])
    assert "\r" not in text.replace("\r\n", "")  # no CRLF record ends from the csv module's default
    assert text.endswith("\n") and not text.endswith("\r\n")
    assert list(csv.reader(io.StringIO(text))) == [["a", "b"], ["x,y", 'q"'], ["two\nlines", "3"]]


def test_csv_column_is_csv_field_of_each_value_and_the_list_itself_when_clean():
    from compiler.render.csvtext import csv_column

    clean = ["leaf-001", "Ethernet0", ""]
    assert csv_column(clean) is clean
    assert csv_column(VALUES) == [csv_field(v) for v in VALUES]
    assert csv_column([1, "a", 2.5]) == ["1", "a", "2.5"]
