"""`ibnetdiscover` output, as the tool prints it (infiniband-diags; the same text ibsim
loads as a net file).

Format (rdma-core infiniband-diags man page, and the real output of ibnetdiscover 44.0
against ibsim here; tests/data/verify/ibnetdiscover/ holds a captured sample):

    switchguid=0x230000100000800(230000100000800)
    Switch	64 "S-0230000100000800"		# "su1-leaf-r8" enhanced port 0 lid 13 lmc 0
    [1]	"H-021000010000010e"[1](21000010000010f) 		# "dgx-su1-001 osfp1-p1" lid 234 4xSDR
    caguid=0x21000010000010e
    Ca	1 "H-021000010000010e"		# "dgx-su1-001 osfp1-p1"
    [1](21000010000010f) 	"S-0230000100000800"[1]		# lid 234 lmc 0 "su1-leaf-r8" lid 13 4xSDR

A node is keyed by its GUID (the hex in "S-"/"H-" ids; a hand-written ibsim file's
other ids are kept as they are), so factory GUIDs and duplicate node descriptions
(unmanaged switches all say "Quantum Mellanox Technologies") never merge two nodes.
Each cable is printed under both of its nodes; both rows are kept.
"""

from __future__ import annotations

import re

from ..diagnostics import Diagnostic, SpecInvalid
from .discovery import Discovery

FORMAT = "ibnetdiscover"

_NODE = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?')
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s*(?:#(.*))?$')
_RATE = re.compile(r"\b(\d+)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR)\b")
_PEER_DESC = re.compile(r'"([^"]*)"')
# Per-lane signalling rate by IBTA speed name, Gb/s, as the trade names it (4xNDR = 400G).
LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50, "NDR": 100, "XDR": 200}
SPEED_NAME = {v: k for k, v in LANE_GBPS.items() if k != "FDR10"}
_KIND = {"Switch": "switch", "Ca": "ca", "Hca": "ca", "Rt": "router"}


def node_key(node_id: str) -> str:
    """'S-0002c90300000001' -> 'guid:0x0002c90300000001'; other ids unchanged."""
    _, dash, rest = node_id.partition("-")
    if dash and rest and len(rest) <= 16:
        try:
            return f"guid:0x{int(rest, 16):016x}"
        except ValueError:
            pass
    return node_id


def looks_like(text: str) -> bool:
    return bool(re.search(r'^(Switch|Ca)\s+\d+\s+"', text, re.M))


def parse(text: str, file: str) -> Discovery:
    """Cost: one regex match per line and dictionary look-ups (node ids and rate tokens
    are parsed once each): about 3 us per port line."""
    disc = Discovery(formats=[FORMAT], files=[file], complete=True)
    nodes = disc.nodes
    append = disc.links.append
    keys: dict[str, str] = {}
    rates: dict[str, tuple] = {}
    current = None
    port_guids = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        first = raw[:1]
        if first == "[":
            if current is None:
                raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "a port line before any Switch/Ca line",
                                              file=file, line=lineno, hint="give ibnetdiscover's output unchanged")])
            m = _PORT.match(raw)
            if m is None:  # ibnetdiscover prints nothing else starting with '[': a cut or edited line
                raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "a port line that does not read as "
                                              '`[port](guid) "peer id"[peer port]`: its cable cannot be checked',
                                              file=file, line=lineno, hint="give ibnetdiscover's output unchanged")])
            port, port_guid, peer_id, peer_port, _peer_guid, comment = m.groups()
            peer = keys.get(peer_id)
            if peer is None:
                peer = keys[peer_id] = node_key(peer_id)
            lanes = lane = None
            if comment:
                tail = comment.rsplit(None, 1)[-1] if comment.strip() else ""
                rate = rates.get(tail)
                if rate is None:
                    r = _RATE.fullmatch(tail)
                    rate = rates[tail] = (int(r.group(1)), LANE_GBPS[r.group(2)]) if r else (None, None)
                lanes, lane = rate
                if peer not in nodes:  # the peer's own record usually follows; keep its label meanwhile
                    descs = _PEER_DESC.findall(comment)
                    if descs:
                        disc.node(peer, descs[-1], "ca" if peer_id.startswith("H-") else "switch", f"{file}:{lineno}")
            if port_guid and port_guids is not None:  # set with `current`, checked above
                port_guids[int(port)] = int(port_guid, 16)
            append((current, int(port), peer, int(peer_port), lane, lanes, f"{file}:{lineno}"))
            continue
        if first not in "SCHR":
            continue
        m = _NODE.match(raw)
        if m:
            kind, _nports, node_id, desc = m.groups()
            current = keys.get(node_id)
            if current is None:
                current = keys[node_id] = node_key(node_id)
            node = disc.node(current, desc if desc is not None else node_id, _KIND[kind], f"{file}:{lineno}")
            node.label = desc if desc is not None else node.label
            node.kind = _KIND[kind]
            node.reported = True  # ibnetdiscover lists every port of a node it reached
            port_guids = node.port_guids
            if current.startswith("guid:"):
                node.guid = int(current[7:], 16)
    if not any(n.reported for n in disc.nodes.values()):
        raise SpecInvalid([Diagnostic("ASBUILT_UNREADABLE", "no Switch or Ca record: not ibnetdiscover output", file=file,
                                      hint="run ibnetdiscover (no options) and give its output unchanged")])
    return disc
