"""Forge faults on ``scout index`` and ``scout sweep`` through the GitLab API test server.

Every case ends one of two ways: the command completes and the store equals what the local forge
makes of the same estate, or it exits 5 with one line on stderr naming the reason, and the next
run (faults gone) brings the store to exactly that same state: nothing lost, nothing doubled.
Slow answers past the timeout and listings that change between pages run in-process, with a
GitLabForge whose timeout and page size are small enough for a test.
"""

from __future__ import annotations

import itertools
import json
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scout.config import load_config
from scout.corpus.index import index_estate
from scout.corpus.rules import CorpusRules
from scout.errors import ForgeError
from scout.forge.gitlab import GitLabForge
from scout.providers import make_provider
from scout.store import Store
from tests.gitlab_server.server import GitLabServer
from tests.helpers.served import (
    TOKEN,
    Served,
    assert_one_line_failure,
    integrity,
    invoke,
    reference_state,
    run_scout,
    serve_demo,
    state,
)

# One worker runs the module: its estate and GitLab server are module fixtures, built once a run
# rather than once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = [pytest.mark.faults, pytest.mark.xdist_group("test_faults_forge")]

INJECTED: list[str] = []  # every fault schedule used, for the README's figures
_RUNS = itertools.count()  # one store folder per case on the shared server


@pytest.fixture
def served(tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]) -> Served:
    return serve_demo(tmp_path, gitlab_server_factory)


@dataclass
class Shared:
    """One served demo for the fault tables, with the reference states and an indexed store."""

    served: Served
    indexed: dict[str, Any]  # state after index (local forge)
    swept: dict[str, Any]  # state after index and sweep (local forge)
    indexed_db: Path  # a store the GitLab forge indexed, copied into sweep cases


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    started: list[GitLabServer] = []

    def start(estate: Path, **kw: Any) -> GitLabServer:
        started.append(GitLabServer(estate, **kw).start())
        return started[-1]

    served = serve_demo(tmp_path_factory.mktemp("faults"), start)
    indexed = reference_state(served, "index")
    swept = reference_state(served, "sweep")
    config = served.config("indexed")
    assert invoke(config, "index").code == 0
    yield Shared(served, indexed, swept, config.parent / "scout.db")
    for server in started:
        server.stop()


@pytest.fixture
def fresh(shared: Shared) -> Iterator[Served]:
    shared.served.server.reset()
    yield shared.served
    shared.served.server.reset()


def _inject(served: Served, faults: list[dict[str, Any]]) -> None:
    for fault in faults:
        options = dict(fault)
        match = options.pop("match", None)
        if match is not None and "{" in match:
            ids = {p: served.project_id(p) for p in ("acme/handbook", "acme/ledger")}
            match = match.format(handbook=ids["acme/handbook"], ledger=ids["acme/ledger"])
        served.server.inject(options.pop("fault"), match=match, **options)
        INJECTED.append(fault["fault"])


ARCHIVE, HEAD, LISTING = "/repository/archive", "/repository/branches/", "/groups/acme/projects"


def fault(kind: str, match: str, times: int | None = 1, **options: Any) -> dict[str, Any]:
    return {"fault": kind, "match": match, "times": times, **options}


# (faults, expected exit, reason when it fails); retries back off 0.5 s, 1 s, 2 s
ISSUES, NOTES, MRS = "/groups/acme/issues", "/notes", "/merge_requests/"
LEDGER_ARCHIVE = r"/projects/{ledger}/repository/archive"
INDEX_CASES = {
    "429_with_retry_after_is_waited_out": ([fault("429", ARCHIVE, retry_after=1)], 0, None),
    "429_without_retry_after_backs_off": ([fault("429", HEAD)], 0, None),
    "two_500s_then_success": ([fault("500", ARCHIVE, 2)], 0, None),
    "502_and_503_bursts": ([fault("502", LISTING), fault("503", HEAD, 2)], 0, None),
    "dropped_connections_then_success": ([fault("drop", ARCHIVE, 2)], 0, None),
    "truncated_archives_fall_back_to_files": ([fault("truncate", ARCHIVE, None)], 0, None),
    "rate_limited_for_good": ([fault("429", HEAD, None, retry_after=0)], 5, "rate limited"),
    "server_error_on_the_second_project": (
        [fault("503", LEDGER_ARCHIVE, None)],
        5,
        "could not read 1 project(s)",
    ),
    "truncated_json_listing": ([fault("truncate", LISTING)], 5, "bad data"),
}


@pytest.mark.parametrize(("faults", "code", "reason"), INDEX_CASES.values(), ids=INDEX_CASES)
def test_index_under_forge_faults_completes_or_stops_cleanly_and_recovers(
    shared: Shared, fresh: Served, faults: list[dict[str, Any]], code: int, reason: str | None
) -> None:
    config = fresh.config(f"index-{next(_RUNS)}")
    _run_then_recover(fresh, config, "index", faults, code, reason)
    assert state(config.parent / "scout.db") == shared.indexed


def _run_then_recover(
    fresh: Served,
    config: Path,
    command: str,
    faults: list[dict[str, Any]],
    code: int,
    reason: str | None,
) -> None:
    """Run ``command`` under ``faults``; a failure must be one clean line, and a re-run
    without the faults must finish the job on a store that stayed consistent."""
    db = config.parent / "scout.db"
    _inject(fresh, faults)
    done = invoke(config, command, "--json")
    assert done.code == code, done.stderr
    if reason is not None:
        assert done.stdout == ""
        assert_one_line_failure(done.stderr, reason)
        assert integrity(db) == "ok"
        fresh.server.clear_faults()
        again = invoke(config, command)
        assert again.code == 0, again.stderr


SWEEP_CASES = {
    "429_on_the_issue_listing": ([fault("429", ISSUES, retry_after=0.2)], 0, None),
    "500s_on_notes": ([fault("500", NOTES, 2)], 0, None),
    "dropped_merge_request_lookups": ([fault("drop", MRS)], 0, None),
    "truncated_archive_of_a_target": ([fault("truncate", ARCHIVE, None)], 0, None),
    "merge_requests_rate_limited_for_good": (
        [fault("429", MRS, None, retry_after=0)],
        5,
        "rate limited",
    ),
    "truncated_issue_listing": ([fault("truncate", ISSUES)], 5, "bad data"),
    "notes_dropped_for_good": ([fault("drop", NOTES, None)], 5, "unreachable"),
}


@pytest.mark.parametrize(("faults", "code", "reason"), SWEEP_CASES.values(), ids=SWEEP_CASES)
def test_sweep_under_forge_faults_completes_or_stops_cleanly_and_recovers(
    shared: Shared, fresh: Served, faults: list[dict[str, Any]], code: int, reason: str | None
) -> None:
    config = fresh.config(f"sweep-{next(_RUNS)}")
    db = config.parent / "scout.db"
    shutil.copy(shared.indexed_db, db)
    _run_then_recover(fresh, config, "sweep", faults, code, reason)
    assert state(db) == shared.swept


@pytest.mark.slow
def test_a_real_process_stops_with_one_line_and_no_traceback(shared: Shared, fresh: Served) -> None:
    """The same contract through a real ``scout`` process, whose stderr also carries retry logs."""
    config = fresh.config("process")
    _inject(fresh, [{"fault": "drop", "match": LISTING, "times": None}])
    done = run_scout(config, "index", "--json")
    assert (done.code, done.stdout) == (5, "")
    assert_one_line_failure(done.stderr, "unreachable")
    assert len(done.stderr.splitlines()) == 4  # three retries logged, then the reason


# ------------------------------------------------------------------ in-process: time and paging


def _forge(served: Served, **options: Any) -> GitLabForge:
    return GitLabForge(served.server.url, TOKEN, ["acme"], backoff=0.01, **options)


def test_a_slow_answer_past_the_timeout_is_retried_and_the_index_completes(
    served: Served,
) -> None:
    expected = reference_state(served, "index")
    config = load_config(served.config())
    served.server.inject("slow", match=ARCHIVE, times=2, delay=1.0)
    INJECTED.append("slow")
    forge = _forge(served, timeout=0.3)
    with Store.open(config.store.path, create=True) as store:
        summary = index_estate(forge, store, CorpusRules(("acme",), config.corpus))
    forge.close()
    assert summary.forge_requests["archive"] == 5  # three projects, two of them timed out once
    assert state(config.store.path) == expected


def test_a_forge_that_stays_slow_stops_the_index_as_unreachable(served: Served) -> None:
    config = load_config(served.config())
    served.server.inject("slow", match=HEAD, times=None, delay=1.0)
    INJECTED.append("slow")
    forge = _forge(served, timeout=0.2, max_retries=1)
    with Store.open(config.store.path, create=True) as store, pytest.raises(ForgeError) as caught:
        index_estate(forge, store, CorpusRules(("acme",), config.corpus))
    forge.close()
    assert str(caught.value).startswith("forge unreachable: GET /projects/")
    assert "ReadTimeout after 2 attempt(s)" in str(caught.value)


def _when_logged(
    server: GitLabServer, needle: str, action: Callable[[], object]
) -> threading.Thread:
    """Run ``action`` once the server has answered a request whose target holds ``needle``."""

    def watch() -> None:
        for _ in range(2000):
            for r in list(server.log):
                if needle in r.path + "?" + "&".join(f"{k}={v}" for k, v in r.query.items()):
                    action()
                    return
            threading.Event().wait(0.005)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_a_project_listing_that_changes_between_pages_loses_nothing(served: Served) -> None:
    """Offset pages shift when a project goes away mid-listing: later pages skip one project.

    The skipped project still exists; it must keep its passages (and be indexed by the next run),
    never be removed as if it had left the estate.
    """
    config = load_config(served.config())
    estate_toml = served.estate / "estate.toml"
    with Store.open(config.store.path, create=True) as store:
        index_estate(_forge(served), store, CorpusRules(("acme",), config.corpus))
    before = state(config.store.path)["projects"]
    assert [p[0] for p in before] == ["acme/handbook", "acme/ledger", "acme/platform/gateway"]
    # page 1 (per_page=5) holds all but gateway; once it is served, handbook goes away, so
    # page 2 (from offset 5) comes back empty
    text = estate_toml.read_text(encoding="utf-8")
    start = text.index('[[project]]\npath = "acme/handbook"')
    without = text[:start] + text[text.index("[[project]]", start + 1) :]
    served.server.inject("slow", match=r"groups/acme/projects.*page=2", delay=0.3)
    served.server.clear_log()
    watcher = _when_logged(
        served.server,
        "/groups/acme/projects",
        lambda: _replace(estate_toml, without),
    )
    with Store.open(config.store.path) as store:
        summary = index_estate(
            _forge(served, per_page=5), store, CorpusRules(("acme",), config.corpus)
        )
    watcher.join()
    assert estate_toml.read_text(encoding="utf-8") == without
    after = [p[0] for p in state(config.store.path)["projects"]]
    # handbook left the estate (removal may wait for the next run); gateway was skipped by the
    # shifted page, but it never left: its passages must still be there
    assert "acme/platform/gateway" in after, summary
    with Store.open(config.store.path) as store:
        index_estate(_forge(served), store, CorpusRules(("acme",), config.corpus))
    assert [p[0] for p in state(config.store.path)["projects"]] == [
        "acme/ledger",
        "acme/platform/gateway",
    ]


def _replace(path: Path, text: str) -> None:
    """Edit an estate file as GitLab changes a record, at once: the test server reads the file
    for each request, and a write in place let a request in flight read it half-written (an
    issue's notes answered 404 while its file was being rewritten)."""
    staged = path.with_name(path.name + ".new")
    staged.write_text(text, encoding="utf-8")
    staged.replace(path)


def test_an_issue_listing_that_changes_between_pages_loses_no_issue(served: Served) -> None:
    """An issue edited while the sweep pages through the listing moves to its end.

    With offset pages, the issue that slides into the edited one's place is skipped; the sweep's
    cursor then moves past it, so no later sweep reads it either, unless the listing guards it.
    """
    from ingest.sweep import Sweep

    config = load_config(served.config())
    # the oldest issue of the group is on the first page; it is edited once that page is served
    files = sorted((served.estate / "issues").rglob("*.jsonl"))
    oldest = min(
        (json.loads(line)["updated_at"], f)
        for f in files
        for line in f.read_text(encoding="utf-8").splitlines()
    )
    issues = oldest[1]
    records = [json.loads(line) for line in issues.read_text(encoding="utf-8").splitlines()]
    edited = [
        {**r, "updated_at": "2026-06-01T00:00:00Z"} if r["updated_at"] == oldest[0] else r
        for r in records
    ]
    body = "".join(json.dumps(r) + "\n" for r in edited)

    served.server.inject("slow", match=r"groups/acme/issues.*page=2", delay=0.3)
    watcher = _when_logged(served.server, "/groups/acme/issues", lambda: _replace(issues, body))
    with Store.open(config.store.path, create=True) as store:
        forge = _forge(served, per_page=2)
        Sweep(config, forge, store, make_provider("offline", model="m")).run()
        forge.close()
    watcher.join()
    served.server.clear_faults()
    # a second, undisturbed sweep must finish the job
    with Store.open(config.store.path) as store:
        forge = _forge(served)
        Sweep(config, forge, store, make_provider("offline", model="m")).run()
        forge.close()
    got = state(config.store.path)
    expected = reference_state(served, "sweep")
    assert got["issues"] == expected["issues"]
    assert got["signposts"] == expected["signposts"]
