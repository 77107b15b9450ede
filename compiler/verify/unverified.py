"""What the input shows that `verify` could not check: never passed over, never OK.

- An input of the wrong technology for the plan (LLDP tables for an InfiniBand fabric,
  ibnetdiscover for an Ethernet one) is an input error at the file: the tool saw another
  network, so each of its cables would otherwise be "missing".
- A neighbour table of a device the plan does not have (and its neighbours do not
  identify), a row whose neighbour cannot be placed (no system name), and a row on a
  port that is no port of the reporting device are `unverified` findings (exit 1).
  A management port (eth0, Management1, mgmt0) is not a fabric port, nor is a host's
  port outside the plan's NIC groups (an onboard NIC) facing a device the plan does not
  have: their neighbours are counted in a note instead.
- A cable seen from one end whose far end is a switch that did not say which port
  (match.py): `unverified`, since a switch always names its ports.

Cost: one pass over the nodes and over the rows that resolve to no port.
"""

from __future__ import annotations

import re

import numpy as np

from ..diagnostics import Diagnostic, SpecInvalid
from ..plan.model import NO_LINK, Plan
from .discovery import Discovery
from .names import port_spellings
from .resolve import Resolved

# node key prefix -> the technology of the tool that printed it (lldp.py, ibnetdiscover.py)
_TECHNOLOGY = {"lldp:": "ethernet", "guid:": "infiniband"}
_TOOL = {"ethernet": "LLDP neighbour tables (Ethernet)", "infiniband": "ibnetdiscover output (InfiniBand)"}
# out-of-band management interfaces as SONiC/Cumulus/Linux, EOS and others name them
_MANAGEMENT_PORT = re.compile(r"^(eth\d+|mgmt\d*|management\d+(/\d+)*|ma\d+)$", re.IGNORECASE)


def _technology(key: str) -> str | None:
    return next((t for prefix, t in _TECHNOLOGY.items() if key.startswith(prefix)), None)


def _where(source: str) -> tuple[str, int]:
    """(file, line) of a discovery source, `file:line` or `file: detail`."""
    m = re.match(r"^(.*):(\d+)$", source)
    if m:
        return m.group(1), int(m.group(2))
    return source.split(": ", 1)[0], 1


def check_technology(plan: Plan, disc: Discovery, res: Resolved) -> None:
    """SpecInvalid for every input file whose tool sees another technology than the plan's
    fabrics (or than the fabric of the switch whose table it is)."""
    view = plan.view
    protocol = [view.model_protocol(d.model) if d.tier > 0 else None for d in plan.devices]
    planned = {p for p in protocol if p}
    if not planned:
        return  # a direct network (torus): no switch says what its ports speak
    errors: dict[str, Diagnostic] = {}
    foreign: dict[str, dict[str, int]] = {}  # technology no fabric of the plan has -> file -> line
    for i, key in enumerate(res.keys):
        node = disc.nodes[key]
        tech = _technology(key)
        if tech is None or not node.reported:
            continue
        file, line = _where(node.source)
        dev = int(res.node_dev[i])
        if tech not in planned:
            foreign.setdefault(tech, {}).setdefault(file, line)
        elif file not in errors and dev >= 0 and protocol[dev] not in (None, tech):
            d, planned_protocol = plan.devices[dev], protocol[dev]
            assert planned_protocol is not None  # the condition above
            errors[file] = Diagnostic(
                "ASBUILT_WRONG_FABRIC", f"{_TOOL[tech]} of {d.name}, which the plan makes an {protocol[dev]} switch "
                f"({d.model}, fabric {d.fabric})", file=file, line=line,
                hint=f"give {_TOOL[planned_protocol]} for {d.name}, or check the file's name")
    for tech, files in foreign.items():  # one error per technology, at its first file: a folder may hold thousands
        first = min(files)
        others = f" (and {len(files) - 1:,} more file(s) like it)" if len(files) > 1 else ""
        errors[first] = Diagnostic(
            "ASBUILT_WRONG_FABRIC", f"{_TOOL[tech]}{others}, but the plan's fabrics are {', '.join(sorted(planned))}",
            file=first, line=files[first], hint=f"give {' or '.join(_TOOL[p] for p in sorted(planned))} of the built fabric")
    if errors:
        raise SpecInvalid([errors[f] for f in sorted(errors)])


def input_findings(plan: Plan, disc: Discovery, res: Resolved, seen_ports: np.ndarray, in_scope: np.ndarray,
                   places) -> tuple[list[dict], list[int], int]:
    """`unverified` findings for tables of unknown devices, rows that cannot be placed and rows
    on no port of their device; the planned cables they cover (not also `missing`), and how
    many rows were on management ports."""
    out: list[dict] = []
    covered: list[int] = []
    renamed = {node for node, _dev in res.renamed}
    n_rows = np.bincount(res.a_node, minlength=len(res.keys)) + np.bincount(res.b_node, minlength=len(res.keys))
    # rows with a plan port at either end are reported on their own (unplanned, wrong-device)
    placed = (res.a_gport >= 0) | (res.b_gport >= 0)
    n_placed = (np.bincount(res.a_node[placed], minlength=len(res.keys))
                + np.bincount(res.b_node[placed], minlength=len(res.keys)))
    for i, key in enumerate(res.keys):
        node = disc.nodes[key]
        if not node.reported or res.node_dev[i] >= 0 or i in renamed or n_placed[i]:
            continue
        what = (f"the neighbour table of {node.label!r}" if _technology(key) else
                f"{int(n_rows[i])} row(s) naming {node.label!r}")
        out.append({
            "kind": "unverified", "cable_id": None, "cables": [], "anchor": None, "expected": None,
            "found": {"device": node.label, "unknown_device": True},
            "fix": f"the input holds {what}, which is no device of the plan and which its {int(n_rows[i])} row(s) "
                   f"do not identify: none of its cables was checked. Name it as the plan does, or leave it out",
            "source": node.source})
    spell = port_spellings(plan)
    offsets = plan.port_offsets()
    lop = plan.memo("link_of_port", lambda p: p.link_of_port())
    management = 0

    def local_port(node: int, spelling) -> int:
        dev = int(res.node_dev[node])
        if dev < 0 or not spelling:
            return -1
        table = spell[plan.devices[dev].layout]
        for s in spelling:
            hit = table.get(s, table.get(s.lower(), -1))
            if hit >= 0:
                return int(offsets[dev]) + hit
        return -1

    def unplaced_port(node: int, spelling, what: str, source: str, outside: bool = False) -> None:
        nonlocal management
        dev = int(res.node_dev[node])
        name = plan.devices[dev].name if dev >= 0 else res.labels[node]
        raw = spelling[0] if spelling else None
        if (raw and _MANAGEMENT_PORT.match(raw)) or (outside and dev >= 0 and plan.devices[dev].tier == 0):
            management += 1
            return
        out.append({
            "kind": "unverified", "cable_id": None, "cables": [], "anchor": {"device": name, "port": raw},
            "expected": None, "found": None,
            "fix": f"{name} reports {what} on port {raw!r}, which is no port of its plan model "
                   f"({plan.devices[dev].model}): that row was not checked; check the port name (or the file)"
                   if dev >= 0 else f"{name}: {what} on port {raw!r} was not checked",
            "source": source})

    index = {k: i for i, k in enumerate(res.keys)}
    for node_key, spelling, what, source in disc.unreadable:
        n_at = index.get(node_key, -1)
        if n_at < 0 or res.node_dev[n_at] < 0:
            continue  # a table of an unknown device: reported once above
        g = local_port(n_at, spelling)
        if g < 0:
            unplaced_port(n_at, spelling, what, source)
            continue
        if seen_ports[g]:
            continue  # the port shows a neighbour that could be placed (the host's lldpd beside its NIC's agent)
        c = int(lop[g])
        if c != NO_LINK and not in_scope[c]:
            continue
        anchor = places.end(g)
        item = {"kind": "unverified", "cable_id": None, "cables": [], "anchor": anchor, "expected": None,
                "found": {"device": "?", "port": None},
                "fix": f"{places.text(anchor)} has {what}: the cable there was not checked; check by hand",
                "source": source}
        if c != NO_LINK:
            far = int(places.other_end(c, g))
            item.update(cable_id=places.ids[c], cables=[places.ids[c]], expected=places.end(far),
                        fix=f"{places.text(anchor)} has {what}: cable {places.ids[c]} was not checked; check by hand "
                            f"that it reaches {places.text(places.end(far))}")
            covered.append(c)
        out.append(item)
    # rows of a reporting plan device on a port that is none of its own, whose far end is no port either
    lost = np.flatnonzero((res.a_gport < 0) & (res.b_gport < 0) & (res.node_dev[res.a_node] >= 0))
    for r in lost.tolist():
        n_at = int(res.a_node[r])
        if not disc.nodes[res.keys[n_at]].reported:
            continue
        row = disc.links[r]
        far_node = int(res.b_node[r])
        unplaced_port(n_at, row[1] if isinstance(row[1], tuple) else (f"IB port {row[1]}",),
                      f"a neighbour {res.labels[far_node]!r}", row[6], outside=res.node_dev[far_node] < 0)
    return out, covered, management
