"""`verify` never says OK about what it could not check.

SONiC `show lldp table` as SONiC prints it (sonic-utilities scripts/lldpshow: tabulate's
"simple" table, long names included) and as people paste it (fixed columns that long
FQDNs overrun); inputs of the wrong technology for the plan; tables of devices the plan
does not have; rows that cannot be read; far ends whose port the plan cannot place.
Each case is either an input error (exit 2, file:line) or an `unverified` finding (exit 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from tabulate import tabulate

from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan
from compiler.verify import SCHEMA, verify
from compiler.verify.names import cable_id_list

from .verify_faults import Faults, apply, reported

DATA = Path(__file__).parent / "data" / "verify"
DOMAIN = ".pod7.dc1.example.com"
HEADER = ["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"]


@pytest.fixture(scope="module")
def sonic_plan():
    return build_plan(DATA / "tiny-rail.yaml")[1]


def _rows(plan, links, switch: int, fqdn: bool) -> list[list[str]]:
    """The neighbour rows switch `switch` shows for the cabling `links`: SONiC neighbours
    send their PORT name as port id and `<peer>:<port>` as description; hosts their MAC."""
    nos = plan.routing.port_names[plan.routing.nos]
    names = {lid: list(nos.get(lid) or [p.name for p in lay.ports]) for lid, lay in plan.layouts.items()}
    out = []
    for a, pa, b, pb in zip(links.a_dev.tolist(), links.a_port.tolist(), links.b_dev.tolist(), links.b_port.tolist()):
        for (x, px), (y, py) in (((a, pa), (b, pb)), ((b, pb), (a, pa))):
            if x != switch:
                continue
            dx, dy = plan.devices[x], plan.devices[y]
            local = names[dx.layout][px]
            if dy.tier == 0:
                out.append([local, dy.name + (DOMAIN if fqdn else ""), f"b8:3f:d2:{y:02x}:{py:02x}:01", "O", "enp26s0np0"])
            else:
                out.append([local, dy.name + (DOMAIN if fqdn else ""), names[dy.layout][py], "BR",
                            f"{dy.name}:{names[dy.layout][py]}"])
    return sorted(out, key=lambda r: int(r[0].removeprefix("Ethernet")))


def _fixed_width(rows: list[list[str]]) -> str:
    """The columns of lldpshow's own docstring (12, 22, 16, 11 wide): a longer value runs
    into the next column, one space after it."""
    widths = (12, 22, 16, 11)
    def line(cells):
        return "".join(f"{c:<{w}} " if len(c) < w else f"{c} " for c, w in zip(cells, widths)) + cells[4]
    return "\n".join([line(HEADER), " ".join("-" * w for w in widths) + " " + "-" * 40] + [line(r) for r in rows])


def _write_tables(plan, links, folder: Path, style: str, fqdn: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, d in enumerate(plan.devices):
        if d.tier == 0:
            continue
        rows = _rows(plan, links, i, fqdn)
        table = tabulate(rows, HEADER) if style == "tabulate" else _fixed_width(rows)
        (folder / f"{d.name}.txt").write_text(
            f"admin@{d.name}:~$ show lldp table\nCapability codes: (R) Router, (B) Bridge, (O) Other\n" + table + "\n"
            + "-" * 50 + f"\nTotal entries displayed:  {len(rows)}\n")
    return folder


def _uplinks_of(plan, leaf: str) -> list[int]:
    dev = next(i for i, d in enumerate(plan.devices) if d.name == leaf)
    return [c for c in range(len(plan.links)) if plan.links.a_dev[c] == dev and plan.devices[plan.links.b_dev[c]].tier == 2]


@pytest.mark.parametrize("style", ["tabulate", "fixed"])
def test_sonic_table_with_fqdns_finds_a_swap_between_two_ports_of_one_spine(sonic_plan, tmp_path, style):
    """Two uplinks of leaf r1 to the same spine, swapped at the spine: only the spine's port
    names tell. With FQDNs overrunning fixed columns the port ids used to be cut apart and
    the far ends taken as 'not reported': 0 mismatches, OK."""
    up = _uplinks_of(sonic_plan, "su1-leaf-r1")
    pair = next((x, y) for x in up for y in up if x < y and sonic_plan.links.b_dev[x] == sonic_plan.links.b_dev[y])
    folder = _write_tables(sonic_plan, apply(sonic_plan, Faults(swaps=[pair])), tmp_path / style, style)
    if style == "fixed":
        assert "spine-01.pod7.dc1.example.com etp" in (folder / "su1-leaf-r1.txt").read_text() or \
            "spine-01.pod7.dc1.example.com Ethernet" in (folder / "su1-leaf-r1.txt").read_text()
    result = verify(sonic_plan, [folder], scope=["all"])
    jsonschema.validate(result, json.loads(SCHEMA.read_text()))
    ids = cable_id_list(sonic_plan)
    assert reported(result) == {("swapped", frozenset({ids[pair[0]], ids[pair[1]]}))}
    assert not result["ok"]
    # the fix names the spine's ports as SONiC (and cabling.csv) does, the panel cage beside them
    (m,) = result["mismatches"]
    for end in (m["expected"], m["found"]):
        assert end["device"] == "spine-01" and end["port"].startswith("Ethernet") and end["cage"].isdigit()
        assert f"{end['port']} (cage {end['cage']})" in m["fix"]
    # every switch-to-switch far end was read: no cable passes on its device alone
    assert not any("far end's port was not reported" in n and "switch" in n for n in result["notes"])


@pytest.mark.parametrize("style", ["tabulate", "fixed"])
def test_sonic_table_with_fqdns_as_planned_is_ok(sonic_plan, tmp_path, style):
    result = verify(sonic_plan, [_write_tables(sonic_plan, sonic_plan.links, tmp_path / style, style)], scope=["all"])
    assert result["ok"], result["mismatches"][:3]
    assert result["matched_cables"] == len(sonic_plan.links) == 4 * 8 + 8 * 4  # 4 servers x 8 rails, 8 leaves x 4 uplinks
    # only the hosts (MAC as port id) are checked by device alone, never a switch's port
    assert [n for n in result["notes"] if "seen from one end only" in n] == [
        "32 cable(s) were seen from one end only and the far end's port was not reported (e.g. hosts that send their MAC "
        "as the LLDP port id): only the far device was checked"]
    assert result["host_ends_by_device"] == 32
    from compiler.verify import text_report

    assert text_report(result).endswith("OK: the fabric matches the plan (32 host end(s) checked by device only, not by "
                                        "port: see the notes)\n")


def test_lldp_tables_for_an_infiniband_plan_are_an_input_error(tmp_path):
    """LLDP tables of an Ethernet fabric fed to an InfiniBand plan of the same names: an input
    error naming the file, not one 'missing, reseat it' per planned cable."""
    ib = build_plan(DATA / "tiny-ib.yaml")[1]
    eth = build_plan(DATA / "tiny-rail.yaml")[1]
    folder = _write_tables(eth, eth.links, tmp_path / "lldp", "tabulate", fqdn=False)
    with pytest.raises(SpecInvalid) as err:
        verify(ib, [folder])
    (d,) = err.value.diagnostics  # one error for the folder, at its first file, not one per table
    assert (d.code, Path(d.file).name, d.line) == ("ASBUILT_WRONG_FABRIC", "spine-01.txt", 3)
    assert "LLDP neighbour tables (Ethernet) (and 9 more file(s) like it)" in d.message


def test_ibnetdiscover_for_an_ethernet_plan_is_an_input_error(sonic_plan):
    with pytest.raises(SpecInvalid) as err:
        verify(sonic_plan, [DATA / "ibnetdiscover"])
    assert {d.code for d in err.value.diagnostics} == {"ASBUILT_WRONG_FABRIC"}


def test_table_of_a_switch_the_plan_does_not_have_is_unverified(sonic_plan, tmp_path):
    folder = _write_tables(sonic_plan, sonic_plan.links, tmp_path / "t", "tabulate")
    stranger = (folder / "su1-leaf-r1.txt").read_text().replace("su1-leaf-r1", "lab-leaf-99")
    # neighbours no plan device has either: nothing to identify it by
    stranger = stranger.replace("spine-0", "lab-spine-0").replace("gpu-su1-", "lab-gpu-")
    (folder / "lab-leaf-99.txt").write_text(stranger)
    result = verify(sonic_plan, [folder], scope=["all"])
    assert not result["ok"]
    unverified = [m for m in result["mismatches"] if m["kind"] == "unverified"]
    assert [m["found"]["device"] for m in unverified] == ["lab-leaf-99"]
    assert "lab-leaf-99.txt" in unverified[0]["source"]


def test_neighbour_without_a_system_name_is_unverified(sonic_plan, tmp_path):
    """A row whose neighbour sends no system name cannot be placed: that cable is unverified."""
    folder = _write_tables(sonic_plan, sonic_plan.links, tmp_path / "t", "tabulate", fqdn=False)
    path = folder / "su1-leaf-r1.txt"
    lines = path.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("Ethernet0 "))
    lines[k] = lines[k].replace("gpu-su1-001", " " * len("gpu-su1-001"))
    path.write_text("\n".join(lines) + "\n")
    result = verify(sonic_plan, [folder], scope=["all"])
    assert not result["ok"]
    (m,) = result["mismatches"]
    assert m["kind"] == "unverified" and m["cable_id"] == "gpu-su1-001:1"
    assert m["source"].endswith(f":{k + 1}")


def test_switch_far_end_whose_port_the_plan_cannot_place_is_unverified(sonic_plan, tmp_path):
    folder = _write_tables(sonic_plan, sonic_plan.links, tmp_path / "t", "tabulate", fqdn=False)
    path = folder / "su1-leaf-r1.txt"
    text = path.read_text()
    row = next(ln for ln in text.splitlines() if "spine-01" in ln)
    port = row.split()[2]
    path.write_text(text.replace(row, row.replace(f" {port} ", " " + "x" * len(port) + " ", 1)))
    # the spine's own table still shows the cable right: hide it, so only leaf r1 reports it
    (folder / "spine-01.txt").unlink()
    result = verify(sonic_plan, [folder], scope=["su1-leaf-r1"])
    kinds = [m["kind"] for m in result["mismatches"]]
    assert kinds == ["unverified"], result["mismatches"]
    assert not result["ok"]


def test_row_that_cannot_be_read_is_an_input_error_with_its_line(sonic_plan, tmp_path):
    folder = _write_tables(sonic_plan, sonic_plan.links, tmp_path / "t", "tabulate", fqdn=False)
    path = folder / "su1-leaf-r1.txt"
    lines = path.read_text().splitlines()
    k = next(i for i, ln in enumerate(lines) if ln.startswith("Ethernet4 "))
    lines[k] = "Ethernet4"  # a cut-off capture: a port and nothing else
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SpecInvalid) as err:
        verify(sonic_plan, [folder])
    (d,) = err.value.diagnostics
    assert (Path(d.file).name, d.line, d.code) == ("su1-leaf-r1.txt", k + 1, "ASBUILT_UNREADABLE")


def test_cli_exit_codes_for_what_could_not_be_checked(sonic_plan, tmp_path):
    from .conftest import cli_in_process

    eth = _write_tables(sonic_plan, sonic_plan.links, tmp_path / "eth", "tabulate")
    wrong = cli_in_process("verify", str(DATA / "tiny-ib.yaml"), "--as-built", str(eth))
    assert wrong.returncode == 2
    assert "spine-01.txt:3" in wrong.stderr and "the plan's fabrics are infiniband" in wrong.stderr
    (eth / "lab-leaf-99.txt").write_text((eth / "su1-leaf-r1.txt").read_text().replace("su1-leaf-r1", "lab-leaf-99")
                                         .replace("spine-0", "lab-spine-0").replace("gpu-su1-", "lab-gpu-"))
    unknown = cli_in_process("verify", str(DATA / "tiny-rail.yaml"), "--as-built", str(eth))
    assert unknown.returncode == 1
    assert "unverified" in unknown.stdout and "FAILED: 1 mismatch(es)" in unknown.stdout


@pytest.mark.parametrize("style", ["tabulate", "fixed"])
def test_empty_remote_device_stays_empty_where_other_values_overrun(sonic_plan, tmp_path, style):
    """A neighbour without a system name in a table whose MACs and FQDNs overrun fixed columns:
    its port id is not taken for a device name (that read as a wrong-device cable)."""
    folder = _write_tables(sonic_plan, sonic_plan.links, tmp_path / style, style)
    leaf = next(i for i, d in enumerate(sonic_plan.devices) if d.name == "su1-leaf-r2")
    rows = _rows(sonic_plan, sonic_plan.links, leaf, True)
    rows[0][1] = ""
    table = tabulate(rows, HEADER) if style == "tabulate" else _fixed_width(rows)
    (folder / "su1-leaf-r2.txt").write_text(f"admin@su1-leaf-r2:~$ show lldp table\n{table}\n")
    result = verify(sonic_plan, [folder], scope=["all"])
    (m,) = result["mismatches"]
    assert (m["kind"], m["cable_id"]) == ("unverified", "gpu-su1-001:2")
    assert "sends no system name (port id b8:3f:d2:" in m["fix"]


def test_cut_ibnetdiscover_port_line_is_an_input_error_with_its_line(tmp_path):
    text = (DATA / "ibnetdiscover" / "tiny-ib.ibnetdiscover").read_text().splitlines()
    k = next(i for i, ln in enumerate(text) if ln.startswith("[3]"))
    text[k] = text[k][:12]  # a capture cut mid-line: that cable used to vanish from the input
    (tmp_path / "fabric.ibnetdiscover").write_text("\n".join(text) + "\n")
    with pytest.raises(SpecInvalid) as err:
        verify(build_plan(DATA / "tiny-ib.yaml")[1], [tmp_path], ignore={"speed"})
    (d,) = err.value.diagnostics
    assert (Path(d.file).name, d.line, d.code) == ("fabric.ibnetdiscover", k + 1, "ASBUILT_UNREADABLE")


def test_as_built_row_between_devices_the_plan_does_not_have_is_unverified(tmp_path):
    from compiler.pipeline import load_plan

    from .conftest import ROOT

    folder = ROOT / "out" / "roce-2spine-4leaf-sonic"
    text = (folder / "cabling.csv").read_text()
    (tmp_path / "as-built.csv").write_text(text + "x:1,,lab-a,,swp1,,,,,,,lab-b,,swp2" + "," * 17 + "\n")
    result = verify(load_plan(folder), [tmp_path / "as-built.csv"])
    assert sorted(m["found"]["device"] for m in result["mismatches"] if m["kind"] == "unverified") == ["lab-a", "lab-b"]
    assert len(result["mismatches"]) == 2 and not result["ok"]


def test_row_on_a_port_the_switch_does_not_have_is_unverified_management_port_a_note(sonic_plan, tmp_path):
    folder = _write_tables(sonic_plan, sonic_plan.links, tmp_path / "t", "tabulate", fqdn=False)
    leaf = next(i for i, d in enumerate(sonic_plan.devices) if d.name == "su1-leaf-r1")
    rows = _rows(sonic_plan, sonic_plan.links, leaf, False) + [
        ["Ethernet999", "lab-sw-1", "swp3", "BR", "swp3"], ["eth0", "oob-mgmt-sw", "swp17", "BR", "swp17"]]
    (folder / "su1-leaf-r1.txt").write_text(f"admin@su1-leaf-r1:~$ show lldp table\n{tabulate(rows, HEADER)}\n")
    result = verify(sonic_plan, [folder], scope=["all"])
    (m,) = result["mismatches"]
    assert m["kind"] == "unverified" and m["anchor"] == {"device": "su1-leaf-r1", "port": "Ethernet999"}
    assert any(n.startswith("1 neighbour row(s) on ports that are no fabric port") for n in result["notes"])
