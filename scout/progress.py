"""What long-running work reports while it runs: phases with counts, notes, and waits.

The core (index, sweep, answer) reports through a :class:`Progress`; it never knows whether a
person is watching. The base class does nothing, so callers that do not care pass nothing. The CLI
chooses the rendering (``scout.cli.progress``): an updating line per phase on a terminal, a log
line every few seconds elsewhere, nothing with ``--quiet``.

Phases are named by what is counted: ``projects``, ``files``, ``issues``, ``references``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Progress:
    """Reports nothing; subclasses render. Calls may come from worker threads."""

    def phase(self, name: str, total: int | None = None) -> None:
        """``name`` starts (or learns its total)."""

    def advance(self, name: str, done: int = 1) -> None:
        """``done`` more units of ``name`` are finished."""

    def note(self, message: str) -> None:
        """One event worth a line of its own (a project removed, a retry)."""

    @contextmanager
    def waiting(self, what: str) -> Iterator[None]:
        """Something slow and uncountable is running, such as a model composing an answer."""
        yield

    def close(self) -> None:
        """The work is over: finish the display."""

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __call__(self, message: str) -> None:
        # the older hook was a plain function taking one message
        self.note(message)


class _Notes(Progress):
    def __init__(self, sink: Callable[[str], None]) -> None:
        self.sink = sink

    def note(self, message: str) -> None:
        self.sink(message)


def as_progress(hook: Progress | Callable[[str], None] | None) -> Progress:
    """A Progress for any hook callers pass: a Progress, a one-message function, or None."""
    if hook is None:
        return Progress()
    if isinstance(hook, Progress):
        return hook
    return _Notes(hook)
