"""The one place that names devices, cables and scheduler groups. Names derive from
structure (role, SU, pod, rail, index), never from iteration order, so they are stable
when a design grows. Part of the plan layer: the builders give the names, and checks and
renderers read them, without reaching into expand.

Indices are 1-based as printed on racks and in vendor guides; widths are minimums
(`{:03d}` keeps 001..999 and simply grows past it, so existing names never change).
"""

from __future__ import annotations

import re


def server(prefix: str, index: int, su: int | None) -> str:
    if su is None:
        return f"{prefix}-{index:04d}"
    return f"{prefix}-su{su}-{index:03d}"


def rail_leaf(su: int, rail: int) -> str:
    return f"su{su}-leaf-r{rail}"


def leaf(index: int, su: int | None) -> str:
    if su is None:
        return f"leaf-{index:03d}"
    return f"su{su}-leaf-{index:02d}"


def spine(index: int, pod: int | None) -> str:
    if pod is None:
        return f"spine-{index:02d}"
    return f"pod{pod}-spine-{index:02d}"


def core(index: int) -> str:
    return f"core-{index:03d}"


def management_leaf(index: int) -> str:
    """A leaf of extra endpoints only (UFM, storage heads), outside every SU (expand/endpoints.py)."""
    return f"mgmt-leaf-{index:02d}"


def fabric_device(fabric: str, name: str) -> str:
    """A switch of an extra fabric (storage, in-band, out-of-band): its Clos name behind the
    fabric's, e.g. storage-su1-leaf-01, oob-leaf-001; unique beside the compute fabric's."""
    return f"{fabric}-{name}"


def endpoint(role: str, index: int) -> str:
    return f"{role}-{index:02d}"


CABLE_ID_SEPARATOR = ":"  # between a cable id's device and port number (views.cable_ids joins them so, in columns)


def cable_id(a_device: str, a_port_number: int) -> str:
    """A cable is named by its lower (A) end: device and 1-based logical port, e.g.
    dgx-su1-001:3 or su1-leaf-r1:33. Unique (a port carries one cable) and stable
    under growth: a cable keeps its id as long as it stays where it was pulled."""
    return f"{a_device}{CABLE_ID_SEPARATOR}{a_port_number}"


# --- server hostnames from the spec's pattern (hosts.hostname) -------------------------
# A pattern is literal text with fields {prefix} {su} {index} {n}, each optionally
# zero-padded to a minimum width: {index:03}. Deliberately not str.format: a user
# string must not reach attribute lookups, and the grammar stays checkable.
HOSTNAME_FIELDS = ("prefix", "su", "index", "n")
_PATTERN_PIECE = re.compile(r"\{([a-z]+)(?::0?([1-9]))?\}|([^{}]+)")
# RFC 1123 label: what Slurm, DNS and a Kubernetes label value all accept.
HOSTNAME_RE = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
_LITERAL_RE = re.compile(r"^[a-z0-9-]+$")


class PatternError(ValueError):
    pass


def parse_hostname_pattern(pattern: str) -> tuple[tuple[str, str, int], ...]:
    """Pieces ("text", literal, 0) or ("field", name, width); PatternError if malformed."""
    pieces = []
    pos = 0
    for m in _PATTERN_PIECE.finditer(pattern):
        if m.start() != pos:
            break
        pos = m.end()
        field, width, literal = m.groups()
        if literal is not None:
            if not _LITERAL_RE.match(literal):
                raise PatternError(f"literal text {literal!r} may only hold a-z, 0-9 and '-'")
            pieces.append(("text", literal, 0))
        elif field not in HOSTNAME_FIELDS:
            raise PatternError(f"unknown field {{{field}}}; fields: " + ", ".join("{%s}" % f for f in HOSTNAME_FIELDS))
        else:
            pieces.append(("field", field, int(width or 0)))
    if pos != len(pattern) or not pieces:
        raise PatternError("expected text and fields like {prefix}-su{su}-{index:03}")
    return tuple(pieces)


def server_from_pattern(pieces, prefix: str, index: int, su: int | None, n: int) -> str:
    values = {"prefix": prefix, "su": su, "index": index, "n": n}
    out = []
    for kind, value, width in pieces:
        if kind == "text":
            out.append(value)
        else:
            v = values[value]
            out.append(v if isinstance(v, str) else f"{v:0{width}d}")
    return "".join(out)


def su_group(su: int) -> str:
    """A scalable unit as a scheduler group (Slurm logical leaf, Kubernetes label value)."""
    return f"su{su}"


def pod_group(pod: int) -> str:
    return f"pod{pod}"


def nvlink_domain(index: int) -> str:
    """One scale-up (NVLink) domain, e.g. an NVL72 rack: a Slurm block."""
    return f"nvl{index:03d}"


def tree_root(tiers: int) -> str:
    """The top of a scheduler tree: the layer every leaf group reaches."""
    return "spines" if tiers == 2 else "cores"


def coordinate(prefix: str, coord: tuple[int, ...]) -> str:
    """A torus position, 0-based as in the k-ary n-cube literature: tpuv4-x03-y15-z00."""
    return prefix + "".join(f"-{axis}{c:02d}" for axis, c in zip("xyz", coord, strict=False))  # 1 to 3 dimensions: the first len(coord) axes


def group_switch(role: str, group: int, index: int) -> str:
    """A switch of a dragonfly group: g12-router-07, g3-leaf-01."""
    return f"g{group}-{role}-{index:02d}"


def rail_switch(rail: int) -> str:
    """The one switch of a rail in a rail-only network: rail-03."""
    return f"rail-{rail:02d}"


def plane_tor(plane: int, segment: int, rail: int) -> str:
    """A ToR of a multi-plane (dual-ToR) network: p2-seg07-tor-r3."""
    return f"p{plane}-seg{segment:02d}-tor-r{rail}"


def plane_agg(plane: int, index: int) -> str:
    """An aggregation switch of one plane: p1-agg-42."""
    return f"p{plane}-agg-{index:02d}"


def plane_spine(plane: int, pod: int, index: int) -> str:
    """A spine of one plane's pod (three tiers): p1-pod3-spine-07."""
    return f"p{plane}-pod{pod}-spine-{index:02d}"


def plane_core(plane: int, index: int) -> str:
    """A core switch of one plane: p2-core-012."""
    return f"p{plane}-core-{index:03d}"


def rail_leaf_of(rail: int, index: int) -> str:
    """A leaf of a rail's own 2-tier sub-fabric (rail-only, rail larger than one switch): rail-03-leaf-02."""
    return f"rail-{rail:02d}-leaf-{index:02d}"


def rail_spine(rail: int, index: int) -> str:
    """A spine of a rail's own sub-fabric; it joins leaves of that rail only: rail-03-spine-07."""
    return f"rail-{rail:02d}-spine-{index:02d}"


# Roles of the Clos switches every stage names and addresses (leaf, spine, core).
SWITCH_ROLES = ("leaf", "spine", "core")
