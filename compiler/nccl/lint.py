"""A strict validator for NCCL_TOPO_FILE: what NCCL's topology parser (src/graph/xml.cc)
rejects, ignores or misreads, one finding per problem, each tied to a line.

Errors are what NCCL fails on, silently ignores, or silently misreads (the file then
has no or the wrong effect). Warnings are what NCCL accepts but makes a file fragile
(stale overrides copied from a dump, relying on autofill, size near the limits).
Every published NVIDIA-dialect file we know of (cloud vendors' topology files) has no errors;
files the compiler writes have no findings at all.
"""

from __future__ import annotations

import re

from .element import Element
from .parse import Finding, parse

BUSID_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
HIDDEN_NVSWITCH = "fffffff:ff:ff.0"  # what NCCL prints for an NVSwitch a VM hides (github.com/NVIDIA/nccl/issues/1182)
# NCCL's dictionaries (src/graph/topo.cc). NCCL matches by prefix: a value that merely
# starts with a key is read as that key; anything else falls back silently.
LINK_SPEEDS = ("2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe", "5.0 GT/s PCIe",
               "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe", "64.0 GT/s PCIe")
ARCHES = ("x86_64", "arm64", "ppc64")
X86_VENDORS = ("GenuineIntel", "AuthenticAMD", "CentaurHauls")

CHILDREN = {  # parent -> elements NCCL reads under it; anything else is skipped with its subtree
    None: ("system",),
    "system": ("cpu",),
    "cpu": ("pci", "nic"),
    "pci": ("pci", "gpu", "nic", "pcilink"),
    "gpu": ("nvlink", "c2c"),
    "nic": ("net",),
}
NEWER_ONLY = {"nic": ("gin", "rma")}  # 2.30+ dump content: do not emit
ATTRIBUTES = {
    "system": ("version", "name"),
    "cpu": ("numaid", "affinity", "affinity_offset", "arch", "vendor", "familyid", "modelid", "host_hash"),
    "pci": ("busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed", "link_width"),
    "gpu": ("dev", "sm", "rank", "gdr", "mlopart"),
    "nvlink": ("target", "count", "tclass"),
    "c2c": ("bw", "count"),
    "pcilink": ("target",),
    "nic": (),
    "net": ("name", "dev", "speed", "latency", "port", "guid", "maxconn", "gdr", "coll", "net", "rail", "plane"),
}
REQUIRED = {"system": ("version",), "cpu": ("numaid",), "nvlink": ("target", "count", "tclass"),
            "c2c": ("bw", "count"), "pcilink": ("target",), "net": ("name",)}
INTEGER = {("cpu", "numaid"), ("cpu", "familyid"), ("cpu", "modelid"), ("pci", "link_width"), ("gpu", "dev"),
           ("gpu", "sm"), ("nvlink", "count"), ("c2c", "bw"), ("c2c", "count"), ("net", "speed"), ("net", "port"),
           ("net", "maxconn")}
RUNTIME = {("gpu", "rank"), ("gpu", "gdr"), ("net", "dev"), ("net", "gdr"), ("cpu", "host_hash"), ("net", "rail"),
           ("net", "plane"), ("net", "net"), ("gpu", "mlopart")}
PCI_IDS = ("vendor", "device", "subsystem_vendor", "subsystem_device")
MAX_NODES = 256  # NCCL 2.21+, including the tree fused across ranks
WARN_NODES = 150
MAX_ATTRS = 16
NET_ATTR_HEADROOM = 10  # NCCL adds up to ~6 attributes to a <net> at run time
MAX_CHILDREN_OLD = 32  # NCCL <= 2.20 crashes above this (unchecked)
MAX_CHILDREN = 128  # NCCL 2.21-2.29


def lint(text: str) -> list[Finding]:
    roots, findings = parse(text)
    out = list(findings)
    if any(f.severity == "error" and f.code in ("NCCL_SYNTAX", "NCCL_MISMATCH") for f in findings) and not roots:
        return _sorted(out)
    _root(roots, out)
    for root in roots:
        if root.name == "system":
            _tree(root, out)
    return _sorted(out)


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(set(findings), key=lambda f: (f.line, f.severity, f.code, f.message))


def _root(roots: list[Element], out: list[Finding]) -> None:
    if not roots:
        out.append(Finding("error", "NCCL_NO_ROOT", 1, "no <system> element: NCCL loads nothing from this file"))
        return
    for extra in roots[1:]:
        out.append(Finding("error", "NCCL_ROOT", extra.line, f"second top-level element <{extra.name}>; exactly one <system> root"))
    root = roots[0]
    if root.name == "graphs":
        out.append(Finding("error", "NCCL_GRAPH_FILE", root.line,
                           "this is an NCCL_GRAPH_FILE (<graphs>); as NCCL_TOPO_FILE it loads 0 nodes, silently"))
    elif root.name != "system":
        out.append(Finding("error", "NCCL_ROOT", root.line, f"root is <{root.name}>; NCCL needs <system version=\"1\">"))
    elif root.get("version") != "1":
        hint = " (version 2 is the RCCL dialect, rejected by NVIDIA NCCL)" if root.get("version") == "2" else ""
        out.append(Finding("error", "NCCL_VERSION", root.line,
                           f"<system version=\"{root.get('version')}\">: NCCL needs version=\"1\"{hint}"))


def _tree(root: Element, out: list[Finding]) -> None:
    busids: dict[str, int] = {}
    gpu_busids: set[str] = set()
    nvlinks: list[Element] = []
    has_named_net = False
    host_hashes: set[str] = set()
    nodes = 0
    for el, parent in root.walk():
        nodes += 1
        allowed = CHILDREN.get(parent.name if parent else None, ())
        if parent is not None and el.name not in allowed:
            if el.name in NEWER_ONLY.get(parent.name, ()):
                out.append(Finding("warning", "NCCL_NEWER_ELEMENT", el.line, f"<{el.name}> is NCCL 2.30+ dump content; do not hand it back"))
            else:
                out.append(Finding("error", "NCCL_MISPLACED", el.line,
                                   f"<{el.name}> under <{parent.name}> is skipped by NCCL with its whole subtree "
                                   f"(allowed under <{parent.name}>: {', '.join(allowed) or 'nothing'})"))
            continue
        _attrs(el, out)
        _children(el, out)
        if el.name == "pci":
            busid = el.get("busid")
            if busid is not None:
                if busid in busids:
                    out.append(Finding("error", "NCCL_BUSID_DUPLICATE", el.line, f"busid {busid} already used on line {busids[busid]}"))
                busids.setdefault(busid, el.line)
                if any(c.name == "gpu" for c in el.children) or (el.get("class") or "").startswith("0x03"):
                    gpu_busids.add(busid)
            _pci(el, out)
        elif el.name == "cpu":
            _cpu(el, out)
            if el.get("host_hash") is not None:
                host_hashes.add(el.get("host_hash"))
        elif el.name == "nvlink":
            nvlinks.append(el)
        elif el.name == "net" and el.get("name"):
            has_named_net = True
    for link in nvlinks:
        target, tclass = link.get("target"), link.get("tclass") or ""
        if target is None:
            continue
        if tclass.startswith("0x03"):
            if target not in gpu_busids:
                out.append(Finding("error", "NCCL_NVLINK_TARGET", link.line, f"nvlink target {target} is not a GPU busid in this file"))
        elif target == HIDDEN_NVSWITCH:
            out.append(Finding("warning", "NCCL_HIDDEN_NVSWITCH", link.line,
                               "NVSwitch hidden by a VM (fffffff:ff:ff.0): this file fits only that VM type"))
        elif not BUSID_RE.match(target):
            out.append(Finding("error", "NCCL_BUSID_FORMAT", link.line, f"nvlink target {target!r} is not a lower-case dddd:bb:dd.f busid"))
    if has_named_net:
        for el, _ in root.walk():
            if el.name == "pci" and any(c.name == "pci" for c in el.children) and not all(el.has(k) for k in PCI_IDS):
                out.append(Finding("error", "NCCL_FUSION_BLOWUP", el.line,
                                   f"switch {el.get('busid')} lacks vendor/device/subsystem ids while nets are matched by name: "
                                   "each rank autofills a different switch, and NCCL 2.21+ fuses the rank trees into "
                                   "duplicates until 'too many XML nodes' (aws-ofi-nccl PR 1226); give every switch all four ids"))
    if len(host_hashes) > 1:
        out.append(Finding("error", "NCCL_MULTI_HOST", root.line,
                           f"{len(host_hashes)} different host_hash values: a topology file must describe a single node"))
    if nodes > MAX_NODES:
        out.append(Finding("error", "NCCL_TOO_MANY_NODES", root.line, f"{nodes} XML nodes; NCCL 2.21+ allows {MAX_NODES}, fused tree included"))
    elif nodes > WARN_NODES:
        out.append(Finding("warning", "NCCL_MANY_NODES", root.line,
                           f"{nodes} XML nodes: close to NCCL's {MAX_NODES} once per-rank trees are fused"))
    cpus = [c for c in root.children if c.name == "cpu"]
    if len(cpus) == 1 and not any(c.name == "pci" and c.children for c in cpus[0].children):
        out.append(Finding("warning", "NCCL_FLAT_HOST", root.line,
                           "one CPU and no PCIe switches: NCCL detects such a host as well without a file (github.com/aws/aws-ofi-nccl/issues/466)"))
    if not cpus:
        out.append(Finding("error", "NCCL_NO_CPU", root.line, "<system> has no <cpu>: NCCL has nothing to start from"))


def _attrs(el: Element, out: list[Finding]) -> None:
    known = ATTRIBUTES.get(el.name, ())
    seen: set[str] = set()
    for key, value in el.attrs:
        if key in seen:
            out.append(Finding("error", "NCCL_ATTR_DUPLICATE", el.line, f"<{el.name}>: attribute {key} given twice"))
        seen.add(key)
        if key not in known:
            out.append(Finding("warning", "NCCL_ATTR_UNKNOWN", el.line,
                               f"<{el.name}>: unknown attribute {key} is ignored but counts toward NCCL's {MAX_ATTRS}"))
        if len(value) > 255:
            out.append(Finding("error", "NCCL_VALUE_TOO_LONG", el.line, f"<{el.name} {key}>: {len(value)} characters; NCCL's limit is 255"))
        if (el.name, key) in RUNTIME:
            out.append(Finding("warning", "NCCL_STALE_OVERRIDE", el.line,
                               f"<{el.name} {key}> is set by NCCL at run time; a value from a dump overrides or confuses detection: strip it"))
        if (el.name, key) in INTEGER:
            if not re.fullmatch(r"-?(0x[0-9a-fA-F]+|[0-9]+)", value):
                out.append(Finding("error", "NCCL_NOT_INTEGER", el.line, f"<{el.name} {key}=\"{value}\">: not an integer; NCCL reads it as 0"))
            elif re.fullmatch(r"-?0[0-9]+", value):
                out.append(Finding("warning", "NCCL_OCTAL", el.line, f"<{el.name} {key}=\"{value}\">: a leading 0 means octal to NCCL"))
    if len(el.attrs) > MAX_ATTRS:
        out.append(Finding("error", "NCCL_TOO_MANY_ATTRS", el.line,
                           f"<{el.name}> has {len(el.attrs)} attributes; NCCL silently drops all after {MAX_ATTRS}"))
    elif el.name == "net" and len(el.attrs) > NET_ATTR_HEADROOM:
        out.append(Finding("warning", "NCCL_NET_ATTRS", el.line,
                           f"<net> has {len(el.attrs)} attributes; NCCL adds up to 6 of its own (limit {MAX_ATTRS})"))
    for key in REQUIRED.get(el.name, ()):
        if not el.has(key):
            out.append(Finding("error", "NCCL_ATTR_MISSING", el.line,
                               f"<{el.name}> needs {key}: NCCL aborts with 'Attribute {key} of node {el.name} not found'"))


def _children(el: Element, out: list[Finding]) -> None:
    count = len(el.children)
    if count > MAX_CHILDREN:
        out.append(Finding("error", "NCCL_TOO_MANY_CHILDREN", el.line, f"<{el.name}> has {count} children; NCCL 2.21+ allows {MAX_CHILDREN}"))
    elif count > MAX_CHILDREN_OLD:
        out.append(Finding("warning", "NCCL_MANY_CHILDREN", el.line,
                           f"<{el.name}> has {count} children: NCCL 2.18-2.20 crash above {MAX_CHILDREN_OLD}"))


def _is_virtual(busid: str | None) -> bool:
    return busid is not None and busid.startswith("ffff:")


def _pci(el: Element, out: list[Finding]) -> None:
    busid = el.get("busid")
    if busid is None:
        out.append(Finding("error", "NCCL_ATTR_MISSING", el.line, "<pci> needs busid"))
    elif not BUSID_RE.match(busid):
        out.append(Finding("error", "NCCL_BUSID_FORMAT", el.line,
                           f"busid {busid!r} is not lower-case dddd:bb:dd.f (4-digit domain): NCCL compares strings exactly "
                           "and silently orphans this node"))
    kinds = {c.name for c in el.children}
    if "gpu" in kinds and "nic" in kinds:
        out.append(Finding("error", "NCCL_PCI_ROLE", el.line, f"pci {busid} has both <gpu> and <nic>; one device is one or the other"))
    if ("gpu" in kinds or "nic" in kinds) and "pci" in kinds:
        out.append(Finding("error", "NCCL_PCI_ROLE", el.line,
                           f"pci {busid} is a GPU/NIC (it has <gpu>/<nic>) and NCCL ignores the <pci> children under it"))
    speed = el.get("link_speed")
    if speed is not None:
        if speed in LINK_SPEEDS:
            pass
        elif speed == "":
            out.append(Finding("warning", "NCCL_LINK_SPEED_EMPTY", el.line,
                               "link_speed=\"\" (what NCCL dumps when sysfs has no speed) is read as PCIe Gen3"))
        elif any(speed.startswith(k) for k in LINK_SPEEDS):
            out.append(Finding("warning", "NCCL_LINK_SPEED_PREFIX", el.line,
                               f"link_speed \"{speed}\" works only because NCCL matches dictionary prefixes; write one of {', '.join(LINK_SPEEDS)}"))
        else:
            out.append(Finding("error", "NCCL_LINK_SPEED", el.line,
                               f"link_speed \"{speed}\" is not in NCCL's dictionary and silently becomes PCIe Gen3; "
                               f"use one of {', '.join(LINK_SPEEDS)}"))
    cls = el.get("class")
    if cls is not None and not re.fullmatch(r"0x[0-9a-f]{6}", cls):
        out.append(Finding("warning", "NCCL_CLASS_FORMAT", el.line,
                           f"class {cls!r}: NCCL matches 0x-prefixed 6-digit classes by prefix; anything else counts as a switch"))
    missing_link = [k for k in ("class", "link_speed", "link_width") if not el.has(k)]
    if _is_virtual(busid):
        if missing_link:
            out.append(Finding("error", "NCCL_VIRTUAL_INCOMPLETE", el.line,
                               f"virtual pci {busid} lacks {', '.join(missing_link)}: sysfs cannot fill a virtual device and NCCL aborts "
                               "('Attribute ... of node pci not found')"))
        if not all(el.has(k) for k in PCI_IDS) and any(c.name == "pci" for c in el.children):
            out.append(Finding("warning", "NCCL_SWITCH_IDS", el.line,
                               f"virtual switch {busid} has no vendor/device/subsystem ids (0x0000 for virtual ones): harmless "
                               "without <net>, a fusion blow-up risk with it"))


def _cpu(el: Element, out: list[Finding]) -> None:
    arch, vendor = el.get("arch"), el.get("vendor")
    if arch is not None and not any(arch.startswith(a) for a in ARCHES):
        out.append(Finding("error", "NCCL_CPU_ARCH", el.line, f"arch {arch!r}: NCCL knows {', '.join(ARCHES)}"))
    if vendor is not None and not any(vendor.startswith(v) for v in X86_VENDORS):
        out.append(Finding("error", "NCCL_CPU_VENDOR", el.line, f"vendor {vendor!r}: NCCL knows {', '.join(X86_VENDORS)}"))
    need = ["arch"]
    if arch is None or arch.startswith("x86_64"):
        need.append("vendor")
        if vendor in (None, "GenuineIntel", "CentaurHauls"):
            need += ["familyid", "modelid"]
        elif vendor == "AuthenticAMD":
            need.append("familyid")
    missing = [k for k in need if not el.has(k)]
    affinity = el.get("affinity")
    if affinity is not None and not re.fullmatch(r"[0-9a-fA-F]{1,8}(,[0-9a-fA-F]{8})*", affinity):
        out.append(Finding("error", "NCCL_AFFINITY", el.line, f"affinity {affinity!r} is not a cpumap (32-bit hex words, most significant first)"))
    if not missing:
        return
    reachable = any(p.name == "pci" and p.get("busid") and not _is_virtual(p.get("busid")) for p, _ in el.walk())
    if reachable:
        out.append(Finding("warning", "NCCL_CPU_AUTOFILL", el.line,
                           f"cpu {el.get('numaid')} lacks {', '.join(missing)}: NCCL fills them only when it reaches this CPU from a "
                           "GPU or NIC it uses; write them"))
    else:
        out.append(Finding("error", "NCCL_CPU_INCOMPLETE", el.line,
                           f"cpu {el.get('numaid')} lacks {', '.join(missing)} and has no real device under it to autofill from: "
                           "NCCL aborts with 'Attribute arch of node cpu not found' "
                           "(github.com/NVIDIA/nccl/issues/379, github.com/aws/aws-ofi-nccl/issues/785)"))
