"""Assembling a plan from blocks: devices with port offsets, shared layouts, and links
added a block at a time as numpy columns with one medium per block.

Used by every topology builder (Clos, torus, dragonfly, rail-only, multi-plane).
"""

from __future__ import annotations

import numpy as np

from ..catalog import Catalog
from ..plan.model import Device, LinkTable, Plan, PortLayout
from . import media as media_choice


class PlanAssembly:
    def __init__(self, catalog: Catalog, media_requested: dict[str, str]):
        self.catalog = catalog
        self.media_requested = media_requested
        self.devices: list[Device] = []
        self.layouts: dict[str, PortLayout] = {}
        self.kinds: list[str] = []
        self.parts: list[LinkTable] = []
        self.media_ids: list[str] = []
        self.port_total = 0

    def layout(self, layout: PortLayout) -> str:
        self.layouts.setdefault(layout.id, layout)
        return layout.id

    def add(self, device: Device) -> int:
        device.port_offset = self.port_total
        self.port_total += len(self.layouts[device.layout])
        self.devices.append(device)
        return len(self.devices) - 1

    def add_block(self, devices: list[Device]) -> int:
        """Append devices in order, as add() would one by one; the first's index."""
        first, total, layouts = len(self.devices), self.port_total, self.layouts
        for device in devices:
            device.port_offset = total
            total += len(layouts[device.layout].ports)
        self.port_total = total
        self.devices.extend(devices)
        return first

    def link_block(self, kind: str, a_dev, a_port, b_dev, b_port, medium: str | None = None) -> None:
        """Append links of one kind. The medium: the spec's choice for the kind, else
        `medium`, else the first the catalog has transceivers for at both ends; optics as
        straight or splitter fibers by the ends' cages (media.optical_variant)."""
        a_dev = np.asarray(a_dev, dtype=np.int32)
        if a_dev.size == 0:
            return
        a_port, b_dev, b_port = (np.asarray(x, dtype=np.int32) for x in (a_port, b_dev, b_port))
        if kind not in self.kinds:
            self.kinds.append(kind)
        layout_a = self.layouts[self.devices[int(a_dev[0])].layout]
        layout_b = self.layouts[self.devices[int(b_dev[0])].layout]
        end_a, end_b = layout_a.ports[int(a_port[0])], layout_b.ports[int(b_port[0])]
        chosen = media_choice.choose(self.catalog, self.media_requested.get(kind) or medium, end_a, end_b,
                                     layout_a.cage_ports(end_a.cage), layout_b.cage_ports(end_b.cage))
        if chosen not in self.media_ids:
            self.media_ids.append(chosen)
        n = a_dev.size
        self.parts.append(LinkTable(
            a_dev, a_port, b_dev, b_port,
            np.full(n, self.kinds.index(kind), dtype=np.int16),
            np.full(n, self.media_ids.index(chosen), dtype=np.int16),
            np.full(n, min(end_a.speed_gbps, end_b.speed_gbps), dtype=np.int32),
        ))

    def plan(self, name: str, design: dict, notes: list[str]) -> Plan:
        return Plan(name=name, devices=self.devices, layouts=self.layouts, links=LinkTable.concat(self.parts),
                    link_kinds=self.kinds, media=self.media_ids, design=design, notes=notes)
