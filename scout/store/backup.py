"""Whole-file operations on the store: ``scout backup`` and ``scout index --rebuild``.

Main rule: the file at a target path is always a whole, checked store or what was there before.
``scout backup`` makes an online, consistent copy.
The copy is made beside the target under a temporary name with SQLite's backup API in one step
(a write by another connection would restart a stepwise copy, sqlite3_backup_step; one step under
the source's read snapshot copies one committed state while writers go on in WAL mode), checked
with ``pragma quick_check``, synced, and only then renamed over the target.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from scout.errors import StoreDamaged, StoreError, StoreFull
from scout.store.faults import DAMAGED_HELP, Guarded, store_fault


def copy_store(db: Guarded, target: Path) -> int:
    """Copy the store behind ``db`` to ``target``; the copy's size in bytes."""
    target = Path(target).absolute()
    if target.exists() and target.resolve() == Path(db.path).resolve():
        raise StoreError(f"{target} is the store itself: back it up to another path")
    if target.is_dir():
        raise StoreError(f"{target} is a folder: name the backup file, such as {target}/scout.db")
    partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
    try:
        dest = sqlite3.connect(partial, isolation_level=None)
        try:
            db.raw.backup(dest, pages=-1)
            verdict = dest.execute("pragma quick_check").fetchone()[0]
            if verdict != "ok":
                raise StoreDamaged(
                    f"store {db.path} is damaged (quick_check: {str(verdict)[:200]}); no backup "
                    f"was written: {DAMAGED_HELP}"
                )
            # the copy is read later without its source: a rollback journal, not a WAL beside it
            dest.execute("pragma journal_mode = delete")
        finally:
            dest.close()
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(partial, target)
    except (sqlite3.Error, OSError) as exc:
        _discard(partial)
        fault = store_fault(exc, Path(db.path), db.busy_timeout)
        if isinstance(fault, StoreFull):
            raise StoreFull(
                f"no space left on the device of {target}: no backup was written and the store "
                "is untouched; free some space or back up to another device"
            ) from exc
        if fault is not None:
            raise fault from exc
        raise StoreError(f"cannot write the backup {target}: {exc}") from exc
    except BaseException:
        _discard(partial)
        raise
    return target.stat().st_size


def _discard(partial: Path) -> None:
    for name in (partial, Path(f"{partial}-journal")):
        with contextlib.suppress(OSError):
            name.unlink()


def companions(path: Path) -> list[Path]:
    """The store file and the files SQLite keeps beside it in WAL mode."""
    return [Path(path), Path(f"{path}-wal"), Path(f"{path}-shm")]


def replace_store(fresh: Path, path: Path, aside: Path) -> Path | None:
    """Put the closed store ``fresh`` in place of ``path``, the old files (if any) moved to
    ``aside`` (and its ``-wal``, ``-shm``); where the old store went, or None if there was none.

    Renames within one folder, so each step is atomic and nothing is copied; the old store is
    never deleted (its question log and verdict history may still be read from it).
    """
    previous = None
    for old, new in zip(companions(path), companions(aside), strict=True):
        if old.exists():
            os.replace(old, new)
            previous = previous or aside
    os.replace(fresh, path)
    return previous


def discard(path: Path) -> None:
    """Remove a half-built store and its companions (a rebuild that failed or was stopped)."""
    for name in companions(path):
        with contextlib.suppress(OSError):
            name.unlink()
