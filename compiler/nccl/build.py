"""Decide an NCCL topology tree from a catalog host topology.

Two styles:
- skeleton: only <cpu> and <pci> (switches and the GPU/NIC leaves with their real bus
  ids); NCCL discovers GPUs, NVLink and NICs itself. What NVIDIA recommends.
- full: also <gpu dev sm> under each GPU and <nic><net name speed port/></nic> under
  each NIC, so NCCL pairs each GPU with its NIC even where sysfs is hidden. Needs every
  GPU's sm and every NIC's RDMA name; <nvlink> is written only from evidenced NVSwitch
  bus ids, otherwise NCCL reads NVLink from NVML (any <nvlink> child turns that off).

Attributes NCCL must never be given from a file (rank, keep, host_hash, gdr, net@dev)
are never written.
"""

from __future__ import annotations

from ..catalog.models import HostPciSwitch, HostTopology, PciIds, PciLink
from .element import Element

STYLES = ("skeleton", "full")


class StyleUnavailable(ValueError):
    """The host topology lacks what a style needs; the message says what."""


def cpumap(cpulist: str, logical_cpus: int) -> str:
    """Linux cpumap text (as in /sys/devices/system/node/nodeN/cpumap): 32-bit hex
    words, most significant first, one word per 32 of nr_cpu_ids. NCCL parses it back."""
    mask = 0
    for part in cpulist.split(","):
        lo, _, hi = part.partition("-")
        for cpu in range(int(lo), int(hi or lo) + 1):
            mask |= 1 << cpu
    words = -(-logical_cpus // 32)
    return ",".join(f"{(mask >> (32 * w)) & 0xFFFFFFFF:08x}" for w in reversed(range(words)))


def missing_for(topo: HostTopology, style: str) -> list[str]:
    """What the host topology lacks for a style (empty: the style can be written)."""
    if style == "skeleton":
        return []
    out = [f"GPU {g.index} has no sm (compute capability)" for g in topo.gpus if g.sm is None]
    out += [f"NIC {n.busid} has no RDMA device name" for n in topo.nics if n.name is None]
    return out


def topology_tree(topo: HostTopology, style: str = "skeleton") -> Element:
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}")
    missing = missing_for(topo, style)
    if missing:
        raise StyleUnavailable(f"{topo.id}: the {style} style is not possible: " + "; ".join(missing))
    full = style == "full"
    root = Element("system", [("version", "1")])
    for cpu in sorted(topo.cpus, key=lambda c: c.numaid):
        attrs = [("numaid", str(cpu.numaid))]
        if cpu.cpulist and topo.logical_cpus:
            attrs.append(("affinity", cpumap(cpu.cpulist, topo.logical_cpus)))
        attrs.append(("arch", cpu.arch))
        for key in ("vendor", "familyid", "modelid"):
            value = getattr(cpu, key)
            if value is not None:
                attrs.append((key, str(value)))
        el = Element("cpu", attrs)
        for sw in topo.switches:
            if sw.cpu == cpu.numaid and sw.parent is None:
                el.children.append(_switch(topo, sw, full))
        el.children.extend(_devices(topo, cpu.numaid, None, full))
        root.children.append(el)
    return root


def _pci(busid: str, pci_class: str, ids: PciIds | None, link: PciLink) -> Element:
    attrs = [("busid", busid), ("class", pci_class)]
    if ids is not None:
        attrs += [("vendor", ids.vendor), ("device", ids.device),
                  ("subsystem_vendor", ids.subsystem_vendor), ("subsystem_device", ids.subsystem_device)]
    attrs += [("link_speed", link.link_speed), ("link_width", str(link.link_width))]
    return Element("pci", attrs)


def _switch(topo: HostTopology, sw: HostPciSwitch, full: bool) -> Element:
    el = _pci(sw.busid, sw.pci_class, sw.ids, sw.link)
    for sub in topo.switches:
        if sub.parent == sw.busid:
            el.children.append(_switch(topo, sub, full))
    el.children.extend(_devices(topo, sw.cpu, sw.busid, full))
    return el


def _devices(topo: HostTopology, numaid: int, switch: str | None, full: bool) -> list[Element]:
    out = []
    for gpu in sorted(topo.gpus, key=lambda g: g.index):
        if gpu.cpu == numaid and gpu.switch == switch:
            el = _pci(gpu.busid, gpu.pci_class, gpu.ids, gpu.link)
            if full:
                el.children.append(Element("gpu", [("dev", str(gpu.index)), ("sm", str(gpu.sm))]))
            out.append(el)
    for nic in topo.nics:
        if nic.cpu == numaid and nic.switch == switch:
            el = _pci(nic.busid, nic.pci_class, nic.ids, nic.link)
            if full:
                assert nic.name is not None  # missing_for() refuses the full style without it
                net = [("name", nic.name)]
                if nic.speed_mbps:
                    net.append(("speed", str(nic.speed_mbps)))
                net.append(("port", str(nic.port)))
                el.children.append(Element("nic", [], [Element("net", net)]))
            out.append(el)
    return out
