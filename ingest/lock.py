"""One sweep at a time per store: an exclusive ``flock`` on a file beside the database.

A kernel lock rather than a row in SQLite, because it dies with its process: a sweep killed with
SIGKILL never leaves a stale lock behind for the next run to second-guess. The lock file is
written (its holder's pid), so it is opened without following a symlink and written only when it
is a regular file with one name: a link planted beside the store cannot make a sweep truncate
another file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from scout.errors import LockedError, StoreError
from scout.store.faults import full


@contextmanager
def sweep_lock(store_path: Path) -> Iterator[None]:
    target = Path(f"{store_path}.sweep.lock")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle = os.open(target, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as exc:
        raise _lock_fault(exc, store_path, target) from exc
    try:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise StoreError(
                f"the sweep lock {target} is not a plain file (a link, a device or a pipe): "
                "remove it, and check who put it there"
            )
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, 64, 0).decode(errors="replace").strip() or "another process"
            raise LockedError(
                f"another sweep is running on {store_path} (pid {holder}); try again when it ends"
            ) from None
        try:
            os.ftruncate(handle, 0)
            os.pwrite(handle, str(os.getpid()).encode(), 0)
        except OSError as exc:
            raise _lock_fault(exc, store_path, target) from exc
        yield
    finally:
        os.close(handle)


def _lock_fault(exc: OSError, store_path: Path, target: Path) -> StoreError:
    """A lock file that cannot be written: a full disk says so, as a store write would."""
    if exc.errno == errno.ENOSPC:
        return full(store_path)
    if exc.errno == errno.ELOOP:
        return StoreError(
            f"the sweep lock {target} is a symbolic link: remove it, and check who put it there"
        )
    return StoreError(f"cannot take the sweep lock {target}: {exc.strerror}")
