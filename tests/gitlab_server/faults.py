"""Injectable faults: which request gets which failure, decided before routing.

A fault fires on requests whose raw request target (the percent-encoded path with its query, as
sent, e.g. ``/api/v4/groups/1/projects?page=2``) matches its regex (``re.search``), either for
its next ``times`` matching requests (``None``: every one) or, with ``probability``, on a draw
from the server's seeded RNG, so a fault schedule is reproducible for a seed and request order.
"""

from __future__ import annotations

import random
import re
import threading
from dataclasses import dataclass

KINDS = (
    "429",
    "bare429",
    "500",
    "502",
    "503",
    "drop",
    "slow",
    "truncate",
    "refuse_archive",
    "redirect",
)
_ARCHIVE = re.compile(r"/repository/archive")


@dataclass
class Fault:
    kind: str
    remaining: int | None  # None: unlimited
    match: re.Pattern[str] | None
    retry_after: float | None
    probability: float | None
    delay: float
    status: int
    location: str | None = None


class FaultBook:
    """The pending faults of one server, consumed by matching requests in injection order."""

    def __init__(self, seed: int):
        self._seed = seed
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(
        self,
        kind: str,
        *,
        times: int | None,
        match: str | None,
        retry_after: float | None,
        probability: float | None,
        delay: float,
        status: int | None,
        location: str | None = None,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown fault {kind!r}; expected one of {', '.join(KINDS)}")
        if probability is not None and not 0.0 <= probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        default_status = {"refuse_archive": 403, "bare429": 429, "redirect": 302}.get(
            kind, int(kind) if kind.isdigit() else 0
        )
        fault = Fault(
            kind=kind,
            remaining=None if probability is not None else times,
            match=re.compile(match) if match is not None else None,
            retry_after=retry_after,
            probability=probability,
            delay=delay,
            status=status or default_status,
            location=location,
        )
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def reset(self) -> None:
        """No faults, and the draws of ``probability`` faults start again from the seed."""
        with self._lock:
            self._faults.clear()
            self._rng = random.Random(self._seed)

    def take(self, target: str) -> Fault | None:
        """The fault this request (raw path and query) suffers, if any; uses up one of its times."""
        path = target.split("?", 1)[0]
        with self._lock:
            for fault in self._faults:
                if fault.kind == "refuse_archive" and not _ARCHIVE.search(path):
                    continue
                if fault.match is not None and not fault.match.search(target):
                    continue
                if fault.probability is not None:
                    if self._rng.random() < fault.probability:
                        return fault
                    continue
                if fault.remaining is not None:
                    if fault.remaining <= 0:
                        continue
                    fault.remaining -= 1
                return fault
            return None
