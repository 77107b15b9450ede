"""Resolve the spec's `hosts` section: how servers are named, which label prefix and
NCCL topology style the scheduler outputs use (scale-up domains: expand/scale_up.py).

Names reach Slurm hostlists, Kubernetes label values, DNS and config files, so every
name a pattern can produce is checked here, at validation time, against RFC 1123
(lower-case letters, digits, '-', at most 63 characters, alphanumeric at both ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..catalog import Catalog
from ..catalog.models import Server
from ..nccl.files import nccl_file
from ..diagnostics import Diagnostic
from ..spec.load import LoadedSpec
from ..plan import naming
from ..topology import topology


@dataclass(frozen=True)
class HostsDesign:
    prefix: str
    pattern: str | None  # None: naming.server's default names
    pieces: tuple | None
    label_prefix: str
    nccl_topology: str  # skeleton | full

    def server_name(self, index: int, su: int | None, n: int) -> str:
        """Name of the n-th server (1-based, plan order), the index-th of its SU."""
        if self.pieces is None:
            return naming.server(self.prefix, index, su)
        return naming.server_from_pattern(self.pieces, self.prefix, index, su, n)

    def server_names(self, places: list[tuple[int | None, int]]) -> list[str]:
        """server_name of every server, from its (SU, index in the SU) in plan order."""
        if self.pieces is None:
            prefix = self.prefix
            return [naming.server(prefix, index, su) for su, index in places]
        pieces, prefix = self.pieces, self.prefix
        return [naming.server_from_pattern(pieces, prefix, index, su, n) for n, (su, index) in enumerate(places, 1)]

    def record(self) -> dict:
        return {"hostname_pattern": self.pattern, "hostname_prefix": self.prefix, "label_prefix": self.label_prefix,
                "nccl_topology": self.nccl_topology}


_PATTERN_HINT = "for example {prefix}-su{su}-{index:03} or node{n:05}"


def raw_hosts_diagnostics(source) -> list[Diagnostic]:
    """A malformed `hosts.hostname` in a spec that failed schema validation, so that one
    run reports it with the schema errors (the pattern's other rules need the design)."""
    data = source.data if isinstance(source.data, dict) else {}
    raw_hosts = data.get("hosts")
    hosts = raw_hosts if isinstance(raw_hosts, dict) else {}
    pattern = hosts.get("hostname")
    if not isinstance(pattern, str):
        return []
    try:
        naming.parse_hostname_pattern(pattern)
    except naming.PatternError as exc:
        line, col = source.where(("hosts", "hostname"))
        return [Diagnostic("SPEC_BAD_HOSTNAME", f"hostname pattern {pattern!r}: {exc}", path="hosts.hostname",
                           file=source.file, line=line, column=col, hint=_PATTERN_HINT)]
    return []


def resolve_hosts(loaded: LoadedSpec, catalog: Catalog, server: Server, servers: int,
                  su_size: int | None) -> tuple[HostsDesign | None, list[Diagnostic], list[str]]:
    """The hosts design, errors (SpecInvalid material) and notes for the summary."""
    spec = loaded.spec.hosts
    errors: list[Diagnostic] = []
    prefix = server.hostname_prefix
    if not naming.HOSTNAME_RE.match(prefix):
        errors.append(loaded.diagnostic(
            "SPEC_BAD_HOSTNAME", ("server",),
            f"server type '{server.id}' has hostname_prefix {prefix!r}, which is not a valid hostname part",
            "use lower-case letters, digits and '-' in the catalog's hostname_prefix"))
        return None, errors, []
    sus = math.ceil(servers / su_size) if su_size else 0
    pieces = None
    where = ("hosts", "hostname")
    if spec.hostname is not None:
        try:
            pieces = naming.parse_hostname_pattern(spec.hostname)
        except naming.PatternError as exc:
            errors.append(loaded.diagnostic("SPEC_BAD_HOSTNAME", where, f"hostname pattern {spec.hostname!r}: {exc}",
                                            _PATTERN_HINT))
            return None, errors, []
        fields = {value for kind, value, _ in pieces if kind == "field"}
        if "su" in fields and not su_size:
            errors.append(loaded.diagnostic("SPEC_BAD_HOSTNAME", where, "the pattern uses {su} but this design has no scalable units",
                                            "use {n}, or set fabric.scalable_unit"))
        unique = "n" in fields or ("index" in fields and ("su" in fields or sus <= 1))
        if not unique and servers > 1:
            errors.append(loaded.diagnostic(
                "SPEC_BAD_HOSTNAME", where, f"the pattern {spec.hostname!r} gives several servers the same name",
                "include {n}, or {index} together with {su}"))
        if errors:
            return None, errors, []
    hosts = HostsDesign(prefix, spec.hostname, pieces, spec.label_prefix, spec.nccl_topology)
    # Widths only grow with the numbers, so the name with the largest numbers is the longest.
    longest = hosts.server_name(min(su_size or servers, servers), sus or None, servers)
    if not naming.HOSTNAME_RE.match(longest):
        errors.append(loaded.diagnostic(
            "SPEC_BAD_HOSTNAME", where if pieces else ("server",),
            f"server name {longest!r} is not a valid hostname ({len(longest)} characters; at most 63, "
            "lower-case letters, digits and '-', starting and ending with a letter or digit)",
            "shorten the pattern or the catalog hostname_prefix"))
        return None, errors, []
    notes = nccl_file(server.id, catalog.host_topology.get(server.id), spec.nccl_topology, server.no_host_topology).notes
    notes += scheduler_notes(loaded.spec.fabric.topology)
    return hosts, errors, notes


def scheduler_notes(kind: str) -> list[str]:
    # A scale-up domain never spans two SUs: expand/scale_up.py rejects such a spec.
    if not topology(kind).tree:
        return [f"slurm: no topology.conf for a {kind} fabric: it has no switch tree for Slurm's tree plugin "
                "(dragonfly: TopologyParam=dragonfly with leaves and one top switch; torus: none before Slurm 26.05's torus3d)"]
    return []


def plain_hosts_record(spec, server: Server) -> dict:
    """The hosts record for topologies that name servers by the catalog prefix only
    (torus, dragonfly): same keys as HostsDesign.record()."""
    return {"hostname_pattern": None, "hostname_prefix": server.hostname_prefix,
            "label_prefix": spec.hosts.label_prefix, "nccl_topology": spec.hosts.nccl_topology}
