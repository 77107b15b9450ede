"""`verify --write-guids DIR`: OpenSM's GUID files with the GUIDs the hardware has.

The compiled infiniband/ folder carries the plan's structural GUIDs (plan/guids.py),
which stand in until the hardware exists. Once `ibnetdiscover` has seen the fabric,
each node it found is identified by name and port (resolve.py), so its factory GUID
can take the plan's place:

- root.guids      node GUIDs of the top-tier switches found (OpenSM root_guid_file)
- compute.guids   port GUIDs of the servers' CA ports found (cn_guid_file)
- node-name-map   node GUID -> plan name, "<host> <panel port>" for a CA, as the
                  compiled node-name-map names them (node_name_map_name)
- guids.csv       every node found: GUID, port GUID, plan name, what it called itself

Only nodes that were identified are written. Each file is replaced atomically (written
beside it, then renamed); other files in DIR (opensm.conf) are left alone.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from pathlib import Path

from ..plan.model import Plan
from ..render.templates import render_template
from .discovery import Discovery
from .resolve import Resolved
from ..diagnostics import Diagnostic, SpecInvalid


class _Node:
    __slots__ = ("guid", "desc")

    def __init__(self, guid: int, desc: str):
        self.guid, self.desc = guid, desc


def guid_files(plan: Plan, disc: Discovery, res: Resolved) -> dict[str, str]:
    top = max((d.tier for d in plan.devices), default=0)
    roots, compute, names, rows = [], [], [], []
    for i, key in enumerate(res.keys):
        node = disc.nodes[key]
        dev = int(res.node_dev[i])
        if node.guid is None or dev < 0:
            continue
        d = plan.devices[dev]
        port = int(res.node_port[i])
        if node.kind == "ca":
            name = f"{d.name} {plan.layouts[d.layout].ports[port].name}" if port >= 0 else d.name
            port_guid = node.port_guids.get(1)
            if d.role == "server" and port_guid is not None:
                compute.append(port_guid)
        else:
            name = d.name
            port_guid = None
            if d.tier == top:
                roots.append(node.guid)
        names.append(_Node(node.guid, name))
        rows.append([f"0x{node.guid:016x}", f"0x{port_guid:016x}" if port_guid is not None else "", node.kind, name,
                     node.label])
    names.sort(key=lambda n: n.desc)
    rows.sort(key=lambda r: r[3])
    table = io.StringIO()
    w = csv.writer(table, lineterminator="\n")
    w.writerow(["guid", "port_guid", "kind", "plan_name", "node_description"])
    w.writerows(rows)
    return {
        "root.guids": render_template("infiniband/guids.j2", name=plan.name, guids=sorted(roots),
                                      what="node GUIDs of the top-tier (root) switches, as discovered"),
        "compute.guids": render_template("infiniband/guids.j2", name=plan.name, guids=sorted(compute),
                                         what="port GUIDs of the compute nodes' CA ports, as discovered"),
        "node-name-map": render_template("infiniband/node-name-map.j2", name=plan.name, nodes=names),
        "guids.csv": table.getvalue(),
    }


def write_guid_files(plan: Plan, disc: Discovery, res: Resolved, folder: Path) -> dict:
    if not any(n.guid is not None for n in disc.nodes.values()):
        raise SpecInvalid([Diagnostic("VERIFY_NO_GUIDS", "--write-guids needs ibnetdiscover output among the inputs: "
                                      "none of them carries InfiniBand GUIDs", path="--write-guids",
                                      hint="run ibnetdiscover on a host of the subnet and give its output with --as-built")])
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    files = guid_files(plan, disc, res)
    for name, text in files.items():
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, folder / name)
    return {"folder": str(folder), "files": sorted(files),
            "nodes": sum(1 for ln in files["node-name-map"].splitlines() if ln.startswith("0x"))}
