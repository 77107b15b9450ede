"""SONiC's names for a switch model (DEVICE_METADATA platform and hwsku) and for its ports
(PORT alias and index), from the model's catalog facts (switches.yaml `sonic:`, as the plan
carries them: plan/facts.py SonicFacts, which picks the hwsku).

An hwsku is the port split SONiC boots with (sonic-buildimage device/<vendor>/<platform>/
<hwsku>/port_config.ini: every port's lanes, alias, index and speed), so a switch gets one
only when every port it uses runs one speed and the catalog names the hwsku of that split.
Elsewhere config_db.json leaves the field out and the box's own value stands (SONiC writes
platform and hwsku at first boot: ONIE's platform, that platform's `default_sku` file).

And the traditional buffer model's tables of a platform hwsku (data/sonic_buffers.yaml) and the
PFC watchdog's defaults: what SONiC's `config qos reload` and `pfcwd start_default` would write,
which `config reload` of a config_db.json does not run.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import NamedTuple

import yaml


class SonicPorts(NamedTuple):
    """PORT alias and index of every port of a switch layout, in panel order."""
    alias: list[str]
    # The port's cage, from 1: port_config.ini's index, by which xcvrd and sfputil find a port's
    # transceiver, so every port of a split cage has the same one (O128: Ethernet0 and Ethernet4 are 1).
    index: list[int]  # type: ignore[assignment]  # a field named like tuple.index(): read as .index only


def sonic_ports(port_alias: str | None, ports) -> SonicPorts:
    """`ports`: a switch layout's ports (cage label, 1-based lane in the cage, panel name).
    `port_alias`: the platform's alias format (switches.yaml sonic.port_alias), None for the panel
    name. The breakout letter follows the port's place in its cage; a cage of one port has none."""
    per_cage: dict[str, int] = {}
    for p in ports:
        per_cage[p.cage] = per_cage.get(p.cage, 0) + 1
    index = [int(p.cage) for p in ports]
    if port_alias is None:
        return SonicPorts([p.name for p in ports], index)
    alias = [port_alias.format(cage=c, breakout=chr(ord("a") + p.lane - 1) if per_cage[p.cage] > 1 else "")
             for p, c in zip(ports, index, strict=True)]
    return SonicPorts(alias, index)


# buffers_config.j2 picks the buffer templates' topology by DEVICE_METADATA.type
TOPOLOGY_BY_TYPE = {"ToRRouter": "t0", "LeafRouter": "t1", "SpineRouter": "t2"}


@functools.cache
def _buffer_data() -> dict:
    # plain values, every text quoted in the file: PyYAML reads it as the other built-in NOS data (nos.py)
    return yaml.safe_load((resources.files(__package__) / "data" / "sonic_buffers.yaml").read_text(encoding="utf-8"))


def buffer_set(platform: str | None, sku: str | None) -> dict | None:
    """The traditional-model buffer set (data/sonic_buffers.yaml) of a platform's hwsku, or of
    its default_sku where the switch names none; None where the catalog has none."""
    if platform is None:
        return None
    sets = _buffer_data()["buffer_sets"]
    if sku is not None:
        return next((s for s in sets if sku in s["hwskus"].get(platform, ())), None)
    return next((s for s in sets if platform in s["default_for"]), None)


def id_ranges(ids) -> list[str]:
    """Sorted ids as SONiC keys them (BUFFER_PG `3-4`, BUFFER_QUEUE `0-2`): runs of consecutive ids."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(set(ids)):
        if run and i != run[-1] + 1:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
            run = []
        run.append(i)
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return out


class SonicBuffers(NamedTuple):
    """One switch's traditional-model buffer tables, as config_db.json spells them."""
    pools: dict  # BUFFER_POOL
    profiles: dict  # BUFFER_PROFILE: the set's static profiles and the lossless PG profiles in use
    pg_lossless: list  # per interface (in order): its lossless PG profile, None where the lookup has no row
    lossless_pgs: list[str]  # BUFFER_PG key suffixes of the lossless PGs ("3")
    pg_lossy: str
    lossless_queues: list[str]  # BUFFER_QUEUE key suffixes
    lossy_queues: list[str]
    queue_lossless: str
    queue_lossy: str
    ingress_profiles: str  # BUFFER_PORT_INGRESS_PROFILE_LIST profile_list
    egress_profiles: str


def buffers(bset: dict, device_type: str | None, speeds_mbps, cables_m, pfc_priorities) -> SonicBuffers:
    """Buffer tables for a switch of `device_type` whose interfaces run `speeds_mbps` over
    `cables_m` (CABLE_LENGTH, whole metres), lossless on `pfc_priorities` (PORT_QOS_MAP
    pfc_enable, which buffermgrd reads as PG ids): what buffers_config.j2 and buffermgrd write."""
    topo = TOPOLOGY_BY_TYPE.get(device_type or "", "t1")
    pools = bset["pools"].get(topo) or bset["pools"][bset["missing_topology"]]
    mode = pools[bset["lossless_pool"]]["mode"]
    lookup = {(int(r[0]), int(r[1])): r[2:] for r in bset["pg_lookup"]}
    profiles = {name: dict(fields) for name, fields in bset["profiles"].items()}
    per_port: list[str | None] = []
    for speed, cable in zip(speeds_mbps, cables_m, strict=True):
        row = lookup.get((int(speed), int(cable)))
        if row is None:
            per_port.append(None)
            continue
        name = f"pg_lossless_{speed}_{cable}m_profile"
        if name not in profiles:
            size, xon, xoff, threshold = row
            # buffermgrd's field order and names: pool, xon, xoff, size, <mode>_th
            profiles[name] = {"pool": bset["lossless_pool"], "xon": str(xon), "xoff": str(xoff),
                              "size": str(size), f"{mode}_th": str(threshold)}
        per_port.append(name)
    lossless = sorted(set(pfc_priorities))
    lossy = [q for q in range(int(bset["buffered_queues"])) if q not in lossless]
    return SonicBuffers(
        pools={k: dict(v) for k, v in pools.items()}, profiles=profiles, pg_lossless=per_port,
        lossless_pgs=id_ranges(lossless), pg_lossy=bset["pg_lossy"],
        lossless_queues=id_ranges(lossless), lossy_queues=id_ranges(lossy),
        queue_lossless=bset["queue_lossless"], queue_lossy=bset["queue_lossy"],
        ingress_profiles=",".join(bset["ingress_profiles"]), egress_profiles=",".join(bset["egress_profiles"]))


class PfcWatchdog(NamedTuple):
    action: str
    detection_time_ms: int
    restoration_time_ms: int
    poll_interval_ms: int
    pfc_stat_history: str


@functools.cache
def pfc_watchdog(port_count: int) -> PfcWatchdog:
    """What `pfcwd start_default` writes for a switch whose PORT table has `port_count` ports."""
    d = _buffer_data()["pfc_watchdog"]
    multiply = max(1, (port_count - 1) // int(d["ports_per_step"]) + 1)
    return PfcWatchdog(d["action"], int(d["detection_time_ms"]) * multiply, int(d["restoration_time_ms"]) * multiply,
                       min(int(d["poll_interval_ms"]) * multiply, int(d["max_poll_interval_ms"])), d["pfc_stat_history"])
