"""Planned growth never moves a pulled cable; diff says what changes physically.

The growth target's plan is expand/final_size.py's."""

from __future__ import annotations

import json
import re

import numpy as np

import pytest

from compiler.pipeline import build_plan
from compiler.plan.diff import diff_plans

from .conftest import ROOT, SPECS, cli_in_process
from .synthetic import fat_tree_spec

RAIL = """name: grow
servers: {servers}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: qm9700, scalable_unit: 32, tiers: {tiers}}}
{growth}"""


def _rail(tmp_path, servers, growth="", tiers="auto"):
    p = tmp_path / f"rail-{servers}.yaml"
    p.write_text(RAIL.format(servers=servers, growth=growth, tiers=tiers))
    return build_plan(p)[1]


def _assert_only_additions(plans):
    for old, new in zip(plans, plans[1:]):
        d = diff_plans(old, new)
        assert d["cables"]["removed"] == [] and d["cables"]["changed"] == [], (
            f"{old.design['servers']} -> {new.design['servers']} servers moved cables: "
            f"{(d['cables']['removed'] + d['cables']['changed'])[:3]}")
        assert d["devices"]["removed"] == [] and d["devices"]["changed"] == []
        assert d["counts"]["cables_added"] > 0


def test_two_tier_rail_growth_one_su_at_a_time(tmp_path):
    sizes = [32 * n for n in range(1, 9)] + [31, 200]
    plans = [_rail(tmp_path, s, "growth: {max_scalable_units: 8}") for s in sorted(sizes)]
    assert {p.design["tiers"] for p in plans} == {2}
    assert {sum(d.role == "spine" for d in p.devices) for p in plans} == {32}  # built for 8 SU from day one
    _assert_only_additions(plans)


def test_three_tier_rail_growth(tmp_path):
    # 20 SUs need three tiers on QM9700; build SU by SU in steps of 4, plus a partial SU.
    sizes = [32, 100, 128, 256, 384, 512, 640]
    plans = [_rail(tmp_path, s, "growth: {max_servers: 640}") for s in sizes]
    assert {p.design["tiers"] for p in plans} == {3}
    _assert_only_additions(plans)


def test_fat_tree_growth(tmp_path):
    plans = []
    for hosts in (8, 16, 40, 64, 100, 128):
        spec = fat_tree_spec(tmp_path, 16, hosts, extra="growth: {max_servers: 128}\n")
        plans.append(build_plan(spec)[1])
    _assert_only_additions(plans)


def test_without_growth_the_summary_says_what_recables(tmp_path):
    plan = _rail(tmp_path, 64)
    note = next(n for n in plan.notes if n.startswith("grows to"))
    assert "grows to 64 servers without moving a cable" in note and "at 96 servers" in note
    d = diff_plans(plan, _rail(tmp_path, 96))
    assert d["counts"]["cables_changed"] > 0  # 8 -> 16 spines: leaf-spine cables move


def test_growth_note_agrees_with_diff_when_only_leaves_are_added(tmp_path):
    """Two tiers, servers_per_leaf 2 (16 down / 16 up on QM9700): 5 and 6 leaves both fit 2
    spines with 8 links per leaf-spine pair, so a 6th leaf only adds cables. The note said
    "at 12 servers every existing leaf-spine cable is re-plugged (2 -> 2 spines, 8 -> 8 ...)"."""
    def plan(servers):
        p = tmp_path / f"spl-{servers}.yaml"
        p.write_text(f"name: spl\nservers: {servers}\nserver: dgx-h100\n"
                     "fabric: {topology: fat-tree, switch: qm9700, servers_per_leaf: 2}\n")
        return build_plan(p)[1]
    small = plan(10)
    note = next(n for n in small.notes if n.startswith("grows to"))
    assert "grows to 16 servers without moving a cable; at 18 servers" in note, note  # 9 leaves x 16 > 2 x 64
    _assert_only_additions([small, plan(12), plan(16)])
    assert diff_plans(plan(16), plan(18))["counts"]["cables_changed"] > 0


def test_growth_below_today_is_an_error(tmp_path):
    p = tmp_path / "g.yaml"
    p.write_text(RAIL.format(servers=64, growth="growth: {max_servers: 32}", tiers="auto"))
    r = cli_in_process("validate", str(p))
    assert r.returncode == 2 and "growth target 32 servers is below today's 64" in r.stderr


def test_endpoints_with_growth_avoid_future_server_slots(tmp_path):
    p = tmp_path / "u.yaml"
    p.write_text(RAIL.format(servers=31, tiers="auto", growth="growth: {max_servers: 64}\n"
                             "extra_endpoints: [{role: ufm, count: 1, ports: 2}]"))
    r = cli_in_process("validate", str(p))
    assert r.returncode == 2 and "lower growth.max_servers" in r.stderr


def test_diff_cli_formats_and_gates(tmp_path):
    old = tmp_path / "old.yaml"
    new = tmp_path / "new.yaml"
    old.write_text(RAIL.format(servers=64, growth="", tiers="auto"))
    new.write_text(RAIL.format(servers=96, growth="", tiers="auto"))
    r = cli_in_process("diff", str(old), str(new), "--format", "json")
    assert r.returncode == 0
    d = json.loads(r.stdout)
    assert set(d) >= {"cables", "devices", "bom", "summary"}
    assert set(d["cables"]) == {"added", "removed", "changed", "physical", "relabeled"}
    assert d["summary"]["switches.spine"] == {"old": 8, "new": 16}
    bom = {(b["category"], b["part_number"]): b["delta"] for b in d["bom"]}
    assert bom[("switch", "MQM9700-NS2F")] == 8 + 8  # one more SU of 8 rail leaves, spines 8 -> 16
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "removed,changed")
    assert r.returncode == 1
    r = cli_in_process("diff", str(old), str(new), "--format", "markdown")
    assert "must be removed or re-plugged" in r.stdout and "| cables |" in r.stdout
    r = cli_in_process("diff", str(old), str(old), "--fail-on", "added,removed,changed")
    assert r.returncode == 0 and "+0 -0 ~0" in r.stdout
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "moved")
    assert r.returncode == 2


def test_diff_reads_output_folders_and_plan_json(tmp_path):
    assert cli_in_process("compile", str(SPECS / "b200-superpod-2su.yaml"), "-o", str(tmp_path / "a")).returncode == 0
    folder = tmp_path / "a" / "b200-superpod-2su"
    r = cli_in_process("diff", str(folder), str(folder / "plan.json"), "--format", "json")
    assert r.returncode == 0, r.stderr
    counts = json.loads(r.stdout)["counts"]
    assert counts.pop("cables_unchanged") == 2 * 512 and set(counts.values()) == {0}
    assert set(counts) == {"devices_added", "devices_removed", "devices_changed", "devices_moved", "devices_relabeled",
                           "cables_added", "cables_removed", "cables_changed", "cables_physical", "cables_relabeled"}
    r = cli_in_process("diff", str(folder), str(SPECS / "b200-superpod-4su.yaml"))
    assert r.returncode == 0 and "+512" in r.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = cli_in_process("diff", str(bad), str(folder))
    assert r.returncode == 2 and "not a clusterc plan.json" in r.stderr


# --- physical diff and growth with a layout --------------------------------------------

B200_HALL = """name: b200-{servers}
servers: {servers}
server: dgx-b200
fabric: {{topology: rail-optimized, switch: qm9700, oversubscription: "1:1", scalable_unit: 32{fabric}}}
{growth}
layout:
  hall: DH1
  rows: {rows}
  racks_per_row: 10
  rack: {{height_u: 48, power_kw: 60, width_m: 0.6, depth_mm: 1200}}
  leaf_placement: end-of-row
"""


def _write(tmp_path, name, text):
    p = tmp_path / f"{name}.yaml"
    p.write_text(text)
    return p


def _cable_counts_by_part(folder) -> dict[tuple[str, float], int]:
    """(part, orderable length) -> cables, read from cabling.csv: a row per optical cable, two
    rows (the two ports of a QM9700 cage) per twin-port copper cable."""
    import csv

    out: dict[tuple[str, float], float] = {}
    with open(folder / "cabling.csv", newline="") as f:
        for row in csv.DictReader(f):
            assert row["media"] in ("MMF", "LACC", "DAC"), row
            key = (row["part_number"], float(row["length_m"]))
            out[key] = out.get(key, 0) + (1 if row["media"] == "MMF" else 0.5)
    return out


def test_layout_growth_without_planning_is_a_physical_change(tmp_path):
    """3 -> 4 SU of the B200 SuperPOD in a hall, no growth planning: logically only additions
    (16 spines at both sizes, 2 links per leaf-spine pair: one SU's 256 + 256 cables), but the
    spine rack follows the last SU's row, so all 16 spines move and every one of the 3 SUs'
    24 x 32 = 768 leaf-spine cables changes far-end rack and label; the BOM delta is by exact
    part and length."""
    at_end = "  spine_placement: end\n"  # the spine rack after the last SU, wherever that is
    old = _write(tmp_path, "old", B200_HALL.format(servers=96, fabric="", growth="", rows=4) + at_end)
    new = _write(tmp_path, "new", B200_HALL.format(servers=128, fabric="", growth="", rows=4) + at_end)
    d = diff_plans(build_plan(old)[1], build_plan(new)[1])
    c = d["counts"]
    assert (c["cables_added"], c["cables_removed"], c["cables_changed"], c["cables_physical"]) == (512, 0, 0, 768)
    assert sorted(m["name"] for m in d["devices"]["moved"]) == [f"spine-{i:02d}" for i in range(1, 17)]
    assert all(set(m["changes"]) <= {"rack", "u"} and "rack" in m["changes"] for m in d["devices"]["moved"])
    for cable in d["cables"]["physical"]:
        ch = cable["changes"]
        assert cable["kind"] == "leaf-spine" and cable["b"][0].startswith("spine-")
        assert ch["b_rack"]["old"] != ch["b_rack"]["new"] and "a_rack" not in ch
        assert {"label_a", "label_b"} <= set(ch)
        assert ("length_m" in ch) == ("part_number" in ch)  # an MMF part number is its length code
    assert any("length_m" in cable["changes"] for cable in d["cables"]["physical"])

    # The BOM delta, by (part, length), equals what the two cabling sheets list.
    for spec, folder in ((old, "a"), (new, "b")):
        assert cli_in_process("compile", str(spec), "-o", str(tmp_path / folder)).returncode == 0
    before = _cable_counts_by_part(tmp_path / "a" / "b200-96")
    after = _cable_counts_by_part(tmp_path / "b" / "b200-128")
    want = {key: after.get(key, 0) - before.get(key, 0) for key in set(before) | set(after)}
    got = {(b["part_number"], b["length_m"]): b["delta"] for b in d["bom"] if b["category"] == "cable"}
    assert got == {k: v for k, v in want.items() if v}
    assert all(part.endswith(f"-N{int(length):03d}") for part, length in got)

    r = cli_in_process("diff", str(old), str(new), "--fail-on", "removed,changed")
    assert r.returncode == 0  # logically nothing moved ...
    assert "cables +512 -0 ~0 (768 changed physically, 0 relabeled)" in r.stdout and "(16 moved, 0 relabeled)" in r.stdout
    assert "> spine-01 moved: rack DH1.C10 -> DH1.D10" in r.stdout and "! su1-leaf-r1:33: " in r.stdout
    bom_lines = re.findall(r"BOM cable (MFP7E10-N0(\d\d)) (\d+) m: \d+ -> \d+ \([+-]\d+\)", r.stdout)
    assert bom_lines and all(int(code) == int(length) for _, code, length in bom_lines)
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "physical")
    assert r.returncode == 1  # ... but physically it did
    r = cli_in_process("diff", str(old), str(new), "--format", "markdown")
    assert "| cables | 512 | 0 | 0 | 768 | 0 |" in r.stdout and "Physically changed cables (768)" in r.stdout
    assert "Moved devices (16)" in r.stdout and "`MFP7E10-N0" in r.stdout
    r = cli_in_process("diff", str(old), str(new), "--format", "json")
    j = json.loads(r.stdout)
    assert len(j["cables"]["physical"]) == 768 and j["counts"]["devices_moved"] == 16


def test_media_change_on_the_same_ends_is_physical(tmp_path):
    """The B200 4-SU fabric with its leaf-spine links on single-mode instead of multimode: the
    same 32 leaves x 32 uplinks = 1,024 cables on the same ports, each with another medium,
    other transceivers at both ends and another cable part."""
    base = (SPECS / "b200-superpod-4su.yaml").read_text()
    smf = _write(tmp_path, "smf", base.replace('scalable_unit: 32', 'scalable_unit: 32\n  media: {leaf-spine: smf}'))
    d = diff_plans(build_plan(SPECS / "b200-superpod-4su.yaml")[1], build_plan(smf)[1])
    c = d["counts"]
    assert (c["cables_added"], c["cables_removed"], c["cables_changed"], c["cables_physical"]) == (0, 0, 0, 1024)
    for cable in d["cables"]["physical"]:
        ch = cable["changes"]
        assert cable["kind"] == "leaf-spine" and ch["media"] == {"old": "mmf", "new": "smf"}
        assert {"a_transceiver", "b_transceiver", "part_number"} <= set(ch)
    r = cli_in_process("diff", str(SPECS / "b200-superpod-4su.yaml"), str(smf), "--fail-on", "added,removed,changed")
    assert r.returncode == 0
    assert cli_in_process("diff", str(SPECS / "b200-superpod-4su.yaml"), str(smf), "--fail-on", "physical").returncode == 1


def test_compiled_hall_diffs_like_its_spec(tmp_path):
    """plan.json keeps the physical side: a compiled hall against its own spec (and its
    plan.json) shows nothing, BOM included (cables by length need the lengths back)."""
    from compiler.pipeline import load_plan

    spec = SPECS / "b200-superpod-4su-hall.yaml"
    assert cli_in_process("compile", str(spec), "-o", str(tmp_path)).returncode == 0
    folder = tmp_path / "b200-superpod-4su-hall"
    built, loaded = build_plan(spec)[1], load_plan(folder)
    assert [r.name for r in loaded.physical.racks] == [r.name for r in built.physical.racks]
    for field in ("dev_rack", "dev_u", "dev_height_u", "order_m", "length_m"):
        assert np.array_equal(getattr(loaded.physical, field), getattr(built.physical, field), equal_nan=True), field
    for a, b in ((folder, spec), (folder / "plan.json", folder)):
        r = cli_in_process("diff", str(a), str(b), "--format", "json", "--fail-on", "added,removed,changed,physical")
        assert r.returncode == 0, r.stdout[:2000]
        d = json.loads(r.stdout)
        assert d["counts"].pop("cables_unchanged") == 2048
        assert set(d["counts"].values()) == {0} and d["bom"] == []


def test_fail_on_names_its_kinds(tmp_path):
    old = _write(tmp_path, "o", RAIL.format(servers=64, growth="", tiers="auto"))
    r = cli_in_process("diff", str(old), str(old), "--fail-on", "moved")
    assert r.returncode == 2 and "added,removed,changed,physical" in r.stderr
    assert cli_in_process("diff", str(old), str(old), "--fail-on", "physical").returncode == 0


H100_HALL = """name: h-{servers}
servers: {servers}
server: dgx-h100
fabric: {{topology: {topology}, switch: qm9700{fabric}}}
{extra}growth: {growth}
layout:
  hall: DH1
  rows: {rows}
  racks_per_row: 12
  rack: {{height_u: 48, power_kw: 45}}
  leaf_placement: {policy}
"""

GROWTH_CASES = {
    # NVIDIA's B200 SuperPOD grown SU by SU to 8 SUs (two tiers, 32 spines), plus a partial SU.
    "rail-2tier-end-of-row": ([32 * n for n in range(1, 9)] + [100],
                              lambda n: B200_HALL.format(servers=n, fabric="", growth="growth: {max_scalable_units: 8}", rows=8)),
    # three tiers forced on 1..6 SUs, leaves in a network rack beside each SU, plus a partial SU
    "rail-3tier-network-rack": ([32 * n for n in range(1, 7)] + [150],
                                lambda n: H100_HALL.format(servers=n, topology="rail-optimized", fabric=", scalable_unit: 32, tiers: 3",
                                                           extra="", growth="{max_scalable_units: 6}", rows=6, policy="network-rack")),
    # a fat tree of ToR pairs (2 servers per leaf) grown to 40 servers, leaves top-of-rack
    "fat-tree-top-of-rack": ([2, 4, 7, 8, 16, 24, 40],
                             lambda n: H100_HALL.format(servers=n, topology="fat-tree", fabric=", servers_per_leaf: 2", extra="",
                                                        growth="{max_servers: 40}", rows=4, policy="top-of-rack")),
    # every fabric at once: two-tier storage, one OOB switch per SU, middle-of-row
    "multi-fabric-middle-of-row": ([20, 31, 62, 93, 124],
                                   lambda n: H100_HALL.format(
                                       servers=n, topology="rail-optimized", fabric=", scalable_unit: 32",
                                       extra="fabrics:\n  - {name: storage, switch: sn5600, tiers: 2}\n"
                                             "  - {name: oob, switch: sn2201, oversubscription: \"2:1\"}\n",
                                       growth="{max_servers: 124}", rows=4, policy="middle-of-row")),
}


@pytest.mark.parametrize("case", sorted(GROWTH_CASES))
def test_growth_with_a_layout_moves_nothing_physically(tmp_path, case):
    """Every growth step with a layout: nothing removed, re-plugged or changed physically, no
    device moved; each step's racks are racks of the next under the same name and place,
    and the top tier's racks are there, whole, from day one."""
    sizes, spec = GROWTH_CASES[case]
    plans = [build_plan(_write(tmp_path, f"s{n}", spec(n)))[1] for n in sorted(sizes)]
    _assert_only_additions(plans)
    for old, new in zip(plans, plans[1:]):
        d = diff_plans(old, new)
        assert d["cables"]["physical"] == [] and d["devices"]["moved"] == [], (
            f"{old.design['servers']} -> {new.design['servers']}: {(d['cables']['physical'] + d['devices']['moved'])[:2]}")
        places = {(r.name, r.kind, r.row, r.position) for r in new.physical.racks}
        assert {(r.name, r.kind, r.row, r.position) for r in old.physical.racks} <= places
    # The top tier (spines at two tiers, cores at three) is built whole from day one, in its final racks.
    top = max(d.tier for d in plans[0].devices if d.fabric == "compute")
    upper = [{(d.name, p.physical.racks[int(p.physical.dev_rack[i])].name)
              for i, d in enumerate(p.devices) if d.tier == top} for p in plans]
    assert top >= 2 and upper[0] and all(u == upper[0] for u in upper)


def test_hall_too_small_for_the_growth_target_says_so(tmp_path):
    spec = _write(tmp_path, "small", B200_HALL.format(servers=64, fabric="", growth="growth: {max_scalable_units: 8}", rows=4))
    r = cli_in_process("validate", str(spec))
    assert r.returncode == 2 and "too small at the growth target (256 servers)" in r.stderr and "use rows: 8" in r.stderr


SU = """name: pod
servers: {servers}
server: dgx-h100
fabric: {{topology: rail-optimized, switch: {switch}, scalable_unit: {su}}}
{extra}"""


def test_model_change_is_a_changed_device_in_every_format(tmp_path):
    """qm9700 -> qm9790 on 64 servers (16 rail leaves, 8 spines): 24 devices of another
    model, in text, JSON counts and Markdown alike, and the `changed` gate trips."""
    old = _write(tmp_path, "old", SU.format(servers=64, switch="qm9700", su=32, extra=""))
    new = _write(tmp_path, "new", SU.format(servers=64, switch="qm9790", su=32, extra=""))
    r = cli_in_process("diff", str(old), str(new), "--format", "json")
    d = json.loads(r.stdout)
    assert d["counts"]["devices_changed"] == 16 + 8
    assert d["devices"]["changed"][0]["changes"] == {"model": {"old": "qm9700", "new": "qm9790"}}
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "removed,changed,physical")
    assert r.returncode == 1 and "devices +0 -0 ~24 " in r.stdout
    assert "~ spine-01 changed: model qm9700 -> qm9790" in r.stdout
    r = cli_in_process("diff", str(old), str(new), "--format", "markdown")
    assert "| devices | 0 | 0 | 24 | 0 | 0 |" in r.stdout and "Changed devices (24)" in r.stdout


def test_renamed_hosts_are_relabels_not_replugs(tmp_path):
    """`hosts: {hostname: ...}` renames the 64 servers: every port stays, so no cable is
    removed or re-plugged; 64 devices and their 64 x 8 = 512 cables are relabeled."""
    old = _write(tmp_path, "old", SU.format(servers=64, switch="qm9700", su=32, extra=""))
    new = _write(tmp_path, "new", SU.format(servers=64, switch="qm9700", su=32,
                                            extra='hosts: {hostname: "gpu-{su}-{index:03}"}\n'))
    d = diff_plans(build_plan(old)[1], build_plan(new)[1])
    c = d["counts"]
    assert (c["devices_added"], c["devices_removed"], c["devices_relabeled"]) == (0, 0, 64)
    assert (c["cables_added"], c["cables_removed"], c["cables_changed"], c["cables_relabeled"]) == (0, 0, 0, 512)
    assert {"old": "dgx-su2-017", "new": "gpu-2-017"} in d["devices"]["relabeled"]
    cable = next(x for x in d["cables"]["relabeled"] if x["old_cable_id"] == "dgx-su1-001:1")
    assert cable["cable_id"] == "gpu-1-001:1" and cable["a"][1] == cable["old_a"][1] and cable["b"] == cable["old_b"]
    assert cli_in_process("diff", str(old), str(new), "--fail-on", "removed,changed,physical").returncode == 0
    r = cli_in_process("diff", str(old), str(new), "--fail-on", "relabeled", "--format", "markdown")
    assert r.returncode == 1
    assert "**No pulled cable moves.**" in r.stdout and "Relabeled cables (512)" in r.stdout
    assert "dgx-su1-001:1 -> gpu-1-001:1: " in r.stdout


def test_diff_matching_is_one_to_one_and_reconciles(tmp_path):
    """scalable_unit 32 -> 16 on 128 servers: SUs 1-4 keep servers 1-16 (their 4 x 16 x 8 =
    512 cables stay) and 64 servers leave: their 512 cables are removed; 64 arrive in SUs
    5-8 with 512 new cables. Each leaf's 32 uplinks (2 per spine) become 16 (1 per spine)
    and 32 new leaves take 512 uplinks: every one of the 1,024 old uplinks keeps its leaf
    or its spine port and is re-plugged, each to its own new uplink (none claimed twice);
    a server cable is never "re-plugged" as an uplink. old = removed + re-plugged + kept,
    new = added + re-plugged + kept."""
    from compiler.render.diff_report import diff_markdown

    old = build_plan(_write(tmp_path, "old", SU.format(servers=128, switch="qm9700", su=32, extra="")))[1]
    new = build_plan(_write(tmp_path, "new", SU.format(servers=128, switch="qm9700", su=16, extra="")))[1]
    d = diff_plans(old, new)
    c = d["counts"]
    assert (c["devices_removed"], c["devices_added"]) == (64, 64 + 32)  # 64 servers; 64 servers and 32 leaves
    claimed = [x["new"]["cable_id"] for x in d["cables"]["changed"]]
    assert len(claimed) == len(set(claimed))
    assert (c["cables_removed"], c["cables_changed"], c["cables_added"], c["cables_unchanged"]) == (512, 1024, 512, 512)
    assert {x["old"]["kind"] for x in d["cables"]["changed"]} == {x["new"]["kind"] for x in d["cables"]["changed"]} == {
        "leaf-spine"}
    kept = c["cables_unchanged"] + c["cables_physical"] + c["cables_relabeled"]
    assert c["cables_removed"] + c["cables_changed"] + kept == len(old.links) == 2048
    assert c["cables_added"] + c["cables_changed"] + kept == len(new.links) == 2048
    gone = set(d["devices"]["removed"])
    of_gone = {f"{s}:{p}" for s in gone for p in range(1, 9)}
    moved = {x["cable_id"] for x in d["cables"]["removed"]} | {x["old"]["cable_id"] for x in d["cables"]["changed"]}
    assert len(of_gone) == 512 and of_gone <= moved
    md = diff_markdown(d)
    assert re.search(r"^dgx-su1-017:1: dgx-su1-017 ", md, re.M)  # Markdown lines name the cable id
    assert f"**{c['cables_removed'] + c['cables_changed']} existing cable(s)" in md


def test_reconcile_raises_on_a_cable_claimed_twice(tmp_path):
    """The invariant check is live: a matching that claims one new cable for two old ones raises."""
    from compiler.plan import diff as diff_module

    p = build_plan(_write(tmp_path, "a", SU.format(servers=32, switch="qm9700", su=32, extra="")))[1]
    oc, nc = diff_module._Cables(p), diff_module._Cables(p)
    n = len(p.links)
    same = np.arange(2, n, dtype=np.int64)
    diff_module.reconcile(p, p, oc, nc, {}, same, same, [0, 1], [0, 1], [], [])
    with pytest.raises(diff_module.DiffInconsistent, match="not claimed exactly once"):
        diff_module.reconcile(p, p, oc, nc, {}, same, same, [0, 1], [0, 0], [], [1])


def test_diff_shows_the_cost_change(tmp_path):
    """With a price file (switches only): 64 -> 96 servers adds 8 leaves and 8 spines at
    30,000 each = 480,000.00 in text, JSON and Markdown, the unpriced parts named."""
    (tmp_path / "p.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 30000}\n")
    extra = "bom: {prices: p.yaml}\n"
    old = _write(tmp_path, "old", SU.format(servers=64, switch="qm9700", su=32, extra=extra))
    new = _write(tmp_path, "new", SU.format(servers=96, switch="qm9700", su=32, extra=extra))
    r = cli_in_process("diff", str(old), str(new), "--format", "json")
    cost = json.loads(r.stdout)["cost"]
    assert (cost["currency"], cost["old"], cost["new"], cost["delta"]) == ("USD", "720000.00", "1200000.00", "480000.00")
    assert "MMA4Z00-NS" in cost["unpriced_new"]
    r = cli_in_process("diff", str(old), str(new))
    assert "cost USD 720000.00 -> USD 1200000.00 (+480000.00); without a price (before and after): " in r.stdout
    assert "cost USD 720000.00 -> USD 1200000.00 (+480000.00)" in cli_in_process(
        "diff", str(old), str(new), "--format", "markdown").stdout


def test_a_reshaped_torus_relabels_no_switch(tmp_path):
    """4x4x4 -> 8x4x2 routers: the 32 routers at z 2-3 go and 32 at x 4-7 come. A router's
    name is its coordinates, so none of them is the same router relabeled (each side's
    index alone would pair them); the 512 servers keep their names and nothing is relabeled."""
    base = (SPECS / "torus-switched-512.yaml").read_text()
    assert "dims: [4, 4, 4]" in base
    new = _write(tmp_path, "t", base.replace("dims: [4, 4, 4]", "dims: [8, 4, 2]"))
    d = diff_plans(build_plan(SPECS / "torus-switched-512.yaml")[1], build_plan(new)[1])
    c = d["counts"]
    assert (c["devices_added"], c["devices_removed"], c["devices_relabeled"], c["cables_relabeled"]) == (32, 32, 0, 0)
    assert all(n.startswith("router-x0") and int(n[8:10]) >= 4 for n in d["devices"]["added"])


def test_diff_json_follows_its_published_schema(tmp_path):
    """`clusterc diff --format json` is what CI scripts read: growth, a model change, relabelled
    hosts and a cost change each validate against compiler/plan/diff.schema.json, and the
    schema refuses a count that is not a whole number."""
    import jsonschema

    schema = json.loads((ROOT / "compiler" / "plan" / "diff.schema.json").read_text())
    base = (SPECS / "b200-superpod-4su.yaml").read_text()
    (tmp_path / "p.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 30000}\n")
    variants = {"grown": base.replace("servers: 128", "servers: 96"),
                "model": base.replace("switch: qm9700", "switch: qm9790"),
                "hosts": base + "hosts: {hostname: 'node{n:04}'}\n",
                "priced": base + "bom: {prices: p.yaml}\n"}
    old = tmp_path / "old.yaml"
    old.write_text(base + "bom: {prices: p.yaml}\n")
    for name, text in variants.items():
        new = tmp_path / f"{name}.yaml"
        new.write_text(text)
        r = cli_in_process("diff", str(old), str(new), "--format", "json")
        assert r.returncode in (0, 1), r.stderr
        d = json.loads(r.stdout)
        jsonschema.validate(d, schema)
    d["counts"]["cables_added"] = "3"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(d, schema)
