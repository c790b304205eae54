"""The claude-local provider: the Claude Code CLI (``claude``) in print mode, under a timeout.

Boundary rules (NOTES.md): ``is_error`` is the failure flag even when the subtype says success; a
reply can be ``is_error: false`` and still lack ``structured_output``, so it is validated here; the
CLI retries an unreachable API for a long time, so it always runs under a timeout, in its own
process group (killed whole on expiry) and in an empty working directory (no project context
leaks in). Its timeout is the provider's ``timeout`` or the time left until the task's deadline,
whichever ends first (ProviderTimeout, the child's whole process group killed). Every failure
becomes ProviderError.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from typing import Any

from pydantic import ValidationError

from scout.environment import child_environment
from scout.errors import ProviderError, ProviderTimeout
from scout.providers.base import MAX_REPLY_BYTES, Metered, T, Task, Usage

DEFAULT_TIMEOUT = 120.0
BINARY = "claude"
MAX_TOKEN_COUNT = 100_000_000  # a count above this in one reply is the CLI's bug, not usage
MAX_COST_USD = 1_000_000.0

# Every running ``claude`` child, so an interrupted command can kill them: each runs in its own
# session, so a Ctrl-C at the terminal never reaches it, and a sweep may run several at once.
_RUNNING: set[subprocess.Popen[bytes]] = set()
_RUNNING_LOCK = threading.Lock()


def kill_children() -> int:
    """Kill the process group of every running ``claude`` child; returns how many there were."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return len(running)


def command(binary: str, model: str, task: Task[Any]) -> list[str]:
    """The argv for one task; the user message goes on stdin."""
    schema = json.dumps(task.output.model_json_schema(), separators=(",", ":"))
    return [
        binary,
        "-p",
        "--output-format",
        "json",
        "--model",
        model,
        "--json-schema",
        schema,
        "--system-prompt",
        task.system,
        "--tools",
        "",
    ]


def _first_line(text: str, limit: int = 200) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0][:limit] if lines else "no message"


class ClaudeLocalProvider:
    """Runs ``claude -p`` once per task and validates its structured output."""

    name = "claude-local"

    def __init__(self, *, model: str, timeout: float | None = None) -> None:
        self.model = model
        self.timeout = DEFAULT_TIMEOUT if timeout is None else timeout

    def run(self, task: Task[T]) -> T:
        return self.run_metered(task).output

    def run_metered(self, task: Task[T]) -> Metered[T]:
        binary = shutil.which(BINARY)
        if binary is None:
            raise ProviderError(
                "the claude CLI is not on PATH: install Claude Code, "
                "or set answer.provider = 'anthropic' or 'offline' (or pass --provider)"
            )
        code, stdout, stderr = self._invoke(
            command(binary, self.model, task), task.user, task.deadline
        )
        # An addresses task's question is issue prose: whatever the CLI says back may quote it,
        # so its own words never reach an error message there (they would be printed and logged).
        output = parse_reply(code, stdout, stderr, task.output, quote=task.kind != "addresses")
        return Metered(output, reply_usage(stdout))

    def _invoke(
        self, argv: list[str], stdin: str, deadline: float | None
    ) -> tuple[int, bytes, bytes]:
        timeout = self.timeout
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
            if timeout <= 0:
                raise ProviderTimeout("the answer's deadline passed before the claude CLI started")
        by_deadline = timeout < self.timeout
        with tempfile.TemporaryDirectory(prefix="scout-claude-") as workdir:
            try:
                process = subprocess.Popen(
                    argv,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    cwd=workdir,
                    env=child_environment(),
                    start_new_session=True,
                )
            except OSError as exc:
                raise ProviderError(f"cannot run the claude CLI: {exc}") from exc
            with _RUNNING_LOCK:
                _RUNNING.add(process)
            try:
                stdout, stderr = process.communicate(stdin.encode("utf-8"), timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                _kill_group(process)
                if by_deadline:
                    raise ProviderTimeout(
                        "the claude CLI gave no reply before the answer's deadline"
                    ) from exc
                raise ProviderTimeout(
                    f"the claude CLI gave no reply within {self.timeout:g} s "
                    "(is the API reachable? try `claude -p hello`)"
                ) from exc
            except BaseException:
                # KeyboardInterrupt: the child is in its own session and would outlive us
                _kill_group(process)
                raise
            finally:
                with _RUNNING_LOCK:
                    _RUNNING.discard(process)
            return process.returncode, stdout, stderr


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()


def parse_reply(
    code: int, stdout: bytes, stderr: bytes, output: type[T], *, quote: bool = True
) -> T:
    """Turn the CLI's exit code and output into the validated model, or raise ProviderError.

    ``quote=False`` leaves the CLI's own text (stderr, ``result``) out of every error message.
    """
    if len(stdout) > MAX_REPLY_BYTES:
        raise ProviderError(f"the claude CLI replied with more than {MAX_REPLY_BYTES} bytes")
    try:
        reply = json.loads(stdout.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        # not JSON, nested too deeply, or an integer past Python's 4,300 digits
        reply = None
    if not isinstance(reply, dict):
        if code != 0:
            message = _first_line(stderr.decode("utf-8", errors="replace")) if quote else "-"
            raise ProviderError(f"the claude CLI exited with status {code}: {message}")
        raise ProviderError("the claude CLI replied with something other than a JSON object")
    if reply.get("is_error") is not False:
        result = reply.get("result")
        message = _first_line(result) if isinstance(result, str) and quote else "no message"
        raise ProviderError(f"the claude CLI reported an error: {message}")
    if code != 0:
        raise ProviderError(f"the claude CLI exited with status {code}")
    structured = reply.get("structured_output")
    if structured is None:
        raise ProviderError(
            "the claude CLI reply has no structured_output (the model ignored the schema)"
        )
    try:
        return output.model_validate(structured)
    except ValidationError as exc:
        raise ProviderError(
            f"the claude CLI's structured_output does not match the schema: "
            f"{exc.error_count()} error(s), first at {_loc(exc)}"
        ) from exc


def reply_usage(stdout: bytes) -> Usage:
    """The tokens and dollars a reply reports (``usage`` and ``total_cost_usd``); called after
    :func:`parse_reply` accepted the reply, so only the fields themselves may be missing."""
    reply = json.loads(stdout.decode("utf-8", errors="replace"))
    usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
    cost = reply.get("total_cost_usd")
    return Usage(
        input_tokens=sum(
            _count(usage, key)
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ),
        output_tokens=_count(usage, "output_tokens"),
        usd=_cost(cost),
    )


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return min(value, MAX_TOKEN_COUNT)


def _cost(value: object) -> float | None:
    """A reported cost in dollars; None when it is not one (negative, not finite, absurd)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not 0 <= value <= MAX_COST_USD:  # also false for NaN
        return None
    return float(value)


def _loc(exc: ValidationError) -> str:
    first = exc.errors()[0]
    return ".".join(str(p) for p in first["loc"]) or "(top level)"
