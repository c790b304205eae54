"""Money amounts in cents, and splitting a total into parts that add up to it exactly."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def to_cents(amount: Decimal) -> Decimal:
    """An amount as posted: whole cents, ties away from zero as the payment schemes expect."""
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def allocate(total: Decimal, parts: int) -> list[Decimal]:
    """Split ``total`` into ``parts`` amounts in whole cents that add up to it exactly."""
    if parts < 1:
        raise ValueError("parts must be at least 1")
    cents = int(to_cents(total) / CENT)
    quotient, leftover = divmod(cents, parts)
    # The first ``leftover`` parts carry one extra cent each, so no part differs by more than one.
    return [CENT * (quotient + (1 if i < leftover else 0)) for i in range(parts)]
