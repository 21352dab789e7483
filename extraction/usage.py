"""Token usage and its cost estimate. Pure.

``Usage`` adds up the ``usage`` objects of Messages API responses (input, output,
cache write, cache read tokens). ``cost_usd`` prices them with list prices per
million tokens (USD, standard tier; cache writes at the 5-minute rate, 1.25x
input; cache reads 0.1x input; Message Batches at half price). Prices change:
this is an estimate for dashboards, not an invoice. Unknown models are priced
like Sonnet.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

# model-name prefix -> (input, output) USD per million tokens; the longest matching prefix wins. From the
# model pages on platform.claude.com (November 2026); Haiku 5.5 is listed "from" its price.
PRICES: dict[str, tuple[str, str]] = {
    "claude-fable-5": ("10", "50"),
    "claude-opus-5-5": ("4", "20"),
    "claude-opus-5": ("5", "25"),
    "claude-opus-4-8": ("5", "25"),
    "claude-opus-4-7": ("5", "25"),
    "claude-opus-4-6": ("5", "25"),
    "claude-opus-4-5": ("5", "25"),
    "claude-opus-4-1": ("15", "75"),
    "claude-opus-4": ("15", "75"),
    "claude-sonnet-5": ("2", "10"),
    "claude-sonnet-4": ("3", "15"),
    "claude-3-7-sonnet": ("3", "15"),
    "claude-haiku-5-5": ("0.1", "0.5"),
    "claude-haiku-4": ("1", "5"),
    "claude-3-5-haiku": ("0.8", "4"),
    "claude-3-haiku": ("0.25", "1.25"),
}
DEFAULT_PRICE = ("3", "15")
CACHE_WRITE_FACTOR = Decimal("1.25")
CACHE_READ_FACTOR = Decimal("0.1")
BATCH_FACTOR = Decimal("0.5")
_MILLION = Decimal(1_000_000)
log = logging.getLogger(__name__)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    requests: int = 0

    def add(self, usage: Any) -> Usage:
        """Add one response's ``usage`` (an SDK object or a dict); returns self."""
        get = usage.get if isinstance(usage, Mapping) else lambda k, d=0: getattr(usage, k, d)
        self.input_tokens += int(get("input_tokens", 0) or 0)
        self.output_tokens += int(get("output_tokens", 0) or 0)
        self.cache_write_tokens += int(get("cache_creation_input_tokens", 0) or 0)
        self.cache_read_tokens += int(get("cache_read_input_tokens", 0) or 0)
        self.requests += 1
        return self

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.requests + other.requests,
        )

    def as_dict(self) -> dict:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "requests": self.requests,
        }


def price_for(model: str) -> tuple[Decimal, Decimal]:
    """(input, output) USD per million tokens for ``model`` (longest matching prefix)."""
    best = max((p for p in PRICES if model.startswith(p)), key=len, default=None)
    if best is None:
        log.warning("no price on file for model %r: priced like Sonnet ($3/$15 per million tokens)", model)
    inp, out = PRICES[best] if best else DEFAULT_PRICE
    return Decimal(inp), Decimal(out)


def cost_usd(usage: Usage, model: str, *, batch: bool = False) -> Decimal:
    """Estimated cost in USD, rounded to 6 decimals."""
    inp, out = price_for(model)
    total = (
        Decimal(usage.input_tokens) * inp
        + Decimal(usage.cache_write_tokens) * inp * CACHE_WRITE_FACTOR
        + Decimal(usage.cache_read_tokens) * inp * CACHE_READ_FACTOR
        + Decimal(usage.output_tokens) * out
    ) / _MILLION
    if batch:
        total *= BATCH_FACTOR
    return total.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
