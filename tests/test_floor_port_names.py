"""Names the floor can match: the cabling sheet, the labels, verify's fixes and the UFM
cable-validation file name every switch port as the design's NOS names it, which is the
name in that switch's config, with the panel's cage number beside a name that is not the
panel's own (SONiC Ethernet8 is cage 2 of an SN5600 panel numbered 1-64).

The configs are the reference: each interface's description names the far end
(`<peer>:<peer port>`), so every configured interface is a cable end the sheet must name
the same way, at both ends.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from openpyxl import load_workbook

from .conftest import shared_outputs

NOS_SPECS = ["roce-2spine-4leaf-sonic", "roce-2spine-4leaf-cumulus", "roce-2spine-4leaf-eos", "roce-2spine-4leaf-frr"]


def _compile(spec: str) -> Path:
    """The example's compiled folder: the session's shared one (read it only)."""
    return shared_outputs(spec)


def _configured_ends(folder: Path) -> set[tuple[str, str, str, str]]:
    """(switch, interface, peer, peer port) for every interface a config describes."""
    out = set()
    for cfg in sorted((folder / "configs").iterdir()):
        switch = cfg.name
        pairs: list[tuple[str, str]] = []
        if (cfg / "config_db.json").exists():
            ports = json.loads((cfg / "config_db.json").read_text())["PORT"]
            pairs = [(name, p["description"]) for name, p in ports.items() if p.get("description")]
        elif (cfg / "startup.yaml").exists():
            for doc in yaml.safe_load((cfg / "startup.yaml").read_text()):
                for name, body in (doc.get("set", {}).get("interface") or {}).items():
                    if isinstance(body, dict) and body.get("description"):
                        pairs.append((name, body["description"]))
        elif (cfg / "startup-config").exists():
            pairs = re.findall(r"^interface (\S+)\n   description (\S+)$", (cfg / "startup-config").read_text(), re.M)
        else:
            pairs = re.findall(r"^interface (\S+)\n description (\S+)$", (cfg / "frr.conf").read_text(), re.M)
        for name, descr in pairs:
            peer, peer_port = descr.split(":", 1)
            out.add((switch, name, peer, peer_port))
    return out


def _sheet_ends(folder: Path) -> tuple[set[tuple[str, str, str, str]], list[dict]]:
    rows = list(csv.DictReader(io.StringIO((folder / "cabling.csv").read_text())))
    rows = [r for r in rows if not r["kind"].endswith("management-leaf")]  # management ports: no config interfaces
    ends = set()
    for r in rows:
        ends.add((r["a_device"], r["a_port"], r["b_device"], r["b_port"]))
        ends.add((r["b_device"], r["b_port"], r["a_device"], r["a_port"]))
    return ends, rows


@pytest.mark.parametrize("spec", NOS_SPECS)
def test_cabling_sheet_names_each_switch_port_as_its_config_does(spec):
    folder = _compile(spec)
    configured = _configured_ends(folder)
    sheet, rows = _sheet_ends(folder)
    switch_ends = {e for e in sheet if e[0] in {c[0] for c in configured}}
    assert configured, "no interface descriptions found"
    assert configured == switch_ends, sorted(configured ^ switch_ends)[:6]
    # the cage beside it is the panel's: 1..cages, as many ports per cage as the speed splits it
    for r in rows:
        if r["b_role"] in ("leaf", "spine"):
            assert 1 <= int(r["b_cage"]) <= 64


def test_sonic_names_with_the_panel_cage_beside_them():
    folder = _compile("roce-2spine-4leaf-sonic")
    _, rows = _sheet_ends(folder)
    r = next(r for r in rows if r["b_device"] == "leaf-001" and r["b_port"] == "Ethernet8")
    assert (r["b_cage"], r["b_lane"]) == ("2", "1")  # SN5600 at 400G: two ports per cage, 8 SerDes each
    assert r["label_a"].endswith("/ leaf-001:Ethernet8[2]") and r["label_b"].split(" ", 1)[1].startswith("leaf-001:Ethernet8[2] /")
    assert not any(r[k].startswith("swp") for r in rows for k in ("a_port", "b_port"))
    # the UFM cable-validation sheet names them the same way
    ws = load_workbook(folder / "cable-validation" / "p2p.xlsx", read_only=True).worksheets[0]
    p2p = {(row[0], row[2]) for row in ws.iter_rows(min_row=2, values_only=True) if row[1] == "Switch"}
    p2p |= {(row[3], row[5]) for row in ws.iter_rows(min_row=2, values_only=True) if row[4] == "Switch"}
    sheet = {(r["a_device"], r["a_port"]) for r in rows if r["a_role"] != "server"}
    sheet |= {(r["b_device"], r["b_port"]) for r in rows if r["b_role"] != "server"}
    assert p2p == sheet


def test_extra_fabric_of_another_nos_is_named_by_its_own():
    """InfiniBand compute, SONiC storage: the storage switches' ports are SONiC's, the compute
    switches' keep their panel names, in the cabling sheet and the labels alike."""
    folder = _compile("h100-superpod-1su-multi-fabric-hall")
    configured = _configured_ends(folder)
    sheet, rows = _sheet_ends(folder)
    switches = {c[0] for c in configured}
    assert switches and all(s.startswith("storage-") for s in switches)
    assert configured == {e for e in sheet if e[0] in switches}
    compute = [r for r in rows if r["b_device"].startswith("su1-leaf")]
    assert compute and all(re.fullmatch(r"1/\d+/\d", r["b_port"]) for r in compute)  # QM9700 panel names
    labels = list(csv.DictReader(io.StringIO((folder / "labels.csv").read_text())))
    by_cable = {(lab["cable_id"], lab["end"]): lab for lab in labels}
    for r in rows:
        if r["b_device"] in switches:
            lab = by_cable[(r["cable_id"], "B")]
            assert lab["port"] == r["b_port"] and f":{r['b_port']}[{r['b_cage']}]" in lab["label"]
