"""NCCL topology files: the writer, the linter (nccl-topology.md section 10) and the
catalog's host topologies, checked against the files public clouds publish.

Modules exercised here: nccl/element.py (the XML tree), nccl/files.py (which file a server type
gets)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from compiler.catalog import load_catalog
from compiler.nccl.build import cpumap, topology_tree
from compiler.nccl.compare import differences, same_topology
from compiler.nccl.lint import LINK_SPEEDS, lint
from compiler.nccl.parse import parse
from compiler.nccl.write import write

from .conftest import ROOT, SPECS, cli_in_process

REFERENCE = ROOT.parent / "shared" / "reference" / "nccl-xml"
# Copies of the published files live in tests/data/nccl-xml (provenance in SOURCES.md there).
PUBLISHED = ROOT / "tests" / "data" / "nccl-xml"
EXAMPLE = (PUBLISHED / "example_8gpu_8nic_2cpu_4sw_skeleton.xml").read_text()
FULL_EXAMPLE = (PUBLISHED / "example_8gpu_8nic_2cpu_4sw_full.xml").read_text()
# Files in the folder that are not NVIDIA-dialect topology files a rank would load as is:
NOT_ACCEPTED = {
    "rccl_topo_8p_940vm.xml": "NCCL_VERSION",  # RCCL dialect, version 2
    "azure_ncv4-graph.xml": "NCCL_GRAPH_FILE",  # an NCCL_GRAPH_FILE
    "aws_p5.48xl-topo_PR1226_unmerged.xml": "NCCL_FUSION_BLOWUP",  # never merged: it overflowed NCCL's 256 nodes
}
CATALOG = load_catalog()


def codes(text: str, severity: str | None = None) -> set[str]:
    return {f.code for f in lint(text) if severity is None or f.severity == severity}


# --- published files --------------------------------------------------------------------

def test_published_copies_match_the_reference():
    if not REFERENCE.is_dir():
        pytest.skip(f"{REFERENCE} not present (the project keeps its own copies in {PUBLISHED})")
    for f in sorted(REFERENCE.glob("*.xml")):
        if f.name in NOT_COPIED:
            continue
        assert (PUBLISHED / f.name).read_bytes() == f.read_bytes(), f.name


NOT_COPIED = ("ibmcloud_gx3d-8xh100_topo.xml", "rccl_topo_8p_940vm.xml")  # read from the reference (licence)


def published(name: str) -> str:
    if (PUBLISHED / name).exists():
        return (PUBLISHED / name).read_text()
    if not (REFERENCE / name).exists():
        pytest.skip(f"{name} is not copied into the project (licence unchecked) and {REFERENCE} is absent")
    return (REFERENCE / name).read_text()


@pytest.mark.parametrize("name", sorted([p.name for p in PUBLISHED.glob("*.xml")] + list(NOT_COPIED)))
def test_published_files(name):
    found = codes(published(name), "error")
    if name in NOT_ACCEPTED:
        assert NOT_ACCEPTED[name] in found
    else:
        assert not found, f"{name}: NVIDIA-dialect published file must pass: {found}"


@pytest.mark.parametrize("topo_id", sorted(t for t, v in CATALOG.host_topology.items() if v.reproduces))
def test_catalog_reproduces_published_cloud_file(topo_id):
    topo = CATALOG.host_topology[topo_id]
    mine, _ = parse(write(topology_tree(topo, "skeleton")))
    theirs, lexical = parse((PUBLISHED / topo.reproduces).read_text())
    assert not [f for f in lexical if f.severity == "error"]
    assert same_topology(mine[0], theirs[0]), differences(mine[0], theirs[0])


def test_comparison_can_fail():
    topo = CATALOG.host_topology["azure-nd-h100-v5"]
    theirs, _ = parse((PUBLISHED / topo.reproduces).read_text().replace("0008:00:00.0", "0004:00:00.0"))
    mine, _ = parse(write(topology_tree(topo, "skeleton")))
    assert not same_topology(mine[0], theirs[0])
    assert any("0004:00:00.0" in d or "0008:00:00.0" in d for d in differences(mine[0], theirs[0]))


def test_cpumap_matches_linux_and_published_affinities():
    assert cpumap("0-47", 96) == "00000000,0000ffff,ffffffff"
    assert cpumap("0-23,48-71", 96) == "000000ff,ffff0000,00ffffff"
    assert cpumap("0-55,112-167", 224) == "00000000,000000ff,ffffffff,ffff0000,00000000,00ffffff,ffffffff"


# --- what the writer emits -----------------------------------------------------------------

ONE_TAG = re.compile(r'^( {2})*(</[a-z]+>|<[a-z]+( [a-z_]+="[^"\t<>&]*")*/?>)$')


@pytest.mark.parametrize("topo_id,style", [(t, s) for t in sorted(CATALOG.host_topology) for s in ("skeleton", "full")
                                           if s == "skeleton" or t == "dgx-h100"])
def test_writer_obeys_nccl_parser(topo_id, style):
    text = write(topology_tree(CATALOG.host_topology[topo_id], style))
    assert not text.startswith("<?") and "\t" not in text and "'" not in text and text.isascii()
    lines = text.splitlines()
    assert lines[0] == '<system version="1">' and lines[-1] == "</system>"
    for line in lines:
        assert ONE_TAG.match(line), line
    for busid in re.findall(r'busid="([^"]*)"', text):
        assert re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", busid)
    for speed in re.findall(r'link_speed="([^"]*)"', text):
        assert speed in LINK_SPEEDS
    roots, _ = parse(text)
    assert roots[0].count() < 256
    findings = lint(text)
    if topo_id == "azure-nd-a100-v4":  # Azure writes its switches without ids; kept as published
        assert {f.code for f in findings} == {"NCCL_SWITCH_IDS"}
    else:
        assert findings == []


def test_full_style_pairs_each_gpu_with_its_rail_nic():
    text = write(topology_tree(CATALOG.host_topology["dgx-h100"], "full"))
    roots, _ = parse(text)
    pairs = {}
    for cpu in roots[0].children:
        for switch in cpu.children:
            gpu = [c for c in switch.children if any(g.name == "gpu" for g in c.children)]
            nic = [c for c in switch.children if any(g.name == "nic" for g in c.children)]
            assert len(gpu) == 1 and len(nic) == 1
            pairs[int(gpu[0].children[0].get("dev"))] = nic[0].children[0].children[0].get("name")
    # DGX H100 User Guide Table 6, and the rail order of the catalog's compute ports
    assert pairs == {0: "mlx5_0", 1: "mlx5_3", 2: "mlx5_4", 3: "mlx5_5", 4: "mlx5_6", 5: "mlx5_9", 6: "mlx5_10", 7: "mlx5_11"}
    ports = CATALOG.servers["dgx-h100"].nic_groups["compute"].ports
    assert pairs == {p.gpu: p.device for p in ports}
    assert "<nvlink" not in text  # NVSwitch bus ids are not evidenced: NVML detects NVLink


def test_catalog_host_topology_agrees_with_server_ports():
    for sid, topo in CATALOG.host_topology.items():
        if sid not in CATALOG.servers:
            continue
        ports = CATALOG.servers[sid].nic_groups["compute"].ports
        by_name = {n.name: n for n in topo.nics}
        for p in ports:
            assert p.device in by_name and by_name[p.device].near_gpus == [p.gpu], (sid, p)


def test_no_file_without_evidence():
    for sid in ("dgx-b200", "dgx-h200", "gb200-nvl72", "mi300x-8"):
        assert sid not in CATALOG.host_topology
        assert CATALOG.servers[sid].no_host_topology


# --- one test per pitfall (nccl-topology.md section 8) ---------------------------------

def test_pitfall_1_busid_format():
    assert "NCCL_BUSID_FORMAT" in codes(EXAMPLE.replace("0000:1a:00.0", "0000:1A:00.0"), "error")
    assert "NCCL_BUSID_FORMAT" in codes(EXAMPLE.replace("0000:1a:00.0", "00000000:1a:00.0"), "error")
    assert "NCCL_BUSID_DUPLICATE" in codes(EXAMPLE.replace("0000:1b:00.0", "0000:1a:00.0"), "error")


@pytest.mark.parametrize("mangle,code", [
    (lambda t: '<?xml version="1.0"?>\n' + t, "NCCL_PROLOG"),
    (lambda t: t.replace("  <cpu", "\t<cpu", 1), "NCCL_TAB"),
    (lambda t: t.replace(' arch="x86_64"', '\n      arch="x86_64"', 1), "NCCL_MULTILINE_TAG"),
    (lambda t: t.replace('numaid="0"', "numaid='0'", 1), "NCCL_SINGLE_QUOTES"),
    (lambda t: t.replace('numaid="0"', 'numaid = "0"', 1), "NCCL_SPACE_AROUND_EQUALS"),
    (lambda t: t.replace('numaid="0"', "numaid=0", 1), "NCCL_UNQUOTED"),
    (lambda t: t.replace("</cpu>", "</cpux>", 1), "NCCL_MISMATCH"),
])
def test_pitfall_2_serialization(mangle, code):
    assert code in codes(mangle(EXAMPLE), "error")


def test_pitfall_3_incomplete_cpu_and_virtual_switch():
    bare_cpu = '<system version="1">\n  <cpu numaid="0">\n    <pci busid="ffff:ff:01.0" class="0x060400" link_speed="16 GT/s" link_width="16"/>\n  </cpu>\n</system>\n'
    assert "NCCL_CPU_INCOMPLETE" in codes(bare_cpu, "error")
    azure = (PUBLISHED / "azure_ndv5-topo.xml").read_text().replace(' class="0x060400"', "", 1)
    assert "NCCL_VIRTUAL_INCOMPLETE" in codes(azure, "error")
    # a CPU reached from a real device NCCL finds in sysfs is autofilled: a warning only
    assert codes((PUBLISHED / "aws_g5.48xl-topo.xml").read_text()) == {"NCCL_CPU_AUTOFILL"}


@pytest.mark.parametrize("speed", ["16.0 GT/s", "64 GT/s", "32 GTs"])
def test_pitfall_4_link_speed_outside_the_dictionary(speed):
    assert "NCCL_LINK_SPEED" in codes(EXAMPLE.replace('link_speed="32.0 GT/s PCIe"', f'link_speed="{speed}"', 1), "error")


def test_pitfall_5_stale_overrides_from_a_dump(tmp_path):
    dump = FULL_EXAMPLE.replace('<gpu dev="0" sm="90">', '<gpu dev="0" sm="90" rank="0" gdr="1">')
    dump = dump.replace('<net name="mlx5_0"', '<net name="mlx5_0" dev="0"')
    dump = dump.replace('<cpu numaid="0"', '<cpu host_hash="0x1" numaid="0"')
    found = [f for f in lint(dump) if f.code == "NCCL_STALE_OVERRIDE"]
    assert {f.severity for f in found} == {"warning"} and len(found) == 4
    path = tmp_path / "dump.xml"
    path.write_text(dump)
    assert cli_in_process("lint-nccl", str(path)).returncode == 0
    strict = cli_in_process("lint-nccl", "--strict", str(path))
    assert strict.returncode == 1 and "NCCL_STALE_OVERRIDE" in strict.stdout


def test_pitfall_6_fusion_blowup():
    assert "NCCL_FUSION_BLOWUP" in codes((PUBLISHED / "aws_p5.48xl-topo_PR1226_unmerged.xml").read_text(), "error")
    no_ids = re.sub(r' vendor="0x0000" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000"', "", FULL_EXAMPLE)
    assert "NCCL_FUSION_BLOWUP" in codes(no_ids, "error")
    # the same switches in the skeleton style (no <net>) are only a warning (Azure ND A100 v4)
    assert codes((PUBLISHED / "azure_ndv4-topo.xml").read_text()) == {"NCCL_SWITCH_IDS"}


def test_pitfall_7_silently_ignored_input():
    misplaced = EXAMPLE.replace('<system version="1">\n', '<system version="1">\n  <pci busid="0000:05:00.0" class="0x068000" link_speed="32.0 GT/s PCIe" link_width="16"/>\n')
    assert "NCCL_MISPLACED" in codes(misplaced, "error")
    assert "NCCL_GRAPH_FILE" in codes((PUBLISHED / "azure_ncv4-graph.xml").read_text(), "error")
    assert "NCCL_PCI_ROLE" in codes(FULL_EXAMPLE.replace('<gpu dev="0" sm="90">', '<nic><net name="x"/></nic><gpu dev="0" sm="90">'), "error")


def test_pitfall_8_limits():
    attrs = " ".join(f'a{i}="1"' for i in range(17))
    assert "NCCL_TOO_MANY_ATTRS" in codes(EXAMPLE.replace('<system version="1">', f'<system version="1" {attrs}>'), "error")
    assert "NCCL_VALUE_TOO_LONG" in codes(EXAMPLE.replace('<system version="1">', f'<system version="1" name="{"x" * 256}">'), "error")
    leaves = "".join(f'      <pci busid="0000:{0x20 + i:02x}:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>\n'
                     for i in range(33))
    wide = EXAMPLE.replace('    <pci busid="0000:15:00.0"', '    <pci busid="0000:14:00.0" class="0x060400" vendor="0x0000" device="0x0000" subsystem_vendor="0x0000" subsystem_device="0x0000" link_speed="32.0 GT/s PCIe" link_width="16">\n' + leaves + "    </pci>\n    <pci busid=\"0000:15:00.0\"", 1)
    assert "NCCL_MANY_CHILDREN" in codes(wide, "warning")
    big = '<system version="1">\n' + "".join(
        f'  <cpu numaid="{c}" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">\n'
        + "".join(f'    <pci busid="{c:04x}:{i:02x}:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>\n' for i in range(100))
        + "  </cpu>\n" for c in range(3)) + "</system>\n"
    assert "NCCL_TOO_MANY_NODES" in codes(big, "error")


def test_pitfall_9_vm_and_multi_node():
    hidden = FULL_EXAMPLE.replace('target="0000:05:00.0"', 'target="fffffff:ff:ff.0"', 1)
    assert "NCCL_HIDDEN_NVSWITCH" in codes(hidden, "warning") and not codes(hidden, "error")
    two_hosts = FULL_EXAMPLE.replace('<cpu numaid="0"', '<cpu host_hash="0xa" numaid="0"').replace('<cpu numaid="1"', '<cpu host_hash="0xb" numaid="1"')
    assert "NCCL_MULTI_HOST" in codes(two_hosts, "error")


def test_pitfall_10_file_not_needed():
    flat = '<system version="1">\n  <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">\n    <pci busid="0000:18:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"/>\n  </cpu>\n</system>\n'
    assert codes(flat) == {"NCCL_FLAT_HOST"}


def test_rccl_dialect_rejected():
    assert "NCCL_VERSION" in codes(published("rccl_topo_8p_940vm.xml"), "error")


# --- CLI and compile ------------------------------------------------------------------------

def test_lint_cli(tmp_path):
    good = tmp_path / "good.xml"
    good.write_text(EXAMPLE)
    r = cli_in_process("lint-nccl", str(good))
    assert r.returncode == 0 and "0 error(s), 0 warning(s)" in r.stdout
    bad = tmp_path / "bad.xml"
    bad.write_text(EXAMPLE.replace("0000:1a:00.0", "0000:1A:00.0"))
    r = cli_in_process("lint-nccl", "--format", "json", str(bad))
    assert r.returncode == 1
    report = json.loads(r.stdout)
    assert report["ok"] is False and report["files"][0]["findings"][0]["line"] == 6
    assert cli_in_process("lint-nccl", str(tmp_path / "missing.xml")).returncode == 2


def test_nccl_xml_cli_style_flag():
    skeleton = cli_in_process("nccl-xml", "dgx-h100")
    full = cli_in_process("nccl-xml", "dgx-h100", "--style", "full")
    assert skeleton.returncode == 0 and "<gpu" not in skeleton.stdout
    assert full.returncode == 0 and '<net name="mlx5_11" speed="400000" port="1"/>' in full.stdout
    assert lint(full.stdout) == [] and lint(skeleton.stdout) == []
    r = cli_in_process("nccl-xml", "azure-nd-h100-v5", "--style", "full")
    assert r.returncode == 2 and "no RDMA device name" in r.stderr
    r = cli_in_process("nccl-xml", "dgx-b200")
    assert r.returncode == 2 and "NIC PCI bus ids are not evidenced" in r.stderr


def test_compile_writes_the_file_or_says_why_not(tmp_path):
    r = cli_in_process("compile", str(SPECS / "h100-superpod-1su.yaml"), str(SPECS / "b200-superpod-2su.yaml"), "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "h100-superpod-1su" / "nccl" / "dgx-h100.xml").read_text()
    assert lint(text) == [] and "<gpu" not in text  # skeleton by default
    assert not (tmp_path / "b200-superpod-2su" / "nccl").exists()
    notes = json.loads((tmp_path / "b200-superpod-2su" / "summary.json").read_text())["notes"]
    assert any(n.startswith("nccl: no topology file for dgx-b200: its compute NIC PCI bus ids are not evidenced") for n in notes)
    assert "note: nccl: no topology file for dgx-b200" in r.stdout


def test_spec_selects_full_style(tmp_path):
    spec = tmp_path / "full.yaml"
    spec.write_text((SPECS / "h100-superpod-1su.yaml").read_text().replace("name: h100-superpod-1su", "name: full")
                    + "hosts: {nccl_topology: full}\n")
    r = cli_in_process("compile", str(spec), "-o", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "out" / "full" / "nccl" / "dgx-h100.xml").read_text()
    assert text == cli_in_process("nccl-xml", "dgx-h100", "--style", "full").stdout
