"""Cable rows seen from racks: which cables each rack sheet lists, in U and port order.

Shared by the workbook and the printable labels. A cable appears on the sheet of each
rack it ends in (once if both ends are in the same rack), sorted by the U then the
port index of its end in that rack. numpy lexsort, O(links log links).
"""

from __future__ import annotations

import numpy as np

from ..plan.model import Plan


def rack_order(plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rack, link, end) arrays in sheet order; end 0 = A, 1 = B; sorted by rack, U, port."""
    phys = plan.physical
    assert phys is not None
    links = plan.links
    n = len(links)
    ra, rb = phys.dev_rack[links.a_dev], phys.dev_rack[links.b_dev]
    offsets = plan.port_offsets()
    keep_b = rb != ra
    rack = np.concatenate([ra, rb[keep_b]]).astype(np.int64)
    link = np.concatenate([np.arange(n), np.nonzero(keep_b)[0]])
    end = np.concatenate([np.zeros(n, dtype=np.int8), np.ones(int(keep_b.sum()), dtype=np.int8)])
    dev = np.where(end == 0, links.a_dev[link], links.b_dev[link])
    port = np.where(end == 0, offsets[links.a_dev[link]] + links.a_port[link], offsets[links.b_dev[link]] + links.b_port[link])
    u = phys.dev_u[dev].astype(np.int64)
    order = np.lexsort((link, port, u, rack))
    return rack[order], link[order], end[order]
