"""nccl/<server-type>.xml: the NCCL_TOPO_FILE for each server type in the plan that has
an evidenced host topology (compiler/nccl/files.py decides; the notes say when not)."""

from __future__ import annotations

from ..catalog.models import HostTopology
from ..check import CheckResults
from ..nccl.files import nccl_file
from ..plan.model import Plan
from .writer import OutputDir


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    view = plan.view
    style = view.design.hosts.nccl_topology if view.design.hosts is not None else "skeleton"
    for server, record in sorted(view.facts.host_topology.items()):
        if record is None:
            continue
        f = nccl_file(server, HostTopology.model_validate(record.catalog_record), style)
        assert f.path is not None and f.text is not None  # a file is made whenever the topology is known
        out.write_text(f.path, f.text)
