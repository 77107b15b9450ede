"""A user's price file (prices.yaml): unit prices by part number in one stated currency.

clusterc ships no prices: list prices change, discounts are private, and a cost figure
nobody can trace is worse than none. Without a price file every cost is absent and says so.

    currency: USD            # ISO 4217, one per file
    source: "quote Q-1234, 2026-10"   # optional: where the numbers come from
    parts:
      MQM9700-NS2F: 30000.00   # decimal, exact; finite and >= 0
      MMA4Z00-NS: 1200
      MFP7E10-N003: 40       # cables by their orderable (per-length) part number
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic_core import PydanticCustomError

from ..diagnostics import Diagnostic, SpecInvalid
from ..yaml12.value_errors import describe
from ..yaml12 import load_yaml_file


def _price(value) -> Decimal:
    """A unit price as an exact decimal: a YAML number is read as written (30000.00 stays
    30000.00, never a binary float), a quoted number too. Infinite, NaN or negative
    prices are errors that say so: a total built on one is meaningless."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise PydanticCustomError("price", f"a price is a number, not {type(value).__name__}")
    if isinstance(value, float):
        if math.isnan(value):
            raise PydanticCustomError("price", "a price is a number, not NaN (.nan)")
        if math.isinf(value):
            raise PydanticCustomError("price", "a price must be finite: this one is infinite (.inf, or a number beyond 1.8e308 such as 1e309)")
        value = repr(value)  # the shortest text that reads back as this float: what the file said
    try:
        price = Decimal(str(value).strip())
    except InvalidOperation:
        raise PydanticCustomError("price", f"a price is a number, not {value!r}") from None
    if price.is_nan():
        raise PydanticCustomError("price", "a price is a number, not NaN")
    if price.is_infinite():
        raise PydanticCustomError("price", "a price must be finite: this one is infinite")
    if price < 0:
        raise PydanticCustomError("price", f"a price cannot be negative: {price}")
    return price


Price = Annotated[Decimal, BeforeValidator(_price)]


class PriceList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. USD, EUR")
    source: str | None = Field(None, description="where the prices come from (a quote, a list, a date)")
    parts: dict[str, Price] = Field(description="unit price by part number, as the BOM prints it (bom.csv part_number)")

    def as_facts(self, file: str) -> dict:
        """Plain values a plan carries (PlanFacts.prices, plan/facts.py); prices as decimal strings,
        so plan.json and every total stay exact."""
        return {"currency": self.currency, "source": self.source, "file": Path(file).name,
                "parts": {k: str(v) for k, v in sorted(self.parts.items())}}


def load_prices(path: str | Path) -> PriceList:
    """Read and validate a price file; SpecInvalid (file:line, field, hint) for any problem."""
    source = load_yaml_file(path)
    try:
        prices = PriceList.model_validate(source.data)
    except ValidationError as exc:
        diagnostics = []
        for err in exc.errors():
            loc = tuple(err["loc"])
            line, col = source.where(loc)
            msg, hint = describe(err, loc, source) or (err["msg"], "")
            diagnostics.append(Diagnostic("PRICES_INVALID", msg, path=".".join(map(str, loc)), file=source.file,
                                          line=line, column=col,
                                          hint=hint or "a price file: currency: USD, parts: {PART-NUMBER: unit price}"))
        raise SpecInvalid(diagnostics) from None
    return prices
