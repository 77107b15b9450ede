"""Cable lengths from rack positions: a rule-based routed-length model, vectorised.

    in one rack:      L = |U_a - U_b| x 44.45 mm + in_rack
    between racks:    L = v_a + v_b + h_run
                      v   = (rack_height_U - port_U) x 44.45 mm + tray_drop   (port up to the overhead tray)
                      h_run = |position_a - position_b| x rack_width + |row_a - row_b| x row_pitch
    ordered length  = L + max(slack_fraction x L, slack_min), rounded up to an orderable length

A port's U is the top U of its device (ports sit on the front panel; the model does
not resolve a 10U chassis' port height finer than that). The constants are the
spec's `layout.cabling`; the statement goes into every output that shows lengths.
"""

from __future__ import annotations

import numpy as np

from ..plan.model import Plan
from ..plan.physical import U_M, Physical
from ..spec.model import CableModel


def statement(model: CableModel, rack_width_m: float, row_pitch_m: float) -> str:
    return (f"length = in one rack: |dU| x 0.04445 m + {model.in_rack_m:g} m; between racks: "
            f"(rack top - port U) x 0.04445 m + {model.tray_drop_m:g} m at each end + |d position| x {rack_width_m:g} m "
            f"+ |d row| x {row_pitch_m:g} m; plus slack max({model.slack_fraction:.0%}, {model.slack_min_m:g} m); "
            f"a port's U is its device's top U; rounded up to the medium's orderable lengths")


def link_lengths(plan: Plan, model: CableModel) -> np.ndarray:
    """Modelled length (routed + slack) in metres per link, float64."""
    assert plan.physical is not None
    return pair_lengths(plan.physical, plan.links.a_dev, plan.links.b_dev, model)


def pair_lengths(phys: Physical, a_dev: np.ndarray, b_dev: np.ndarray, model: CableModel) -> np.ndarray:
    """Modelled length (routed + slack) in metres of a cable between each pair of devices
    (a_dev[k], b_dev[k]): a link's, or a cord between ports the layouts do not hold (a
    switch's management port). float64."""
    row = np.array([r.row_index for r in phys.racks], dtype=np.float64)
    pos = np.array([r.position for r in phys.racks], dtype=np.float64)
    top = np.array([r.height_u for r in phys.racks], dtype=np.float64)
    port_u = (phys.dev_u.astype(np.float64) + phys.dev_height_u - 1)
    ra, rb = phys.dev_rack[a_dev], phys.dev_rack[b_dev]
    ua, ub = port_u[a_dev], port_u[b_dev]
    same = ra == rb
    in_rack = np.abs(ua - ub) * U_M + model.in_rack_m
    vertical = (top[ra] - ua) * U_M + (top[rb] - ub) * U_M + 2 * model.tray_drop_m
    horizontal = np.abs(pos[ra] - pos[rb]) * phys.rack_width_m + np.abs(row[ra] - row[rb]) * phys.row_pitch_m
    routed = np.where(same, in_rack, vertical + horizontal)
    slack = np.maximum(routed * model.slack_fraction, model.slack_min_m)
    return np.round(routed + slack, 2)
