"""bom.csv: what procurement orders, by part number, with quantities and power (and, with
the spec's `bom.prices` file, unit and line prices); bom_totals.csv: per category and in
all, quantity, known power and cost. Without a price file the cost column says why it is
empty; a part the price file lacks reads `unpriced`, and a total holding one is `unpriced`
too (its cost is unknown), with the priced lines' sum beside it in `priced_cost`."""

from __future__ import annotations

from ..check import CheckResults
from ..plan.model import Plan
from ..plan.order import category_totals, is_included, money, order_lines, unit_price
from .csvtext import csv_text
from .writer import OutputDir

HEADER = ["category", "part_number", "description", "quantity", "unit_power_w", "total_power_w", "notes"]
TOTALS_HEADER = ["category", "quantity", "power_w_known", "parts_without_power", "cost", "priced_cost", "currency",
                 "unpriced_parts"]
NO_PRICES = "no price file (spec bom.prices)"
UNPRICED = "unpriced"  # a part the price file lacks: never shown as 0.00
INCLUDED = "included"  # a part that comes inside another (built-in NICs): no price of its own


def _watts(value) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def bom_table(plan: Plan) -> tuple[list[str], list[tuple]]:
    """bom.csv's header and rows (prices where the spec names a price file); report.html
    shows the same rows. The whole order (plan/order.py): with several fabrics, each
    fabric's parts labelled in a last column, then the spares over all of them ("all")."""
    prices = plan.view.facts.prices
    price_header = [f"unit_price_{prices.currency.lower()}", f"total_price_{prices.currency.lower()}"] if prices else []

    def priced(line) -> tuple:
        if not prices:
            return ()
        unit = unit_price(line, prices)
        if unit is None:
            return (INCLUDED, INCLUDED) if is_included(line) else (UNPRICED, UNPRICED)
        return (money(unit), money(unit * line.quantity))

    pairs = order_lines(plan)
    fabric_header = ["fabric"] if any(fabric is not None for fabric, _ in pairs) else []
    rows = [(line.category, line.part_number, line.description, line.quantity, _watts(line.unit_power_w),
             _watts(line.total_power_w), line.notes, *priced(line), *(() if fabric is None else (fabric,)))
            for fabric, line in pairs]
    return HEADER + price_header + fabric_header, rows


def render(plan: Plan, checks: CheckResults, out: OutputDir) -> None:
    header, rows = bom_table(plan)
    out.write_text("bom.csv", csv_text(header, rows))
    prices = plan.view.facts.prices
    lines = [line for _, line in order_lines(plan)]
    totals = []
    for category, t in category_totals(lines, prices):
        if prices is None:
            cost = priced_cost = NO_PRICES
        else:
            cost = money(t.cost) if t.cost is not None else UNPRICED  # unknown while a part is unpriced
            priced_cost = money(t.priced)
        totals.append((category, t.quantity, _watts(t.power_w), " ".join(t.power_unknown_for), cost, priced_cost,
                       prices.currency if prices else "", " ".join(t.unpriced)))
    out.write_text("bom_totals.csv", csv_text(TOTALS_HEADER, totals))
