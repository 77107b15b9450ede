"""Which medium each kind of link is built from, and the transceiver at each end.

Without a physical layout there are no lengths, so the choice is by what the ends
accept: multimode optics where the catalog has a transceiver for both ends' cages
(NVIDIA's SuperPOD compute fabrics are optical), single-mode where only that exists
(XDR's 200G lanes have no multimode). A spec may name the medium per link kind.
"""

from __future__ import annotations

from ..catalog import Catalog
from ..catalog.models import Transceiver
from ..plan.model import Port

AUTO_ORDER = ("mmf", "smf")


def transceiver(catalog: Catalog, media_id: str, port: Port) -> Transceiver | None:
    medium = catalog.media[media_id]
    if not medium.needs_transceivers:
        return None
    return catalog.transceiver_for(medium.fiber, port.form_factor, port.top, port.cage_gbps)


def choose(catalog: Catalog, requested: str | None, end_a: Port, end_b: Port) -> str:
    if requested:
        return requested
    for media_id in AUTO_ORDER:
        if transceiver(catalog, media_id, end_a) and transceiver(catalog, media_id, end_b):
            return media_id
    return AUTO_ORDER[0]
