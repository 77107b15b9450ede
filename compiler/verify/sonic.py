"""SONiC `show lldp table` (sonic-utilities scripts/lldpshow).

Format (lldpshow: `tabulate(rows, header)` in tabulate's "simple" style, then a rule
and a count):

    Capability codes: (R) Router, (B) Bridge, (O) Other
    LocalPort    RemoteDevice    RemotePortID    Capability    RemotePortDescr
    -----------  --------------  --------------  ------------  -----------------
    Ethernet0    spine-01        Ethernet8       BR            leaf-001:Ethernet0
    --------------------------------------------------
    Total entries displayed:  1

Columns are cut where the dashed rule under the header puts them (a RemoteDevice can
be empty). The reporting switch is the prompt's host (`admin@leaf-001:~$ show lldp
table`) when the capture has one, else the file name.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, SpecInvalid
from .discovery import Discovery
from .lldp import neighbour, reporter

FORMAT = "sonic-show-lldp-table"
_HEADER = re.compile(r"^\s*LocalPort\s+RemoteDevice\s+RemotePortID\s+Capability\s+RemotePortDescr\s*$")
_PROMPT = re.compile(r"^\S+@([A-Za-z0-9._-]+):\S*\$\s+(?:show lldp table|lldpshow)")


def looks_like(text: str) -> bool:
    return any(_HEADER.match(line) for line in text.splitlines()[:20])


def parse(text: str, file: str, device: str) -> Discovery:
    lines = text.splitlines()
    for line in lines[:5]:
        m = _PROMPT.match(line)
        if m:
            device = m.group(1)
    head = next((i for i, line in enumerate(lines) if _HEADER.match(line)), None)
    if head is None or head + 1 >= len(lines) or not re.fullmatch(r"\s*-+(\s+-+)*\s*", lines[head + 1]):
        raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "no `show lldp table` header with its dashed rule", file=file,
                                      line=(head or 0) + 1, hint="give the command's output unchanged")])
    spans = [m.span() for m in re.finditer(r"-+", lines[head + 1])]
    disc = Discovery(formats=[FORMAT], files=[file])
    local = reporter(disc, device, f"{file}:{head + 1}")
    for lineno in range(head + 2, len(lines)):
        line = lines[lineno]
        if not line.strip():
            continue
        if re.fullmatch(r"-+", line.strip()) or line.startswith("Total entries"):
            break
        cells = _cells(line, spans)
        local_port, remote, port_id, _cap, descr = cells
        if not local_port:
            raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "row without a LocalPort", file=file, line=lineno + 1)])
        # RemotePortDescr on a SONiC neighbour reads "<its host>:<description>"; the id is the interface
        neighbour(disc, local, local_port, remote, port_id, descr or None, True, f"{file}:{lineno + 1}")
    return disc


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    """Cut a row where the rule's columns start: each cell runs to the next column's start
    (the last to the end of the line), so a long value that overruns its dashes is kept."""
    starts = [s for s, _ in spans] + [len(line) + 1]
    cells = [line[starts[i]:starts[i + 1]].strip() for i in range(len(spans))]
    return (cells + [""] * 5)[:5]
