"""How progress is shown: an updating line per phase on a terminal (rich), a log line every few
seconds elsewhere, nothing with ``--quiet``; a phase whose total is known shows ``done/total`` and
an ETA at the rate so far. Progress and logs go to stderr, never stdout.

rich is imported only when a terminal display actually starts (the first phase or wait), so
commands that finish before showing anything, and every command off a terminal, never pay for it.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from scout.progress import Progress
from scout.safe_text import printable

LOG_EVERY = 5.0  # seconds between progress lines off a terminal


def log(message: str) -> None:
    """A log line on stderr (always): skipped files, retries, reasons."""
    click.echo(printable(message, 2_000), err=True)


def make_progress(quiet: bool, *, sink: Callable[[str], None] | None = None) -> Progress:
    """The right display for where stderr goes; ``sink`` receives off-terminal lines."""
    if quiet:
        return Progress()
    if sys.stderr.isatty():
        return TerminalProgress()
    return LogProgress(sink or log)


def remaining(done: float, total: float | None, seconds: float) -> str:
    """``eta 2m05s`` at the rate so far, when the total is known and something is done."""
    if total is None or done <= 0 or seconds <= 0 or done >= total:
        return ""
    left = round(seconds * (total - done) / done)
    if left >= 3600:
        return f"eta {left // 3600}h{left % 3600 // 60:02d}m"
    if left >= 60:
        return f"eta {left // 60}m{left % 60:02d}s"
    return f"eta {left}s"


def _rate(done: float, seconds: float) -> str:
    rate = done / seconds if seconds > 0 else 0.0
    return f"{rate:.1f}/s" if rate < 100 else f"{rate:.0f}/s"


class LogProgress(Progress):
    """Off a terminal: one line every LOG_EVERY seconds with each phase's count and rate."""

    def __init__(self, sink: Callable[[str], None], every: float = LOG_EVERY) -> None:
        self.sink = sink
        self.every = every
        self.started = time.monotonic()
        self.last = self.started
        self.counts: dict[str, int] = {}
        self.totals: dict[str, int] = {}
        self.lock = threading.Lock()

    def phase(self, name: str, total: int | None = None) -> None:
        with self.lock:
            self.counts.setdefault(name, 0)
            if total is not None:
                self.totals[name] = total

    def advance(self, name: str, done: int = 1) -> None:
        with self.lock:
            self.counts[name] = self.counts.get(name, 0) + done
            now = time.monotonic()
            if now - self.last < self.every:
                return
            self.last = now
            elapsed = now - self.started
            parts = [self._part(n, c, elapsed) for n, c in self.counts.items() if c]
        self.sink(printable(f"progress: {', '.join(parts)}; {elapsed:.0f}s elapsed", 2_000))

    def _part(self, name: str, count: int, elapsed: float) -> str:
        total = self.totals.get(name)
        if total is None:
            return f"{name} {count} ({_rate(count, elapsed)})"
        eta = remaining(count, total, elapsed)
        return f"{name} {count}/{total} ({_rate(count, elapsed)}{', ' + eta if eta else ''})"


class TerminalProgress(Progress):
    """On a terminal: one updating line per phase (count, rate, elapsed) and a spinner while
    a provider works, drawn by rich on stderr and cleared of nothing: the lines stay."""

    def __init__(self) -> None:
        self.display: Any = None
        self.tasks: dict[str, Any] = {}
        self.lock = threading.Lock()

    def _start(self) -> Any:
        if self.display is None:
            from rich.console import Console
            from rich.progress import (
                Progress as RichProgress,
            )
            from rich.progress import (
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.display = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description:<10}"),
                TextColumn("{task.fields[count]:>12}"),
                TextColumn("{task.fields[rate]:>9}"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[eta]}"),
                console=Console(stderr=True),
                transient=False,
            )
            self.display.start()
        return self.display

    def _task(self, name: str, total: int | None = None) -> Any:
        if name not in self.tasks:
            self.tasks[name] = self._start().add_task(name, total=total, count="0", rate="", eta="")
        return self.tasks[name]

    def _refresh(self, name: str) -> None:
        task_id = self.tasks[name]
        task = next(t for t in self.display.tasks if t.id == task_id)
        total = f"/{int(task.total)}" if task.total is not None else ""
        self.display.update(
            task_id,
            count=f"{int(task.completed)}{total}",
            rate=_rate(task.completed, task.elapsed or 0.0),
            eta=remaining(task.completed, task.total, task.elapsed or 0.0),
        )

    def phase(self, name: str, total: int | None = None) -> None:
        with self.lock:
            self._task(name, total)
            if total is not None:
                self.display.update(self.tasks[name], total=total)
            self._refresh(name)

    def advance(self, name: str, done: int = 1) -> None:
        with self.lock:
            self._start().advance(self._task(name), done)
            self._refresh(name)

    def note(self, message: str) -> None:
        with self.lock:
            # rich strips only some control characters: the one terminal-safe path first
            self._start().console.print(printable(message, 2_000), markup=False, highlight=False)

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        with self.lock:
            task_id = self._start().add_task(printable(what), total=None, count="", rate="", eta="")
        try:
            yield
        finally:
            with self.lock:
                self.display.remove_task(task_id)

    def close(self) -> None:
        with self.lock:
            if self.display is not None:
                self.display.stop()
                self.display = None
                self.tasks.clear()
