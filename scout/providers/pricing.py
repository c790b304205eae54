"""US dollar prices of Anthropic models, for the cost the Messages API does not report itself.

The ``claude`` CLI reports what a call cost (``total_cost_usd``); the Messages API reports only
tokens, so the anthropic provider prices them from this table. Prices change: the table carries the
date it was taken from Anthropic's published price list, and a model it does not know is priced as
unknown (``None``), never guessed.
"""

from __future__ import annotations

PRICES_AS_OF = "2025-11-24"

# US dollars per million tokens: (input, output). Cache writes cost 1.25 times the input price and
# cache reads 0.1 times (five-minute cache), per the same price list.
PER_MILLION: dict[str, tuple[float, float]] = {
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
}
CACHE_WRITE, CACHE_READ = 1.25, 0.1


def price(model: str) -> tuple[float, float] | None:
    """The (input, output) price of ``model``; dated ids (``claude-haiku-4-5-20251001``) and
    aliases match their family by the longest known prefix."""
    known = [name for name in PER_MILLION if model == name or model.startswith(name + "-")]
    return PER_MILLION[max(known, key=len)] if known else None


def cost(
    model: str,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
) -> float | None:
    """What the tokens of one call cost in US dollars, or None for a model without a price."""
    known = price(model)
    if known is None:
        return None
    per_input, per_output = known
    dollars = (
        input_tokens * per_input
        + cache_write_tokens * per_input * CACHE_WRITE
        + cache_read_tokens * per_input * CACHE_READ
        + output_tokens * per_output
    )
    return dollars / 1_000_000
