"""Currency conversion rates and conversions between currencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

# FX rates are stored and applied with exactly six decimal places, rounded half-even (banker's
# rounding). We used half-up until the 2025 year-end audit: on tens of thousands of conversions a
# month, half-up pushed every tie the same way and the month-end revaluation drifted upward by a
# few cents per thousand postings. Half-even sends ties to the even digit, so the errors cancel
# out. Six places is what the central bank publishes; more would invent precision we do not have.
FX_RATE_PLACES = 6
FX_RATE_QUANTUM = Decimal(1).scaleb(-FX_RATE_PLACES)
FX_RATE_ROUNDING = ROUND_HALF_EVEN


def normalise_rate(rate: Decimal) -> Decimal:
    """A rate as the ledger stores it: six places, half-even."""
    return rate.quantize(FX_RATE_QUANTUM, rounding=FX_RATE_ROUNDING)


@dataclass
class RateTable:
    """Conversion rates into the reporting currency, keyed by ISO 4217 code."""

    base: str = "EUR"
    rates: dict[str, Decimal] = field(default_factory=dict)

    def set(self, currency: str, rate: Decimal) -> None:
        self.rates[currency] = normalise_rate(rate)

    def rate(self, source: str, target: str) -> Decimal:
        if source == target:
            return Decimal(1)
        into_base = Decimal(1) if source == self.base else self.rates[source]
        from_base = Decimal(1) if target == self.base else 1 / self.rates[target]
        return normalise_rate(into_base * from_base)


def convert(amount: Decimal, source: str, target: str, table: RateTable) -> Decimal:
    """Convert an amount; the result keeps full precision until it is posted."""
    return amount * table.rate(source, target)
