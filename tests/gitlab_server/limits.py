"""GitLab's limits, each off until a test switches it on: diff limits, rate limits, LFS.

Diff limits (doc/administration/diff_limits.md; doc/api/repositories.md "Compare branches, tags
or commits"; doc/api/commits.md "Get the diff of a commit"; doc/api/merge_requests.md "List
merge request diffs"): past ``max_files`` files or ``max_lines`` lines the rest of the files are
left out (a compare says so with ``compare_timeout: true``, commit and MR diffs say nothing); a
file whose patch is over ``max_patch_bytes`` comes with an empty ``diff`` and ``too_large: true``;
over ``collapse_bytes`` (the "safe" limit GitLab collapses at) an empty ``diff`` and
``collapsed: true``.

Rate limits (doc/security/rate_limits.md; doc/user/gitlab_com/index.md "Rate limits on
GitLab.com"): throttles count requests in fixed windows aligned on the epoch (Rack::Attack keys a
period by ``now // period``). A throttled answer is 429 with ``Retry-After`` (seconds to the end of
the window) and ``RateLimit-Limit``, ``-Observed``, ``-Remaining``, ``-Reset`` (a Unix time) and
``-ResetTime`` (an HTTP date); GitLab.com's Projects and Groups APIs answer a bare 429 with none of
them (``headers=False``). The archive endpoint's limit counts per project (``per_project``).
``advertise`` also puts the ``RateLimit-*`` headers on answers that were let through.

LFS (doc/api/repository_files.md "Get raw file from repository", ``lfs`` parameter;
doc/api/repositories.md "Get file archive", ``include_lfs_blobs`` default true): a file tracked by
LFS is a pointer in git; the raw endpoint serves the pointer unless ``lfs=true``, the archive the
content. Objects live in the estate's ``lfs/<oid>`` files.
"""

from __future__ import annotations

import email.utils
import io
import math
import re
import tarfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LFS_POINTER = b"version https://git-lfs.github.com/spec/v1\n"
_OID = re.compile(rb"^oid sha256:([0-9a-f]{64})$", re.M)
_PROJECT = re.compile(r"^/api/v4/projects/([^/]+)")


@dataclass
class DiffLimits:
    max_files: int | None = None
    max_lines: int | None = None
    max_patch_bytes: int | None = None
    collapse_bytes: int | None = None

    def apply(self, rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
        """The diff rows GitLab would send, and whether files were left out (overflow)."""
        kept: list[dict[str, Any]] = []
        lines = 0
        for row in rows:
            lines += row["diff"].count("\n")
            if (self.max_files is not None and len(kept) >= self.max_files) or (
                self.max_lines is not None and lines > self.max_lines
            ):
                return kept, True
            size = len(row["diff"].encode("utf-8"))
            row = {**row, "too_large": False, "collapsed": False}
            if self.max_patch_bytes is not None and size > self.max_patch_bytes:
                row.update(diff="", too_large=True)
            elif self.collapse_bytes is not None and size > self.collapse_bytes:
                row.update(diff="", collapsed=True)
            kept.append(row)
        return kept, False


@dataclass
class RateRule:
    limit: int
    window: float
    match: re.Pattern[str] | None
    headers: bool
    per_project: bool
    advertise: bool
    # GitLab's search_rate_limit counts only requests that carry ``search`` (30 a minute for an
    # authenticated user by default; GitLab MR !80631, "Add configurable search rate limits")
    searches: bool = False
    # Where windows start: 0 aligns them on the epoch, as Rack::Attack's fixed windows are; a test
    # that needs a whole window ahead of it (an hour-long one, say) starts one now, so it does not
    # depend on the minute of the hour it happens to run in.
    origin: float = 0.0
    counts: Counter[tuple[Any, ...]] = field(default_factory=Counter)


class RateLimits:
    """The throttles of one server; each request is counted by every rule that matches it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rules: list[RateRule] = []
        self.throttled = 0  # 429s answered

    def add(
        self,
        limit: int,
        *,
        window: float = 60.0,
        match: str | None = None,
        headers: bool = True,
        per_project: bool = False,
        advertise: bool = False,
        starting_now: bool = False,
        searches: bool = False,
    ) -> None:
        rule = RateRule(
            limit,
            window,
            re.compile(match) if match else None,
            headers,
            per_project,
            advertise,
            searches,
            origin=time.time() if starting_now else 0.0,
        )
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def check(
        self, path: str, now: float | None = None, *, searching: bool = False
    ) -> tuple[bool, dict[str, str]]:
        """(throttled?, headers to send) for one request on ``path`` (``searching``: it carries
        a ``search`` parameter)."""
        now = time.time() if now is None else now
        headers: dict[str, str] = {}
        with self._lock:
            for rule in self._rules:
                if rule.match is not None and not rule.match.search(path):
                    continue
                if rule.searches and not searching:
                    continue
                period = math.floor((now - rule.origin) / rule.window)
                found = _PROJECT.match(path)
                key = (period, found.group(1).lower() if rule.per_project and found else None)
                rule.counts[key] += 1
                observed = rule.counts[key]
                reset = rule.origin + (period + 1) * rule.window
                described = {
                    "RateLimit-Name": "throttle_scout_test",
                    "RateLimit-Limit": str(rule.limit),
                    "RateLimit-Observed": str(observed),
                    "RateLimit-Remaining": str(max(rule.limit - observed, 0)),
                    "RateLimit-Reset": str(int(reset)),
                    "RateLimit-ResetTime": email.utils.formatdate(reset, usegmt=True),
                }
                if observed > rule.limit:
                    self.throttled += 1
                    if not rule.headers:
                        return True, {}
                    retry = max(1, math.ceil(reset - now))
                    return True, {**described, "Retry-After": str(retry)}
                if rule.advertise:
                    headers.update(described)
        return False, headers


def lfs_object(estate: Path, content: bytes) -> bytes | None:
    """The LFS object a pointer names, when the estate holds it."""
    if not content.startswith(LFS_POINTER):
        return None
    found = _OID.search(content)
    if found is None:
        return None
    stored = estate / "lfs" / found.group(1).decode()
    return stored.read_bytes() if stored.is_file() else None


def archive_with_lfs(estate: Path, tar: bytes) -> bytes:
    """``git archive``'s tar with every LFS pointer replaced by its object, as GitLab serves."""
    if not (estate / "lfs").is_dir():
        return tar
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(tar), mode="r:") as source,
        tarfile.open(fileobj=out, mode="w:", format=tarfile.PAX_FORMAT) as target,
    ):
        for member in source:
            handle = source.extractfile(member) if member.isreg() else None
            body = handle.read() if handle is not None else None
            content = lfs_object(estate, body) if body is not None else None
            if content is not None:
                body = content
                member.size = len(content)
            target.addfile(member, io.BytesIO(body) if body is not None else None)
    return out.getvalue()
