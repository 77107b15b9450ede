"""CSV text the same on every machine: '\\n' line ends, minimal quoting, UTF-8."""

from __future__ import annotations

import csv
import io


def csv_text(header: list[str], rows) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()
