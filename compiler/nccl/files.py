"""Which NCCL topology file a server type gets, in which style, and what to tell the user.

One decision shared by validation (notes in the summary) and the renderer (the file):
no file without an evidenced host topology; the full style falls back to the skeleton
when the catalog lacks NIC names or GPU sm; every written file passes the linter with
no error (an error here is a compiler bug).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..catalog.models import HostTopology
from .build import StyleUnavailable, topology_tree
from .lint import errors, lint
from .write import write


@dataclass(frozen=True)
class NcclFile:
    server: str
    path: str | None  # output path, None when no file is written
    style: str | None
    text: str | None
    notes: list[str] = field(default_factory=list)


def nccl_file(server: str, topo: HostTopology | None, style: str, why_none: str = "") -> NcclFile:
    if topo is None:
        why = why_none or "the catalog has no evidenced host topology for it (PCI bus ids of its GPUs and NICs)"
        return NcclFile(server, None, None, None, [
            f"nccl: no topology file for {server}: {why}; NCCL autodetects the host, and a made-up file would mislead it"])
    notes: list[str] = []
    try:
        tree = topology_tree(topo, style)
    except StyleUnavailable as exc:
        notes.append(f"nccl: {exc}; wrote the skeleton style")
        style = "skeleton"
        tree = topology_tree(topo, style)
    text = write(tree)
    findings = lint(text)
    bad = errors(findings)
    if bad:  # the catalog model admits only what NCCL reads: a failure is ours
        raise AssertionError(f"generated NCCL topology for {server} fails the linter:\n" + "\n".join(f.format() for f in bad))
    notes += [f"nccl: {server}: {f.message}" for f in findings]
    notes += [f"nccl: {server}: {n}" for n in topo.notes]
    return NcclFile(server, f"nccl/{server}.xml", style, text, notes)
