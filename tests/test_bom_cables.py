"""Physical cables: cabling.csv has one row per cable pulled, the labels one pair per
cable, and the BOM orders exactly those rows; fibers are counted per MPO pair.

Hand counts from the catalog's cages and modules (hardware.md, NVIDIA LinkX pages):
- Gaudi 3 HLS-3, 64 servers (512 GPUs) on a Tomahawk 5 fat tree at 200G: every OSFP is
  4 x 200G on a twin-port 2 x 400G module, lanes 1-2 on one MPO, 3-4 on the other; both
  lanes of an MPO go to one leaf MPO. Server side 64 x 6 cages x 2 MPOs = 768 fibers.
  13 leaves x 126 uplinks, 18 to each of 7 spines on consecutive lanes: 13 x 7 x 9 = 819.
- Alibaba HPN pod: 1,920 hosts x 16 NIC ports at 200G (one per QSFP112 cage) onto leaf
  4 x 200G cages: one 1:2 splitter per leaf MPO, 30,720 / 2 = 15,360; leaf-spine 400G, one
  port per MPO: 14,400 straight fibers.
- DGX B300 XDR SU: 72 x 8 single-port 800G cages, one fiber each = 576; leaf-spine 800G on
  twin-port 2 x 800G cages, one port per MPO: 576.
"""

from __future__ import annotations

import collections
import csv
import io

import pytest

from compiler.diagnostics import SpecInvalid
from compiler.pipeline import build_plan, write_outputs
from compiler.plan.bom import NOT_PUBLISHED, bill_of_materials
from compiler.plan.fabrics import management_cords
from compiler.plan.cables import physical_cables

from .conftest import SPECS, plan_from_text

ROOT = SPECS.parent
OUT = ROOT / "out"


def _rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def _cable_rows_by_part(cabling: list[dict], media_parts: dict[str, set],
                        cord_m: dict[str, float | None] | None = None) -> collections.Counter:
    """(fabric, part as the BOM prints it) -> cabling.csv rows. A length without a part of
    its own is ordered as `<generic part> <length> m`. A management cord's row whose sheet
    shows no length takes the plan's (`cord_m`, by cable id: ManagementCord.order_m)."""
    out = collections.Counter()
    for r in cabling:
        part, length = r["part_number"], r["length_m"]
        if not length and (cord_m or {}).get(r["cable_id"]) is not None:
            length = f"{cord_m[r['cable_id']]:g}"
        exact = not length or any(part in parts for parts in media_parts.values())
        out[(r.get("fabric", "compute"), part if exact else f"{part} {length} m")] += 1
    return out


def _bom_cables(bom: list[dict]) -> collections.Counter:
    out = collections.Counter()
    for line in bom:
        if line["category"] == "cable":
            out[(line.get("fabric", "compute"), line["part_number"])] += int(line["quantity"])
    return out


def _media_parts(plan) -> dict[str, set]:
    return {m: set(plan.facts["media"][m]["parts"].values()) for m in plan.media}


@pytest.mark.parametrize("name", sorted(p.name for p in OUT.iterdir() if (p / "cabling.csv").exists()))
def test_bom_cable_quantities_equal_cabling_rows_on_committed_examples(name):
    """On every committed example: bom.csv's cable quantity per part == cabling.csv's rows
    of that part, and the labels are one pair per row."""
    plan = build_plan(SPECS / f"{name}.yaml")[1]
    cabling = _rows((OUT / name / "cabling.csv").read_text())
    bom = _rows((OUT / name / "bom.csv").read_text())
    cord_m = {c.cable_id: c.order_m for c in management_cords(plan)}
    assert _bom_cables(bom) == _cable_rows_by_part(cabling, _media_parts(plan), cord_m)
    # the plan's cables, then the management cords (switch management ports are no plan links)
    assert len(cabling) == len(physical_cables(plan)) + len(management_cords(plan))
    if (OUT / name / "labels.csv").exists():
        labels = _rows((OUT / name / "labels.csv").read_text())
        assert [(x["cable_id"], x["end"]) for x in labels] == [(r["cable_id"], e) for r in cabling for e in "AB"]


def test_twin_port_copper_is_one_row_two_links_one_label_pair(tmp_path):
    """b200-superpod-4su-hall, spine rack in the middle (B10): the 12 short links from SU2's
    leaf rack beside it (B09) on MCP4Y10 twin-port DAC are 6 cables (one per cage pair); on
    LACC go SU2's other 244 and the 12 + 12 from the top leaves of SU1 (A09) and SU3 (C09)
    across one row pitch: 268 links, 134 cables. One row, two logical links, one label pair
    each; the BOM orders 6 and 134."""
    plan = build_plan(SPECS / "b200-superpod-4su-hall.yaml")[1]
    folder = write_outputs(plan, tmp_path, ["cabling", "bom", "labels"])
    rows = _rows((folder / "cabling.csv").read_text())
    dac = [r for r in rows if r["media"] == "DAC"]
    lacc = [r for r in rows if r["media"] == "LACC"]
    assert len(dac) == 6 and len(lacc) == 134
    for r in dac + lacc:
        links = r["links"].split(";")
        assert len(links) == 2 and r["cable_id"] == links[0]
        assert ";" not in r["a_device"] and ";" not in r["b_device"] and ";" not in r["a_cage"]
        assert len(r["a_port"].split(";")) == 2 and len(r["b_port"].split(";")) == 2
    ids = [r["cable_id"] for r in rows]
    assert len(ids) == len(set(ids))
    labels = _rows((folder / "labels.csv").read_text())
    assert len(labels) == 2 * len(rows)
    bom = {line["part_number"]: int(line["quantity"]) for line in _rows((folder / "bom.csv").read_text())
           if line["category"] == "cable"}
    assert sum(q for p, q in bom.items() if p.startswith("MCP4Y10")) == 6
    assert sum(q for p, q in bom.items() if p.startswith("MCA4J80")) == 134


GAUDI3_FAT_TREE = "name: g3\nserver: gaudi3-8\nservers: 64\nfabric: {topology: fat-tree, switch: tomahawk5, speed_gbps: 200}\n"


def _cables_by_kind(plan, folder) -> dict[tuple[str, str], int]:
    """(link kind, part) -> physical cables, from cabling.csv."""
    out = collections.Counter()
    for r in _rows(write_outputs(plan, folder, ["cabling"]).joinpath("cabling.csv").read_text()):
        out[(r["kind"], r["part_number"])] += 1
    return dict(out)


def _bom(plan) -> dict[str, int]:
    out = collections.Counter()
    for line in bill_of_materials(plan):
        if line.category == "cable":
            out[line.part_number] += line.quantity
    return dict(out)


def test_gaudi3_fibers_are_counted_per_mpo_pair(tmp_path):
    """3,174 links at 200G, two per MPO to one peer MPO: 768 + 819 = 1,587 fibers (was 3,174)."""
    plan = plan_from_text(GAUDI3_FAT_TREE)
    assert len(plan.links) == 1536 + 1638
    assert _cables_by_kind(plan, tmp_path) == {("server-leaf", "MFP7E10-N0xx"): 768, ("leaf-spine", "MFP7E10-N0xx"): 819}
    assert _bom(plan) == {"MFP7E10-N0xx": 1587}


def test_hpn_pod_splitters_and_fibers_match_the_hand_count(tmp_path):
    plan = build_plan(SPECS / "alibaba-hpn-pod.yaml")[1]
    assert _cables_by_kind(plan, tmp_path) == {("server-leaf", "MFP7E20-N0xx"): 15360, ("leaf-spine", "MFP7E10-N0xx"): 14400}
    assert _bom(plan) == {"MFP7E20-N0xx": 15360, "MFP7E10-N0xx": 14400}


def test_b300_xdr_fibers_match_the_hand_count(tmp_path):
    plan = build_plan(SPECS / "b300-xdr-1su.yaml")[1]
    assert _cables_by_kind(plan, tmp_path) == {("server-leaf", "MFP7E30-N0xx"): 576, ("leaf-spine", "MFP7E30-N0xx"): 576}
    assert _bom(plan) == {"MFP7E30-N0xx": 1152}


def test_800g_between_twin_port_modules_is_two_rows(tmp_path):
    """Spectrum-X 2 SU: 512 leaf-spine links at 800G fill both MPOs of their modules: two
    fibers each, two rows (`.1`, `.2`) naming the same logical link."""
    plan = build_plan(SPECS / "spectrum-x-h100-2su.yaml")[1]
    rows = _rows(write_outputs(plan, tmp_path, ["cabling"]).joinpath("cabling.csv").read_text())
    up = [r for r in rows if r["kind"] == "leaf-spine"]
    assert len(up) == 1024 and len({r["links"] for r in up}) == 512
    assert {r["cable_id"].rsplit(".", 1)[1] for r in up} == {"1", "2"}
    assert all(r["connector"] == "MPO-12/APC" for r in rows)


# --- every server and switch: a straight fiber joins one MPO to one ------------------

SERVERS = ["dgx-h100", "dgx-b200", "dgx-b300", "hgx-h100", "mi300x-8", "gaudi3-8", "hpn-8x2x200g"]
SWITCHES = ["qm9700", "q3400", "sn5600", "tomahawk5", "arista-7060x6-64pe"]


def _mpo_of(plan, side: str, row: dict, i: int, n: int) -> tuple:
    """The optical port (device, cage, MPO) of logical link i of a row at one end, from the
    catalog: module optical ports and the cage's logical ports (the layout)."""
    def col(c):
        v = row[f"{side}_{c}"].split(";")
        return v[i] if len(v) == n else v[0]
    dev, cage, lane, part = col("device"), col("cage"), int(col("lane")), col("transceiver")
    layout = plan.layouts[plan.devices[plan.device_index(dev)].layout]
    cage_ports = sum(1 for p in layout.ports if p.cage == cage)
    ports = next((t["ports"] for k, t in plan.facts["transceivers"].items()
                  if part in (k, t.get("part_number"), f"{NOT_PUBLISHED}: {k}")), 1)
    return (dev, cage, (lane - 1) * ports // cage_ports if cage_ports > ports else lane)


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("switch", SWITCHES)
def test_straight_fibers_are_mpo_pairs_on_every_server_and_switch(server, switch, tmp_path):
    """Each straight fiber row's logical links share one MPO at each end, no two rows join
    the same MPO pair, and the BOM orders the rows."""
    try:
        plan = plan_from_text(f"name: c\nserver: {server}\nservers: 32\nfabric: {{topology: fat-tree, switch: {switch}}}\n")
    except SpecInvalid:
        pytest.skip(f"{server} on {switch} is not a valid design")
    folder = write_outputs(plan, tmp_path, ["cabling", "bom"])
    rows = _rows(folder.joinpath("cabling.csv").read_text())
    straight = {plan.facts["media"][m]["cable_part_number"] for m in plan.media
                if plan.facts["media"][m]["fit"] == "port" and plan.facts["media"][m]["needs_transceivers"]}
    seen = set()
    for r in rows:
        if r["part_number"] not in straight:
            continue
        n = len(r["links"].split(";"))
        pairs = {(_mpo_of(plan, "a", r, i, n), _mpo_of(plan, "b", r, i, n)) for i in range(n)}
        assert len(pairs) == 1, r
        pair = (pairs.pop(), r["cable_id"].rsplit(".", 1)[-1] if "." in r["cable_id"] else "")
        assert pair not in seen, r
        seen.add(pair)
    assert _bom_cables(_rows(folder.joinpath("bom.csv").read_text())) == _cable_rows_by_part(rows, _media_parts(plan))


def test_verify_reads_a_physical_row_as_its_logical_links(tmp_path):
    """The cabling sheet fed back as an as-built sheet: a twin-port copper row (two links,
    `;`-separated ports) checks out as its two links; swapping its two B ports is found."""
    from compiler.pipeline import load_plan
    from compiler.verify import verify

    from .verify_faults import reported

    folder = ROOT / "out" / "b200-superpod-4su-hall"
    clean = verify(load_plan(folder), [folder / "cabling.csv"])
    assert reported(clean) == set()
    rows = list(csv.reader(io.StringIO((folder / "cabling.csv").read_text())))
    head = rows[0]
    k = next(i for i, r in enumerate(rows) if r[head.index("media")] == "DAC")
    c = head.index("b_port")
    first, second = rows[k][c].split(";")
    rows[k][c] = f"{second};{first}"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    (tmp_path / "as-built.csv").write_text(out.getvalue())
    assert reported(verify(load_plan(folder), [tmp_path / "as-built.csv"])) == {
        ("swapped", frozenset(rows[k][head.index("links")].split(";")))}


@pytest.mark.parametrize("spec", ["h100-superpod-1su", "b200-superpod-4su"])
def test_cables_of_one_link_each_are_what_the_grouping_finds(spec):
    """Where every pulled link is a straight cable between two ports that are their own MPOs,
    physical_cables takes each link as its own cable without sorting the keys: the same
    cables the sorted grouping (cables._groups) finds on the links' own port ids."""
    import numpy as np

    from compiler.plan.cables import _groups, optical_port_ids

    from .conftest import shared_plan

    plan = shared_plan(spec)
    links = plan.links
    mpo_a, mpo_b = optical_port_ids(plan)
    media = plan.view.facts.media
    pulled = np.array([media[m].field_cable for m in plan.media], dtype=bool)[links.media]
    straight = np.array([media[m].fit == "port" for m in plan.media], dtype=bool)[links.media]
    kept = np.nonzero(pulled)[0]
    assert kept.size and (straight & (mpo_a < 0) & (mpo_b < 0))[kept].all()  # the case this is about
    offsets = plan.port_offsets()
    ga, gb = offsets[links.a_dev] + links.a_port, offsets[links.b_dev] + links.b_port
    members, indptr = _groups(kept, links.media[kept].astype(np.int64), ga[kept].astype(np.int64), gb[kept].astype(np.int64))
    cables = physical_cables(plan)
    assert np.array_equal(cables.links, members) and np.array_equal(cables.indptr, indptr)
    assert cables.links.dtype == members.dtype and cables.indptr.dtype == indptr.dtype
