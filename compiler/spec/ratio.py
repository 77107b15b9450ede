"""Oversubscription ratios as the spec writes them: "2:1", 2:1 unquoted, or a whole number.

The loader reads YAML 1.2, so an unquoted 2:1 arrives here as the text "2:1" (YAML 1.1
would have made it the base-60 number 121). A whole number N means N:1, as an architect
says "2 to 1" for 2. Anything else is an error with a hint that says what to write.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

# No switch (chassis included) has more ports than this: a ratio term beyond it could
# never be built, and is far more likely a typo than a design.
MAX_RATIO_TERM = 1024

_RATIO = re.compile(r"^\s*(\d{1,6})\s*:\s*(\d{1,6})\s*$")
_DECIMAL_RATIO = re.compile(r"^\s*(\d{1,6}(?:\.\d{1,6})?)\s*(?:[:/]\s*(\d{1,6}(?:\.\d{1,6})?))?\s*$")
EXAMPLES = '"1:1" (non-blocking), "2:1", "3:2"'


class Ratio(BaseModel):
    """Oversubscription as downlink:uplink bandwidth, e.g. 1:1 or 2:1, in lowest terms."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    down: int = Field(ge=1)
    up: int = Field(ge=1)

    def __str__(self) -> str:
        return f"{self.down}:{self.up}"


def _error(message: str, hint: str) -> PydanticCustomError:
    # The spec loader shows ctx["hint"] under the message.
    return PydanticCustomError("ratio", message, {"hint": hint})


def _whole_terms_hint(value: Fraction) -> str:
    """'write "3:2"' for 1.5, the nearest small ratio for 1.33."""
    near = value.limit_denominator(16)
    exact = "" if near == value else " (the nearest ratio of small whole numbers)"
    return f'write "{near.numerator}:{near.denominator}"{exact}: a ratio of whole numbers, downlink:uplink'


def parse_ratio(value) -> Ratio:
    """"2:1" (or 2:1 unquoted) -> 2:1; 2 -> 2:1; reduced to lowest terms (4:2 is 2:1)."""
    if isinstance(value, Ratio):
        return value
    if isinstance(value, bool) or value is None:
        raise _error(f"expected a ratio like \"2:1\" (downlink:uplink), got {value!r}", f"examples: {EXAMPLES}")
    if isinstance(value, int):
        down, up = value, 1
    elif isinstance(value, float):
        if not math.isfinite(value) or value <= 0:
            raise _error(f"expected a ratio like \"2:1\" (downlink:uplink), got {value!r}", f"examples: {EXAMPLES}")
        raise _error(f"a ratio is written as whole numbers down:up, not as the decimal {value!r}",
                     _whole_terms_hint(Fraction(repr(value))))
    elif isinstance(value, str) and (m := _RATIO.match(value)):
        down, up = int(m.group(1)), int(m.group(2))
    elif isinstance(value, str) and (m := _DECIMAL_RATIO.match(value)) and float(m.group(1)) > 0 \
            and (m.group(2) is None or float(m.group(2)) > 0):
        wanted = Fraction(m.group(1)) / Fraction(m.group(2) or 1)
        raise _error(f"a ratio is written as whole numbers down:up, not {value!r}", _whole_terms_hint(wanted))
    else:
        raise _error(f"expected a ratio like \"2:1\" (downlink:uplink), got {value!r}", f"examples: {EXAMPLES}")
    if down < 1 or up < 1:
        raise _error(f"ratio {down}:{up}: both sides must be at least 1 (downlink:uplink bandwidth)",
                     f"examples: {EXAMPLES}")
    if max(down, up) > MAX_RATIO_TERM:
        raise _error(f"ratio {down}:{up}: a side larger than {MAX_RATIO_TERM} cannot be built (no switch has that many ports)",
                     f"examples: {EXAMPLES}")
    g = math.gcd(down, up)
    return Ratio(down=down // g, up=up // g)
