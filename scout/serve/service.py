"""What the HTTP routes, the page and the MCP tools share: one question in, one JSON document out.

Rules held here: every way in (``POST /api/v1/ask``, the page's form, the MCP tools) passes the
same checks in the same order (key, rate, question size, a free answer slot) and calls the same
cores as the CLI (:func:`scout.answer.ask`, :func:`scout.retrieve.retrieve`), so the documents are
exactly ``scout ask --json`` and ``scout search --json``. A decline is a 200; a refusal or an
incident is a :class:`~scout.errors.Refused` carrying its status. Each worker thread keeps its own
store connection open (warm); SQLite in WAL mode shows it what ``scout index`` commits meanwhile.

A client is its valid key, else its address (:mod:`scout.serve.security`); an unknown key spends
its address's rate before its 401, so guessing keys is rate limited. Every model call (an answer,
or a search that asks the model for terms) runs in an answer slot, at most
``max_concurrent_answers_per_client`` of them per client, and carries the deadline
``answer_timeout`` sets (``Task.deadline``): the providers end the whole call by it, so the slot
is free within a second of the 504.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import hmac
import logging
import queue
import sqlite3
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from scout.answer import ask as answer_question
from scout.answer import search as search_passages
from scout.config import Config
from scout.errors import ProviderError, ProviderTimeout, Refused, ScoutError, StoreError, UsageError
from scout.hits import hits_json
from scout.providers import configured_provider
from scout.providers.base import Metered, Provider, T, Task, run_metered
from scout.retrieve.question import MAX_SEARCH, MIN_PASSAGES
from scout.retrieve.settings import RetrievalSettings
from scout.safe_text import printable
from scout.serve.limits import AnswerSlots, ClientSlots, RateLimiter
from scout.serve.metrics import Metrics
from scout.serve.security import Security
from scout.store import Store

logger = logging.getLogger("scout.serve")

R = TypeVar("R")

# Searches at once: each is a few SQLite reads, but one thread each all the same.
SEARCH_THREADS = 4
# An MCP client on stdio is one client: the person whose agent runs it.
STDIO_CLIENT = "stdio"
MAX_PROJECT_GLOBS = 20
PROVIDER_MARGIN = 1.0
STOPPING_RETRY = 10  # seconds: systemd's RestartSec and a start, or the other replica
MAX_GLOB_CHARS = 200


class Workers:
    """A fixed set of daemon threads running submitted work, each keeping its own state (its
    warm store connection) between jobs.

    Daemon, unlike ``ThreadPoolExecutor``'s, whose threads Python joins at exit: an answer still
    running after SIGTERM's drain (a provider that hangs) must not keep the process alive.
    """

    def __init__(self, size: int, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = (
            queue.SimpleQueue()
        )
        self._threads = [
            threading.Thread(target=self._loop, name=f"{name}-{i}", daemon=True)
            for i in range(size)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, work: Callable[..., R], *args: Any) -> Future[R]:
        future: Future[R] = Future()
        self._jobs.put((future, work, args))
        return future

    def _loop(self) -> None:
        while True:
            future, work, args = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work(*args))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                future.set_exception(exc)


class _Bounded:
    """A provider whose every task ends by the answer's deadline (the earlier of the task's own
    and the slot's) and whose token use reaches the metrics (the question log gets it as before).
    """

    def __init__(self, provider: Provider, metrics: Metrics, deadline: float) -> None:
        self.provider = provider
        self.metrics = metrics
        self.deadline = deadline
        self.name = provider.name

    def run(self, task: Task[T]) -> T:
        return self.run_metered(task).output

    def run_metered(self, task: Task[T]) -> Metered[T]:
        deadline = self.deadline if task.deadline is None else min(task.deadline, self.deadline)
        metered = run_metered(self.provider, dataclasses.replace(task, deadline=deadline))
        self.metrics.used(metered.usage)
        return metered


def _key_id(key: str) -> str:
    # The rate table is keyed by a digest: keys never sit in memory longer than a request.
    return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def _known(key: str, keys: frozenset[str]) -> bool:
    return any(hmac.compare_digest(key.encode(), k.encode()) for k in keys)


class Service:
    """The serving core for one config: limits, metrics, warm stores and the answer threads."""

    def __init__(
        self,
        config: Config,
        *,
        security: Security | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        serve = config.serve
        self.settings = serve
        self.security = security or Security.of(config)
        self.metrics = Metrics()
        # Addresses and keys apart: addresses sprayed from many machines never push a keyed
        # client (a bot) out of its table.
        self.rate = RateLimiter(*serve.rate(), clock=clock)
        self.key_rate = RateLimiter(*serve.rate(), clock=clock)
        self.slots = AnswerSlots(serve.max_concurrent_answers, serve.queue_timeout)
        self.client_slots = ClientSlots(
            serve.max_concurrent_answers_per_client, serve.queue_timeout
        )
        self.api_keys = self.security.api_keys
        self.maintainer_keys = self.security.maintainer_keys
        # One thread per answer slot: the slots, not the pool, decide who waits.
        self._answers = Workers(serve.max_concurrent_answers, "scout-answer")
        self._reads = Workers(SEARCH_THREADS, "scout-read")
        self._local = threading.local()
        self._outcomes: Counter[str] = Counter({"answered": 0, "declined": 0})
        self._retrieval: RetrievalSettings | None = None
        self.warned_forwarded = False  # a proxy missing from trusted_proxies is said once

    # -- who is asking

    def client(self, key: str | None, address: str | None, *, maintainer: bool = False) -> str:
        """The rate-limit identity for a request, after its key is checked (401 or 403); an
        unknown or missing key spends the address's rate first (429 once it is spent)."""
        by_address = f"addr:{address or 'unknown'}"
        if maintainer:
            if self.maintainer_keys is None:
                raise Refused(
                    404, "not_found", "maintainer routes are off: set maintainer_keys_env"
                )
            if key and _known(key, self.maintainer_keys):
                return _key_id(key)
            if key and self.api_keys is not None and _known(key, self.api_keys):
                raise Refused(403, "forbidden", "this key is not a maintainer key")
            self.rate.take(by_address)
            if not key:
                raise Refused(401, "unauthorized", "this route needs a maintainer key")
            raise Refused(401, "unauthorized", "unknown maintainer key")
        if self.api_keys is None:
            # no keys: whatever key header a request sends, its address is the client
            return by_address
        if key and (_known(key, self.api_keys) or _known(key, self.maintainer_keys or frozenset())):
            return _key_id(key)
        self.rate.take(by_address)
        if not key:
            raise Refused(401, "unauthorized", "send an API key: Authorization: Bearer KEY")
        raise Refused(401, "unauthorized", "unknown API key")

    def admit(self, client: str) -> None:
        """Spend one request of the client's rate (429 past it)."""
        (self.key_rate if client.startswith("key:") else self.rate).take(client)

    def check_question(self, question: object) -> str:
        """The question as text, or 400 (not text) / 413 (over ``max_question_chars``)."""
        if not isinstance(question, str):
            raise Refused(400, "bad_request", "question must be a string")
        if not _unicode(question):
            raise Refused(400, "bad_question", "the question is not valid Unicode text")
        limit = self.settings.max_question_chars
        if len(question) > limit:
            raise Refused(
                413,
                "question_too_long",
                f"question is {len(question)} characters; the limit is {limit}: shorten it",
            )
        return question

    def check_projects(self, project: object) -> list[str]:
        """Project globs (a string or a list of strings), bounded; 400 for any other shape."""
        if project is None:
            return []
        globs = [project] if isinstance(project, str) else project
        if (
            not isinstance(globs, list)
            or len(globs) > MAX_PROJECT_GLOBS
            or not all(
                isinstance(g, str) and 0 < len(g) <= MAX_GLOB_CHARS and _unicode(g) for g in globs
            )
        ):
            raise Refused(
                400,
                "bad_request",
                f"project must be a glob or a list of at most {MAX_PROJECT_GLOBS} globs "
                f"of at most {MAX_GLOB_CHARS} characters",
            )
        return globs

    async def ask(
        self, question: object, project: object = None, *, client: str = STDIO_CLIENT
    ) -> dict[str, Any]:
        """The ``scout ask --json`` document for ``question`` (answered or declined alike)."""
        text = self.check_question(question)
        projects = self.check_projects(project)
        started = time.monotonic()
        document: dict[str, Any] = await self._in_slot(client, self._ask, text, projects, client)
        self.metrics.answered(document["outcome"], time.monotonic() - started)
        self._outcomes[document["outcome"]] += 1
        return document

    async def search(
        self,
        question: object,
        limit: object = None,
        project: object = None,
        *,
        client: str = STDIO_CLIENT,
    ) -> list[dict[str, Any]]:
        """The ``scout search --json`` list for ``question``: in an answer slot, under
        ``answer_timeout``, when it asks the model for terms; on a read thread otherwise."""
        text = self.check_question(question)
        projects = self.check_projects(project)
        count = self._limit(limit)
        if self._expands():
            return await self._in_slot(client, self._search, text, count, projects)
        try:
            return await self._in(self._reads, self._search, None, text, count, projects)
        except ScoutError as exc:
            raise self.refusal(exc) from exc

    def _expands(self) -> bool:
        """Whether retrieval asks the model for terms (then a search is a model call)."""
        return self.retrieval().expand

    async def _in_slot(self, client: str, work: Callable[..., R], *args: Any) -> R:
        """``work(deadline, *args)`` on an answer thread, holding one of the client's slots and
        one answer slot until the thread ends (even past the 504); the deadline is
        ``answer_timeout`` from when it starts."""
        loop = asyncio.get_running_loop()
        waited = time.monotonic()
        await self.client_slots.acquire(client)
        try:
            await self.slots.acquire(self.settings.queue_timeout - (time.monotonic() - waited))
        except BaseException:
            self.client_slots.release(client)
            raise
        self.metrics.in_flight.inc()
        timeout = self.settings.answer_timeout
        try:
            deadline = time.monotonic() + timeout
            future = self._answers.submit(_store_errors, self.config, work, deadline, *args)
        except BaseException:
            self._release(client)
            raise
        # The slots are freed when the thread ends, not when this caller stops waiting for it.
        future.add_done_callback(lambda _: self._release_soon(loop, client))
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), timeout)
        except TimeoutError:
            raise _too_slow(timeout) from None
        except ScoutError as exc:
            raise self.refusal(exc) from exc
        except asyncio.CancelledError:
            # uvicorn cancels what SIGTERM's drain did not see finish: say so, not "internal"
            raise Refused(
                503,
                "stopping",
                "the server stopped before this answer was ready: ask again",
                retry_after=STOPPING_RETRY,
            ) from None

    def _provider(self, deadline: float, timeout: float | None = None) -> _Bounded:
        return _Bounded(configured_provider(self.config, timeout=timeout), self.metrics, deadline)

    def _ask(
        self, deadline: float, question: str, projects: list[str], client: str
    ) -> dict[str, Any]:
        answer = self.config.answer
        # A second past the server's own limit: the deadline ends the call first; this bounds a
        # provider that ignores it.
        timeout = min(answer.timeout, self.settings.answer_timeout + PROVIDER_MARGIN)
        result = answer_question(
            question,
            store=self.store(),
            provider=lambda: self._provider(deadline, timeout),
            passages=answer.passages,
            provider_name=answer.provider,
            projects=projects or None,
            retrieval=self.retrieval(),
            deadline=deadline,
            asker=client,
        )
        self.metrics.fell_back(result.expansion_error, result.dense_error)
        return result.to_json()

    def _search(
        self, deadline: float | None, question: str, limit: int, projects: list[str]
    ) -> list[dict[str, Any]]:
        # With a deadline the search holds an answer slot and may ask the model for terms (and
        # write them to the expansion cache); without one it is a read, and asks no model.
        found = search_passages(
            question,
            store=self.store(writes=deadline is not None),
            limit=limit,
            projects=projects or None,
            provider=None if deadline is None else (lambda: self._provider(deadline)),
            provider_name=self.config.answer.provider,
            retrieval=self.retrieval(),
            deadline=deadline,
        )
        self.metrics.fell_back(found.expansion_error, found.dense_error)
        return hits_json(found.hits, found)

    def retrieval(self) -> RetrievalSettings:
        """The retrieval settings, made once (an in-process embedding model loads once)."""
        if self._retrieval is None:
            self._retrieval = RetrievalSettings.of(self.config, self.config.answer.provider)
        return self._retrieval

    def _limit(self, limit: object) -> int:
        if limit is None or limit == "":
            return self.config.answer.passages
        try:
            count = int(str(limit)) if not isinstance(limit, bool) else -1
        except ValueError:
            count = -1
        if not MIN_PASSAGES <= count <= MAX_SEARCH:
            raise Refused(
                400,
                "bad_request",
                f"limit must be a whole number from {MIN_PASSAGES} to {MAX_SEARCH}",
            )
        return count

    # -- the maintainer routes and health

    async def read(self, work: Callable[[Store], R]) -> R:
        """``work`` on a warm store in a read thread (503 when the store cannot be opened)."""
        try:
            return await self._in(self._reads, lambda: work(self.store(writes=False)))
        except ScoutError as exc:
            raise self.refusal(exc) from exc

    async def health(self) -> dict[str, Any]:
        """``/healthz``: the store opened afresh (a warm connection would hide a deleted or
        replaced file), its passages, projects and last indexing time; 503 when it cannot be."""
        try:
            return await self._in(self._reads, self._health)
        except ScoutError as exc:
            raise self.refusal(exc) from exc

    def _health(self) -> dict[str, Any]:
        with Store.open(self.config.store.path) as store:
            store.refuse_writes()
            return self._counts(store)

    def _counts(self, store: Store) -> dict[str, Any]:
        projects = store.projects()
        indexed = [p.indexed_at for p in projects.values() if p.indexed_at]
        return {
            "status": "ok",
            "passages": store.passage_count(),
            "projects": len(projects),
            "indexed_at": max(indexed) if indexed else None,
        }

    # -- plumbing

    def store(self, *, writes: bool = True) -> Store:
        """This thread's store, opened on first use and kept open (warm). A reader's refuses
        writes; an answer thread's writes the question log, and nothing else (``scout.answer``)."""
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            settings = self.config.store
            store = Store.open(settings.path, busy_timeout=settings.busy_timeout)
            store.keep_questions(settings.question_log_days, settings.question_log_rows)
            if not writes:
                store.refuse_writes()
            self._local.store = store
        return store

    def refusal(self, exc: ScoutError) -> Refused:
        """The one mapping from Scout's errors to HTTP statuses (the CLI's is to exit codes)."""
        if isinstance(exc, Refused):
            return exc
        message = printable(str(exc), 500)
        if isinstance(exc, UsageError):
            return Refused(400, "bad_question", message)
        if isinstance(exc, ProviderTimeout):
            logger.error("provider timed out: %s", message)
            return _too_slow(self.settings.answer_timeout)
        if isinstance(exc, ProviderError):
            # an incident, not an outcome: logged for the maintainer; the asker learns nothing
            # of the provider's address or words (a server's error text may echo anything)
            logger.error("provider failed: %s", message)
            return Refused(
                502, "provider_failed", "the answering model failed: the server's log says why"
            )
        if isinstance(exc, StoreError):
            logger.error("store unavailable: %s", message)
            return Refused(503, "store_unavailable", message, retry_after=30)
        logger.error("internal error: %s", message)
        return Refused(500, "internal", message)

    def refused(self, refused: Refused) -> dict[str, Any]:
        """Count a refusal or failure and give its error document (the one shape of errors)."""
        self.metrics.failed(refused.code)
        return {"error": {"code": refused.code, "message": str(refused)}}

    async def _in(self, pool: Workers, work: Callable[..., R], *args: Any) -> R:
        """``work(*args)`` on a thread of ``pool``, its store's SQLite errors as StoreError."""
        return await asyncio.wrap_future(pool.submit(_store_errors, self.config, work, *args))

    def _release_soon(self, loop: asyncio.AbstractEventLoop, client: str) -> None:
        # Called in the answer's thread as it ends; the slots belong to the event loop.
        try:
            loop.call_soon_threadsafe(self._release, client)
        except RuntimeError:
            pass  # the loop is closed: the server is gone, and its slots with it

    def _release(self, client: str) -> None:
        self.metrics.in_flight.dec()
        self.slots.release()
        self.client_slots.release(client)

    def outcomes(self) -> dict[str, int]:
        """Questions answered and declined since the service started."""
        return dict(self._outcomes)

    def close(self) -> None:
        """After the drain: stop the provider children of answers still running (their threads
        are daemons, left to end with the process). Each thread's store connection is SQLite's
        to close at exit; a WAL store is never left half-written."""
        claude_local = sys.modules.get("scout.providers.claude_local")
        if claude_local is not None:
            claude_local.kill_children()


def _unicode(text: str) -> bool:
    """Whether ``text`` is text UTF-8 can carry: JSON's escapes can spell a lone surrogate,
    which no store, log or page can hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _too_slow(timeout: float) -> Refused:
    return Refused(504, "answer_timeout", f"no answer within {timeout:g} s: ask again later")


def _store_errors(config: Config, work: Callable[..., R], *args: Any) -> R:
    """``work``, with SQLite's errors from a store damaged after it opened as StoreError."""
    try:
        return work(*args)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"store {config.store.path} cannot be read: {exc}") from exc
