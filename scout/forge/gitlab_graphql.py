"""The sweep's issue listing over GitLab's GraphQL API: issues with their notes, 100 a request.

Main rule: one request carries a page of issues AND their notes (GitLab's REST API needs one
more request per issue with notes), so the listing costs about a fiftieth of REST's requests,
and the next page is fetched while the sweep validates this one. Transport is
python-gitlab's ``gitlab.GraphQL`` (httpx) with its retries off; cursor paging, retries, waits on
429 and the page size are Scout's, with the REST side's wait rules (``gitlab_http``).

GitLab's limits (doc/api/graphql/index.md, "Limits"): 100 nodes per connection page, query
complexity 250 for an authenticated request, 10,000 characters per query, 30 seconds per request
(answered ``503 Request timed out``). The query below scores well under the complexity limit
(``query_complexity``; a test holds it to ``COMPLEXITY_BUDGET``), and a timeout halves the issue
page, which grows back after a run of answered requests.

``GitLabGraphQLForge`` is the REST forge with the two issue methods read through GraphQL. With
``api = "auto"`` a GitLab that has no GraphQL endpoint, or whose schema lacks a field or argument
the query uses, is logged once and read through REST from where the listing stood.
"""

from __future__ import annotations

import functools
import json
import logging
import string
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from scout.errors import ForgeError, ForgeReason, GroupNotFound
from scout.forge.base import Issue, Note
from scout.forge.gitlab import GitLabForge
from scout.forge.gitlab_http import MAX_PAGES, _public_url, retry_after_seconds
from scout.forge.retry import MAX_THROTTLED, Attempts, judge
from scout.timefmt import from_forge

log = logging.getLogger(__name__)

PAGE = 100  # GitLab's maximum nodes per connection page
MIN_PAGE = 5  # a timeout never shrinks the issue page below this
GROW_AFTER = 3  # answered requests in a row before a shrunken page doubles again
COMPLEXITY_LIMIT = 250  # GitLab's limit for authenticated requests
COMPLEXITY_BUDGET = 200  # what our queries may score: a margin for GitLab's own accounting
QUERY_LIMIT = 10_000  # characters per query
TIMEOUT = 30.0  # seconds: GitLab cancels a query after 30 s anyway
NOTE_CACHE = 512  # issues whose first notes page is held for the sweep's notes read

# Values are written into the query as literals (``render``): python-gitlab's ``execute`` passes
# variables in a way gql 4 deprecates, and a literal query is what GitLab logs and scores alike.
_NOTES = """notes(first: $notes, after: $notesAfter) {
        pageInfo { endCursor hasNextPage }
        nodes { id body system internal updatedAt }
      }"""

ISSUES_QUERY = (
    """query scoutIssues {
  group(fullPath: $group) {
    issues(includeSubgroups: true, includeArchived: $archived, updatedAfter: $updatedAfter,
           sort: UPDATED_ASC, first: $first, after: $after) {
      pageInfo { endCursor hasNextPage }
      nodes {
        id iid title description webUrl updatedAt confidential reference(full: true)
        """
    + _NOTES
    + """
      }
    }
  }
}"""
)

_WITHOUT_ARCHIVED = ISSUES_QUERY.replace("includeArchived: $archived, ", "")

NOTES_QUERY = (
    """query scoutNotes {
  project(fullPath: $project) {
    issue(iid: $iid) {
      """
    + _NOTES
    + """
    }
  }
}"""
)


def render(template: str, **values: str | int | bool | None) -> str:
    """The query with each ``$name`` replaced by its GraphQL literal (a JSON string is one);
    values the template does not use are ignored."""

    def literal(value: str | int | bool | None) -> str:
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return json.dumps(value)

    return string.Template(template).substitute({k: literal(v) for k, v in values.items()})


# graphql-ruby's codes (and graphql-core's wording) for a schema that lacks what we ask for.
_UNKNOWN_CODES = {"undefinedField", "argumentNotAccepted", "undefinedType", "undefinedArgument"}
_UNKNOWN_WORDS = ("doesn't exist on type", "doesn't accept argument", "Cannot query field")
_TIMED_OUT = "Request timed out"
_TOO_COMPLEX = "exceeds max complexity"


class Unsupported(ForgeError):
    """Raised when the instance has no GraphQL endpoint or its schema lacks what Scout asks."""

    def __init__(self, message: str) -> None:
        super().__init__("bad data", message)
        self.detail = message


def query_complexity(query: str) -> int:
    """The query's score after GitLab's rule (app/graphql/types/base_field.rb): every field
    costs 1, and a connection read ``first: n`` at a time costs its selection times ``1 + n/100``
    (100 nodes double it); nested connections are not multiplied by their parent's page. GitLab
    adds that factor only to resolver-backed connections (``group.issues``, not ``notes``), and
    a point for a sort argument: this bound counts every connection, so it errs high."""
    from graphql import FieldNode, IntValueNode, OperationDefinitionNode, parse

    def first_of(node: FieldNode) -> int | None:
        for argument in node.arguments or ():
            if argument.name.value == "first" and isinstance(argument.value, IntValueNode):
                return int(argument.value.value)
        return None

    def score(selections: Any) -> float:
        total = 0.0
        for node in selections or ():
            if not isinstance(node, FieldNode):
                continue
            children = score(node.selection_set.selections) if node.selection_set else 0.0
            cost = 1.0 + children
            first = first_of(node)
            if first is not None:
                cost *= 1.0 + min(first, PAGE) / 100.0
            total += cost
        return total

    document = parse(query)
    operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
    return int(score(operation.selection_set.selections))


@dataclass
class _NotesStart:
    """The notes an issue's listing already brought, and where their paging stopped."""

    notes: list[Note]
    cursor: str | None  # None: every note is in ``notes``


class GraphQLClient:
    """``gitlab.GraphQL`` with Scout's retries, waits, request counting and error translation.

    Every attempt is counted as ``graphql`` in ``requests``. Worker threads (the sweep reads notes
    ahead) each get their own ``gitlab.GraphQL`` over one shared ``httpx.Client``.
    """

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        counter: Counter[str],
        count_lock: threading.Lock | None = None,
        timeout: float = TIMEOUT,
        max_retries: int = 3,
        backoff: float = 0.5,
        sleep: Callable[[float], None] = time.sleep,
        pace: Callable[[], None] = lambda: None,
        throttle: Callable[[Any], float] | None = None,
        answered: Callable[[Any], None] = lambda _headers: None,
    ) -> None:
        http = _httpx()
        self.url = url.rstrip("/")
        self._token = token
        self.requests = counter
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self._sleep = sleep
        self._pace = pace
        self._throttle = throttle
        self._answered = answered
        self._count_lock = count_lock or threading.Lock()
        self._local = threading.local()
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = http.Client(
            timeout=timeout,
            headers=headers,
            event_hooks={"request": [self._count], "response": [self._remember]},
        )

    def close(self) -> None:
        self._http.close()

    def _count(self, request: Any) -> None:
        with self._count_lock:
            self.requests["graphql"] += 1

    def _remember(self, response: Any) -> None:
        self._local.status = response.status_code
        self._local.headers = response.headers

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            import gitlab

            # python-gitlab's own retry loop is off (max_retries=0): it would sleep for any
            # Retry-After unbounded and retry out of our sight; ours bounds and counts.
            client = gitlab.GraphQL(
                self.url,
                token=self._token,
                client=self._http,
                max_retries=0,
                obey_rate_limit=False,
                retry_transient_errors=False,
            )
            self._local.client = client
        return client

    def execute(self, make_query: Callable[[], str], on_timeout: Callable[[], bool]) -> Any:
        """The ``data`` of one query, after bounded retries; ForgeError (or Unsupported) if not.

        ``make_query`` is called for each attempt. ``on_timeout`` is called when GitLab (or our
        client) timed the query out: it shrinks the page and answers whether it could; if it
        could, the retry is free.
        """
        import gitlab
        from gql.transport.exceptions import (
            TransportConnectionFailed,
            TransportProtocolError,
            TransportQueryError,
            TransportServerError,
        )

        httpx = _httpx()
        attempts = Attempts(self.max_retries, self.backoff)
        where = f"POST {_public_url(self.url)}/api/graphql"  # never user info from forge.url
        while True:
            query = make_query()
            if len(query) > QUERY_LIMIT:
                raise ForgeError("bad data", f"a GraphQL query of {len(query)} characters")
            self._pace()
            self._local.status, self._local.headers = None, {}
            failure: Exception
            status: int | None
            try:
                data = self._client().execute(query)
                self._answered(self._local.headers or {})
                return data
            except (
                gitlab.exceptions.GitlabAuthenticationError,  # a 401
                gitlab.exceptions.GitlabHttpError,
            ) as exc:
                status, failure = exc.response_code, exc
                decision = judge(status)
                if decision == "not found":
                    raise Unsupported(f"{where} answered 404: no GraphQL API there") from exc
                if decision == "unauthorized":
                    raise ForgeError(
                        "unauthorized",
                        f"{where} answered {status}; check the token (forge.token_env) and its "
                        "read_api scope",
                    ) from exc
                if decision not in ("throttle", "retry"):
                    raise ForgeError("bad data", f"{where} answered {status}") from exc
                detail = f"answered {status}"
            except TransportQueryError as exc:
                errors, failure = exc.errors or [], exc
                messages = [str(e.get("message", "")) for e in errors if isinstance(e, dict)]
                detail = f"answered errors: {messages[0] if messages else 'no message'}"
                if _unknown(errors):
                    raise Unsupported(f"GitLab's GraphQL schema: {messages[0]}") from exc
                if any(_TIMED_OUT in m or _TOO_COMPLEX in m for m in messages) and on_timeout():
                    log.warning("%s: %s; retrying with a smaller page", where, messages[0])
                    continue
                # Otherwise a partial answer (``errors`` beside ``data``): not trusted, since a
                # field that failed reads as null, and a missing note would change a verdict.
                status = self._local.status
            except TransportConnectionFailed as exc:
                cause, failure, status = exc.__cause__, exc, None
                if isinstance(cause, httpx.ConnectError):
                    raise ForgeError(
                        "unreachable",
                        f"{where}: connection refused; check forge.url and that GitLab is up",
                    ) from exc
                if isinstance(cause, httpx.TimeoutException) and on_timeout():
                    log.warning("%s timed out; retrying with a smaller page", where)
                    continue
                detail = type(cause or exc).__name__
            except (TransportProtocolError, TransportServerError) as exc:
                # Not a GraphQL answer: an HTML error page, a body cut short.
                status, failure = self._local.status, exc
                detail = f"answered {status}, not GraphQL"
            reason = self._reason(status, failure)
            if reason == "rate limited" and self._throttle is not None:
                # The shared limiter paused every request (REST's too); its waiting budget, not
                # the retry count, bounds how long a throttled run goes on.
                if attempts.may_throttle():
                    self._throttle(self._local.headers or {})
                    continue
                raise ForgeError(
                    reason, f"{where} still answered 429 after {MAX_THROTTLED} waits"
                ) from failure
            wait = attempts.backoff_wait()
            if wait is None:
                raise ForgeError(
                    reason, f"{where} {detail}, after {attempts.made} attempt(s)"
                ) from failure
            if reason == "rate limited":  # no shared limiter: GitLab's Retry-After, if it says
                seconds = retry_after_seconds(
                    (self._local.headers or {}).get("Retry-After"), time.time()
                )
                wait = wait if seconds is None else seconds
            log.warning("%s %s; retry %d in %.1fs", where, detail, attempts.retries, wait)
            self._sleep(wait)

    def _reason(self, status: int | None, failure: Exception) -> ForgeReason:
        """What a failure the policy retries is called if the retries run out."""
        from gql.transport.exceptions import TransportConnectionFailed, TransportProtocolError

        if status == 429:
            return "rate limited"
        if isinstance(failure, TransportConnectionFailed):
            return "unreachable"
        if isinstance(failure, TransportProtocolError) and (status or 0) < 500:
            return "bad data"
        return "server error"


def _httpx() -> Any:
    """The httpx that gql's transport catches errors of: gql 4 prefers httpx2 where it is
    installed (the anthropic SDK brings it), and python-gitlab hands gql whatever client it is
    given, so the client must come from the same module or HTTP errors escape untranslated."""
    from gql.transport import httpx as transport

    # gql does not re-export it by name; read it off the module as its own code does
    return getattr(transport, "httpx")  # noqa: B009


def _never() -> bool:
    return False


def _unknown(errors: list[Any]) -> bool:
    for error in errors:
        if not isinstance(error, dict):
            continue
        code = (error.get("extensions") or {}).get("code")
        message = str(error.get("message", ""))
        if code in _UNKNOWN_CODES or any(word in message for word in _UNKNOWN_WORDS):
            return True
    return False


class PageSize:
    """The issue page: halved on a timeout (down to MIN_PAGE), doubled back after GROW_AFTER
    answered requests in a row, never above GitLab's 100."""

    def __init__(self, size: int = PAGE) -> None:
        self.size = max(MIN_PAGE, min(size, PAGE))
        self._ceiling = self.size
        self._answered = 0

    def shrink(self) -> bool:
        self._answered = 0
        if self.size <= MIN_PAGE:
            return False
        self.size = max(MIN_PAGE, self.size // 2)
        return True

    def answered(self) -> None:
        self._answered += 1
        if self.size < self._ceiling and self._answered >= GROW_AFTER:
            self.size = min(self._ceiling, self.size * 2)
            self._answered = 0


def _int_id(gid: Any) -> int:
    """``gid://gitlab/Note/123`` to 123."""
    if isinstance(gid, int):
        return gid
    tail = str(gid).rsplit("/", 1)[-1]
    if not tail.isdigit():
        raise ForgeError("bad data", f"GitLab's answer has an id that is not a global id: {gid!r}")
    return int(tail)


def _field(data: Any, key: str, kind: type) -> Any:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ForgeError("bad data", f"GitLab's GraphQL answer lacks a valid {key!r}")
    return value


def _notes(connection: Any) -> tuple[list[Note], str | None]:
    """A notes page as records (system notes dropped), and the cursor of the next page."""
    notes = []
    for node in _field(connection, "nodes", list):
        if node.get("system"):
            continue
        notes.append(
            Note(
                id=_int_id(_field(node, "id", str)),
                body=node.get("body") or "",
                system=False,
                updated_at=from_forge(node.get("updatedAt")),
                internal=bool(node.get("internal")),
            )
        )
    info = _field(connection, "pageInfo", dict)
    return notes, (info.get("endCursor") if info.get("hasNextPage") else None)


def _issue(node: Any, notes_count: int) -> Issue:
    full = _field(node, "reference", str)
    return Issue(
        project=full.rsplit("#", 1)[0],
        iid=int(_field(node, "iid", str)),
        title=node.get("title") or "",
        description=node.get("description") or "",
        state="",
        updated_at=from_forge(_field(node, "updatedAt", str)) or "",
        web_url=_field(node, "webUrl", str),
        user_notes_count=notes_count,
        project_id=None,
        confidential=bool(node.get("confidential")),
    )


class GitLabGraphQLForge(GitLabForge):
    """The GitLab forge with issues and notes read through GraphQL (``forge.api``)."""

    def __init__(
        self,
        url: str,
        token: str | None,
        groups: list[str],
        *,
        api: str = "auto",
        include_archived: bool = False,
        graphql_timeout: float = TIMEOUT,
        page_size: int = PAGE,
        **options: Any,
    ) -> None:
        # The REST listing reads archived projects' issues too (non_archived=false) and the sweep
        # filters them by the corpus rules, so a fallback to REST lists what this would.
        super().__init__(url, token, groups, **options)
        self.api = api
        self.include_archived = include_archived
        self._rest = api == "rest"
        self._page = PageSize(page_size)
        self._lock = threading.Lock()
        self._started: OrderedDict[tuple[str, int, str], _NotesStart] = OrderedDict()
        self._token = token
        self._graphql_timeout = graphql_timeout
        self._retries = (options.get("max_retries", 3), options.get("backoff", 0.5))
        self._client: GraphQLClient | None = None

    @property
    def _graphql(self) -> GraphQLClient:
        # Made on first use: `scout index` never lists issues and need not pay for httpx.
        with self._lock:
            if self._client is None:
                self._client = GraphQLClient(
                    self.url,
                    self._token,
                    counter=self.requests,
                    count_lock=getattr(self._http, "_count_lock", None),
                    timeout=self._graphql_timeout,
                    max_retries=self._retries[0],
                    backoff=self._retries[1],
                    pace=self._pace,
                    throttle=self._throttled,
                    answered=self._http.limiter.observe,
                )
            return self._client

    def _pace(self) -> None:
        """Wait out a pause of the forge's shared rate limiter (REST and GraphQL share it)."""
        self._http.limiter.before_request()

    def _throttled(self, headers: Any) -> float:
        return float(self._http.limiter.throttled(headers))

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
        super().close()

    def _fall_back(self, exc: Unsupported) -> None:
        if self.api == "graphql":
            raise ForgeError(
                "bad data", f'{exc.detail}; set forge.api = "rest" (or "auto") for this GitLab'
            ) from exc
        log.warning("reading issues through REST: %s", exc.detail)
        self._rest = True

    def issues_updated_after(self, group: str, after: str | None) -> Iterator[Issue]:
        if self._rest:
            yield from super().issues_updated_after(group, after)
            return
        last = after
        try:
            for issue in self._graphql_issues(group, after):
                last = issue.updated_at
                yield issue
        except Unsupported as exc:
            self._fall_back(exc)
            # REST's updated_after is inclusive: the issues at ``last`` come again, and the
            # sweep passes over those it already holds.
            yield from super().issues_updated_after(group, last)

    def _graphql_issues(self, group: str, after: str | None) -> Iterator[Issue]:
        # The next page is fetched while the sweep validates this one: a page of 100 issues with
        # their notes is a slow request, and validation waits on requests of its own. A failed
        # fetch surfaces when the sweep reaches that page, after every issue before it.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="scout-graphql") as pool:
            pending = pool.submit(self._graphql_page, group, after, None)
            for _ in range(MAX_PAGES):
                nodes, cursor = pending.result()
                if cursor is not None:
                    pending = pool.submit(self._graphql_page, group, after, cursor)
                for node in nodes:
                    notes, more = _notes(_field(node, "notes", dict))
                    issue = _issue(node, len(notes) + (1 if more else 0))
                    if issue.user_notes_count:
                        self._hold(issue, _NotesStart(notes, more))
                    yield issue
                if cursor is None:
                    return
        raise ForgeError("bad data", f"GraphQL issues of {group}: more than {MAX_PAGES} pages")

    def _graphql_page(
        self, group: str, after: str | None, cursor: str | None
    ) -> tuple[list[Any], str | None]:
        """One page of issue nodes, and the cursor of the next page (None: the last page)."""
        # includeArchived (nonArchived on older GitLab) leaves archived projects out by default
        # in both: asked for only when wanted, an older GitLab still answers.
        template = ISSUES_QUERY if self.include_archived else _WITHOUT_ARCHIVED
        page = functools.partial(
            render,
            template,
            group=group.strip("/"),
            updatedAfter=after,
            after=cursor,
            notes=PAGE,
            notesAfter=None,
            archived=self.include_archived,
        )
        # The page size is read at each attempt: a timeout shrinks it before the retry.
        data = self._graphql.execute(functools.partial(self._sized, page), self._page.shrink)
        self._page.answered()
        found = data.get("group") if isinstance(data, dict) else None
        if found is None:
            # GraphQL answers null for a group that does not exist or that the token cannot see
            raise GroupNotFound(group.strip("/"), self._http.public_url)
        connection = _field(found, "issues", dict)
        nodes = _field(connection, "nodes", list)
        info = _field(connection, "pageInfo", dict)
        return nodes, _field(info, "endCursor", str) if info.get("hasNextPage") else None

    def _sized(self, page: Callable[..., str]) -> str:
        return page(first=self._page.size)

    def _hold(self, issue: Issue, start: _NotesStart) -> None:
        with self._lock:
            self._started[(issue.project, issue.iid, issue.updated_at)] = start
            while len(self._started) > NOTE_CACHE:
                self._started.popitem(last=False)

    def issue_notes(self, issue: Issue) -> Iterator[Note]:
        if self._rest:
            return super().issue_notes(issue)
        with self._lock:
            start = self._started.pop((issue.project, issue.iid, issue.updated_at), None)
        return self._notes_from(issue, start)

    def _notes_from(self, issue: Issue, start: _NotesStart | None) -> Iterator[Note]:
        given: set[int] = set()
        cursor: str | None = None  # not held (evicted, or asked for directly): from the start
        if start is not None:
            yield from start.notes
            given.update(note.id for note in start.notes)
            cursor = start.cursor
            if cursor is None:
                return
        for _ in range(MAX_PAGES):
            query = functools.partial(
                render,
                NOTES_QUERY,
                project=issue.project,
                iid=str(issue.iid),
                notes=PAGE,
                notesAfter=cursor,
            )
            try:
                data = self._graphql.execute(query, _never)
            except Unsupported as exc:
                self._fall_back(exc)
                yield from (n for n in super().issue_notes(issue) if n.id not in given)
                return
            project = data.get("project") if isinstance(data, dict) else None
            found = project.get("issue") if isinstance(project, dict) else None
            if found is None:
                raise ForgeError(
                    "bad data", f"GraphQL: issue {issue.project}#{issue.iid} not found"
                )
            notes, cursor = _notes(_field(found, "notes", dict))
            yield from notes
            given.update(note.id for note in notes)
            if cursor is None:
                return
        raise ForgeError(
            "bad data", f"GraphQL notes of {issue.project}#{issue.iid}: too many pages"
        )
