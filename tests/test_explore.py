"""clusterc explore: every combination compiled and checked, the front, the winner, the
reasons; it must rediscover NVIDIA's published designs (designs.md) from requirements alone.

The Pareto front and winner are explore/front.py's."""

import json
from pathlib import Path

import jsonschema
import pytest

from compiler.check import run_checks
from compiler.diagnostics import SpecInvalid
from compiler.explore import as_json, explore, write_specs
from compiler.explore.evaluate import SCAN_CHECKS, measure
from compiler.pipeline import build_plan
from .conftest import run_cli

SCHEMA = json.loads((Path(__file__).parent.parent / "compiler" / "explore" / "explore.schema.json").read_text())

B200 = """name: {name}
gpus: {gpus}
server: dgx-b200
fabric: {{topology: [rail-optimized, fat-tree], switch: qm9700, tiers: [2, 3], oversubscription: "1:1"}}
"""


# the rest of a B200 network's parts, priced 0 so that the costs asserted stay those of the
# switches and switch-side optics (an unpriced part would make a cost unknown)
FREE = "MMA4Z00-NS-FLT: 0, MFP7E10-N0xx: 0"


def _req(tmp_path, text, name="req.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_b200_4su_fewest_switches_is_nvidias(tmp_path):
    x = explore(_req(tmp_path, B200.format(name="b200-4su", gpus=1024)), "switches")
    assert len(x.evaluated) == 4 and len(x.feasible) == 4
    best = x.best
    # designs.md, DGX B200 SuperPOD 4 SU: 32 leaf + 16 spine, 1,024 node-leaf + 1,024 leaf-spine cables
    assert best.switches == {"leaf": 32, "spine": 16} and best.cables == 2048
    assert best.candidate.choices == {"fabric.topology": "rail-optimized", "fabric.tiers": 2}
    assert best.bisection_gbps == 1024 * 400 // 2
    # the fat tree ties; it loses only on listed order, and says so
    tie = next(e for e in x.ranking if e.candidate.choices["fabric.topology"] == "fat-tree" and e.tiers == 2)
    assert tie.switches_total == 48 and "ties on switches" in x.why(tie)


def test_b200_16su_three_tiers_with_the_tables_counts(tmp_path):
    x = explore(_req(tmp_path, B200.format(name="b200-16su", gpus=4096)), "switches")
    # two tiers of 64-port switches hold 2,048 GPUs at 1:1: both two-tier candidates rejected, with why
    rejected = [e for e in x.evaluated if e.rejected]
    assert len(rejected) == 2 and all("do not fit two tiers" in e.rejected for e in rejected)
    best = x.best
    assert best.switches == {"leaf": 128, "spine": 128, "core": 64}  # designs.md 16 SU row
    assert best.cables == 3 * 4096 and best.candidate.choices["fabric.topology"] == "rail-optimized"


def test_seed_8k_two_level_fat_tree(tmp_path):
    req = _req(tmp_path, "name: seed-8k\ngpus: 8192\nserver: hgx-h100\nfabric: {topology: [fat-tree, dragonfly], "
                         "switch: sn5600, speed_gbps: 400, tiers: [2, 3], oversubscription: '1:1'}\n")
    x = explore(req, "switches")
    assert x.best.switches == {"leaf": 128, "spine": 64}  # designs.md seed: 128 leaves, 64 spines
    assert x.duplicates == 1  # dragonfly takes no tiers: [2, 3] is one dragonfly, not two
    dragonfly = next(e for e in x.evaluated if e.candidate.choices["fabric.topology"] == "dragonfly")
    assert "fabric.tiers" not in dragonfly.candidate.choices and "tiers" in dragonfly.candidate.left_out


def test_requirement_drops_candidates_with_the_reason(tmp_path):
    req = _req(tmp_path, "name: b200-1k\ngpus: 1024\nserver: dgx-b200\nfabric: {topology: rail-optimized, switch: qm9700,"
                         " oversubscription: ['1:1', '2:1']}\nrequirements: {min_bisection_gbps: 200000}\n")
    x = explore(req, "switches")
    assert [e.rejected is None for e in x.evaluated] == [True, False]
    assert x.evaluated[1].rejected.startswith("BISECTION_BELOW_REQUIREMENT")
    assert x.best.bisection_gbps == 204_800


def test_written_specs_compile_to_exactly_the_figures_shown(tmp_path):
    (tmp_path / "prices.yaml").write_text("currency: EUR\nparts: {MQM9700-NS2F: 100, MMA4Z00-NS: 1, " + FREE + "}\n")
    req = _req(tmp_path, B200.format(name="b200-4su", gpus=1024) + "bom: {prices: prices.yaml}\n")
    x = explore(req, "cost")
    files = write_specs(x, tmp_path / "chosen", top=3)
    assert len(files) >= 3
    shown = {e.candidate.name: e for e in x.evaluated}
    for path in files:
        _, plan = build_plan(path)
        again = measure(shown[plan.name].candidate, plan, run_checks(plan, checks=SCAN_CHECKS))
        ev = shown[plan.name]
        for key in ("switches", "cables", "transceivers", "power_w", "cost", "bisection_gbps", "collective_time_s",
                    "worst_single_failure"):
            assert getattr(again, key) == getattr(ev, key), (path.name, key)
    assert x.best.cost == 48 * 100 + 1536 * 1  # 48 QM9700 and 1,536 switch-side optics priced


def test_cost_objective_without_prices_is_an_error(tmp_path):
    with pytest.raises(SpecInvalid) as exc:
        explore(_req(tmp_path, B200.format(name="b200-4su", gpus=1024)), "cost")
    assert exc.value.diagnostics[0].code == "EXPLORE_NO_PRICES"


def test_json_contract_validates_and_cli_exit_codes(tmp_path):
    req = _req(tmp_path, B200.format(name="b200-4su", gpus=1024))
    r = run_cli("explore", str(req), "--format", "json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    jsonschema.validate(data, SCHEMA)
    assert (data["evaluated"], data["feasible"]) == (4, 4)
    assert data["best"]["switches"] == 48 and sum(c["pareto"] for c in data["candidates"]) == 2
    assert data["caveats"] == ["power of qm9700 is from a secondary source (a third party quoting the vendor page)",
                               "no cost: the spec has no bom.prices file"]
    md = run_cli("explore", str(req), "--format", "markdown", "--top", "2")
    assert md.returncode == 0 and "| rank | name |" in md.stdout

    bad = _req(tmp_path, "name: x\ngpus: 8\nserver: dgx-b200\nfabric:\n  topology: []\n  switch: qm9700\n", "bad.yaml")
    r = run_cli("explore", str(bad))
    assert r.returncode == 2 and "bad.yaml:5" in r.stderr + r.stdout and "Traceback" not in r.stderr

    # a mistake every candidate makes is the file's: invalid input, with its line
    typo = _req(tmp_path, B200.format(name="t", gpus=1024).replace("switch: qm9700", "switch: qm9701"), "typo.yaml")
    r = run_cli("explore", str(typo))
    assert r.returncode == 2 and "typo.yaml:4" in r.stderr + r.stdout and "did you mean" in r.stderr + r.stdout

    # every candidate invalid for the same reason (two tiers fixed, too big for them): the file's too
    big = _req(tmp_path, B200.format(name="b200-16su", gpus=4096).replace("[2, 3]", "2"), "big.yaml")
    r = run_cli("explore", str(big))
    assert r.returncode == 2 and "big.yaml:4" in r.stderr and "do not fit two tiers" in r.stderr

    # valid designs that all miss a requirement: nothing feasible, exit 1, each with its reason
    none = _req(tmp_path, B200.format(name="b200-4su", gpus=1024) + "requirements: {min_bisection_gbps: 900000}\n",
                "none.yaml")
    r = run_cli("explore", str(none))
    assert r.returncode == 1 and "rejected (4)" in r.stdout and "BISECTION_BELOW_REQUIREMENT" in r.stdout


def test_growth_costs_day_one_and_the_final_size(tmp_path):
    (tmp_path / "prices.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 100, MMA4Z00-NS: 0, " + FREE + "}\n")
    req = _req(tmp_path, "name: grow\ngpus: 512\nserver: dgx-b200\ngrowth: {max_servers: 512}\nbom: {prices: prices.yaml}\n"
                         "fabric: {topology: rail-optimized, switch: qm9700, oversubscription: ['1:1', '2:1']}\n")
    x = explore(req, "cost")
    full = next(e for e in x.evaluated if e.candidate.choices["fabric.oversubscription"] == "1:1")
    # built out to 512 DGX B200 (16 SU): the 16 SU row of designs.md
    assert full.final.gpus == 4096 and full.final.switches == {"leaf": 128, "spine": 128, "core": 64}
    # day one: 2 SU of leaves, the cores already built for the final size
    assert full.gpus == 512 and full.switches["leaf"] == 16 and full.switches["core"] == 64
    g = as_json(x)["candidates"][0]["growth"]
    assert g["added_by_growth"]["switches"] == 320 - full.switches_total
    assert g["day_one"]["cost"] == full.switches_total * 100 and g["final"]["cost"] == 320 * 100
    assert x.best.candidate.choices["fabric.oversubscription"] == "2:1"  # cheaper on day one and at the target
    assert as_json(x)["ranked_at"] == "target"


def test_html_page_plots_every_feasible_design(tmp_path):
    import xml.etree.ElementTree as ET
    from html.parser import HTMLParser

    from compiler.explore.plot import front_svg, html

    x = explore(_req(tmp_path, B200.format(name="b200-4su", gpus=1024)), "switches")
    svg = ET.fromstring(front_svg(x))
    circles = svg.findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == len(x.feasible) == 4
    assert sum(c.get("fill") == "#b71c1c" for c in circles) == 1  # the winner, once
    assert circles[-1].get("fill") == "#b71c1c"  # drawn last: on top

    class Tables(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows, self.table, self.cells = {}, None, []

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.table = dict(attrs).get("id")
            elif tag == "tr" and self.table:
                self.rows[self.table] = self.rows.get(self.table, 0) + 1

    page = html(x, top=10)
    tables = Tables()
    tables.feed(page)
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "src=" not in page and "href=" not in page
    assert tables.rows == {"candidates": 1 + 4}  # header and the four designs; nothing rejected, no growth


def test_markdown_is_one_table_row_per_shown_design(tmp_path):
    from compiler.explore.report import COLUMNS, markdown

    x = explore(_req(tmp_path, B200.format(name="b200-4su", gpus=1024)), "switches")
    md = markdown(x, top=1)
    rows = [line for line in md.splitlines() if line.startswith("| ") and not line.startswith("| rank")]
    assert len(rows) == 1 + 1  # the best, then the other front member below it (the front is always shown)
    assert all(line.count(" | ") == len(COLUMNS) - 1 and line.endswith(" |") for line in rows)
    assert "## Why the others lose to the best" in md


def test_rank_at_the_growth_target_or_day_one(tmp_path):
    """256 DGX B200 GPUs today, 512 servers (4,096 GPUs) to grow to, leaves at 2:1. Day one
    the two SU sizes tie at 56 switches and the listed order picks SUs of 16; at the target
    SUs of 16 need 32 x 8 = 256 rail leaves against 16 x 8 = 128, on the same 2,048 leaf
    uplinks (64 spines of 32 down, 32 cores): 352 switches against 224."""
    req = _req(tmp_path, "name: su\ngpus: 256\nserver: dgx-b200\ngrowth: {max_servers: 512}\n"
                         "fabric: {topology: rail-optimized, switch: qm9700, oversubscription: '2:1', scalable_unit: [16, 32]}\n")
    day_one = explore(req, "switches", at="day-one")
    target = explore(req, "switches")  # the default
    assert [e.switches_total for e in day_one.evaluated] == [56, 56]
    assert [e.final.switches for e in day_one.evaluated] == [{"leaf": 256, "spine": 64, "core": 32},
                                                             {"leaf": 128, "spine": 64, "core": 32}]
    assert day_one.best.candidate.choices == {"fabric.scalable_unit": 16} and "ties on switches" in day_one.why(day_one.ranking[1])
    assert target.best.candidate.choices == {"fabric.scalable_unit": 32}
    # QM9700 at its secondary 747 W: the 128 switches more draw 95,616 W more (the optics alike).
    assert target.why(target.ranking[1]) == "worse: power 385,824 W vs 290,208 W (+33%); switches 352 vs 224 (+57%)"
    assert 385_824 - 290_208 == 128 * 747
    assert [as_json(day_one)["ranked_at"], as_json(target)["ranked_at"]] == ["day-one", "target"]
    growth = as_json(target)["candidates"][0]["growth"]
    assert growth["added_by_growth"]["switches"] == 352 - 56 and growth["final"]["bisection_gbps"] == 409_600
    text = run_cli("explore", str(req)).stdout
    assert "Ranked at the growth target" in text and "su-002  target            4,096       224" in text


@pytest.mark.parametrize("gpus, fat_tree, dragonfly, bisection_percent", [
    # two tiers: 64 leaves + 32 spines (designs.md 8 SU row) vs 2,048 / 16 endpoints per router
    (2048, 96, 128, 66),
    # three tiers: 512 + 512 + 256 (designs.md 64 SU row) vs 16,384 / 16
    (16384, 1280, 1024, 50),
])
def test_dragonfly_forty_percent_claim_measured(tmp_path, gpus, fat_tree, dragonfly, bisection_percent):
    """The seeds' "dragonfly needs 40% fewer switches than a fat tree", on 64-port NDR and
    the balanced dragonfly (p = 16, a = 32, h = 16): 33% more at two-tier sizes, 20% fewer
    at three tiers, at half the bisection. Never 40%."""
    req = _req(tmp_path, f"name: df\ngpus: {gpus}\nserver: dgx-h100\n"
                         "fabric: {topology: [fat-tree, dragonfly], switch: qm9700, oversubscription: '1:1'}\n")
    x = explore(req, "switches")
    ft, df = x.evaluated
    assert (ft.switches_total, df.switches_total) == (fat_tree, dragonfly)
    assert round(df.bisection_gbps / ft.bisection_gbps * 100) == bisection_percent


def test_worst_single_failure_for_every_candidate_is_the_redundancy_checks_worst(tmp_path):
    """Every feasible candidate gets its worst single failure (not only the front), and it is
    exactly the worst of what `clusterc compile`'s redundancy check reports for that design,
    although explore skips the failures that provably cannot be worse."""
    from compiler.check.redundancy import RedundancyFigures
    from compiler.explore.evaluate import candidate_source
    from compiler.pipeline import plan_from_source

    req = _req(tmp_path, "name: wf\ngpus: 1024\nserver: dgx-h100\nfabric: {topology: [rail-optimized, fat-tree, dragonfly], "
                         "switch: qm9700, oversubscription: ['1:1', '2:1'], tiers: [2, 3]}\n")
    x = explore(req, "switches")
    assert len(x.feasible) == len(x.evaluated) == 9  # dragonfly takes neither ratio nor tiers: one, not four
    for ev in x.feasible:
        _, plan = plan_from_source(candidate_source(ev.candidate, req))
        red = run_checks(plan).of(RedundancyFigures)
        base = ev.bisection_gbps
        what, f = min(red.single_failures.items(), key=lambda kv: kv[1].bisection_gbps)  # first of the worst
        assert ev.worst_single_failure == {"what": what.replace("link:", "link "), "element": f.switch or f.link,
                                           "bisection_lost_percent": f.bisection_lost_percent,
                                           "servers_cut_off": f.servers_cut_off}, ev.candidate.name
        assert f.bisection_gbps < base
    # by hand: two-tier rail-optimized at 1:1, 1,024 H100 GPUs: a lost leaf takes its 32 GPU
    # NIC ports, 32 x 400 Gb/s = 12,800 of the 204,800 Gb/s bisection
    ro = next(e for e in x.feasible if e.candidate.choices == {"fabric.topology": "rail-optimized",
                                                              "fabric.oversubscription": "1:1", "fabric.tiers": 2})
    assert ro.bisection_gbps == 204_800
    assert ro.worst_single_failure == {"what": "leaf", "element": "su1-leaf-r1", "bisection_lost_percent": 6.25,
                                       "servers_cut_off": 0}


@pytest.mark.slow
@pytest.mark.skipif(__import__("shutil").which("chromium") is None,
                    reason="Debian package chromium not installed (./dev.sh test installs it as root)")
def test_explore_html_loads_in_headless_chromium(tmp_path):
    import re
    import subprocess

    (tmp_path / "prices.yaml").write_text("currency: USD\nparts: {MQM9700-NS2F: 30000, MMA4Z00-NS: 1200, " + FREE + "}\n")
    req = _req(tmp_path, "name: grow\ngpus: 1024\nserver: dgx-b200\ngrowth: {max_servers: 256}\nbom: {prices: prices.yaml}\n"
                         "fabric: {topology: [rail-optimized, fat-tree], switch: qm9700, tiers: [2, 3], "
                         "oversubscription: ['1:1', '2:1']}\n")
    r = run_cli("explore", str(req), "--objective", "cost", "--format", "html")
    assert r.returncode == 0, r.stderr
    page = tmp_path / "explore.html"
    page.write_text(r.stdout)
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
                        "--virtual-time-budget=5000", "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert not re.search(r"Uncaught|CONSOLE.*(error|Error)", r.stderr), r.stderr[-2000:]
    assert "<h1>clusterc explore</h1>" in dom and dom.count("<circle") == 8  # every feasible design a dot
    assert dom.count('<tr class="added">') == 8  # each shown design: day one, target, what growth adds
    assert "Ranked at the growth target" in dom


def test_a_leaf_built_below_the_ratio_grows_to_the_target_with_its_ratio(tmp_path):
    """128 DGX B200 growing to 256, rail-optimized, two tiers, 2:1: the default unit is an SU
    of 37 whose leaf takes 19 uplinks (37:19, below 2:1; expand/unit_choice.py). The target
    is built with that SU pinned; pinned alone it asked for 37 downlinks at exactly 2:1
    (18.5 uplinks) and the design was rejected for a leaf it never had."""
    req = _req(tmp_path, "name: grow\ngpus: 1024\nserver: dgx-b200\ngrowth: {max_servers: 256}\n"
                         "fabric: {topology: rail-optimized, switch: qm9700, tiers: 2, oversubscription: '2:1'}\n")
    r = run_cli("explore", str(req), "--format", "json")
    assert r.returncode == 0, r.stderr
    (only,) = json.loads(r.stdout)["candidates"]
    assert only["rejected"] is None
    assert only["oversubscription"]["leaf"] == "37:19"
