"""The Acme ledger: balanced journal entries, currency conversion and money splitting."""

from ledger.posting import JournalLine, UnbalancedEntry, post
from ledger.rates import RateTable, convert
from ledger.rounding import allocate, to_cents

__all__ = ["JournalLine", "RateTable", "UnbalancedEntry", "allocate", "convert", "post", "to_cents"]
