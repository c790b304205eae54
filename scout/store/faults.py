"""What a failing SQLite call means to an operator, and the connection that says so.

Main rule: no sqlite3 exception leaves the store. Every statement runs through ``Guarded``, which
turns SQLite's own result codes into the error an operator can act on, naming the file:

- SQLITE_BUSY past the busy timeout: ``StoreBusy`` (exit 7), naming the process that holds the
  write lock when the kernel's lock table (``/proc/locks``) shows it;
- SQLITE_FULL, ENOSPC, and an I/O error on a device with next to no space left: ``StoreFull``
  (exit 4), "no space left on the device of PATH"; the failing transaction is rolled back;
- SQLITE_CORRUPT and SQLITE_NOTADB: ``StoreDamaged`` (exit 4), naming the file and the way back.

A damaged page may be met long after the file opened (a search that reaches it, a question-log
write), so the translation is on every statement and on every row fetched, not only at open.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from scout.errors import StoreBusy, StoreDamaged, StoreError, StoreFull

# SQLite's primary result codes (sqlite3.h); an extended code keeps its primary in the low byte.
_BUSY, _LOCKED, _IOERR, _CORRUPT, _FULL, _NOTADB = 5, 6, 10, 11, 13, 26
# SQLite reports some writes that found no space as I/O errors (growing the -shm file at open,
# SQLITE_IOERR_SHMSIZE): those count as a full disk when the device has less than this free.
_NEARLY_FULL = 256 * 1024
# In WAL mode the writer holds a POSIX lock on byte 120 of the -shm file (WALINDEX_LOCK_OFFSET,
# the first of the eight wal-index locks: WAL_WRITE_LOCK), for as long as its transaction lasts.
_WAL_WRITE_BYTE = 120
_PROC_LOCKS = Path("/proc/locks")

DAMAGED_HELP = (
    'restore the last backup (README, "Operating": stop the worker, copy the backup over the '
    "file), or rebuild it with `scout index --rebuild` and then `scout sweep` (a rebuilt store "
    "has no question log or verdict history)"
)


def _primary(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


def store_fault(exc: BaseException, path: Path, busy_timeout: float) -> StoreError | None:
    """The StoreError ``exc`` stands for, or None when it is none of busy, full or damaged."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return full(path)
    if not isinstance(exc, sqlite3.Error):
        return None
    code = _primary(exc)
    text = str(exc)
    if code == _NOTADB or "not a database" in text:
        return StoreDamaged(
            f"store {path} is damaged or not a Scout store ({text}): check [store] path, then "
            f"{DAMAGED_HELP}"
        )
    if code == _CORRUPT or "malformed" in text:
        return StoreDamaged(f"store {path} is damaged ({text}): {DAMAGED_HELP}")
    if code == _FULL or "disk is full" in text or (code == _IOERR and _device_full(path)):
        return full(path)
    if code in (_BUSY, _LOCKED) or "database is locked" in text:
        return StoreBusy(
            f"store {path} is busy: {lock_holder(path)} held its write lock for longer than "
            f"the busy timeout ({busy_timeout:g} s); try again when it is done, or raise "
            "[store] busy_timeout"
        )
    return None


def _device_full(path: Path) -> bool:
    try:
        st = os.statvfs(Path(path).parent)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < _NEARLY_FULL


def full(path: Path) -> StoreFull:
    return StoreFull(
        f"no space left on the device of {path}: the write was rolled back and the store is as "
        "it was before it; free some space (`df -h` on that folder) and run the command again"
    )


def translated(exc: BaseException, path: Path, busy_timeout: float) -> BaseException:
    """``exc`` as the StoreError it stands for, else unchanged (a bug, shown as one)."""
    return store_fault(exc, path, busy_timeout) or exc


def lock_holder(path: Path) -> str:
    """Who holds the store's write lock, as the kernel's lock table shows it: ``pid N (cmd)``."""
    try:
        table = _PROC_LOCKS.read_text(encoding="ascii", errors="replace")
    except OSError:
        return "another process"
    keys = {}
    for name, wal in ((Path(f"{path}-shm"), True), (Path(path), False)):
        try:
            st = os.stat(name)
        except OSError:
            continue
        keys[f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"] = wal
    for line in table.splitlines():
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 14060 fe:00:2188225 120 120" (a waiter's line has "->")
        if len(fields) < 8 or fields[3] != "WRITE" or fields[5] not in keys:
            continue
        if keys[fields[5]] and fields[6] != str(_WAL_WRITE_BYTE):
            continue
        return _describe_pid(fields[4])
    return "another process"


def _describe_pid(pid: str) -> str:
    if pid == str(os.getpid()):
        return f"pid {pid} (this process, another connection)"
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()[:300]
    except OSError:
        return f"pid {pid}"
    words = [w.decode(errors="replace") for w in raw.split(b"\0") if w]
    # `python -m scout ...` and `.venv/bin/scout ...` alike read as the command line's tail
    command = " ".join(Path(words[0]).name if i == 0 else w for i, w in enumerate(words[:6]))
    return f"pid {pid} ({command})" if command else f"pid {pid}"


class GuardedCursor:
    """A cursor whose fetches translate faults too (a damaged page is met while rows are read)."""

    def __init__(self, cursor: sqlite3.Cursor, guard: Callable[[BaseException], BaseException]):
        self._cursor = cursor
        self._guard = guard

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount

    @property
    def lastrowid(self) -> int | None:
        return self._cursor.lastrowid

    def fetchone(self) -> Any:
        try:
            return self._cursor.fetchone()
        except (sqlite3.Error, OSError) as exc:
            raise self._guard(exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return self._cursor.fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise self._guard(exc) from exc

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


class Guarded:
    """The store's connection: the few calls the store makes, each translating its faults."""

    def __init__(self, conn: sqlite3.Connection, path: Path, busy_timeout: float) -> None:
        self.raw = conn
        self.path = path
        self.busy_timeout = busy_timeout

    def guard(self, exc: BaseException) -> BaseException:
        return translated(exc, self.path, self.busy_timeout)

    @property
    def in_transaction(self) -> bool:
        return self.raw.in_transaction

    def execute(self, sql: str, args: Sequence[Any] = ()) -> GuardedCursor:
        try:
            return GuardedCursor(self.raw.execute(sql, args), self.guard)
        except (sqlite3.Error, OSError) as exc:
            raise self.guard(exc) from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            self.raw.executemany(sql, rows)
        except (sqlite3.Error, OSError) as exc:
            raise self.guard(exc) from exc

    @property
    def total_changes(self) -> int:
        """Rows this connection changed since it opened."""
        return self.raw.total_changes

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        self.raw.set_trace_callback(callback)

    def close(self) -> None:
        self.raw.close()
