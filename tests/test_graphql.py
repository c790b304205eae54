"""GraphQL sweeps (``forge.api``): the same issues, notes and verdicts as REST, far fewer requests.

The GitLab test server answers ``POST /api/graphql`` with graphql-core over GitLab's schema subset
(tests/gitlab_server/graphql_api.py). The forge-level tests compare the GraphQL listing with the
REST one on one estate; the sweep-level tests run the real CLI through both APIs on the served
demo estate and compare the stores row for row, including sweeps killed at seeded points.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from scout.demo.builder import EstateBuilder
from scout.errors import ForgeError
from scout.forge.base import Issue
from scout.forge.gitlab import GitLabForge
from scout.forge.gitlab_graphql import (
    COMPLEXITY_BUDGET,
    ISSUES_QUERY,
    NOTES_QUERY,
    PAGE,
    QUERY_LIMIT,
    GitLabGraphQLForge,
    PageSize,
    query_complexity,
    render,
)
from scout.forge.retry import MAX_THROTTLED
from tests.fakes.issues import kill_sweep_at, rounding_issue
from tests.gitlab_server.graphql_api import MAX_COMPLEXITY
from tests.gitlab_server.server import GitLabServer
from tests.helpers.served import TOKEN, TOKEN_ENV, Served, run_scout, serve_demo, state

# One worker runs the module: its GitLab estate and the swept store are module fixtures, built
# once a run rather than once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_graphql")

URL = "https://gitlab.acme.example"
ISSUES = 230  # three pages of 100
MANY_NOTES = 250  # one issue whose notes need two follow-up queries


def _estate(root: Path) -> Path:
    """acme/tool (230 issues, one with 250 notes, one confidential, one internal note),
    acme/deep/lib in a subgroup, acme/old archived with one issue."""
    builder = EstateBuilder(root, url=URL)
    for path in ("acme/tool", "acme/deep/lib"):
        builder.project(path).commit({"README.md": f"# {path}\n"}, "init")
    builder.project("acme/old", archived=True).commit({"README.md": "# old\n"}, "init")
    for n in range(1, ISSUES + 1):
        project = "acme/deep/lib" if n % 7 == 0 else "acme/tool"
        k = (n + 1) // 2  # two issues share each update time: ties must page cleanly
        stamp = f"2026-03-{1 + k // 40:02d}T{(k // 3) % 24:02d}:{k % 60:02d}:00Z"
        notes: list[Any] = [f"note {n}.1 see README.md", {"body": "moved", "system": True}]
        if n == 5:
            notes = [{"body": f"note {k}", "system": k % 10 == 0} for k in range(MANY_NOTES)]
        if n == 7:
            notes.append({"body": "internal: see README.md", "internal": True})
        record = builder.issue(
            project,
            n,
            f"Issue {n}",
            f"About README.md {n}",
            updated_at=stamp,
            notes=notes if n % 2 else [],
        )
        if n == 8:
            record["confidential"] = True
    builder.issue("acme/old", 1, "Old", "old README.md", updated_at="2026-03-02T00:00:00Z")
    return builder.write()


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _estate(tmp_path_factory.mktemp("graphql") / "estate")


@pytest.fixture
def server(estate: Path, gitlab_server_factory: Callable[..., GitLabServer]) -> GitLabServer:
    return gitlab_server_factory(estate, token=TOKEN)


_OPEN: list[GitLabForge] = []


@pytest.fixture(autouse=True)
def _close_forges() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def _graphql(server: GitLabServer, **options: Any) -> GitLabGraphQLForge:
    options.setdefault("api", "graphql")
    options.setdefault("backoff", 0.01)
    _OPEN.append(GitLabGraphQLForge(server.url, TOKEN, ["acme"], **options))
    return _OPEN[-1]  # type: ignore[return-value]


def _rest(server: GitLabServer) -> GitLabForge:
    _OPEN.append(GitLabForge(server.url, TOKEN, ["acme"], backoff=0.01))
    return _OPEN[-1]


def _plain(issue: Issue) -> dict[str, Any]:
    """An issue without what only REST reads (the state and numeric project id)."""
    record = dataclasses.asdict(issue)
    del record["state"], record["project_id"]
    record["user_notes_count"] = (
        record["user_notes_count"] > 0
    )  # GraphQL knows "some", not how many
    return record


def _listing(forge: GitLabForge, after: str | None = None) -> list[tuple[Any, ...]]:
    """Every issue with its notes, in listing order."""
    out = []
    for issue in forge.issues_updated_after("acme", after):
        notes = list(forge.issue_notes(issue)) if issue.user_notes_count else []
        out.append((_plain(issue), [dataclasses.asdict(n) for n in notes]))
    return out


# ------------------------------------------------------------------ the listing


@pytest.mark.parametrize("after", [None, "2026-03-03T10:33:00Z"])
def test_graphql_lists_the_same_issues_and_notes_as_rest(server: GitLabServer, after: str) -> None:
    rest = _rest(server)
    graphql = _graphql(server, include_archived=True)  # the REST test route keeps archived ones
    expected, got = _listing(rest, after), _listing(graphql, after)
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    if after is None:
        assert len(got) == ISSUES + 1
        many = next(notes for issue, notes in got if issue["iid"] == 5)
        assert len(many) == MANY_NOTES - MANY_NOTES // 10  # system notes dropped
        assert [n["body"] for n in many] == [f"note {k}" for k in range(MANY_NOTES) if k % 10]
        # three pages of issues with their notes, and two follow-up pages for the long thread
        assert graphql.requests == {"graphql": 3 + 2}
        assert rest.requests["issues"] + rest.requests["notes"] > 100
    stamps = [issue["updated_at"] for issue, _ in got]
    assert stamps == sorted(stamps)


def test_archived_projects_issues_come_only_with_include_archived(server: GitLabServer) -> None:
    default, archived = _graphql(server), _graphql(server, include_archived=True)
    projects = {i.project for i in default.issues_updated_after("acme", None)}
    assert projects == {"acme/tool", "acme/deep/lib"}
    assert "acme/old" in {i.project for i in archived.issues_updated_after("acme", None)}


def test_confidential_issues_and_internal_notes_are_marked(server: GitLabServer) -> None:
    forge = _graphql(server)
    issues = {i.iid: i for i in forge.issues_updated_after("acme", None)}
    assert [iid for iid, i in issues.items() if i.confidential] == [8]
    notes = {iid: list(forge.issue_notes(issues[iid])) for iid in (5, 7)}
    assert [n.body for n in notes[7] if n.internal] == ["internal: see README.md"]
    assert not any(n.internal for n in notes[5])


def _post(server: GitLabServer, query: str, variables: dict[str, Any] | None = None) -> Any:
    response = httpx.post(
        f"{server.url}/api/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    return response.status_code, response.json()


def test_the_server_follows_gitlabs_defaults_and_error_shapes(server: GitLabServer) -> None:
    query = 'query { group(fullPath: "acme") { issues { nodes { reference(full: true) } } } }'
    _status, body = _post(server, query)
    refs = {node["reference"].split("#")[0] for node in body["data"]["group"]["issues"]["nodes"]}
    assert refs == {"acme/tool"}  # includeSubgroups defaults to false, archived ones are left out
    status, body = _post(server, 'query { group(fullPath: "acme") { nope } }')
    assert (
        status == 200
        and body["errors"][0]["message"] == "Field 'nope' doesn't exist on type 'Group'"
    )
    assert body["errors"][0]["extensions"]["code"] == "undefinedField"
    status, body = _post(server, 'query { group(fullPath: "acme") { issues(nope: 1) { count } } }')
    assert body["errors"][0]["message"] == "Field 'issues' doesn't accept argument 'nope'"
    wide = " ".join(f"a{k}: issues(first: 100) {{ count }}" for k in range(80))
    status, body = _post(server, f'query {{ group(fullPath: "acme") {{ {wide} }} }}')
    assert body["errors"][0]["message"].startswith("Query has complexity of ")
    assert body["errors"][0]["message"].endswith(f"exceeds max complexity of {MAX_COMPLEXITY}")
    status, body = _post(server, "query { " + "__typename " * 1200 + "}")
    assert body["errors"][0]["message"].startswith("Query too large")
    status, body = _post(
        server, 'query { group(fullPath: "acme") { issues(updatedAfter: "yesterday") { count } } }'
    )
    assert "errors" in body and "ISO 8601" in body["errors"][0]["message"]


def test_the_sweep_queries_keep_a_margin_under_gitlabs_limits(server: GitLabServer) -> None:
    cursor = "eyJ1cGRhdGVkX2F0IjogIjIwMjYtMDMtMDFUMDA6MDA6MDBaIiwgImlkIjogMTIzNDU2Nzg5fQ=="
    issues = render(
        ISSUES_QUERY,
        group="acme/" + "sub/" * 20 + "group",
        updatedAfter="2026-03-01T00:00:00.000Z",
        after=cursor,
        first=PAGE,
        notes=PAGE,
        notesAfter=None,
        archived=True,
    )
    notes = render(NOTES_QUERY, project="acme/x", iid="12", notes=PAGE, notesAfter=cursor)
    assert query_complexity(issues) <= COMPLEXITY_BUDGET < MAX_COMPLEXITY
    assert query_complexity(notes) <= COMPLEXITY_BUDGET
    assert max(len(issues), len(notes)) < QUERY_LIMIT // 10
    forge = _graphql(server)
    list(forge.issue_notes(next(i for i in forge.issues_updated_after("acme", None) if i.iid == 5)))
    # the server scores the same queries independently, and took every one
    assert server.graphql.complexities[0] == query_complexity(issues)
    assert max(server.graphql.complexities) <= COMPLEXITY_BUDGET


# ------------------------------------------------------------------ faults


@pytest.mark.parametrize(
    "fault, extra",
    [
        ({"fault": "429", "retry_after": 0.01}, 1),
        ({"fault": "500", "times": 2}, 2),
        ({"fault": "502"}, 1),
        ({"fault": "503"}, 1),
        ({"fault": "drop"}, 1),
        ({"fault": "truncate"}, 1),
        ({"partial_errors": 2}, 2),
    ],
    ids=["429", "500x2", "502", "503", "drop", "truncate", "partial-errors"],
)
def test_transient_faults_are_retried_and_counted(
    server: GitLabServer, fault: dict[str, Any], extra: int
) -> None:
    clean = _listing(_graphql(server))
    if "partial_errors" in fault:
        server.graphql.partial_errors = fault["partial_errors"]
    else:
        options = dict(fault)
        server.inject(options.pop("fault"), match="/api/graphql", **options)
    forge = _graphql(server)
    assert _listing(forge) == clean
    assert forge.requests == {"graphql": 5 + extra}


@pytest.mark.parametrize(
    "fault, reason, requests",
    [
        ("500", "server error", 3),
        # 429s are waited out under the limiter REST shares, up to MAX_THROTTLED waits
        ("429", "rate limited", MAX_THROTTLED + 1),
        ("partial", "server error", 3),
    ],
)
def test_faults_that_last_stop_with_a_forge_error(
    server: GitLabServer, fault: str, reason: str, requests: int
) -> None:
    if fault == "partial":
        server.graphql.partial_errors = 100
    else:
        server.inject(fault, match="/api/graphql", times=None, retry_after=0)
    forge = _graphql(server, max_retries=2)
    with pytest.raises(ForgeError) as caught:
        list(forge.issues_updated_after("acme", None))
    assert caught.value.reason == reason
    assert forge.requests == {"graphql": requests}


def test_a_bad_token_is_unauthorized(server: GitLabServer) -> None:
    forge = GitLabGraphQLForge(server.url, "wrong", ["acme"], api="graphql")
    _OPEN.append(forge)
    with pytest.raises(ForgeError) as caught:
        list(forge.issues_updated_after("acme", None))
    assert caught.value.reason == "unauthorized" and "read_api" in str(caught.value)
    assert "wrong" not in str(caught.value)


def test_errors_never_show_the_token_or_user_info_of_the_url(server: GitLabServer) -> None:
    url = server.url.replace("http://", "http://scout:pa55word@")
    forge = GitLabGraphQLForge(url, "wrong-token-123", ["acme"], api="graphql", max_retries=0)
    _OPEN.append(forge)
    with pytest.raises(ForgeError) as caught:
        list(forge.issues_updated_after("acme", None))
    assert caught.value.reason == "unauthorized"
    assert "pa55word" not in str(caught.value) and "wrong-token-123" not in str(caught.value)


def test_gitlab_timeouts_shrink_the_page_and_it_grows_back(server: GitLabServer) -> None:
    clean = _listing(_graphql(server))
    server.clear_log()
    server.graphql.time_out_above = 25  # pages of more than 25 issues run out of time
    forge = _graphql(server)
    sizes = [forge._page.size for _issue in forge.issues_updated_after("acme", None)]
    assert min(sizes) == 25 and len(sizes) == ISSUES
    statuses = [r.status for r in server.requests("/api/graphql")]
    assert statuses[:3] == [503, 503, 200]  # 100, then 50, timed out; 25 answered
    assert statuses.count(503) >= 4  # it grew back to 50 after three pages, and was cut again
    server.graphql.time_out_above = None
    assert _listing(forge) == clean
    assert forge._page.size == PAGE  # 25, 25, 25, 50, 50, 50, then 100 again


def test_a_client_timeout_shrinks_the_page(server: GitLabServer) -> None:
    # One request slowed far past the timeout, and a timeout the others cannot reach even on a
    # loaded machine (at 0.3 s, pages that were not slowed timed out too in a 4-worker run)
    server.inject("slow", match="/api/graphql", delay=2.5)
    forge = _graphql(server, graphql_timeout=1.0)
    assert len(list(forge.issues_updated_after("acme", None))) == ISSUES
    assert forge.requests["graphql"] == 1 + 4  # timed out; then 50, 50, 50, 100 a page


def test_the_page_size_halves_and_doubles_within_bounds() -> None:
    page = PageSize()
    assert [page.shrink() for _ in range(6)] == [True] * 5 + [False]  # 50 25 12 6 5
    assert page.size == 5
    for _ in range(30):
        page.answered()
    assert page.size == PAGE


# ------------------------------------------------------------------ falling back to REST


@pytest.mark.parametrize("missing", ["disabled", "unknown_argument"])
def test_auto_falls_back_to_rest_with_one_log_line(
    server: GitLabServer, missing: str, caplog: pytest.LogCaptureFixture
) -> None:
    expected = _listing(_rest(server))
    setattr(server.graphql, missing, True)
    forge = _graphql(server, api="auto", include_archived=True)
    with caplog.at_level(logging.WARNING, logger="scout.forge.gitlab_graphql"):
        got = _listing(forge)
    assert got == expected
    assert forge.requests["graphql"] == 1 and forge.requests["issues"] >= 3
    lines = [r.getMessage() for r in caplog.records if r.name == "scout.forge.gitlab_graphql"]
    assert len(lines) == 1 and lines[0].startswith("reading issues through REST: ")


def test_an_older_schema_answers_unless_archived_projects_are_wanted(
    server: GitLabServer,
) -> None:
    server.graphql.unknown_argument = True
    assert len(list(_graphql(server).issues_updated_after("acme", None))) == ISSUES
    forge = _graphql(server, api="graphql", include_archived=True)
    with pytest.raises(ForgeError) as caught:
        list(forge.issues_updated_after("acme", None))
    assert "includeArchived" in str(caught.value) and 'forge.api = "rest"' in str(caught.value)


# ------------------------------------------------------------------ sweeps through the CLI

EXTRA = 110


def _extend(served: Served) -> None:
    """Many more issues (two GraphQL pages), a confidential one and an internal note."""
    issues = served.estate / "issues" / "acme" / "ledger.jsonl"
    web = f"{served.server.url}/acme/ledger/-/issues"
    with issues.open("a", encoding="utf-8") as handle:
        for n in range(EXTRA):
            notes = [
                {
                    "id": 90_000 + n,
                    "body": "Also docs/architecture.md",
                    "internal": n % 25 == 0,
                    "system": False,
                    "created_at": "2026-03-01T00:00:00Z",
                    "updated_at": "2026-03-01T00:00:00Z",
                }
            ]
            record = rounding_issue(n, web, confidential=n == 3, notes=notes if n % 5 == 0 else [])
            handle.write(json.dumps(record) + "\n")


def _config(served: Served, name: str, api: str) -> Path:
    return served.config(name, api=api)


@dataclasses.dataclass
class Swept:
    served: Served
    indexed: Path  # a store after `scout index`, copied into each sweep's folder
    rest: dict[str, Any]  # the store after a REST sweep
    rest_json: dict[str, Any]


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Swept]:
    started: list[GitLabServer] = []

    def start(estate: Path, **kw: Any) -> GitLabServer:
        started.append(GitLabServer(estate, **kw).start())
        return started[-1]

    served = serve_demo(tmp_path_factory.mktemp("swept"), start)
    _extend(served)
    base = _config(served, "indexed", "rest")
    assert run_scout(base, "index").code == 0
    rest = _copy_store(base.parent / "scout.db", _config(served, "rest", "rest"))
    done = run_scout(rest, "sweep", "--json")
    assert done.code == 0, done.stderr
    yield Swept(served, base.parent / "scout.db", state(rest.parent / "scout.db"), done.json())
    for server in started:
        server.stop()


def _copy_store(db: Path, config: Path) -> Path:
    for suffix in ("", "-wal", "-shm"):
        source = Path(f"{db}{suffix}")
        if source.exists():
            shutil.copy(source, config.parent / f"scout.db{suffix}")
    return config


def test_a_graphql_sweep_equals_a_rest_sweep_row_for_row(swept: Swept) -> None:
    config = _copy_store(swept.indexed, _config(swept.served, "graphql", "graphql"))
    done = run_scout(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    assert state(config.parent / "scout.db") == swept.rest
    got, rest = done.json(), swept.rest_json
    for key in ("issues_read", "notes_read", "references", "accepted", "rejected", "skipped"):
        assert got[key] == rest[key], key
    assert got["skipped"]["issue_confidential"] == 1 and got["skipped"]["note_internal"] == 5
    requests = got["forge_requests"]
    assert "issues" not in requests and "notes" not in requests
    assert requests["graphql"] == 2  # 117 issues with their notes: two pages
    listing = rest["forge_requests"]["issues"] + rest["forge_requests"]["notes"]
    assert listing >= 10 * requests["graphql"]
    again = run_scout(config, "sweep", "--json").json()
    assert again["issues_read"] == 0 and again["forge_requests"]["graphql"] == 1


@pytest.mark.slow
@pytest.mark.faults
def test_a_graphql_sweep_killed_anywhere_then_rerun_equals_a_rest_sweep(swept: Swept) -> None:
    total = len(swept.rest["issues"])
    # placed on purpose: before the first commit, inside the first page of issues, and inside
    # the second (a rerun resumes from a page cursor GraphQL gave, not from the start)
    points = [0, total // 2, total - 2]
    assert total - 2 > PAGE
    killed_at = []
    env = {**os.environ, TOKEN_ENV: TOKEN}
    for trial, point in enumerate(points):
        config = _copy_store(swept.indexed, _config(swept.served, f"kill{trial}", "graphql"))
        db = config.parent / "scout.db"
        died = kill_sweep_at(["--config", str(config), "sweep"], db, point, env)
        if died is not None:
            killed_at.append(died)
        done = run_scout(config, "sweep")
        assert done.code == 0, done.stderr
        assert state(db) == swept.rest, f"killed after {point} issues"
    assert len(set(killed_at)) >= 3, killed_at


def test_auto_sweeps_through_rest_where_gitlab_has_no_graphql(swept: Swept) -> None:
    server = swept.served.server
    server.graphql.disabled = True
    try:
        strict = _copy_store(swept.indexed, _config(swept.served, "strict", "graphql"))
        failed = run_scout(strict, "sweep")
        assert failed.code == 5 and failed.stdout == ""
        assert failed.stderr.count("\n") == 1 and 'set forge.api = "rest"' in failed.stderr
        config = _copy_store(swept.indexed, _config(swept.served, "auto", "auto"))
        done = run_scout(config, "sweep", "--json")
    finally:
        server.graphql.disabled = False
    assert done.code == 0, done.stderr
    assert state(config.parent / "scout.db") == swept.rest
    assert done.json()["forge_requests"]["graphql"] == 1
    said = [line for line in done.stderr.splitlines() if "through REST" in line]
    assert len(said) == 1 and "no GraphQL API there" in said[0]


@pytest.mark.parametrize(
    "fault, token, reason, requests",
    [
        ("500", TOKEN, "server error", 3),
        ("502", TOKEN, "server error", 3),  # an HTML error page, not JSON
        ("429", TOKEN, "rate limited", MAX_THROTTLED + 1),
        (None, "wrong", "unauthorized", 1),  # a 401: never retried
    ],
)
def test_rest_and_graphql_make_the_same_retry_decisions(
    server: GitLabServer, fault: str | None, token: str, reason: str, requests: int
) -> None:
    # One policy (scout/forge/retry.py) for both transports: the same failure gets the same
    # reason after the same number of requests, whichever API lists the issues.
    if fault is not None:
        server.inject(fault, times=None, retry_after=0)
    outcomes = []
    for api in ("rest", "graphql"):
        forge = GitLabGraphQLForge(server.url, token, ["acme"], api=api, max_retries=2, backoff=0)
        _OPEN.append(forge)
        with pytest.raises(ForgeError) as caught:
            list(forge.issues_updated_after("acme", None))
        outcomes.append((api, caught.value.reason, sum(forge.requests.values())))
    assert outcomes == [("rest", reason, requests), ("graphql", reason, requests)]
