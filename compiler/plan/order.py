"""The whole order: every fabric's bill, the spares over it, and its cost and power in a
named scope. bom.csv, bom_totals.csv, `diff`, `ci`, `compare` and `explore` all read it,
so they show the same quantities, spares and totals.

Spares follow one rule (bom.spare_lines): per orderable part over the whole order (every
fabric together), rounded up once.

Scopes say what a cost or power figure covers, and every output that shows one names it:
- `network`: switches, transceivers and cables (and their spares): what the fabric design
  decides. explore ranks on it and compare shows it first: the default.
- `cluster`: everything ordered: servers, NICs, scale-up parts and endpoints as well. Its
  power counts the modules in server cages once, within the server's maximum (plan/power.py).

Money is decimal (catalog/prices.py): never a float, so 30000.00 x 12 is 360000.00.
A part without a price makes the cost unknown (None), never a silent 0: `priced` keeps
the sum of what is priced, `unpriced` names what is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from .bom import BomLine, bill_of_materials, orderable_part, spare_lines
from .fabrics import fabric_bom, is_multi_fabric
from .facts import PriceFacts
from .model import Plan

SCOPES = {
    "network": frozenset({"switch", "transceiver", "cable"}),
    "cluster": frozenset({"switch", "transceiver", "cable", "server", "nic", "scale-up", "endpoint"}),
}
DEFAULT_SCOPE = "network"
WHOLE_ORDER = "all"  # the fabric column of lines that belong to the whole order (spares)
# Lines that carry no price of their own: they come inside another part.
INCLUDED = ("built in", "included")
# Categories whose power is expected to be published (a missing one makes the power a floor).
POWERED = ("switch", "server", "transceiver", "scale-up")


def order_lines(plan: Plan) -> list[tuple[str | None, BomLine]]:
    """(fabric, line) for the whole order: every fabric's parts (fabric None for a plan of
    one fabric), then the spares over all of them (fabric WHOLE_ORDER with several)."""
    return plan.memo("order_lines", _order_lines)


def _order_lines(plan: Plan) -> list[tuple[str | None, BomLine]]:
    multi = is_multi_fabric(plan)
    parts: list[tuple[str | None, BomLine]] = (list(fabric_bom(plan)) if multi
                                               else [(None, line) for line in plan.memo("bom", bill_of_materials)])
    spares = spare_lines([line for _, line in parts], plan.view.facts.spares_percent)
    return parts + [(WHOLE_ORDER if multi else None, line) for line in spares]


def in_scope(line: BomLine, scope: str) -> bool:
    return (line.spare_of if line.category == "spare" else line.category) in SCOPES[scope]


def is_included(line: BomLine) -> bool:
    """A line that is part of another (a DGX's built-in NICs, NVLink trays of a rack)."""
    return line.part_number.startswith(INCLUDED) or line.notes == "part of the server"


def unit_price(line: BomLine, prices: PriceFacts | None) -> Decimal | None:
    """The line's unit price from the price file (PlanFacts.prices), keyed by the
    part number as bom.csv prints it (a generic cable ordered by length: that text, or its
    part without the length); None if unpriced."""
    if prices is None:
        return None
    value = prices.parts.get(line.part_number)  # the part number as the BOM prints it
    if value is None:
        value = prices.parts.get(orderable_part(line))  # a generic cable's price, whatever its length
    return value


@dataclass(frozen=True)
class Totals:
    """Cost and power of lines in one scope."""

    scope: str
    quantity: int
    power_w: float  # of the lines with a published power
    power_unknown_for: tuple[str, ...]  # parts without a published power (power_w is a floor then)
    cost: Decimal | None  # None: no price file, or some part unpriced (unknown)
    priced: Decimal | None  # the priced lines' sum (None without a price file)
    currency: str | None
    unpriced: tuple[str, ...]  # parts the price file lacks

    @property
    def has_prices(self) -> bool:
        return self.currency is not None


def line_totals(lines: list[BomLine], prices: PriceFacts | None, scope: str | None = None) -> Totals:
    """Totals of `lines` (all of them with scope None, else those in the scope)."""
    sel = [line for line in lines if scope is None or in_scope(line, scope)]
    power = sum(line.total_power_w for line in sel if line.total_power_w is not None)
    if any(line.category == "server" for line in sel):  # a server's maximum holds its own modules: count them once
        power -= sum(line.unit_power_w * line.in_servers for line in sel if line.unit_power_w is not None)
    unknown = tuple(sorted({line.part_number or line.description for line in sel
                            if line.unit_power_w is None and line.category in POWERED and not is_included(line)}))
    priced: Decimal | None = None
    unpriced: tuple[str, ...] = ()
    if prices is not None:
        priced = Decimal(0)
        missing = set()
        for line in sel:
            unit = unit_price(line, prices)
            if unit is not None:
                priced += unit * line.quantity
            elif not is_included(line):
                missing.add(line.part_number or line.description)
        unpriced = tuple(sorted(missing))
    return Totals(scope or "lines", sum(line.quantity for line in sel), power, unknown,
                  priced if prices is not None and not unpriced else None, priced,
                  prices.currency if prices else None, unpriced)


def order_totals(plan: Plan, scope: str = DEFAULT_SCOPE) -> Totals:
    """Cost and power of a plan's whole order in a scope (SCOPES): the one figure `diff`,
    `ci`, `compare` and `explore` show. Prices from the spec's `bom.prices` file."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}; one of {', '.join(SCOPES)}")
    return line_totals([line for _, line in order_lines(plan)], plan.view.facts.prices, scope)


def money(value: Decimal | None) -> str:
    """A cost as bom.csv prints it: two decimals, exact."""
    return "" if value is None else f"{value.quantize(Decimal('0.01')):f}"


def category_totals(lines: list[BomLine], prices: PriceFacts | None) -> list[tuple[str, Totals]]:
    """(category, totals) per category in first-appearance order, then 'all' (bom_totals.csv)."""
    order = list(dict.fromkeys(line.category for line in lines))
    out = [(cat, line_totals([line for line in lines if line.category == cat], prices)) for cat in order]
    return out + [("all", line_totals(lines, prices))]
