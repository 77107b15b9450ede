"""A user's price file (prices.yaml): unit prices by part number in one stated currency.

clusterc ships no prices: list prices change, discounts are private, and a cost figure
nobody can trace is worse than none. Without a price file every cost is absent and says so.

    currency: USD            # ISO 4217, one per file
    source: "quote Q-1234, 2026-10"   # optional: where the numbers come from
    parts:
      MQM9700-NS2F: 30000
      MMA4Z00-NS: 1200
      MFP7E10-N003: 40       # cables by their orderable (per-length) part number
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..diagnostics import Diagnostic, SpecInvalid
from ..spec.value_errors import describe
from ..spec.yaml_source import load_yaml_file


class PriceList(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. USD, EUR")
    source: str | None = Field(None, description="where the prices come from (a quote, a list, a date)")
    parts: dict[str, Annotated[float, Field(ge=0)]] = Field(description="unit price by part number")

    def as_facts(self, file: str) -> dict:
        """Plain values a plan carries (plan.facts['bom']['prices'])."""
        return {"currency": self.currency, "source": self.source, "file": Path(file).name,
                "parts": dict(sorted(self.parts.items()))}


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
