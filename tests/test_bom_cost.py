"""Prices and spares in the bill of materials: cost only from the user's price file,
spares rounded up per part, totals per category that add up to the lines.

Price files are read by catalog/prices.py."""

import csv
import io
from decimal import Decimal

import pytest

from compiler.api import build
from compiler.compare import design_figures
from compiler.check import run_checks
from compiler.diagnostics import SpecInvalid
from compiler.plan.order import category_totals, order_lines, order_totals

PRICES = """currency: USD
source: test figures, not real prices
parts:
  MQM9700-NS2F: 1000
  MMA4Z00-NS: 10
"""


def _spec(tmp_path, bom: str = "") -> str:
    (tmp_path / "prices.yaml").write_text(PRICES)
    text = ("name: b200-4su\ngpus: 1024\nserver: dgx-b200\nfabric: {topology: rail-optimized, switch: qm9700}\n" + bom)
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return str(path)


def test_without_price_file_cost_is_absent(tmp_path):
    plan = build(_spec(tmp_path)).plan
    f = design_figures(plan, run_checks(plan))
    assert f["cost"] is None and f["currency"] is None and f["gpus"] == 1024


def test_prices_and_spares(tmp_path):
    compiled = build(_spec(tmp_path, "bom: {prices: prices.yaml, spares_percent: {transceiver: 2, switch: 5}}\n"))
    plan = compiled.plan
    lines = [line for _, line in order_lines(plan)]
    by = {(line.category, line.part_number): line for line in lines}
    # NVIDIA B200 4 SU: 32 leaves + 16 spines = 48 QM9700; 5% of 48 = 2.4 -> 3 spares
    assert by[("switch", "MQM9700-NS2F")].quantity == 48
    assert by[("spare", "MQM9700-NS2F")].quantity == 3
    # switch-side twin-port optics: 32 leaves x 32 cages + 16 spines x 32 cages = 1,536; 2% -> 30.72 -> 31
    assert by[("transceiver", "MMA4Z00-NS")].quantity == 1536
    assert by[("spare", "MMA4Z00-NS")].quantity == 31
    assert by[("spare", "MMA4Z00-NS")].unit_power_w is None  # on the shelf
    totals = dict(category_totals(lines, plan.view.facts.prices))
    assert totals["switch"].cost == 48 * 1000
    # the flat-top server modules have no price: the transceivers' cost is unknown, never a number
    assert totals["transceiver"].cost is None and totals["transceiver"].priced == 1536 * 10
    assert "MMA4Z00-NS-FLT" in totals["transceiver"].unpriced
    assert totals["spare"].cost is None and totals["spare"].priced == 3 * 1000 + 31 * 10  # spare FLT modules unpriced
    assert totals["all"].cost is None and totals["all"].priced == sum(t.priced for c, t in totals.items() if c != "all")
    assert totals["all"].quantity == sum(line.quantity for line in lines)
    f = design_figures(plan, run_checks(plan))
    network = order_totals(plan, "network")
    assert (f["scope"], f["cost"], f["priced_cost"], f["currency"]) == ("network", None, float(network.priced), "USD")
    assert f["cost_unpriced_parts"] == ["MFP7E10-N0xx", "MMA4Z00-NS-FLT"]


def test_bom_csv_prices_and_totals_file(tmp_path):
    out = build(_spec(tmp_path, "bom: {prices: prices.yaml}\n")).write(tmp_path / "out", only=["bom"])
    rows = list(csv.DictReader(io.StringIO((out / "bom.csv").read_text())))
    sw = next(r for r in rows if r["part_number"] == "MQM9700-NS2F")
    assert (sw["unit_price_usd"], sw["total_price_usd"]) == ("1000.00", "48000.00")
    totals = {r["category"]: r for r in csv.DictReader(io.StringIO((out / "bom_totals.csv").read_text()))}
    assert totals["switch"]["cost"] == "48000.00" and totals["all"]["currency"] == "USD"


def test_bom_totals_without_prices_say_why(tmp_path):
    out = build(_spec(tmp_path)).write(tmp_path / "out", only=["bom"])
    totals = list(csv.DictReader(io.StringIO((out / "bom_totals.csv").read_text())))
    assert all(r["cost"] == "no price file (spec bom.prices)" for r in totals)
    assert "unit_price_usd" not in (out / "bom.csv").read_text().splitlines()[0]


def test_bad_price_file_is_a_located_error(tmp_path):
    path = _spec(tmp_path, "bom: {prices: prices.yaml}\n")
    (tmp_path / "prices.yaml").write_text("currency: dollars\nparts:\n  X: -3\n")
    with pytest.raises(SpecInvalid) as exc:
        build(path)
    text = "\n".join(d.format() for d in exc.value.diagnostics)
    assert "prices.yaml:1" in text and "prices.yaml:3" in text


# --- money adds up ------------------------------------------------------------------

ALL_PRICED = "MMA4Z00-NS-FLT: 0, MFP7E10-N0xx: 0"


def test_prices_are_exact_decimals(tmp_path):
    """A binary float cannot hold every cent: 792,851,406,631.30 x 48 is 38,056,867,518,302.40,
    which a float sum prints as ...302.41."""
    path = _spec(tmp_path, "bom: {prices: prices.yaml}\n")
    (tmp_path / "prices.yaml").write_text(f"currency: USD\nparts: {{MQM9700-NS2F: 792851406631.30, MMA4Z00-NS: 0.10, "
                                          f"{ALL_PRICED}}}\n")
    out = build(path).write(tmp_path / "out", only=["bom"])
    rows = {r["part_number"]: r for r in csv.DictReader(io.StringIO((out / "bom.csv").read_text())) if r["category"] == "switch"}
    assert rows["MQM9700-NS2F"]["unit_price_usd"] == "792851406631.30"
    assert rows["MQM9700-NS2F"]["total_price_usd"] == "38056867518302.40"
    totals = {r["category"]: r for r in csv.DictReader(io.StringIO((out / "bom_totals.csv").read_text()))}
    assert totals["switch"]["cost"] == "38056867518302.40" and totals["transceiver"]["cost"] == "153.60"
    assert totals["all"]["priced_cost"] == "38056867518456.00"  # + 1,536 x 0.10 switch-side modules, to the cent


@pytest.mark.parametrize("price, says", [("1e309", "infinite"), (".inf", "infinite"), (".nan", "NaN"),
                                         ("-3", "negative"), ("abc", "not 'abc'")])
def test_infinite_nan_or_negative_prices_are_errors(tmp_path, price, says):
    from .conftest import run_cli

    path = _spec(tmp_path, "bom: {prices: prices.yaml}\n")
    (tmp_path / "prices.yaml").write_text(f"currency: USD\nparts:\n  MQM9700-NS2F: 1\n  MMA4Z00-NS: {price}\n")
    with pytest.raises(SpecInvalid) as exc:
        build(path)
    (d,) = exc.value.diagnostics
    assert d.line == 4 and d.path == "parts.MMA4Z00-NS" and says in d.message, d.format()
    assert "greater than or equal" not in d.message
    r = run_cli("compile", path, "-o", str(tmp_path / "out"))
    assert r.returncode == 2 and "prices.yaml:4" in r.stderr and "Traceback" not in r.stderr


def test_an_unpriced_part_is_listed_as_unpriced_never_zero(tmp_path):
    """The DGX has no price: bom.csv says `unpriced`, bom_totals.csv's server cost is
    unknown (not 0.00), with the priced lines' sum beside it."""
    path = _spec(tmp_path, "bom: {prices: prices.yaml}\n")
    out = build(path).write(tmp_path / "out", only=["bom"])
    rows = list(csv.DictReader(io.StringIO((out / "bom.csv").read_text())))
    dgx = next(r for r in rows if r["category"] == "server")
    assert (dgx["unit_price_usd"], dgx["total_price_usd"]) == ("unpriced", "unpriced")
    nic = next(r for r in rows if r["category"] == "nic")
    assert nic["unit_price_usd"] == "included"  # built into the DGX: no price of its own, not unpriced
    totals = {r["category"]: r for r in csv.DictReader(io.StringIO((out / "bom_totals.csv").read_text()))}
    assert totals["server"]["cost"] == "unpriced" and totals["server"]["priced_cost"] == "0.00"
    assert "DGX B200" in totals["server"]["unpriced_parts"] and totals["all"]["cost"] == "unpriced"
    assert totals["switch"]["cost"] == "48000.00"


def test_cat6_spares_are_rounded_once_over_every_length(tmp_path):
    """45 Cat6 cords of a few lengths (31 BMCs, 14 switch management ports) at 2 %: ceil(0.9) = 1
    spare, not one per length line."""
    from compiler.pipeline import build_plan

    from .conftest import SPECS

    text = (SPECS / "h100-superpod-1su-multi-fabric-hall.yaml").read_text()
    spec = tmp_path / "hall.yaml"
    spec.write_text(text.replace("\nname: ", "\nbom: {spares_percent: {cable: 2}}\nname: ", 1))
    plan = build_plan(spec)[1]
    lines = order_lines(plan)
    cat6 = [line for _, line in lines if line.category == "cable" and line.part_number.startswith("CAT6")]
    assert len(cat6) > 1 and sum(line.quantity for line in cat6) == 31 + 14
    spares = [line for _, line in lines if line.category == "spare" and line.part_number.startswith("CAT6")]
    assert [line.quantity for line in spares] == [1]
    assert spares[0].length_m == max(line.length_m for line in cat6 if line.length_m)  # cut at the longest


def test_spares_over_the_whole_order_agree_in_bom_csv_diff_compare_and_explore(tmp_path):
    """One rule: spares per part over every fabric, rounded once. bom.csv lists them once
    (fabric `all`); diff against an empty-spares version adds exactly those; compare's and
    explore's network cost equal bom.csv's network lines priced."""
    from compiler.explore.choices import Candidate
    from compiler.explore.evaluate import measure, SCAN_CHECKS
    from compiler.pipeline import build_plan
    from compiler.plan.diff import diff_plans
    from compiler.plan.order import SCOPES

    from .conftest import SPECS

    text = (SPECS / "h100-superpod-1su-multi-fabric.yaml").read_text()
    (tmp_path / "prices.yaml").write_text(
        "currency: USD\nparts: {MQM9700-NS2F: 30000.00, MMA4Z00-NS: 1200.00, MMA4Z00-NS-FLT: 1200.00, MMA4Z00-NS400: 900.00,"
        " MFP7E10-N0xx: 80.00, 'MSN2201 (full ordering code per configuration)': 9000.00, 'CAT6 patch cord (generic; PN"
        " per site)': 5.00, 'MSN5600 (full ordering code per configuration)': 50000.00, MMA1Z00-NS400: 700.00}\n")
    plain = tmp_path / "plain.yaml"
    plain.write_text(text.replace("\nname: ", "\nbom: {prices: prices.yaml}\nname: ", 1))
    spared = tmp_path / "spared.yaml"
    spared.write_text(text.replace("\nname: ", "\nbom: {prices: prices.yaml, spares_percent: {transceiver: 2, cable: 2, "
                                   "switch: 5}}\nname: ", 1))
    old, new = build_plan(plain)[1], build_plan(spared)[1]
    out = build(str(spared)).write(tmp_path / "out", only=["bom"])
    rows = list(csv.DictReader(io.StringIO((out / "bom.csv").read_text())))
    spare_rows = {r["part_number"]: int(r["quantity"]) for r in rows if r["category"] == "spare"}
    assert spare_rows and all(r["fabric"] == "all" for r in rows if r["category"] == "spare")
    # per part over the whole order: MMA4Z00-NS in every fabric together, rounded once
    modules = sum(int(r["quantity"]) for r in rows if r["category"] == "transceiver" and r["part_number"] == "MMA4Z00-NS")
    assert spare_rows["MMA4Z00-NS"] == -(-modules * 2 // 100)
    d = diff_plans(old, new)
    added = {b["part_number"]: b["delta"] for b in d["bom"] if b["category"] == "spare"}
    assert added == spare_rows
    checks = run_checks(new)
    f = design_figures(new, checks)
    network_rows = [r for r in rows if (r["category"] if r["category"] != "spare" else
                                        r["description"].split(":")[0].removeprefix("spare ")) in SCOPES["network"]]
    network = sum(Decimal(r["total_price_usd"]) for r in network_rows)
    assert f["scope"] == "network" and f["cost"] == float(network) and order_totals(new, "network").cost == network
    ev = measure(Candidate(0, "x", {}, {}, ()), new, run_checks(new, checks=SCAN_CHECKS))
    assert ev.scope == "network" and ev.cost == network
    assert f["scopes"]["cluster"]["cost"] is None and "DGX H100" in " ".join(f["scopes"]["cluster"]["cost_unpriced_parts"])


def test_explore_never_ranks_an_unpriced_design_first_on_cost(tmp_path):
    """QM9700 and QM9790 give the same design; only the QM9700 has a price. The QM9790 one
    looks cheaper only because its switches cost nothing: its cost is unknown, it ranks after
    the priced one, and says which part lacks a price."""
    from compiler.explore import as_json, explore

    (tmp_path / "prices.yaml").write_text(f"currency: USD\nparts: {{MQM9700-NS2F: 30000.00, MMA4Z00-NS: 1200.00, "
                                          f"{ALL_PRICED}}}\n")
    req = tmp_path / "req.yaml"
    req.write_text("name: pick\ngpus: 1024\nserver: dgx-b200\nbom: {prices: prices.yaml}\n"
                   "fabric: {topology: rail-optimized, switch: [qm9790, qm9700]}\n")
    x = explore(req, "cost")
    assert [e.candidate.choices["fabric.switch"] for e in x.ranking] == ["qm9700", "qm9790"]
    priced, unpriced = x.ranking
    assert priced.cost == 48 * Decimal("30000.00") + 1536 * Decimal("1200.00") and priced.scope == "network"
    assert unpriced.cost is None and unpriced.cost_unpriced == ["MQM9790-NS2F"]
    why = x.why(unpriced)
    assert "cost unknown" in why and "MQM9790-NS2F" in why
    assert any("cost unknown for 1 design(s)" in c and "MQM9790-NS2F" in c for c in x.caveats())
    data = as_json(x)
    assert data["best"]["cost"] == float(priced.cost) and data["best"]["scope"] == "network"


def test_a_generic_cable_price_prices_every_length(tmp_path):
    """Price keys are the part numbers as bom.csv prints them; a generic cable ordered by
    length ("CAT6 patch cord (...) 3 m") takes its part's price at every length."""
    from compiler.pipeline import build_plan

    from .conftest import SPECS

    (tmp_path / "prices.yaml").write_text("currency: USD\nparts: {'CAT6 patch cord (generic; PN per site)': 4.50}\n")
    text = (SPECS / "h100-superpod-1su-multi-fabric-hall.yaml").read_text()
    spec = tmp_path / "hall.yaml"
    spec.write_text(text.replace("\nname: ", "\nbom: {prices: prices.yaml}\nname: ", 1))
    lines = [line for _, line in order_lines(build_plan(spec)[1])]
    cat6 = [line for line in lines if line.part_number.startswith("CAT6")]
    prices = build_plan(spec)[1].view.facts.prices
    totals = dict(category_totals(cat6, prices))
    assert len(cat6) > 1 and totals["all"].cost == Decimal("4.50") * (31 + 14) and not totals["all"].unpriced


def test_cluster_power_counts_server_modules_once_as_the_rack_draw_does():
    """A server's maximum power holds its own NIC modules (plan/power.py): the cluster scope
    equals the racks' draw (devices plus switch-side optics) plus the cables' draw, where a
    sum of bill lines counted the 512 server-side modules (7.7 kW) twice. The network scope
    keeps every module."""
    from compiler.pipeline import build_plan
    from compiler.plan.power import rack_draw

    from .conftest import SPECS

    plan = build_plan(SPECS / "b200-superpod-4su-hall.yaml")[1]
    lines = [line for _, line in order_lines(plan)]
    cables_w = sum(line.total_power_w or 0 for line in lines if line.category == "cable")
    assert order_totals(plan, "cluster").power_w == pytest.approx(rack_draw(plan).known_w.sum() + cables_w)
    modules_w = sum(line.total_power_w for line in lines if line.category == "transceiver")
    switches_w = sum(line.total_power_w or 0 for line in lines if line.category == "switch")
    assert order_totals(plan, "network").power_w == pytest.approx(modules_w + switches_w + cables_w)
