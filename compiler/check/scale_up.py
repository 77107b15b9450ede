"""Scale-up domains as the checks see them: bandwidth per GPU and per domain, its ratio to
the network, and what losing one NVLink switch tray costs.

Model (stated in the output): per-GPU scale-up bandwidth is the catalog's bidirectional
figure (NVIDIA quotes NVLink that way: 1.8 TB/s = 900 GB/s each way); network bandwidth per
GPU is the compute NIC ports' line rate, one direction. A switch-tray failure assumes each
GPU's NVLinks are spread evenly over the domain's trays (the NVL72 design: every GPU reaches
every NVSwitch), so losing 1 of T trays removes 1/T of every GPU's NVLink bandwidth in that
domain, cuts no GPU off, and leaves other domains untouched. O(1): one record, no per-GPU work.
"""

from __future__ import annotations

from dataclasses import dataclass

from .context import CheckContext
from .figures import Figures
from .findings import Finding

MODEL = ("scale-up GB/s per GPU is the catalog's bidirectional figure (one direction = half); network Gb/s per GPU "
         "is the compute NIC line rate, one direction; a switch-tray failure removes 1/T of every GPU's NVLink "
         "bandwidth in that domain (links spread evenly over its T trays), cuts no GPU off, other domains unaffected")


@dataclass(frozen=True)
class TrayFailure:
    """Losing one NVLink switch tray of a domain."""

    trays_left: int
    bandwidth_left_percent: float
    gbytes_per_s_per_gpu_left: float | None  # None where the catalog has no scale-up bandwidth
    domain_gbytes_per_s_left: float | None
    gpus_cut_off: int
    other_domains_affected: bool


@dataclass(frozen=True)
class ScaleUpFigures(Figures):
    """`model` and `kind` (None without scale-up domains); the rest where there are domains."""

    model: str
    kind: str | None = None
    wiring: str | None = None
    domains: int | None = None
    gpus_per_domain: int | None = None
    servers_per_domain: int | None = None
    gbytes_per_s_per_gpu: float | None = None  # bidirectional, as NVIDIA quotes NVLink; None where unknown
    gbps_per_gpu_one_direction: float | None = None
    domain_gbytes_per_s: float | None = None
    network_gbps_per_gpu: float | None = None
    scale_up_to_network_ratio: float | None = None
    switch_trays_per_domain: int | None = None
    switch_trays: int | None = None
    switch_tray_failure: TrayFailure | None = None  # None where the switch chips sit inside the chassis

    def as_json(self) -> dict:
        if self.kind is None:
            return {"model": self.model, "kind": None}
        return super().as_json()


def network_gbps_per_gpu(ctx: CheckContext) -> float:
    """Compute-fabric injection per GPU, one direction (the NIC ports the plan links)."""
    gpus = ctx.plan.view.design.gpus
    inj = float(ctx.graph.at_cap_gbps[ctx.graph.at_is_gpu_server].sum())
    return inj / gpus if gpus else 0.0


def check_scale_up(ctx: CheckContext) -> tuple[ScaleUpFigures, list[Finding]]:
    up = ctx.plan.scale_up
    if up is None:
        return ScaleUpFigures(MODEL), []
    net = network_gbps_per_gpu(ctx)
    per_gpu = up.gbytes_per_s_per_gpu
    one_way_gbps = per_gpu * 8 / 2 if per_gpu else None
    figures = ScaleUpFigures(
        model=MODEL, kind=up.kind, wiring=up.wiring, domains=up.domains,
        gpus_per_domain=up.gpus_per_domain, servers_per_domain=up.servers_per_domain,
        gbytes_per_s_per_gpu=per_gpu, gbps_per_gpu_one_direction=one_way_gbps,
        domain_gbytes_per_s=up.domain_gbytes_per_s,
        network_gbps_per_gpu=round(net, 3),
        scale_up_to_network_ratio=round(one_way_gbps / net, 3) if one_way_gbps and net else None,
        switch_trays_per_domain=up.switch_trays_per_domain,
        switch_trays=up.switch_trays_per_domain * up.domains,
        switch_tray_failure=_tray_failure(up),
    )
    where = f"{up.kind} domains"
    msg = f"{up.domains:,} x {up.phrase()}"
    if per_gpu:
        msg += (f" (bidirectional), {up.domain_gbytes_per_s:,} GB/s per domain"
                + (f"; {figures.scale_up_to_network_ratio:g}x the {net:,.0f} Gb/s network per GPU" if net else ""))
    findings = [Finding("SCALE_UP_DOMAINS", "info", msg, where)]
    f = figures.switch_tray_failure
    if f:
        findings.append(Finding("SCALE_UP_TRAY_FAILURE", "info",
                                f"losing 1 of {up.switch_trays_per_domain} switch trays leaves that domain "
                                f"{f.bandwidth_left_percent:g}% of its NVLink bandwidth"
                                + (f" ({f.gbytes_per_s_per_gpu_left:g} GB/s per GPU)" if per_gpu else "")
                                + "; no GPU is cut off", where))
    return figures, findings


def _tray_failure(up) -> TrayFailure | None:
    trays = up.switch_trays_per_domain
    if not trays:
        return None  # switch chips inside the chassis: a failure is the server's, not modelled here
    left = (trays - 1) / trays
    return TrayFailure(trays_left=trays - 1, bandwidth_left_percent=round(100 * left, 2),
                       gbytes_per_s_per_gpu_left=round(up.gbytes_per_s_per_gpu * left, 1) if up.gbytes_per_s_per_gpu else None,
                       domain_gbytes_per_s_left=round(up.domain_gbytes_per_s * left, 1) if up.gbytes_per_s_per_gpu else None,
                       gpus_cut_off=0, other_domains_affected=False)
