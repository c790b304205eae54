"""``scout gaps --issues``: GitLab's own issue search finds the threads where a gap's answer may
live, and Scout lists links to them, never their text.

Both forges on one estate: the GitLab test server (whose search follows GitLab's matching, see
tests/gitlab_server/search.py) and the local estate files. A canary planted in every issue's
title and description must reach no output, no store file, no report and no prompt.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.config import CorpusConfig
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.forge.base import IssueLink
from scout.forge.local import issue_matches
from scout.gaps import MAX_SEARCHES, find_issues, gaps, normalise
from scout.store import ProjectRow, Store
from tests.gitlab_server import search
from tests.gitlab_server.server import GitLabServer
from tests.helpers.calls import recorded, with_passages
from tests.helpers.growth import assert_linear
from tests.helpers.served import config_text, run_scout, serve_built

CANARY = "CANARY-71c3-issue-prose"
# A model (the fake claude) declines every question: its declines are the gaps (offline mode's
# are not: no model judged them).
MODEL_DECLINES = (
    "--provider",
    "claude-local",
)
DECLINE = {
    "FAKE_CLAUDE_OUTPUT": json.dumps(
        {"answer": "", "cited": [], "declined": True, "reason": "the passages do not say"}
    )
}
WIFI = [
    "What is the office wifi password?",
    "what's the Office wifi password",
    "Office wifi password: what is it?",
]


def build(estate: Path, url: str) -> None:
    builder = EstateBuilder(estate, url=url)
    builder.project("acme/handbook").commit(
        {
            "README.md": "# Handbook\n",
            "docs/office.md": "# The office\n\n## Network\n\nThe office network has a guest "
            "wifi and a staff wifi; printers are on the staff network.\n",
            "docs/travel.md": "# Travel\n\nBook trains through the travel desk.\n",
            # enough other pages that the office's words are rare (FTS5 floors common ones)
            **{
                f"docs/topic{n}.md": f"# Topic {n}\n\nThe gadget{n}zz unit frobnicates.\n"
                for n in range(12)
            },
        },
        "Docs",
    )
    issues = [
        # every word in the title: found
        (1, "Office wifi password?", "It is on the fridge.", "opened", "2026-03-01T10:00:00Z"),
        # no "password" anywhere: GitLab requires every word, so not found
        (2, "Wifi is slow in the office", "Since Monday.", "opened", "2026-03-02T10:00:00Z"),
        # the words split between title and description, in another order: found
        (
            3,
            "Where are passwords kept?",
            "For the wifi at the office.",
            "closed",
            "2026-03-03T10:00:00Z",
        ),
        # a confidential issue that matches: left out unless include_confidential
        (4, "office wifi password rotation", "Rotated monthly.", "opened", "2026-03-04T10:00:00Z"),
        # "backoffice" holds "office" but does not begin with it: not found
        (5, "Backoffice wifi passwords", "See the board.", "opened", "2026-03-05T10:00:00Z"),
    ]
    for iid, title, text, state, when in issues:
        record = builder.issue(
            "acme/handbook",
            iid,
            f"{title} {CANARY}",
            f"{text} {CANARY}",
            updated_at=when,
            state=state,
        )
        record["confidential"] = iid == 4
    # projects the corpus rules leave out (private; excluded by exclude_projects): their issues
    # match the search, and are never linked, whatever the token lets the search see
    for path, visibility in (("acme/secret", "private"), ("acme/infra", "public")):
        builder.project(path, visibility=visibility).commit({"README.md": "# Kept out\n"}, "Doc")
        builder.issue(path, 1, f"Office wifi password {CANARY}", CANARY, updated_at=when)
    builder.write()


@pytest.fixture
def estate(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> tuple[Path, GitLabServer]:
    root = tmp_path / "estate"
    return root, serve_built(root, gitlab_server_factory, build)


def configure(directory: Path, server: GitLabServer, kind: str, estate: Path) -> Path:
    directory.mkdir(parents=True)
    (directory / "scout.toml").write_text(
        config_text(server.url, kind=kind, estate=estate), encoding="utf-8"
    )
    return directory / "scout.toml"


def asked(directory: Path, server: GitLabServer, estate: Path, *questions: str) -> Path:
    """A gitlab-forge config in ``directory``, indexed, with ``questions`` asked (and declined)."""
    config = configure(directory, server, "gitlab", estate)
    assert run_scout(config, "index").code == 0
    for question in questions:
        done = run_scout(config, "ask", question, "--json", *MODEL_DECLINES, env=DECLINE)
        assert done.code == 0 and done.json()["outcome"] == "declined", done.stderr
    return config


def links(
    server: GitLabServer, *iids: int, closed: tuple[int, ...] = ()
) -> list[dict[str, object]]:
    return [
        {
            "project": "acme/handbook",
            "iid": iid,
            "url": f"{server.url}/acme/handbook/-/issues/{iid}",
            "state": "closed" if iid in closed else "opened",
        }
        for iid in iids
    ]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gitlab", "local"])
def test_gaps_issues_lists_links_found_by_the_forge_search_and_never_their_text(
    tmp_path: Path, estate: tuple[Path, GitLabServer], kind: str, claude_bin: Path
) -> None:
    root, server = estate
    config = configure(tmp_path / kind, server, kind, root)
    assert run_scout(config, "index").code == 0
    for question in [*WIFI, "How do I bake bread?"]:
        asked = run_scout(config, "ask", question, "--json", *MODEL_DECLINES, env=DECLINE)
        assert asked.code == 0 and asked.json()["outcome"] == "declined", asked.stderr
    server.clear_log()
    done = run_scout(config, "gaps", "--issues", "--json")
    assert done.code == 0, done.stderr
    backlog = done.json()
    assert [(g["question"], g["asked"]) for g in backlog] == [
        (WIFI[2], 3),
        ("How do I bake bread?", 1),
    ]
    # newest first, as GitLab orders by created_at descending; 2, 4 and 5 are not links
    assert backlog[0]["issues"] == links(server, 3, 1, closed=(3,))
    assert backlog[1]["issues"] == []
    assert backlog[0]["nearest"][0]["path"] == "docs/office.md"
    if kind == "gitlab":
        searches = [r for r in server.requests("/issues") if "search" in r.query]
        assert [(r.path, r.query["search"]) for r in searches] == [
            ("/api/v4/groups/acme/issues", "office wifi password"),
            ("/api/v4/groups/acme/issues", "bake bread"),
        ]
        assert len(server.requests()) == 2  # nothing but the searches
    # the links stay for the report and for `scout gaps` without --issues
    again = run_scout(config, "gaps", "--json").json()
    assert again[0]["issues"] == backlog[0]["issues"]
    report = tmp_path / kind / "report.html"
    assert run_scout(config, "report", "--html", str(report)).code == 0
    page = report.read_text(encoding="utf-8")
    assert f"{server.url}/acme/handbook/-/issues/3" in page
    assert backlog[0]["nearest"][0]["url"] in page  # where the answer would go, linked
    human = run_scout(config, "gaps", "--issues", env={"COLUMNS": "200"})
    header, first, *_ = human.stdout.splitlines()
    assert header.split()[-1] == "issues"  # references in the table; the links in --json
    assert first.endswith("  acme/handbook#3, acme/handbook#1")
    for text in (done.stdout, done.stderr, human.stdout, human.stderr, page):
        assert CANARY not in text
    assert_no_canary_in_store(config.parent)


def assert_no_canary_in_store(directory: Path) -> None:
    conn = sqlite3.connect(directory / "scout.db")
    conn.execute("pragma wal_checkpoint(truncate)")
    conn.close()
    for path in directory.glob("scout.db*"):
        assert CANARY.encode() not in path.read_bytes(), path.name


@pytest.mark.slow
def test_no_issue_text_reaches_a_prompt_after_a_search(
    tmp_path: Path, estate: tuple[Path, GitLabServer], claude_bin: Path
) -> None:
    root, server = estate
    config = asked(tmp_path / "prompt", server, root, WIFI[0])
    assert run_scout(config, "gaps", "--issues").code == 0
    env = {"FAKE_CLAUDE_MODE": "echo"}
    for question in WIFI:
        answer = run_scout(config, "ask", question, "--provider", "claude-local", env=env)
        assert answer.code == 0, answer.stderr
        assert CANARY not in answer.stdout + answer.stderr
    calls = recorded(claude_bin)
    # an answer each (the gap's, then the three after the search), and search terms twice: the
    # gap's ask had a reply that was no terms (nothing cached), then the three wordings are one
    # question to the expansion cache
    assert len(with_passages(calls)) == 1 + len(WIFI) and len(calls) == 3 + len(WIFI)
    assert all(CANARY not in call["stdin"] for call in calls)
    assert_no_canary_in_store(config.parent)


@pytest.mark.slow
def test_searches_are_capped_per_run_and_throttles_are_waited_out(
    tmp_path: Path, estate: tuple[Path, GitLabServer]
) -> None:
    root, server = estate
    config = asked(tmp_path / "cap", server, root)
    with Store.open(config.parent / "scout.db") as store:
        for n in range(MAX_SEARCHES + 5):
            store.log_question(
                question=f"topic{n}qq question",
                outcome="declined",
                reason="nothing matched",
                provider="offline",
                passages=0,
                latency_ms=1,
                asked_at=f"2026-11-01T00:{n:02d}:00Z",
            )
    # GitLab's search limit, scaled down: 10 searches a second window, then 429 + Retry-After
    server.rate_limits.add(10, window=1.0, searches=True)
    server.clear_log()
    done = run_scout(config, "gaps", "--issues", "--json")
    assert done.code == 0, done.stderr
    answered = [r for r in server.requests("/issues") if r.status == 200]
    assert len(answered) == MAX_SEARCHES
    assert server.rate_limits.throttled >= 1  # the limiter waited them out
    searched = [g for g in done.json() if g["issues"] == []]
    assert len(searched) == MAX_SEARCHES + 5  # nothing matched, none linked
    with Store.open(config.parent / "scout.db") as store:
        assert len(store.gap_issues()) == MAX_SEARCHES
        assert normalise("topic29qq question") in store.gap_issues()  # the newest first


@pytest.mark.parametrize(
    ("search_text", "title", "description", "found"),
    [
        ("office wifi password", "Office wifi password?", "", True),
        ("office wifi password", "Where are passwords kept?", "for the wifi at the office", True),
        ("office wifi password", "Wifi is slow in the office", "", False),
        ("office wifi password", "Backoffice wifi passwords", "", False),
        # stems are prefix-matched: "office" is "offic", which begins "official" ("offici")
        ("office wifi password", "Official wifi passwords", "", True),
        ("rotate keys", "Rotating the deploy key", "", True),
        ("the", "the office", "", True),  # a stop word alone: dropped, every issue found
        ('"wifi password"', "wifi password", "", True),
        ('"wifi password"', "password wifi", "", False),
        ("12", "anything", "", True),  # digits match everything: (12:* | -12:*)
        ("пароль", "Пароль от wifi", "", True),  # not Latin: a substring of one column
        ("пароль wifi", "Пароль", "wifi", False),  # ... every word in the same column
    ],
)
def test_the_test_server_matches_as_gitlab_does(
    search_text: str, title: str, description: str, found: bool
) -> None:
    assert search.matches(search_text, title, description, {"title", "description"}) is found


@pytest.mark.parametrize(
    ("words", "text", "found"),
    [
        (["office", "wifi", "password"], "Office wifi password?", True),
        (
            ["office", "wifi", "password"],
            "Where are passwords kept? For the wifi at the office",
            True,
        ),
        (["office", "wifi", "password"], "Wifi is slow in the office", False),
        (["office", "wifi", "passwords"], "office wifi password", True),
        ([], "anything", False),
    ],
)
def test_the_local_forge_matches_every_word_as_gitlab_does(
    words: list[str], text: str, found: bool
) -> None:
    assert issue_matches(words, text) is found


@pytest.mark.parametrize("unit", ["a", "password ", "apassword", "\u0301" * 3, "x" * 80 + " "])
def test_issue_matching_time_grows_linearly_with_the_text(unit: str) -> None:
    words = ["password", "wifi", "office"]

    def local(n: int) -> Callable[[], object]:
        text = unit * n
        return lambda: issue_matches(words, text)

    def served(n: int) -> Callable[[], object]:
        text = unit * n
        return lambda: search.matches("password wifi", text, "", {"title"})

    assert_linear(local, 2_000)
    assert_linear(served, 2_000)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["500", "truncate"])
def test_a_failing_search_exits_5_and_keeps_what_was_stored(
    tmp_path: Path, estate: tuple[Path, GitLabServer], fault: str, claude_bin: Path
) -> None:
    root, server = estate
    config = asked(tmp_path / "fault", server, root, WIFI[0], WIFI[1], "How do I bake bread?")
    server.inject(fault, times=None, match="search=bake")
    done = run_scout(config, "gaps", "--issues", "--json")
    assert (done.code, done.stdout) == (5, "")
    # retries are logged as they happen; the last line is the one error, naming the request
    last = done.stderr.splitlines()[-1]
    assert last.startswith("scout: forge ") and "GET /groups/acme/issues" in last
    assert CANARY not in done.stderr
    # the first gap's links were stored before the second search failed
    kept = run_scout(config, "gaps", "--json")
    assert kept.code == 0
    assert kept.json()[0]["issues"] == links(server, 3, 1, closed=(3,))
    server.clear_faults()


class CountingForge:
    """A forge that only searches, answering every search with the same link (real calls are
    counted; nothing else of the forge protocol is used by find_issues)."""

    def __init__(self) -> None:
        self.searches: list[tuple[str, tuple[str, ...]]] = []

    def search_issues(self, group: str, words: list[str], limit: int) -> list[IssueLink]:
        self.searches.append((group, tuple(words)))
        url = f"https://g/{group}/p/-/issues/1"
        return [IssueLink(f"{group}/p", 1, url, "opened"), IssueLink(f"{group}/p", 2, url, "x")]


@pytest.mark.parametrize(("groups", "gaps_searched"), [(1, 25), (2, 12), (3, 8), (30, 1)])
def test_a_run_makes_at_most_25_searches_whatever_the_number_of_groups(
    tmp_path: Path, groups: int, gaps_searched: int
) -> None:
    with Store.open(tmp_path / "s.db", create=True) as store:
        for n in range(40):
            store.log_question(
                question=f"topic{n}qq",
                outcome="declined",
                reason="nothing matched",
                provider="offline",
                passages=0,
                latency_ms=1,
            )
        forge = CountingForge()
        names = [f"g{n}" for n in range(groups)]
        for name in names:  # the projects the links name are indexed and kept
            row = ProjectRow(f"{name}/p", "public", False, "main", "https://g", "a" * 40, None)
            store.replace_project(row, [])
        rules = CorpusRules(tuple(names), CorpusConfig())
        found = find_issues(store, forge, gaps(store), names, rules=rules)  # type: ignore[arg-type]
    assert len(forge.searches) <= MAX_SEARCHES
    assert len({words for _, words in forge.searches}) == gaps_searched
    linked = [g for g in found if g.issues]
    assert len(linked) == gaps_searched
    # one link per URL, whatever the number of groups that found it
    assert all(len({i["url"] for i in g.issues}) == len(g.issues) for g in linked)
