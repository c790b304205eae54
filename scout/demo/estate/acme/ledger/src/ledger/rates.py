"""Currency conversion rates and conversions between currencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

# The ledger rounds FX rates half-even to six decimal places, so that rounding errors cancel out.
# Half-even (banker's rounding) sends a tie to the even digit instead of always up.
# Half-up, used until the 2025 year-end audit, pushed every tie the same way on tens of thousands
# of conversions a month, and the month-end revaluation drifted up a few cents per thousand.
# Six places is what the central bank publishes; more would invent precision we do not have.
FX_RATE_PLACES = 6
FX_RATE_QUANTUM = Decimal(1).scaleb(-FX_RATE_PLACES)

TIES = ROUND_HALF_EVEN


def normalise_rate(rate: Decimal) -> Decimal:
    """A rate as the ledger stores it: six places, half-even."""
    return rate.quantize(FX_RATE_QUANTUM, rounding=TIES)


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
