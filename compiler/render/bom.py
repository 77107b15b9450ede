"""bom.csv: what procurement orders, by part number, with quantities and power (and, with
the spec's `bom.prices` file, unit and line prices); bom_totals.csv: per category and in
all, quantity, known power and cost. Without a price file the cost column says why it is empty."""

from __future__ import annotations

from ..check import CheckResults
from ..plan.bom import bom_totals, bill_of_materials
from ..plan.fabrics import fabric_bom, is_multi_fabric
from ..plan.model import Plan
from .csvtext import csv_text
from .writer import OutputDir

HEADER = ["category", "part_number", "description", "quantity", "unit_power_w", "total_power_w", "notes"]
TOTALS_HEADER = ["category", "quantity", "power_w_known", "lines_without_power", "cost", "currency", "unpriced_parts"]
NO_PRICES = "no price file (spec bom.prices)"


def _watts(value) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _money(value) -> str:
    return "" if value is None else f"{value:.2f}"


def _bom_lines(plan: Plan) -> tuple[list, list[str]]:
    """(fabric or None, BOM line) pairs in bill order, and the fabric column's header."""
    if is_multi_fabric(plan):  # one bill per fabric, labelled in a last column
        return list(fabric_bom(plan)), ["fabric"]
    return [(None, line) for line in plan.memo("bom", bill_of_materials)], []


def bom_table(plan: Plan) -> tuple[list[str], list[tuple]]:
    """bom.csv's header and rows (prices where the spec names a price file); report.html
    shows the same rows."""
    prices = plan.facts.get("bom", {}).get("prices")
    price_header = [f"unit_price_{prices['currency'].lower()}", f"total_price_{prices['currency'].lower()}"] if prices else []

    def priced(line) -> tuple:
        if not prices:
            return ()
        unit = prices["parts"].get(line.part_number)
        return (_money(unit), _money(None if unit is None else unit * line.quantity))

    pairs, fabric_header = _bom_lines(plan)
    rows = [(line.category, line.part_number, line.description, line.quantity, _watts(line.unit_power_w),
             _watts(line.total_power_w), line.notes, *priced(line), *(() if fabric is None else (fabric,)))
            for fabric, line in pairs]
    return HEADER + price_header + fabric_header, rows


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    header, rows = bom_table(plan)
    out.write_text("bom.csv", csv_text(header, rows))
    prices = plan.facts.get("bom", {}).get("prices")
    lines = [line for _, line in _bom_lines(plan)[0]]
    totals = [(t.category, t.quantity, _watts(t.power_w), t.power_unknown_lines,
               _money(t.cost) if prices else NO_PRICES, prices["currency"] if prices else "", " ".join(t.unpriced))
              for t in bom_totals(lines, prices)]
    out.write_text("bom_totals.csv", csv_text(TOTALS_HEADER, totals))
