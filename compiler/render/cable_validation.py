"""cable-validation/: the plan as NVIDIA UFM Cable Validation Tool input, for sites that
validate cabling with that tool.

Followed exactly as documented (docs.nvidia.com/networking/display/cablevalidationtool,
"P2P File" and "Optional Files", v1.4.0 to v1.5.0):
- p2p.xlsx: an Excel file whose sheet has the columns `A-Node Name`, `A-Type` (Host or
  Switch), `A-Port`, `Z-Node Name`, `Z-Type`, `Z-Port`, one row per cable. A port is "a
  single number or a split port (e.g. 1/2)": an InfiniBand switch port is its IB port
  number (the documented QM9700 example numbers its ports 1, 2, ...), an Ethernet switch
  port its NOS interface name (the NVOS example writes sw1p1), a host port the number
  of its HCA port, which the tool maps to an RDMA device (1 -> mlx5_0 by default);
- hca_mapping.csv: `port,hca-name` for the compute servers, from the catalog's mlx5 name
  of each NIC port, because the default mapping (port i -> mlx5_{i-1}) is wrong for
  most DGX systems (a DGX H100's first compute port is mlx5_0, its second mlx5_3).
Not written where the switch's IB port numbering is not in the catalog, nor where the
cables do not fit one Excel sheet (EXCEL_MAX_ROWS: above about 1 million cables, e.g.
524,288 GPUs on three tiers); the README in the folder says so. The documentation's own sample sheets also show Rack and U columns
that its column list does not define; they are not written.
"""

from __future__ import annotations

import numpy as np

from ..catalog.nics import nic_devices
from ..check import CheckResults
from ..plan.columns import Coded
from ..plan.model import Plan
from ..plan.views import floor_port_names
from .csvtext import csv_text
from .infiniband import ib_view
from ..plan.naming import SWITCH_ROLES
from .templates import render_template
from .writer import OutputDir
from .xlsx import table_xlsx

FOLDER = "cable-validation"
COLUMNS = ["A-Node Name", "A-Type", "A-Port", "Z-Node Name", "Z-Type", "Z-Port"]


def _ports(plan: Plan, ib: bool) -> np.ndarray:
    """Per global port, how the tool names it (see the module doc): a switch port as its
    NOS names it, as the cabling sheet does (views.floor_port_names)."""
    ib_numbers = plan.memo("ib_view", ib_view) if ib else None
    out = plan.memo("floor_port_names", floor_port_names).copy()
    numbers: dict[int, list[str]] = {}  # HCA port numbers "1".."n", per port count
    for d in plan.devices:
        if d.role not in SWITCH_ROLES:
            n = len(plan.layouts[d.layout])
            if n not in numbers:
                numbers[n] = [str(i + 1) for i in range(n)]
            out[d.port_offset:d.port_offset + n] = numbers[n]
    if ib:
        assert ib_numbers is not None  # made above when ib
        links = plan.links
        offsets = plan.port_offsets()
        is_switch = np.array([d.role in SWITCH_ROLES for d in plan.devices], dtype=bool)
        for dev, port, number in ((links.a_dev, links.a_port, ib_numbers.a_port), (links.b_dev, links.b_port, ib_numbers.b_port)):
            switch = is_switch[dev]
            out[(offsets[dev] + port)[switch]] = np.array([str(n) for n in number[switch].tolist()], dtype=object)
    return out


# An Excel sheet holds at most 1,048,576 rows (the header and one row per cable): the
# limit of the file format, which rust_xlsxwriter enforces and Excel itself would apply.
EXCEL_MAX_ROWS = 1_048_576


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    proto = plan.view.protocol
    if proto is None:
        return
    ib = proto == "infiniband"
    server = plan.view.design.server
    compute = next((d for d in plan.devices if d.role == "server"), None)
    devices = nic_devices(compute.layout) if compute is not None else []
    mapping = [(i + 1, dev) for i, dev in enumerate(devices) if dev]
    if ib and not plan.memo("ib_view", ib_view).port_numbers_known:
        out.write_text(f"{FOLDER}/README.md", render_template(
            "cable-validation/README.md.j2", name=plan.name, written=False, server=server, mapping=mapping,
            why=f"{plan.view.model_id('leaf')}: its InfiniBand port numbering is not in the catalog"))
        return
    links = plan.links
    if len(links) + 1 > EXCEL_MAX_ROWS:
        out.write_text(f"{FOLDER}/README.md", render_template(
            "cable-validation/README.md.j2", name=plan.name, written=False, server=server, mapping=mapping,
            why=(f"{len(links):,} cables do not fit one Excel sheet ({EXCEL_MAX_ROWS - 1:,} rows below the header "
                 "at most, the limit of the file format); cabling.csv lists every cable"
                 + ("; the tool also reads a topo file (infiniband/)" if ib else ""))))
        return
    offsets = plan.port_offsets()
    ports = _ports(plan, ib)
    names = np.array([d.name for d in plan.devices], dtype=object)
    kinds = np.array(["Switch" if d.role in SWITCH_ROLES else "Host" for d in plan.devices], dtype=object)
    a, b = links.a_dev, links.b_dev
    values = [Coded(names, a), Coded(kinds, a), Coded(ports, offsets[a] + links.a_port),
              Coded(names, b), Coded(kinds, b), Coded(ports, offsets[b] + links.b_port)]
    out.write_bytes(f"{FOLDER}/p2p.xlsx", table_xlsx("P2P", COLUMNS, values))
    if mapping:
        out.write_text(f"{FOLDER}/hca_mapping.csv", csv_text(["port", "hca-name"], mapping))
    out.write_text(f"{FOLDER}/README.md", render_template(
        "cable-validation/README.md.j2", name=plan.name, written=True, server=server, mapping=mapping, why="",
        ib=ib, cables=len(links)))
