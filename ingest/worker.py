"""``scout worker``: index and sweep on ``ingest.schedule`` until SIGTERM or SIGINT.

APScheduler 3.x's BlockingScheduler runs one cycle at a time (``max_instances=1``), coalesces
missed runs, and logs each cycle's summary or error without dying: a failing GitLab at 03:00 must
not need a human to restart the worker at 09:00. On a signal the stop event is set, so a running
sweep finishes its current issue, commits, and returns; the scheduler then shuts down.
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from collections.abc import Callable
from typing import Any

from scout.errors import ScoutError, UsageError
from scout.schedule import parse_schedule

log = logging.getLogger("scout.worker")


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


class Worker:
    """Runs ``cycle`` on a schedule; ``cycle(stop)`` returns a JSON-able summary."""

    def __init__(self, schedule: str, cycle: Callable[[threading.Event], dict[str, Any]]) -> None:
        self.trigger = trigger_for(schedule)
        self.cycle = cycle
        self.stop = threading.Event()
        self.cycles = 0

    def run_once(self) -> dict[str, Any] | None:
        """One cycle; an error is logged and the worker carries on (returns None)."""
        try:
            summary = self.cycle(self.stop)
        except ScoutError as exc:
            log.error("cycle failed: %s", exc)
            return None
        except Exception:
            log.exception("cycle failed unexpectedly")
            return None
        finally:
            self.cycles += 1
        log.info("cycle done: %s", json.dumps(summary, default=str))
        return summary

    def run_forever(self) -> None:
        from apscheduler.schedulers.blocking import BlockingScheduler

        scheduler = BlockingScheduler(timezone="UTC")
        scheduler.add_job(
            self.run_once,
            self.trigger,
            id="cycle",
            max_instances=1,
            coalesce=True,
            misfire_grace_time=60,
        )

        def _stop(signum: int, _frame: object) -> None:
            log.info("signal %d: finishing the current issue, then stopping", signum)
            self.stop.set()
            scheduler.shutdown(wait=False)

        previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            scheduler.start()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
