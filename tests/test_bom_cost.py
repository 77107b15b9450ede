"""Prices and spares in the bill of materials: cost only from the user's price file,
spares rounded up per part, totals per category that add up to the lines."""

import csv
import io

import pytest

from compiler.api import build
from compiler.compare import design_figures
from compiler.check import run_checks
from compiler.diagnostics import SpecInvalid
from compiler.plan.bom import bill_of_materials, bom_totals

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
    lines = bill_of_materials(plan)
    by = {(line.category, line.part_number): line for line in lines}
    # NVIDIA B200 4 SU: 32 leaves + 16 spines = 48 QM9700; 5% of 48 = 2.4 -> 3 spares
    assert by[("switch", "MQM9700-NS2F")].quantity == 48
    assert by[("spare", "MQM9700-NS2F")].quantity == 3
    # switch-side twin-port optics: 32 leaves x 32 cages + 16 spines x 32 cages = 1,536; 2% -> 30.72 -> 31
    assert by[("transceiver", "MMA4Z00-NS")].quantity == 1536
    assert by[("spare", "MMA4Z00-NS")].quantity == 31
    assert by[("spare", "MMA4Z00-NS")].unit_power_w is None  # on the shelf
    totals = {t.category: t for t in bom_totals(lines, plan.facts["bom"]["prices"])}
    assert totals["switch"].cost == 48 * 1000
    assert totals["transceiver"].cost == 1536 * 10 and "MMA4Z00-NS-FLT" in totals["transceiver"].unpriced
    assert totals["spare"].cost == 3 * 1000 + 31 * 10
    assert totals["all"].cost == sum(t.cost for c, t in totals.items() if c != "all")
    assert totals["all"].quantity == sum(line.quantity for line in lines)
    f = design_figures(plan, run_checks(plan))
    assert (f["cost"], f["currency"]) == (totals["all"].cost, "USD")


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
