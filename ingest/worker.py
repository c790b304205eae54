"""``scout worker``: index and sweep at start and then on ``ingest.schedule``, until a signal.

The worker owns its cycle: :func:`run_cycle` opens its own forge and store, indexes, sweeps, and
closes both, so no connection or git reader ever crosses from one thread to another, and the CLI
only parses options and prints.

Main rule: the worker never needs a human to restart it, and never keeps one waiting. It checks
what it can at start (the config, the token variable: exit 3), then runs cycles one at a time on
a thread of its own, re-reading the config before each (an invalid one is logged, the old one
kept), and logs one line per cycle and per problem, in UTC. A failing GitLab at 03:00 is a logged
cycle failure, not a dead worker. On SIGTERM or SIGINT the stop event is set: indexing stops
before the next file (the project being read keeps its previous passages), a sweep commits its
current issue; if the cycle has not returned within ``STOP_GRACE`` seconds (a slow request) the
worker leaves it, which is safe because every write is one SQLite transaction.

The schedule's times come from APScheduler's cron trigger (``scout.schedule`` explains the
day-of-week mapping); its scheduler is not used: a loop of our own runs the first cycle at once,
coalesces missed runs, and can leave a stuck cycle behind.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from scout.errors import EmbeddingError, ScoutError, StoreDamaged, UsageError
from scout.progress import Progress
from scout.providers import configured_provider
from scout.schedule import parse_schedule
from scout.timefmt import stamp

if TYPE_CHECKING:
    from ingest.sweep import SweepSummary
    from scout.config import Config
    from scout.corpus.index import IndexSummary
    from scout.forge.base import Forge
    from scout.store import Store

log = logging.getLogger("scout.worker")
# Seconds a stopped cycle gets to commit its current issue or project and close; past it the
# worker leaves (systemd's default stop timeout is 90 s, but an operator expects a few seconds).
# Leaving is safe at any point: every write is one SQLite transaction, whole or not at all.
STOP_GRACE = 4.0


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
        summary = Sweep(config, forge, store, provider, stop=stop, **kwargs).run()
        if not summary.stopped:
            _embed(config, store, summary, stop, progress)
        return summary


def _embed(
    config: Config,
    store: Store,
    summary: SweepSummary,
    stop: threading.Event | None,
    progress: Progress | None,
) -> None:
    """Embed what indexing and the sweep wrote without a vector (``[retrieval.embeddings]``):
    the corpus's passages and the signposted targets' alike. A failing model is recorded in
    the summary, not raised: the sweep's work is committed either way."""
    from scout.embeddings.indexing import embed_configured

    try:
        embedded = embed_configured(config, store, progress=progress, stop=stop)
    except EmbeddingError as exc:
        summary.embeddings_error = str(exc)
        return
    summary.embeddings = None if embedded is None else embedded.to_json()


def run_cycle(
    config: Config, stop: threading.Event, progress: Progress | None = None
) -> CycleResult:
    """One worker cycle with its own forge and store: re-index moved projects, judge again what
    a change of corpus rules withdrew, then sweep. A stop during indexing ends the cycle there
    (the project being read keeps its previous passages); the sweep is then left for next time."""
    from ingest.recheck import rejudge_rule_withdrawals
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules
    from scout.forge import open_forge
    from scout.store import Store

    forge = open_forge(config)
    try:
        store = Store.open(config.store.path, create=True, busy_timeout=config.store.busy_timeout)
        try:
            rules = CorpusRules(tuple(config.forge.groups), config.corpus)
            kwargs: dict[str, Any] = {} if progress is None else {"progress": progress}
            indexed = index_estate(
                forge, store, rules, docs_sites=config.docs_site, stop=stop, **kwargs
            )
            if indexed.stopped:
                return CycleResult(indexed, None)
            indexed.signposts_reinstated = rejudge_rule_withdrawals(config, forge, store)
            swept = sweep_once(config, forge, store, stop=stop, progress=progress)
            return CycleResult(indexed, swept)
        finally:
            store.close()
    finally:
        forge.close()


@dataclass(frozen=True)
class CycleResult:
    """What one worker cycle did: the index run, then the sweep (None: stopped before it)."""

    index: IndexSummary
    sweep: SweepSummary | None

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index.to_json(),
            "sweep": None if self.sweep is None else self.sweep.to_json(),
        }

    def describe(self) -> str:
        """Two readable lines (index, then sweep), never a JSON blob."""
        sweep = "not run (stopped)" if self.sweep is None else self.sweep.describe()
        return f"index: {self.index.describe()}\nsweep: {sweep}"

    def line(self) -> str:
        """The same on one line, for the worker's log: one line per cycle."""
        return "; ".join(part.strip() for part in self.describe().splitlines() if part.strip())


class Worker:
    """Runs ``cycle`` at start (unless told to wait) and then on the schedule, one at a time.

    ``load`` re-reads the config before each cycle: a config that became invalid is one error
    line, and the worker goes on with the one it had. ``cycle(config, stop)`` returns what the
    cycle did; it runs on a thread of its own, so the main thread stays free to take a signal
    and to leave a cycle that does not stop in time (``STOP_GRACE``).
    """

    def __init__(
        self,
        config: Config,
        cycle: Callable[[Config, threading.Event], CycleResult],
        load: Callable[[], Config] | None = None,
    ) -> None:
        self.config = config
        self.trigger = trigger_for(config.ingest.schedule)
        self.cycle = cycle
        self.load = load
        self.stop = threading.Event()
        self.stopped_by: str | None = None  # the signal that set ``stop``, if one did
        self.said_stopping = False
        self.cycles = 0
        self.failures = 0
        self.left_running = False  # a cycle was still running when the worker had to go
        self.fatal: StoreDamaged | None = None  # what stopped the worker, if not a signal

    @classmethod
    def for_config(
        cls,
        config: Config,
        progress: Callable[[], Progress] | None = None,
        load: Callable[[], Config] | None = None,
    ) -> Worker:
        """A worker running :func:`run_cycle`; ``progress`` makes each cycle's display.

        Refuses to start (ConfigError, exit 3) when the forge's token variable is unset: a worker
        that starts without it would fail every cycle, forever, with nobody watching.
        """
        from scout.forge import forge_token

        forge_token(config)

        def cycle(current: Config, stop: threading.Event) -> CycleResult:
            return run_cycle(current, stop, progress() if progress else None)

        return cls(config, cycle, load)

    @property
    def schedule(self) -> str:
        return self.config.ingest.schedule

    def next_run(self, after: datetime | None = None) -> datetime:
        """When the next cycle is due: the schedule's next time after ``after`` (default now);
        an interval counts from the start of the last cycle, and a missed one runs at once."""
        now = datetime.now(UTC)
        seconds = parse_schedule(self.schedule).seconds
        if seconds is not None:
            due = (after or now) + timedelta(seconds=seconds)
            return max(due, now)
        fire: datetime | None = self.trigger.get_next_fire_time(None, now)
        return fire or now + timedelta(days=1)

    def reload(self) -> None:
        """The config as it is on disk now; an invalid one is logged and the old one kept."""
        if self.load is None:
            return
        try:
            fresh = self.load()
            from scout.forge import forge_token

            forge_token(fresh)
            trigger = trigger_for(fresh.ingest.schedule)
        except ScoutError as exc:
            log.error("config not reloaded, the previous one is kept: %s", exc)
            return
        if fresh != self.config:
            log.info("config reloaded from %s", fresh.source)
        self.config, self.trigger = fresh, trigger

    def run_once(self) -> CycleResult | None:
        """One cycle on this thread; an error is logged and the worker carries on (None)."""
        if self.stop.is_set():
            return None
        number = self.cycles + 1
        started = time.monotonic()
        try:
            summary = self.cycle(self.config, self.stop)
        except StoreDamaged as exc:
            # the one failure no later cycle can get past: stop, and exit 4 saying what to do
            self.failures += 1
            self.fatal = exc
            log.error("cycle %d failed, the worker stops: %s", number, exc)
            self.stop.set()
            return None
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
        if summary.index.config_problem is not None:
            # (a project that could not be read has had its own line from the index)
            log.warning("cycle %d: %s", number, summary.index.config_problem)
        stopped = " (stopped early by a signal)" if self.stop.is_set() else ""
        log.info("cycle %d done in %.1fs%s: %s", number, took, stopped, summary.line())
        return summary

    def _run_cycle_thread(self) -> bool:
        """Run one cycle on its own thread and wait for it; False when a stop left it running."""
        thread = threading.Thread(target=self.run_once, name="scout-cycle", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(0.2)
            if self.stop.is_set():
                self._say_stopping()
                thread.join(STOP_GRACE)
                if thread.is_alive():
                    self.left_running = True
                    log.warning(
                        "the cycle did not stop within %.0fs: leaving it; everything it "
                        "committed is kept, and the next run carries on from there",
                        STOP_GRACE,
                    )
                    return False
        return True

    def _wait_until(self, due: datetime) -> bool:
        """Sleep until ``due`` in short steps (a signal ends the wait); False when stopped."""
        while not self.stop.is_set():
            remaining = (due - datetime.now(UTC)).total_seconds()
            if remaining <= 0:
                return True
            self.stop.wait(min(remaining, 0.5))
        self._say_stopping()
        return False

    def _say_stopping(self) -> None:
        """The line a signal's stop gets, once, from the main thread (see ``run_forever``)."""
        if self.stopped_by is not None and not self.said_stopping:
            self.said_stopping = True
            log.info(
                "%s: stopping; the cycle in progress keeps what it has committed", self.stopped_by
            )

    def run_forever(self, *, wait_first: bool = False) -> None:
        """Cycles until SIGTERM or SIGINT; returns within about STOP_GRACE seconds of either."""

        def _stop(signum: int, _frame: object) -> None:
            # No I/O here: the handler runs between two bytecodes of the main thread, which may
            # be inside a write to stderr. A log line from here was a re-entrant write
            # (RuntimeError on a buffered stderr, as under systemd), raised before the stop was
            # set: the signal was lost and the worker slept on. The main thread says it.
            if not self.stop.is_set():
                self.stopped_by = signal.Signals(signum).name
                self.stop.set()

        previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            due = self.next_run() if wait_first else datetime.now(UTC)
            log.info(
                "worker started: schedule %r; %s",
                self.schedule,
                f"first cycle at {stamp(due)}" if wait_first else "first cycle now",
            )
            while self._wait_until(due):
                started = datetime.now(UTC)
                self.reload()
                if not self._run_cycle_thread():
                    break
                if self.stop.is_set():
                    break
                due = self.next_run(started)
                log.info("next cycle at %s", stamp(due))
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self._say_stopping()
        log.info("worker stopped after %d cycle(s)", self.cycles)
