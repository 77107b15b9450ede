"""Resolve a spec against the catalog into a Design: every number the builder needs.

All problems found here are collected and raised together as `SpecInvalid`, each
pointing at the spec field to change.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import Catalog, load_catalog
from ..catalog.models import NicGroup, Server, Switch
from ..diagnostics import Diagnostic, SpecInvalid, nearest
from ..spec.load import LoadedSpec
from ..spec.model import ExtraEndpoint, Spec
from . import sizing
from .sizing import ClosSizing, SizingError


@dataclass(frozen=True)
class Endpoints:
    spec: ExtraEndpoint
    speed_gbps: int


@dataclass(frozen=True)
class ClosDesign:
    spec: Spec
    catalog: Catalog
    server: Server
    nics: NicGroup
    switch: Switch
    speed_gbps: int
    servers: int
    su_size: int | None  # servers per SU (None: fat-tree without SUs)
    servers_per_leaf: int  # fat-tree only; rail-optimized: su_size
    sizing: ClosSizing
    endpoints: tuple[Endpoints, ...]
    media_requested: dict[str, str] = field(default_factory=dict)  # link kind -> media id
    notes: tuple[str, ...] = ()

    @property
    def rail_optimized(self) -> bool:
        return self.spec.fabric.topology == "rail-optimized"

    @property
    def rails(self) -> int:
        return len(self.nics.ports)

    @property
    def gpus(self) -> int:
        return self.servers * self.server.gpus

    @property
    def sus(self) -> int:
        return math.ceil(self.servers / self.su_size) if self.su_size else 0


def _catalog_for(loaded: LoadedSpec, errors: list[Diagnostic]) -> Catalog:
    user = loaded.spec.catalog
    if user is None:
        return load_catalog()
    path = Path(user)
    if not path.is_absolute():
        path = Path(loaded.file).parent / path
    try:
        return load_catalog(path)
    except SpecInvalid as exc:
        errors.extend(exc.diagnostics)
        return load_catalog()


def raw_catalog_diagnostics(source) -> list[Diagnostic]:
    """Catalog-id problems in a spec that failed schema validation, so that one run
    reports them together with the schema errors (best effort on the raw values)."""
    data = source.data if isinstance(source.data, dict) else {}
    fabric = data.get("fabric") if isinstance(data.get("fabric"), dict) else {}
    if data.get("catalog") is not None:
        return []  # ids may come from the user's catalog, which we only read for a valid spec
    catalog = load_catalog()
    out = []
    for path, value, table, what, code in (
        (("server",), data.get("server"), catalog.servers, "server type", "SPEC_UNKNOWN_SERVER"),
        (("fabric", "switch"), fabric.get("switch"), catalog.switches, "switch", "SPEC_UNKNOWN_SWITCH"),
    ):
        if isinstance(value, str) and value not in table:
            line, col = source.where(path)
            out.append(Diagnostic(code, f"unknown {what} '{value}'", path=".".join(path), file=source.file,
                                  line=line, column=col, hint=nearest(value, table)))
    return out


def error_nos(loaded: LoadedSpec, switch: Switch, error) -> None:
    """fabric.nos must be one the switch model runs; InfiniBand switches take none."""
    nos = loaded.spec.fabric.nos
    if nos is None:
        return
    if switch.protocol != "ethernet":
        error("SPEC_NOS_NOT_ETHERNET", ("fabric", "nos"),
              f"{switch.id} is an {switch.protocol} switch: it takes no NOS (the subnet manager configures it)",
              "remove fabric.nos")
    elif nos not in switch.nos:
        runs = ", ".join(switch.nos) or "none known"
        error("SPEC_NOS_UNSUPPORTED", ("fabric", "nos"), f"{switch.id} does not run {nos} (catalog: {runs})",
              f"use one of: {runs}" if switch.nos else "choose a switch whose catalog entry lists this NOS")


def resolve(loaded: LoadedSpec) -> ClosDesign:
    spec = loaded.spec
    fabric = spec.fabric
    errors: list[Diagnostic] = []
    catalog = _catalog_for(loaded, errors)

    def error(code, path, message, hint=""):
        errors.append(loaded.diagnostic(code, path, message, hint))

    server = catalog.servers.get(spec.server)
    if server is None:
        error("SPEC_UNKNOWN_SERVER", ("server",), f"unknown server type '{spec.server}'", nearest(spec.server, catalog.servers))
    switch = catalog.switches.get(fabric.switch)
    if switch is None:
        error("SPEC_UNKNOWN_SWITCH", ("fabric", "switch"), f"unknown switch '{fabric.switch}'", nearest(fabric.switch, catalog.switches))
    media_requested: dict[str, str] = {}
    if isinstance(fabric.media, str):
        media_requested = {k: fabric.media for k in ("server-leaf", "leaf-spine", "spine-core", "endpoint-leaf")}
    elif isinstance(fabric.media, dict):
        known_kinds = {"server-leaf", "leaf-spine", "spine-core", "endpoint-leaf"}
        for kind, media_id in fabric.media.items():
            if kind not in known_kinds:
                error("SPEC_UNKNOWN_LINK_KIND", ("fabric", "media", kind), f"unknown link kind '{kind}'", nearest(kind, known_kinds))
            media_requested[kind] = media_id
    for kind, media_id in media_requested.items():
        if media_id not in catalog.media:
            path = ("fabric", "media") if isinstance(fabric.media, str) else ("fabric", "media", kind)
            error("SPEC_UNKNOWN_MEDIA", path, f"unknown medium '{media_id}'", nearest(media_id, catalog.media))
    if errors or server is None or switch is None:
        raise SpecInvalid(errors)

    nics = server.nic_groups.get("compute")
    if nics is None:
        raise SpecInvalid([loaded.diagnostic("SPEC_NO_COMPUTE_NICS", ("server",), f"server type '{server.id}' has no compute NIC group in the catalog")])
    speed = fabric.speed_gbps or nics.speed_gbps
    if speed not in switch.modes:
        modes = ", ".join(f"{s}G" for s in sorted(switch.modes))
        error("SPEC_SPEED_UNSUPPORTED", ("fabric", "speed_gbps") if fabric.speed_gbps else ("fabric", "switch"),
              f"{switch.id} has no {speed}G port mode (the {server.id} NICs run at {nics.speed_gbps}G)",
              f"{switch.id} runs {modes}; choose a switch with {speed}G ports")
    elif nics.speed_gbps != speed:
        error("SPEC_SPEED_MISMATCH", ("fabric", "speed_gbps"),
              f"fabric speed {speed}G differs from the {server.id} NIC speed {nics.speed_gbps}G",
              "splitter-based speed changes are not supported yet; use the NIC speed")
    error_nos(loaded, switch, error)
    endpoints = []
    for i, ep in enumerate(spec.extra_endpoints):
        ep_speed = ep.speed_gbps or speed
        if ep_speed != speed:
            error("SPEC_SPEED_MISMATCH", ("extra_endpoints", i, "speed_gbps"),
                  f"endpoint speed {ep_speed}G differs from the fabric speed {speed}G", f"use speed_gbps: {speed}")
        endpoints.append(Endpoints(ep, ep_speed))

    if spec.servers is not None:
        servers = spec.servers
    else:
        servers, rest = divmod(spec.gpus, server.gpus)
        if rest:
            error("SPEC_GPUS_NOT_WHOLE_SERVERS", ("gpus",),
                  f"{spec.gpus} GPUs is not a whole number of {server.id} servers ({server.gpus} GPUs each)",
                  f"use gpus: {servers * server.gpus} or {(servers + 1) * server.gpus}")
    if errors:
        raise SpecInvalid(errors)

    try:
        design = _size(loaded, catalog, server, nics, switch, speed, servers, tuple(endpoints), media_requested)
    except SizingError as exc:
        raise SpecInvalid([loaded.diagnostic("DESIGN_IMPOSSIBLE", exc.path, exc.message, exc.hint)]) from None
    return design


def _size(loaded, catalog, server, nics, switch, speed, servers, endpoints, media_requested) -> ClosDesign:
    fabric = loaded.spec.fabric
    radix = switch.radix(speed)
    ratio = fabric.oversubscription.leaf
    rails = len(nics.ports)
    notes: list[str] = []
    if fabric.topology == "rail-optimized":
        su = fabric.scalable_unit or sizing.split_for_ratio(radix, ratio).down
        leaf = sizing.uplinks_for(su, ratio, radix, "scalable_unit")
        servers_per_leaf = su
        leaves = math.ceil(servers / su) * rails
        group = rails
        if not fabric.scalable_unit:
            notes.append(f"scalable_unit not given: {su} servers per SU (a leaf's downlinks at {ratio})")
    else:
        best = sizing.split_for_ratio(radix, ratio)
        servers_per_leaf = best.down // rails
        if servers_per_leaf == 0:
            raise SizingError(("fabric", "oversubscription"),
                              f"a leaf has {best.down} downlinks at {ratio} but one {server.id} brings {rails} NIC ports",
                              "use rail-optimized, a larger switch, or a higher oversubscription")
        leaf = sizing.uplinks_for(best.down, ratio, radix, "switch")
        su = fabric.scalable_unit
        group = 1
        if su is not None:
            if su % servers_per_leaf:
                raise SizingError(("fabric", "scalable_unit"),
                                  f"scalable_unit {su} is not a whole number of leaves ({servers_per_leaf} servers per leaf)",
                                  f"use a multiple of {servers_per_leaf}")
            group = su // servers_per_leaf
            leaves = math.ceil(servers / su) * group
        else:
            leaves = math.ceil(servers / servers_per_leaf)
    spine_split = sizing.split_for_ratio(radix, fabric.oversubscription.spine)

    two = sizing.two_tier(leaves, leaf, radix)
    if fabric.tiers == 2 and two is None:
        cap = sizing.max_two_tier_leaves(leaf, radix)
        per_leaf = servers_per_leaf if fabric.topology == "fat-tree" else servers_per_leaf / rails
        raise SizingError(("fabric", "tiers"),
                          f"{leaves} leaves do not fit two tiers of {switch.id}: a spine with {radix} ports joins at most "
                          f"{cap} leaves ({int(cap * per_leaf * server.gpus):,} GPUs at {ratio})",
                          "use tiers: 3 or tiers: auto")
    if fabric.tiers == 2 or (fabric.tiers == "auto" and two is not None):
        result = two
    else:
        cap = sizing.max_three_tier_leaves(leaf, spine_split, radix, group)
        if leaves > cap:
            per_leaf = servers_per_leaf if fabric.topology == "fat-tree" else servers_per_leaf / rails
            raise SizingError(("servers",) if loaded.spec.servers is not None else ("gpus",),
                              f"{servers:,} servers need {leaves:,} leaves; three tiers of {switch.id} at leaf {ratio} / "
                              f"spine {fabric.oversubscription.spine} hold at most {cap:,} leaves "
                              f"({int(cap * per_leaf) * server.gpus:,} GPUs)",
                              "use a larger-radix switch or a higher oversubscription")
        result = sizing.three_tier(leaves, leaf, spine_split, radix, group)
    notes.extend(result.notes)
    if nics.port_map_confidence != "vendor":
        notes.append(f"{server.id}: which cage feeds which GPU is {nics.port_map_confidence}, not from a vendor table; "
                     f"verify server-side ports against the server's manual before cabling")
    return ClosDesign(loaded.spec, catalog, server, nics, switch, speed, servers, su, servers_per_leaf, result,
                      endpoints, media_requested, tuple(notes))
