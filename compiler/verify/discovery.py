"""What the fabric was seen to be, in the tools' own terms, before any plan lookup.

Every input parser (one module per format) fills a `Discovery`:

- nodes: one per thing a tool identifies (an InfiniBand node by GUID, an LLDP system by
  name), with the label the tool prints (node description, system name) and whether the
  node *reported* (its own neighbour table or its ports were read: an absent neighbour
  on a reporting node means nothing is plugged in or the link is down).
- links: one row per cable end pair as a tool printed it, as a plain tuple
  (node key, port, node key, port, lane Gb/s or None, lanes or None, source), where a
  port is a tuple of spellings (an LLDP port id and description), an int (an
  InfiniBand port number) or None (not said). The same cable seen from both ends is
  two rows; the matcher merges them.
- unreadable: rows a tool printed whose far end cannot be placed at all (a neighbour that
  sends no system name), as (node key, port, what, source): `verify` reports each as
  unverified unless the same port shows a neighbour it can place.

Rows are tuples rather than objects: a 16,384-server fabric is ~400k cables.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Port = tuple[str, ...] | int | None


@dataclass(slots=True)
class Node:
    label: str  # as the tool prints it: node description, LLDP system name
    kind: str  # switch | ca | system
    guid: int | None = None  # InfiniBand node GUID
    port_guids: dict[int, int] = field(default_factory=dict)  # IB port number -> port GUID (CAs)
    reported: bool = False
    source: str = ""  # where the node reported (its own table), else where it was first seen (file:line)


@dataclass
class Discovery:
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[tuple] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)  # one per input file, in order
    files: list[str] = field(default_factory=list)
    # a subnet-wide discovery (ibnetdiscover sweeps the whole subnet): a device of that
    # fabric that is absent is not there, rather than not collected
    complete: bool = False
    unreadable: list[tuple] = field(default_factory=list)

    def node(self, key: str, label: str, kind: str, source: str) -> Node:
        n = self.nodes.get(key)
        if n is None:
            n = self.nodes[key] = Node(label, kind, source=source)
        return n

    def link(self, a: str, a_port: Port, b: str, b_port: Port, source: str,
             lane_gbps: float | None = None, lanes: int | None = None) -> None:
        self.links.append((a, a_port, b, b_port, lane_gbps, lanes, source))

    def merge(self, other: Discovery) -> None:
        for key, n in other.nodes.items():
            mine = self.nodes.get(key)
            if mine is None:
                self.nodes[key] = n
            else:
                if n.reported and not mine.reported:
                    mine.source = n.source  # where its own table is, rather than where a neighbour named it
                mine.reported |= n.reported
                mine.port_guids.update(n.port_guids)
                if mine.guid is None:
                    mine.guid = n.guid
        self.links.extend(other.links)
        self.unreadable.extend(other.unreadable)
        self.formats.extend(other.formats)
        self.files.extend(other.files)
        self.complete |= other.complete
