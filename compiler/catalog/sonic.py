"""SONiC's names for a switch model (DEVICE_METADATA platform and hwsku), from the model's
catalog facts (switches.yaml `sonic:`, as the plan carries them: hwsku keys are text).

An hwsku is the port split SONiC boots with (sonic-buildimage device/<vendor>/<platform>/
<hwsku>/port_config.ini: every port's lanes, alias, index and speed), so a switch gets one
only when every port it uses runs one speed and the catalog names the hwsku of that split.
Elsewhere config_db.json leaves the field out and the box's own value stands (SONiC writes
platform and hwsku at first boot: ONIE's platform, that platform's `default_sku` file).
"""

from __future__ import annotations


def hwsku(sonic: dict | None, speeds_gbps) -> str | None:
    """The hwsku for a switch whose ports in use run `speeds_gbps`; None for several speeds,
    or where no hwsku of that speed's split is evidenced."""
    speeds = set(speeds_gbps)
    if not sonic or len(speeds) != 1:
        return None
    return sonic["hwsku"].get(str(speeds.pop()))
