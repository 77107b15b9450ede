"""A technician's marks from the floor: per cable id, `done` or `problem`, read as an
as-built sheet (asbuilt.py) so that `clusterc verify --marks` checks them like any input.

Format: a CSV with a header holding `cable_id` and `status` (floor/marks.csv, the template
`compile` writes) or `done` (a cabling.xlsx rack sheet saved as CSV). A status of
`done` (or `x`, `yes`, `ok`, a check mark) says the cable is in place as planned;
`problem` (or text starting with it: `problem: bent MPO`) says it is not; a blank cell
says nothing about the cable. Several files may be given (one per rack sheet): a cable
marked `problem` anywhere is a problem.

A marked cable's devices count as inspected (asbuilt.py): a cable marked `done` is the
planned cable, all its logical links; one marked `problem` is absent, so verify reports
it `missing` with its fix; an unmarked cable of a device that has marks is missing too,
so mark every cable of the racks you hand back. Cable ids are the physical cables'
(plan/cables.py), as the pull sheets, labels and cabling.csv print them; the management
cords (plan.fabrics.management_cords) are no plan links, so verify does not check them:
their marks are counted and left out.
"""

from __future__ import annotations

import csv
import difflib
import io
from pathlib import Path

import numpy as np

from ..diagnostics import Diagnostic, SpecInvalid
from ..plan.cables import physical_cable_ids, physical_cables
from ..plan.fabrics import management_cords
from ..plan.model import Plan
from ..plan.views import floor_port_names
from . import asbuilt
from .discovery import Discovery

FORMAT = "floor-marks"
DONE = frozenset({"done", "x", "yes", "ok", "✓", "✔", "y"})
PROBLEM = "problem"


def read_marks(paths: list[Path]) -> tuple[dict[str, tuple[str, str]], list[str]]:
    """Per cable id its mark (`done` or `problem`) and where it was read (file:line), and
    the files read. A cable marked both ways is a problem."""
    marks: dict[str, tuple[str, str]] = {}
    errors: list[Diagnostic] = []
    files = []
    for path in paths:
        file = str(path)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(Diagnostic("MARKS_UNREADABLE", f"cannot read: {getattr(exc, 'strerror', None) or exc}", file=file))
            continue
        files.append(file)
        reader = csv.reader(io.StringIO(text))
        header = [h.strip().lower() for h in next(reader, [])]
        column = "status" if "status" in header else "done" if "done" in header else None
        if "cable_id" not in header or column is None:
            errors.append(Diagnostic("MARKS_UNREADABLE", f"the header has {', '.join(header) or 'no columns'}", file=file,
                                     line=1, hint="a marks sheet has the columns cable_id and status (floor/marks.csv) "
                                                  "or cable_id and done (a cabling.xlsx rack sheet saved as CSV)"))
            continue
        cid_col, mark_col = header.index("cable_id"), header.index(column)
        for lineno, row in enumerate(reader, start=2):
            if len(row) <= max(cid_col, mark_col) or not row[cid_col].strip():
                continue
            cid, value = row[cid_col].strip(), row[mark_col].strip().lower()
            if not value:
                continue
            if value in DONE:
                status = "done"
            elif value.startswith(PROBLEM):
                status = PROBLEM
            else:
                errors.append(Diagnostic("MARKS_UNREADABLE", f"cable {cid}: mark {row[mark_col].strip()!r} is neither done "
                                         "nor problem", file=file, line=lineno, column=mark_col + 1,
                                         hint="write done (or x) for a cable in place, problem for one that is not"))
                continue
            if marks.get(cid, ("", ""))[0] != PROBLEM:
                marks[cid] = (status, f"{file}:{lineno}")
    if errors:
        raise SpecInvalid(errors)
    return marks, files


def marks_discovery(plan: Plan, paths: list[Path]) -> Discovery:
    """The marks as an as-built discovery of the plan's cables (module doc)."""
    marks, files = read_marks(paths)
    ids = physical_cable_ids(plan)
    index = {cid: k for k, cid in enumerate(ids)}
    cords = {c.cable_id for c in management_cords(plan)}
    unknown = sorted(cid for cid in marks if cid not in index and cid not in cords)
    if unknown:
        raise SpecInvalid([Diagnostic("MARKS_UNKNOWN_CABLE", f"cable {cid} is not in the plan", file=marks[cid][1].rsplit(":", 1)[0],
                                      line=int(marks[cid][1].rsplit(":", 1)[1]),
                                      hint=_did_you_mean(cid, ids)) for cid in unknown[:20]])
    cables = physical_cables(plan)
    links = plan.links
    names = plan.memo("floor_port_names", floor_port_names)
    offsets = plan.port_offsets()
    dev_names = [d.name for d in plan.devices]
    a_port = names[offsets[links.a_dev] + links.a_port] if len(links) else np.zeros(0, dtype=object)
    b_port = names[offsets[links.b_dev] + links.b_port] if len(links) else np.zeros(0, dtype=object)
    disc = Discovery(formats=[FORMAT] * len(files), files=files)
    for cid in sorted(marks, key=lambda c: index.get(c, -1)):
        if cid not in index:  # a management cord: not a link of the plan
            continue
        status, source = marks[cid]
        for i in cables.links_of(index[cid]):
            a, b = dev_names[int(links.a_dev[i])], dev_names[int(links.b_dev[i])]
            for dev in (a, b):  # both devices inspected (asbuilt.py)
                disc.node(asbuilt.node_key(dev), dev, "system", source).reported = True
            if status == "done":  # the planned cable; a problem is a cable not in place
                disc.link(asbuilt.node_key(a), (str(a_port[i]),), asbuilt.node_key(b), (str(b_port[i]),), source)
    return disc


def _did_you_mean(cid: str, ids: list[str]) -> str:
    close = difflib.get_close_matches(cid, ids, n=1)
    return f"did you mean {close[0]}?" if close else "the cable ids are those of cabling.csv and the pull sheets"
