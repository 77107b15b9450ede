"""Scale-up domains from the catalog: how many servers share one NVLink domain, the plan's
`scale_up` record, and the spec errors a multi-server domain brings (an NVL72 rack is 18
compute trays: a cluster and a scalable unit hold whole racks)."""

from __future__ import annotations

from ..catalog.models import Server
from ..diagnostics import Diagnostic
from ..plan.scale_up import ScaleUpDomains
from ..spec.load import LoadedSpec


def domain_servers(server: Server) -> int:
    """Servers per scale-up domain joined outside the plan's links (18 for GB200 NVL72; 1 for
    DGX/HGX, whose domain is the baseboard, and for a torus of chips, whose links the plan holds)."""
    up = server.scale_up
    if up is None or up.wiring == "torus":
        return 1
    return up.domain_gpus // server.gpus


def scale_up_domains(server: Server, servers: int) -> ScaleUpDomains | None:
    up = server.scale_up
    if up is None:
        return None
    if up.wiring == "torus":  # the chips' own links are the fabric: one domain, the whole torus
        return ScaleUpDomains(up.kind, up.wiring, servers * server.gpus, servers, 1, up.gbytes_per_s_per_gpu,
                              in_plan_links=True)
    per = domain_servers(server)
    return ScaleUpDomains(up.kind, up.wiring, per * server.gpus, per, servers // per, up.gbytes_per_s_per_gpu,
                          up.switch_trays_per_domain or 0, up.switch_tray, up.backplane)


def _unit(server: Server) -> str:
    assert server.scale_up is not None  # called for multi-server domains only
    name = server.scale_up.domain_name
    return f"{name}s" if name else "scale-up domains"


def size_diagnostics(loaded: LoadedSpec, server: Server, servers: int, size_path: tuple) -> list[Diagnostic]:
    """A multi-server domain is built whole: the server count is whole domains."""
    per = domain_servers(server)
    if per <= 1 or servers % per == 0:
        return []
    assert server.scale_up is not None  # a multi-server domain (per > 1) is a scale-up one
    low, high = servers // per * per, (servers // per + 1) * per
    by_gpus = size_path == ("gpus",)
    scale = server.gpus if by_gpus else 1
    options = " or ".join(f"{size_path[-1]}: {n * scale:,}" for n in (low, high) if n)
    return [loaded.diagnostic(
        "SPEC_PARTIAL_SCALE_UP_DOMAIN", size_path,
        f"{servers:,} {server.id} servers ({servers * server.gpus:,} GPUs) is not a whole number of {_unit(server)} "
        f"({per} servers = {per * server.gpus} GPUs share each {server.scale_up.kind} domain)",
        f"use {options} ({low // per:,} or {high // per:,} domains)" if low else f"use {options} (one domain)")]


def scalable_unit_diagnostics(loaded: LoadedSpec, server: Server, su_size: int | None) -> list[Diagnostic]:
    """A scalable unit holds whole domains: a rack's NVLink domain never spans two SUs."""
    per = domain_servers(server)
    if per <= 1 or not su_size or su_size % per == 0:
        return []
    given = loaded.spec.fabric.scalable_unit is not None
    low = su_size // per * per
    choices = " or ".join(str(n) for n in (low, low + per) if n)
    return [loaded.diagnostic(
        "SPEC_SU_SPLITS_SCALE_UP_DOMAIN", ("fabric", "scalable_unit") if given else ("server",),
        f"a scalable unit of {su_size} servers{'' if given else ' (the default)'} splits {server.id} scale-up domains "
        f"of {per} servers ({per * server.gpus} GPUs): a domain must sit in one SU",
        f"set fabric.scalable_unit to a multiple of {per}, e.g. {choices}")]
