"""Running the real ``scout``: the command line and what a run gives back.

:func:`run_cli` runs ``scout`` in a process of its own, as ``python -m scout`` would, with its
own exit code, cwd, environment and stdin/stdout/stderr as file descriptors. It forks the test
process instead of starting an interpreter: the suite starts scout some 600 times, and
interpreter start-up and imports (pydantic's models, click, markdown-it: about 0.3 s of CPU a
run on the 2-core CI machine; a ``scout search`` of the demo took 0.45 s started, 0.09 s forked)
were a fifth of the suite's CPU time. Scout's modules are imported once in the test process
before its first fork, so children share them rather than each importing what its command needs.
The child is made to look like a fresh interpreter where Scout can tell: fresh std streams on
fds 0-2, no inherited descriptors (a server socket a test closes must refuse, not hang), the
default warning filters and signal handlers, no logging handlers, no ``pytest`` in
``sys.modules``, a new random seed, and a normal interpreter exit (non-daemon threads joined,
streams flushed). What only a real start-up shows (the entry point, import costs, ``PYTHON*``
and locale variables) runs the interpreter: ``exec_=True``, an environment that changes
``PYTHON*``/``LC_*``/``LANG``, or ``SCOUT_TEST_EXEC=1`` for the whole suite. A test whose other
threads use SQLite (or any library holding a lock with the GIL released) while scout runs must
pass ``exec_=True``: a lock held by another thread at the fork stays held in the child, which
then waits forever.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
import pkgutil
import select
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import ingest
import scout
import signposts

SCOUT = [sys.executable, "-m", "scout"]
EXEC_ENV = "SCOUT_TEST_EXEC"
# Variables the interpreter reads when it starts: a run that changes them must start one.
_STARTUP_PREFIXES = ("PYTHON", "LC_", "LANG")


@dataclass
class Result:
    """One run's exit code and its two streams, kept apart."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_cli(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
    exec_: bool = False,
) -> Result:
    """``python -m scout ARGS`` in a process of its own (see the module); ``env`` is the whole
    environment (default: this process's)."""
    environment = dict(os.environ if env is None else env)
    if exec_ or not _forkable(environment):
        done = subprocess.run(
            [*SCOUT, *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=environment,
            input=input,
            timeout=timeout,
        )
        return Result(done.returncode, done.stdout, done.stderr)
    return _forked([str(a) for a in args], cwd, environment, input, timeout)


def run_completed(args: Sequence[str], **options: Any) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` as ``subprocess.run(capture_output=True, text=True)`` reports a run."""
    done = run_cli(args, **options)
    return subprocess.CompletedProcess([*SCOUT, *args], done.code, done.stdout, done.stderr)


def _forkable(env: Mapping[str, str]) -> bool:
    if not hasattr(os, "fork") or env.get(EXEC_ENV) == "1" or os.environ.get(EXEC_ENV) == "1":
        return False
    keys = {k for k in [*env, *os.environ] if k.startswith(_STARTUP_PREFIXES)}
    return all(env.get(k) == os.environ.get(k) for k in keys)


def _forked(
    args: list[str], cwd: Path | str | None, env: dict[str, str], input: str | None, timeout: float
) -> Result:
    encoding = _encoding()
    with (
        tempfile.TemporaryFile() as stdin,
        tempfile.TemporaryFile() as stdout,
        tempfile.TemporaryFile() as stderr,
    ):
        if input is not None:
            stdin.write(input.encode(encoding))
            stdin.seek(0)
        source = stdin.fileno() if input is not None else None
        pid = _fork(args, cwd, env, (source, stdout.fileno(), stderr.fileno()))
        child = Started(pid, args, None, None)
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            raise
        return Result(code, _read(stdout), _read(stderr))


def _encoding() -> str:
    return sys.__stdout__.encoding if sys.__stdout__ else "utf-8"


# Every module of scout, signposts and ingest, imported once in the test process before its first
# fork, so forked runs share them instead of importing what their command needs again: a forked
# ``scout sweep`` of an unchanged estate took 0.62 s of CPU without them, 0.09 s with them. The
# modules that import a model provider's SDK or the serve extra stay out: a run that needs one
# imports it, as a fresh interpreter would (and ``__main__`` would run scout).
_NOT_SHARED = ("scout.__main__", "scout.providers.anthropic_api", "scout.providers.openai")
_NOT_SHARED_PACKAGES = ("scout.serve.",)


@functools.cache
def _share_imports() -> None:
    # as the child imports them: under the default filters, not the suite's "error"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for package in (scout, signposts, ingest):
            for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
                if module.name not in _NOT_SHARED and not module.name.startswith(
                    _NOT_SHARED_PACKAGES
                ):
                    importlib.import_module(module.name)


def _fork(
    args: list[str], cwd: Path | str | None, env: dict[str, str], fds: tuple[int | None, int, int]
) -> int:
    """A child running scout on ``fds`` (stdin, stdout, stderr; None: /dev/null); its pid."""
    _share_imports()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        code = 1
        try:
            code = _fresh_run(args, cwd, env, fds)
        finally:
            os._exit(code)
    return pid


def _read(stream: IO[bytes]) -> str:
    stream.seek(0)
    return _decoded(stream.read())


def _decoded(data: bytes) -> str:
    # As subprocess.run(text=True) reads: universal newlines, the locale's encoding.
    return data.decode(_encoding()).replace("\r\n", "\n").replace("\r", "\n")


def _fresh_run(
    args: list[str], cwd: Path | str | None, env: dict[str, str], fds: tuple[int | None, int, int]
) -> int:
    import faulthandler
    import gc
    import io
    import logging
    import random
    import signal
    import threading
    import traceback
    import warnings

    # Objects inherited from the test process are never collected here: a finalizer could
    # close a descriptor number this run has reused.
    gc.freeze()
    faulthandler.disable()
    source, out_fd, err_fd = fds
    os.dup2(source if source is not None else os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    out, err = sys.__stdout__, sys.__stderr__
    encoding = out.encoding if out else "utf-8"
    sys.stdin = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding=encoding
    )
    # As the interpreter makes them for this environment: PYTHONUNBUFFERED writes through to
    # the descriptor, otherwise through a buffer (which a signal handler that writes re-enters).
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))

    def writer(fd: int) -> io.RawIOBase | io.BufferedWriter:
        raw = io.FileIO(fd, "w", closefd=False)
        return raw if unbuffered else io.BufferedWriter(raw)

    sys.stdout = io.TextIOWrapper(
        writer(1),
        encoding=encoding,
        errors=out.errors if out else "strict",
        write_through=unbuffered,
    )
    sys.stderr = io.TextIOWrapper(
        writer(2),
        encoding=encoding,
        errors=err.errors if err else "backslashreplace",
        line_buffering=True,
        write_through=unbuffered,
    )
    # The originals too: they are what a fresh interpreter's point at, and rich and click
    # compare against them.
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, f"__{name}__", getattr(sys, name))
    if cwd is not None:
        os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    # What a fresh interpreter has: its default warning filters (pytest's turn them into errors),
    # its signal handlers, no logging handlers, a seed of its own.
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.simplefilter("ignore", category)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(signum, signal.SIG_DFL)
    signal.setitimer(signal.ITIMER_REAL, 0)
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)
    logging.captureWarnings(False)
    random.seed()
    sys.modules.pop("pytest", None)
    sys.argv = [str(Path(__file__).resolve().parents[2] / "scout" / "__main__.py"), *args]

    from scout.cli.main import main

    code: int = 0
    try:
        main()
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    # As the interpreter ends: wait for non-daemon threads, then flush the streams.
    threading._shutdown()  # type: ignore[attr-defined]
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    return code


PIPE, DEVNULL = subprocess.PIPE, subprocess.DEVNULL


class Started:
    """A scout started by :func:`start_cli`: the part of ``subprocess.Popen`` the tests use
    (``pid``, ``poll``, ``wait``, signals, ``communicate``, text ``stdout``/``stderr`` pipes)."""

    def __init__(self, pid: int, args: list[str], stdout: int | None, stderr: int | None) -> None:
        self.pid, self.args = pid, [*SCOUT, *args]
        self.returncode: int | None = None
        self._fd = os.pidfd_open(pid)
        self._pipes = {fd: bytearray() for fd in (stdout, stderr) if fd is not None}
        self._ended: set[int] = set()
        self._out, self._err = stdout, stderr
        self.stdout = self._text(stdout)
        self.stderr = self._text(stderr)

    def _text(self, fd: int | None) -> IO[str] | None:
        if fd is None:
            return None
        return open(fd, encoding=_encoding(), errors="replace", closefd=False)  # noqa: SIM115

    def poll(self) -> int | None:
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self._reaped(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            ready = select.select([self._fd], [], [], timeout)[0]
            if not ready:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._reaped(os.waitpid(self.pid, 0)[1])
        assert self.returncode is not None
        return self.returncode

    def _reaped(self, status: int) -> None:
        self.returncode = os.waitstatus_to_exitcode(status)
        os.close(self._fd)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(15)

    def kill(self) -> None:
        self.send_signal(9)

    def communicate(self, timeout: float | None = None) -> tuple[str | None, str | None]:
        """What is left on the pipes, read to their end (both at once, as Popen does), then
        the exit; TimeoutExpired keeps what was read for the next call."""
        deadline = None if timeout is None else time.monotonic() + timeout
        open_fds = [fd for fd in self._pipes if fd not in self._ended]
        while open_fds:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            for fd in select.select(open_fds, [], [], left)[0]:
                chunk = os.read(fd, 65536)
                if chunk:
                    self._pipes[fd] += chunk
                else:
                    open_fds.remove(fd)
                    self._ended.add(fd)
        self.wait(None if deadline is None else max(deadline - time.monotonic(), 0))
        return self._drained(self._out), self._drained(self._err)

    def _drained(self, fd: int | None) -> str | None:
        return None if fd is None else _decoded(bytes(self._pipes[fd]))

    def __enter__(self) -> Started:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.returncode is None:
            self.wait()
        for fd in self._pipes:
            os.close(fd)


def start_cli(
    args: Sequence[str],
    *,
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    stdout: int | IO[Any] = DEVNULL,
    stderr: int | IO[Any] = DEVNULL,
) -> Started | subprocess.Popen[str]:
    """``python -m scout ARGS`` started in a process of its own (as :func:`run_cli`: forked, or
    a ``Popen`` where a fork would not be a fresh interpreter) and left running: for signals and
    kills. ``stdout``/``stderr``: ``PIPE`` (text), ``DEVNULL`` or an open file."""
    environment = dict(os.environ if env is None else env)
    if not _forkable(environment):
        return subprocess.Popen(
            [*SCOUT, *args], stdout=stdout, stderr=stderr, text=True, cwd=cwd, env=environment
        )
    ends: list[int] = []

    def target(where: int | IO[Any]) -> tuple[int, int | None]:
        if where == PIPE:
            read, write = os.pipe()
            ends.append(write)
            return write, read
        if where == DEVNULL:
            fd = os.open(os.devnull, os.O_WRONLY)
            ends.append(fd)
            return fd, None
        assert not isinstance(where, int)
        return where.fileno(), None

    (out_fd, out_read), (err_fd, err_read) = target(stdout), target(stderr)
    listed = [str(a) for a in args]
    try:
        pid = _fork(listed, cwd, environment, (None, out_fd, err_fd))
    finally:
        for fd in ends:
            os.close(fd)  # the child holds its own copies: EOF comes when it ends
    return Started(pid, listed, out_read, err_read)
