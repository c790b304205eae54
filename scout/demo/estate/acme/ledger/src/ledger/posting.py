"""Journal entries and the checks an entry passes before it is posted."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal


class UnbalancedEntry(ValueError):
    """Raised when an entry's debits and credits differ in some currency."""


@dataclass(frozen=True)
class JournalLine:
    account: str
    amount: Decimal
    currency: str
    side: str  # "debit" or "credit"


def check_balanced(lines: list[JournalLine]) -> None:
    """Raise UnbalancedEntry unless debits equal credits in every currency."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for line in lines:
        totals[line.currency] += line.amount if line.side == "debit" else -line.amount
    unbalanced = sorted(currency for currency, total in totals.items() if total != 0)
    if unbalanced:
        raise UnbalancedEntry(f"entry does not balance in {', '.join(unbalanced)}")


def post(request_id: str, lines: list[JournalLine]) -> dict[str, object]:
    """Check an entry and return the record the caller stores."""
    if not lines:
        raise UnbalancedEntry("an entry needs at least two lines")
    check_balanced(lines)
    return {"request_id": request_id, "lines": lines}


def export_csv(entries: list[dict[str, object]]) -> str:
    """Journal entries as CSV, one row per line, for the month-end reporting jobs."""
    rows = ["request_id,account,side,amount,currency"]
    for entry in entries:
        for line in entry["lines"]:  # type: ignore[attr-defined]
            rows.append(
                f"{entry['request_id']},{line.account},{line.side},{line.amount},{line.currency}"
            )
    return "\n".join(rows) + "\n"
