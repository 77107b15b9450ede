"""Scale-up domains: which GPUs share one NVLink (or xGMI, Gaudi, ICI) fabric.

Compact by design: one record per plan, not per GPU. Domains are consecutive runs of
`servers_per_domain` servers in plan order (an NVL72 rack is 18 compute trays in a row),
so the domain of server i is i // servers_per_domain: O(1), no table. A domain of one
server (DGX/HGX: 8 GPUs on the baseboard NVSwitches) is the common case.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class ScaleUpDomains:
    kind: str  # nvlink4, nvlink5, xgmi, gaudi-roce, ici
    wiring: str  # switched | full-mesh | torus
    gpus_per_domain: int
    servers_per_domain: int
    domains: int
    gbytes_per_s_per_gpu: int | None  # bidirectional per GPU (NVIDIA's "1.8 TB/s"); None where unknown
    # Switch trays outside the servers (NVL72: 9 per rack); 0 where the switch chips are inside
    # the chassis or there are none (full mesh). Catalog ids of the tray and backplane parts.
    switch_trays_per_domain: int = 0
    switch_tray: str | None = None
    backplane: str | None = None
    # True where the plan's own links are the scale-up fabric (a torus of accelerator chips).
    in_plan_links: bool = False

    @property
    def gpus(self) -> int:
        return self.domains * self.gpus_per_domain

    @property
    def spans_servers(self) -> bool:
        """A domain of several servers joined outside the plan's links (an NVL72 rack)."""
        return self.servers_per_domain > 1 and not self.in_plan_links

    @property
    def domain_gbytes_per_s(self) -> int | None:
        """Aggregate of the domain: GPUs x per-GPU bidirectional GB/s (NVL72: 72 x 1,800 = 129,600)."""
        return None if self.gbytes_per_s_per_gpu is None else self.gpus_per_domain * self.gbytes_per_s_per_gpu

    def domain_of(self, server: int) -> int:
        """0-based domain of the 0-based server position (plan order)."""
        return server // self.servers_per_domain

    def phrase(self) -> str:
        """How notes and findings name the domain: `nvlink4 domains of 8 GPUs (1 server), 900 GB/s per GPU`."""
        gbytes = f", {self.gbytes_per_s_per_gpu:,} GB/s per GPU" if self.gbytes_per_s_per_gpu else ""
        servers = f"{self.servers_per_domain} server{'s' if self.servers_per_domain > 1 else ''}"
        return f"{self.kind} domains of {self.gpus_per_domain} GPUs ({servers}){gbytes}"

    def summary(self) -> dict:
        """The summary.json section: what a capacity planner quotes."""
        return {"kind": self.kind, "wiring": self.wiring, "domains": self.domains,
                "gpus_per_domain": self.gpus_per_domain, "servers_per_domain": self.servers_per_domain,
                "gbytes_per_s_per_gpu": self.gbytes_per_s_per_gpu, "domain_gbytes_per_s": self.domain_gbytes_per_s,
                "switch_trays_per_domain": self.switch_trays_per_domain,
                "switch_trays": self.switch_trays_per_domain * self.domains}

    def as_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict | None) -> ScaleUpDomains | None:
        return None if data is None else cls(**data)
