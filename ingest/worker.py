"""``scout worker``: index and sweep on ``ingest.schedule`` until SIGTERM or SIGINT.

The worker owns its cycle: :func:`run_cycle` opens its own forge and store, indexes, sweeps, and
closes both, so no connection or git reader ever crosses from one scheduler thread to another, and
the CLI only parses options and prints.

APScheduler 3.x's BlockingScheduler runs one cycle at a time (``max_instances=1``), coalesces
missed runs, and the worker logs each cycle's summary or error without dying: a failing GitLab at
03:00 must not need a human to restart the worker at 09:00. On a signal the stop event is set, so
a running sweep finishes its current issue, commits, and returns; the scheduler stops taking new
cycles, and :meth:`Worker.run_forever` returns only once the running cycle has closed its
resources (the scheduler's own ``shutdown`` does not wait when called from a signal handler).
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scout.errors import ScoutError, UsageError
from scout.progress import Progress
from scout.providers import configured_provider
from scout.schedule import parse_schedule

if TYPE_CHECKING:
    from ingest.sweep import SweepSummary
    from scout.config import Config
    from scout.corpus.index import IndexSummary
    from scout.forge.base import Forge
    from scout.store import Store

log = logging.getLogger("scout.worker")

Cycle = Callable[[threading.Event], "CycleResult"]


def trigger_for(schedule: str) -> Any:
    """A cron expression (five fields) or an interval such as ``30m``, ``1s``, ``2h``; the config
    has checked it already (``scout.schedule``)."""
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    try:
        parsed = parse_schedule(schedule)
    except ValueError as exc:
        raise UsageError(f"ingest.schedule {exc}") from None
    if parsed.seconds is not None:
        return IntervalTrigger(seconds=parsed.seconds)
    assert parsed.cron is not None
    minute, hour, day, month, day_of_week = parsed.cron
    return CronTrigger(
        minute=minute, hour=hour, day=day, month=month, day_of_week=day_of_week, timezone="UTC"
    )


def sweep_once(
    config: Config,
    forge: Forge,
    store: Store,
    *,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
) -> SweepSummary:
    """One sweep under the store's sweep lock (LockedError when another one holds it)."""
    from ingest.lock import sweep_lock
    from ingest.sweep import Sweep

    with sweep_lock(store.path):
        provider = configured_provider(config)
        kwargs: dict[str, Any] = {} if progress is None else {"progress": progress}
        return Sweep(config, forge, store, provider, stop=stop, **kwargs).run()


def run_cycle(
    config: Config, stop: threading.Event, progress: Progress | None = None
) -> CycleResult:
    """One worker cycle with its own forge and store: re-index moved projects, then sweep."""
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules
    from scout.forge import open_forge
    from scout.store import Store

    forge = open_forge(config)
    try:
        store = Store.open(config.store.path, create=True)
        try:
            rules = CorpusRules(tuple(config.forge.groups), config.corpus)
            kwargs: dict[str, Any] = {} if progress is None else {"progress": progress}
            indexed = index_estate(forge, store, rules, **kwargs)
            swept = sweep_once(config, forge, store, stop=stop, progress=progress)
            return CycleResult(indexed, swept)
        finally:
            store.close()
    finally:
        forge.close()


@dataclass(frozen=True)
class CycleResult:
    """What one worker cycle did: the index run, then the sweep."""

    index: IndexSummary
    sweep: SweepSummary

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index.to_json(), "sweep": self.sweep.to_json()}

    def describe(self) -> str:
        """Two readable lines (index, then sweep), never a JSON blob."""
        return f"index: {self.index.describe()}\nsweep: {self.sweep.describe()}"


class _NoOverlapNoise(logging.Filter):
    """A run that falls due while the previous cycle still runs is skipped by design
    (``max_instances=1``); APScheduler warns about each one, every second on a short interval."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "maximum number of running instances reached" not in record.getMessage()


def quiet_scheduler_logs() -> None:
    """APScheduler logs every job start and success at INFO, including after a failed cycle
    (the cycle catches its own errors, so to the scheduler every run "executed successfully"):
    keep only its warnings that need an operator, such as a missed run."""
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    scheduler_log = logging.getLogger("apscheduler.scheduler")
    if not any(isinstance(f, _NoOverlapNoise) for f in scheduler_log.filters):
        scheduler_log.addFilter(_NoOverlapNoise())


class Worker:
    """Runs ``cycle`` on a schedule; ``cycle(stop)`` returns what the cycle did."""

    def __init__(self, schedule: str, cycle: Cycle) -> None:
        self.schedule = schedule
        self.trigger = trigger_for(schedule)
        self.cycle = cycle
        self.stop = threading.Event()
        self.cycles = 0
        self.failures = 0
        # Held while a cycle runs, so run_forever can wait for it after the scheduler returns.
        self._busy = threading.Lock()

    @classmethod
    def for_config(cls, config: Config, progress: Callable[[], Progress] | None = None) -> Worker:
        """A worker running :func:`run_cycle`; ``progress`` makes each cycle's display."""

        def cycle(stop: threading.Event) -> CycleResult:
            return run_cycle(config, stop, progress() if progress else None)

        return cls(config.ingest.schedule, cycle)

    def next_run(self) -> datetime | None:
        fire: datetime | None = self.trigger.get_next_fire_time(None, datetime.now(UTC))
        return fire

    def run_once(self) -> CycleResult | None:
        """One cycle; an error is logged and the worker carries on (returns None)."""
        with self._busy:
            if self.stop.is_set():
                return None
            number = self.cycles + 1
            started = time.monotonic()
            try:
                summary = self.cycle(self.stop)
            except ScoutError as exc:
                self.failures += 1
                log.error("cycle %d failed: %s", number, exc)
                return None
            except Exception:
                self.failures += 1
                log.exception("cycle %d failed unexpectedly", number)
                return None
            finally:
                self.cycles += 1
            took = time.monotonic() - started
            stopped = " (stopped early by a signal)" if self.stop.is_set() else ""
            log.info("cycle %d done in %.1fs%s\n%s", number, took, stopped, summary.describe())
            return summary

    def _log_next(self) -> None:
        if self.stop.is_set():
            return
        upcoming = self.next_run()
        if upcoming is not None:
            log.info("next cycle at %s", upcoming.strftime("%Y-%m-%dT%H:%M:%SZ"))

    def _scheduled(self) -> None:
        self.run_once()
        self._log_next()

    def run_forever(self) -> None:
        from apscheduler.schedulers.blocking import BlockingScheduler

        quiet_scheduler_logs()
        scheduler = BlockingScheduler(timezone="UTC")
        scheduler.add_job(
            self._scheduled,
            self.trigger,
            id="cycle",
            max_instances=1,
            coalesce=True,
            misfire_grace_time=60,
        )

        def _stop(signum: int, _frame: object) -> None:
            if self.stop.is_set():
                return
            name = signal.Signals(signum).name
            log.info("%s: finishing the current issue, then stopping", name)
            self.stop.set()
            scheduler.shutdown(wait=False)

        previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            log.info("worker started: schedule %r", self.schedule)
            self._log_next()
            scheduler.start()
            # start() returns as soon as shutdown is requested, while a cycle may still run on
            # the scheduler's thread: wait until it has committed and closed what it opened.
            with self._busy:
                pass
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        log.info("worker stopped after %d cycle(s)", self.cycles)
