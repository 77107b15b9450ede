"""What each rack draws: its devices at catalog power, plus the pluggable optics in its
switches' cages, with what is unknown kept apart (never counted as 0 W unsaid).

Why the optics: a switch's published power excludes its modules (Tomahawk 5 boxes: 913 W
"typical without optics", UfiSpace S9321-64E), and 64 cages of 17 W twin-port modules add more
than that again. A server's figure is its system maximum (DGX: PSU-rated), which we take
to include its own NIC modules, so server-side optics are not added. Active copper draws
at most 1.5 W per end (NVIDIA's LinkX 100G-PAM4 overview) and is left out.

O(devices + links) numpy; memoised on the plan (`plan.memo`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Plan
from .views import cage_table, transceiver_part


@dataclass(frozen=True)
class RackDraw:
    """Per rack (index as plan.physical.racks)."""

    known_w: np.ndarray  # float64: devices with a published power, plus optics with one
    unknown: np.ndarray  # int64: devices without a published power, or holding a module without one
    optics_w: np.ndarray  # float64: of known_w, the switch-side modules

    def unknown_models(self, plan: Plan, rack: int) -> list[str]:
        """The models in `rack` whose draw (or whose modules' draw) is unpublished."""
        assert plan.physical is not None  # racks exist only with a physical layout
        dev = np.nonzero((plan.physical.dev_rack == rack) & _device_unknown(plan))[0]
        return sorted({plan.devices[i].model for i in dev.tolist()})


def secondary_power_models(plan: Plan) -> dict[str, str]:
    """Models in the plan whose power figure is secondary (a third party quoting the vendor
    page, not the page itself) -> that source: budgets use them, and say so."""
    facts = plan.view.facts
    out = {}
    for model in sorted({d.model for d in plan.devices}):
        rec = facts.model(model)
        if rec is not None and rec.power_confidence == "secondary" and rec.power_w is not None:
            out[model] = rec.power_source or ""
    return out


def secondary_note(models: dict[str, str]) -> str:
    """One clause for reports: which figures are secondary."""
    return (f"power of {', '.join(models)} from a secondary source (a third party quoting the vendor page)"
            if models else "")


def switch_optics_w(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Per device: the published power of the modules in its cages (one per cage and
    medium in use, as the BOM counts them) and whether any of them has none. Servers and
    other endpoints: 0 (see the module doc)."""
    return plan.memo("switch_optics_w", _switch_optics_w)


def _switch_optics_w(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    n = len(plan.devices)
    watts, unknown = np.zeros(n), np.zeros(n, dtype=bool)
    links = plan.links
    if not len(links):
        return watts, unknown
    tiers = np.fromiter((d.tier for d in plan.devices), dtype=np.int64, count=n)
    cage_of_port, type_of_port, type_keys, _ = plan.memo("cage_table", cage_table)
    offsets = plan.port_offsets()
    dev = np.concatenate([links.a_dev, links.b_dev]).astype(np.int64)
    port = offsets[dev] + np.concatenate([links.a_port, links.b_port])
    media = np.concatenate([links.media, links.media]).astype(np.int64)
    at_switch = tiers[dev] > 0
    dev, port, media = dev[at_switch], port[at_switch], media[at_switch]
    n_media = len(plan.media)
    _, first = np.unique(cage_of_port[port] * n_media + media, return_index=True)
    dev, ctype, media = dev[first], type_of_port[port[first]], media[first]
    combos, inverse = np.unique(ctype * n_media + media, return_inverse=True)
    per_combo = np.array([_module_w(plan, type_keys[c // n_media], plan.media[c % n_media]) for c in combos.tolist()])
    module_w = per_combo[inverse]
    watts += np.bincount(dev, weights=np.nan_to_num(module_w), minlength=n)
    unknown |= np.bincount(dev, weights=np.isnan(module_w), minlength=n) > 0
    return watts, unknown


def _module_w(plan: Plan, cage_key: str, media_id: str) -> float:
    part = transceiver_part(plan.view.facts, media_id, cage_key)
    if part is None:
        return 0.0  # copper: no module
    rec = plan.view.facts.transceivers.get(part)
    return float(rec.power_w) if rec is not None and rec.power_w is not None else np.nan


def _device_unknown(plan: Plan) -> np.ndarray:
    return plan.memo("rack_draw_unknown", lambda p: np.isnan(p.physical.dev_power_w) | switch_optics_w(p)[1])


def rack_draw(plan: Plan) -> RackDraw:
    """Every rack's draw, from the plan with every fabric (racks are shared): call it on
    the whole plan, not one fabric's view."""
    return plan.memo("rack_draw", _rack_draw)


def _rack_draw(plan: Plan) -> RackDraw:
    phys = plan.physical
    assert phys is not None  # racks exist only with a physical layout
    if phys.whole is not None:  # our bug: a fabric's view holds only its own devices
        raise ValueError("rack_draw needs the whole plan (every fabric shares the racks), not one fabric's view")
    racks = len(phys.racks)
    optics, _ = switch_optics_w(plan)
    known = np.nan_to_num(phys.dev_power_w) + optics
    return RackDraw(known_w=np.bincount(phys.dev_rack, weights=known, minlength=racks),
                    unknown=np.bincount(phys.dev_rack, weights=_device_unknown(plan), minlength=racks).astype(np.int64),
                    optics_w=np.bincount(phys.dev_rack, weights=optics, minlength=racks))
