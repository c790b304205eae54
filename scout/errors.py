"""One error hierarchy for Scout, mapped to exit codes in one place (the CLI).

    ScoutError                 exit 1   something broke; base of everything below
    ├── UsageError             exit 2   the command line or the question is not acceptable
    ├── ConfigError            exit 3   the config file is missing, unreadable or invalid
    ├── StoreError             exit 4   the database is missing, unreadable or inconsistent
    │   ├── StoreFull                   no space left on the store's device
    │   ├── StoreDamaged                the file is damaged ("database disk image is malformed")
    │   └── LockedError        exit 7   another sweep or worker holds the store's lock
    │       └── StoreBusy               another process held the write lock past the busy timeout
    ├── ForgeError             exit 5   GitLab or the estate directory failed (has .reason)
    │   ├── NotFound                        a 404: the thing asked for does not exist
    │   ├── CannotCheck                     a check cannot complete, and retrying will not help
    │   ├── GroupNotFound      exit 3   a configured group does not exist or the token cannot see it
    │   ├── RateLimitBudget                 GitLab kept throttling past the run's waiting budget
    │   ├── EstateError                     a local estate (folder, estate.toml, repository) failed
    │   └── Unreadable                      some projects could not be read; the rest was done
    ├── ProviderError          exit 6   the answering model failed (never a decline)
    │   ├── ProviderTimeout                 the call passed its deadline (retries included)
    │   └── EmbeddingError                  the embeddings model or server failed
    └── Refused                (HTTP)   ``scout serve`` turned a request away (status, code)

Third-party exceptions are translated where they enter (the GitLab forge, each provider) and
chained with ``from exc``; nothing above those modules sees gitlab, requests or anthropic errors.
Messages are one line and say how to fix the problem where that is known.
"""

from __future__ import annotations

from typing import Literal


class ScoutError(Exception):
    """Raised when something broke that is not covered by a more specific class."""

    exit_code = 1


class UsageError(ScoutError):
    """Raised when a command's arguments or a question cannot be accepted."""

    exit_code = 2


class ConfigError(ScoutError):
    """Raised when the config file is missing, not TOML, or fails validation."""

    exit_code = 3


class StoreError(ScoutError):
    """Raised when the SQLite store is missing, unreadable, or newer than this Scout."""

    exit_code = 4


class LockedError(StoreError):
    """Raised when another sweep (or worker) already holds this store's lock."""

    exit_code = 7


class StoreFull(StoreError):
    """Raised when a write to the store finds no space left on its device (SQLITE_FULL, ENOSPC);
    the write is rolled back whole."""


class StoreDamaged(StoreError):
    """Raised when SQLite finds the store's file damaged (SQLITE_CORRUPT, SQLITE_NOTADB), at open
    or at any later read or write."""


class StoreBusy(LockedError):
    """Raised when another process held the store's write lock for longer than the busy timeout."""


# What a forge failure is, as the message and callers that retry or stop name it; mypy holds every
# ForgeError(...) to one of these, so a misspelt reason fails the type check, not a run.
ForgeReason = Literal[
    "not found",
    "unauthorized",
    "rate limited",
    "unreachable",
    "server error",
    "bad data",
]


class ForgeError(ScoutError):
    """Raised when the forge (GitLab or a local estate) fails; ``reason`` is a ForgeReason."""

    exit_code = 5

    def __init__(self, reason: ForgeReason, message: str) -> None:
        self.reason: ForgeReason = reason
        super().__init__(f"forge {reason}: {message}")


class NotFound(ForgeError):
    """Raised when a project, ref, commit, file or merge request does not exist (HTTP 404).

    Callers that probe for existence (signpost validation) catch this one and carry on.
    """

    def __init__(self, message: str) -> None:
        super().__init__("not found", message)


class CannotCheck(ForgeError):
    """Raised when a check cannot complete for a reason that will not change on retry."""

    def __init__(self, message: str) -> None:
        super().__init__("bad data", message)
        self.detail = message


class GroupNotFound(ForgeError):
    """Raised when a group in ``forge.groups`` does not exist or the token cannot see it (GitLab
    answers 404 for both), or no project of a local estate is in it. A config mistake, exit 3:
    it must never read as an empty group, whose projects and signposts would all be removed."""

    exit_code = 3

    def __init__(self, group: str, where: str, *, estate: bool = False) -> None:
        self.reason = "not found"
        self.group = group
        Exception.__init__(
            self,
            f"forge.groups: no project of {where} is in group {group!r}; nothing was removed: "
            "check the group against the [[project]] paths there"
            if estate
            else f"forge.groups: group {group!r} does not exist on {where} or the token cannot "
            "see it; nothing was removed: check the group's full path (as in its URL) and the "
            "token's access",
        )


class RateLimitBudget(ForgeError):
    """Raised when honouring GitLab's rate limits would exceed the run's total waiting budget."""

    def __init__(self, message: str) -> None:
        super().__init__("rate limited", message)


class EstateError(ForgeError):
    """Raised when a local estate (``forge.kind = "local"``) cannot be read: its folder, its
    estate.toml, a repository in it, or git itself. Its message speaks of the estate and the
    folder, never of a server, a network or a token, which a local estate has none of."""

    def __init__(self, reason: ForgeReason, message: str) -> None:
        self.reason = reason
        Exception.__init__(self, f"estate: {message}")


class Unreadable(ForgeError):
    """Raised when a run could not read some projects (named, each with why) and did the rest:
    what they had is kept, and the next run reads them again."""

    def __init__(self, message: str) -> None:
        self.reason = "server error"
        Exception.__init__(self, message)


class ProviderError(ScoutError):
    """Raised when the answering provider fails: timeout, API error, invalid or missing output."""

    exit_code = 6


class ProviderTimeout(ProviderError):
    """Raised when a provider call (its retries and a slowly sent reply included) passes the
    deadline its task carries (``scout.providers.base.Task.deadline``)."""


class EmbeddingError(ProviderError):
    """Raised when the embeddings model (``[retrieval.embeddings]``) fails: its server is
    unreachable, refuses, times out or replies with vectors Scout cannot use. At index time an
    incident (exit 6, the passages read stay searchable by their words); at question time
    retrieval goes on by words alone and says so."""


class Refused(ScoutError):
    """Raised when ``scout serve`` or ``scout mcp`` turns a request away before answering it:
    no key, a rate limit, all answer slots busy, a body or question too large, an answer too slow.
    Carries the HTTP status, a stable ``code`` and, where waiting helps, ``retry_after`` seconds.
    """

    exit_code = 2

    def __init__(
        self, status: int, code: str, message: str, *, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after


EXIT_CODES = {
    0: "answered, declined, or the command completed",
    1: "unexpected internal error (a bug: please report it with SCOUT_DEBUG=1 output)",
    2: "usage error: bad option, argument or question",
    3: "configuration error",
    4: "store error: database missing, damaged, from a newer Scout, or its disk is full",
    5: "forge error: GitLab or the estate unreachable, unauthorized, rate limited or failing",
    6: "provider error: the model failed, timed out or replied with invalid output",
    7: "locked: another sweep or worker is running on this store, or holds its write lock",
}
