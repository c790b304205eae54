"""What real GitLab does that a naive client gets wrong: diff limits, rate limits, request
amplification, Link headers on another base, ties and milliseconds, archived and shared projects,
redirects, LFS. Each behaviour is switched on in the GitLab test server (which cites GitLab's doc
page for it) and each test failed on the forge before it learned that behaviour.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.sweep import CONCURRENCY
from scout.config import CorpusConfig
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.errors import ForgeError, RateLimitBudget
from scout.forge.gitlab import GitLabForge
from scout.forge.gitlab_http import RateLimiter
from scout.providers import make_provider
from signposts.extract import extract
from signposts.references import ExtractContext, Reference
from signposts.validate import Validator, Verdict
from tests.gitlab_server.server import GitLabServer
from tests.helpers.served import (
    assert_one_line_failure,
    invoke,
    reference_state,
    serve_demo,
    state,
)

# One worker runs the module: its estate is a module fixture, built once a run rather than once a
# worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_gitlab_real")

TOKEN = "glpat-test-token"
URL = "https://gitlab.acme.example"
STEPS = [f"Step {i} of the guide explains part {i} at length." for i in range(1, 21)]
GUIDE_V1 = "# Guide\n\n" + "\n".join(STEPS) + "\n"
GUIDE_V2 = (
    "# Guide\n\nA new opening.\nAnother new line.\nA third one.\n\n" + "\n".join(STEPS) + "\n"
)
BIG = "".join(f"Line {i} of a large generated page that changes wholesale.\n" for i in range(400))
LFS_CONTENT = b"# Large page\n\nKept in LFS, served whole by the archive.\n"
LFS_OID = hashlib.sha256(LFS_CONTENT).hexdigest()
LFS_POINTER = (
    f"version https://git-lfs.github.com/spec/v1\noid sha256:{LFS_OID}\nsize {len(LFS_CONTENT)}\n"
)
# GitLab shows milliseconds and stores microseconds: these six issues all show 10:00:00.000
TIED = [f"2026-03-01T10:00:00.000{n}00Z" for n in range(1, 7)]


def build(root: Path) -> dict[str, str]:
    estate = EstateBuilder(root, url=URL)
    shas: dict[str, str] = {}
    docs = estate.project("acme/docs")
    shas["v1"] = docs.commit(
        {
            "docs/guide.md": GUIDE_V1,
            "docs/a-filler.md": BIG,
            "docs/gone.md": "# Gone\n\nThis page is removed later.\n",
            "src/tool.py": "print('tool')\n",
            "docs/lfs.md": LFS_POINTER,
        },
        "First pages",
    )
    shas["v2"] = docs.commit(
        {
            "docs/guide.md": GUIDE_V2,
            "docs/a-filler.md": BIG.replace("Line", "Row"),
            "docs/gone.md": None,
        },
        "Rewrite the guide's opening",
    )
    docs.branch("release/2026/spring/candidate")
    docs.commit({"docs/spring.md": "# Spring\n"}, "Spring notes")
    docs.checkout("main")
    docs.git("checkout", "-q", "--orphan", "lonely")
    docs.git("rm", "-rfq", ".")
    shas["orphan"] = docs.commit({"docs/orphan.md": "# Orphan\n\nUnrelated history.\n"}, "Orphan")
    docs.checkout("main")
    shas["head"] = docs.sha("main")
    (root / "lfs").mkdir(parents=True)
    (root / "lfs" / LFS_OID).write_bytes(LFS_CONTENT)

    bulk = estate.project("acme/bulk")
    generated = {f"src/gen/f{n:04d}.py": f"VALUE_{n} = {n}\n" for n in range(1_000)}
    shas["bulk"] = bulk.commit(
        {**generated, "zz/notes.md": "# Notes\n\nWritten by hand.\n"}, "Bulk"
    )
    attic = estate.project("acme/attic", archived=True)
    attic.commit({"README.md": "# Attic\n"}, "Add")
    estate.issue("acme/attic", 1, "Archived question", "old", updated_at="2026-02-15T00:00:00Z")
    lent = estate.project("other/lent")
    lent.commit({"README.md": "# Lent\n"}, "Add")
    estate.projects[-1]["shared_with"] = "acme"
    for n, stamp in enumerate(TIED, start=1):
        estate.issue("acme/docs", n, f"Tied {n}", "same millisecond", updated_at=stamp)
    estate.issue(
        "acme/docs",
        7,
        "With notes",
        "text",
        updated_at="2026-03-02T00:00:00Z",
        notes=["a comment", {"body": "changed the title", "system": True}],
    )
    estate.write()
    return shas


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("real") / "estate"
    return root, build(root)


@pytest.fixture
def server(estate: tuple[Path, dict[str, str]]):  # type: ignore[no-untyped-def]
    with GitLabServer(estate[0], token=TOKEN) as running:
        yield running


@pytest.fixture
def shas(estate: tuple[Path, dict[str, str]]) -> dict[str, str]:
    return estate[1]


def forge(server: GitLabServer, **options: object) -> GitLabForge:
    defaults: dict[str, object] = {"timeout": 5.0, "max_retries": 3, "backoff": 0.01}
    return GitLabForge(server.url, TOKEN, ["acme"], **{**defaults, **options})  # type: ignore[arg-type]


def reference(text: str) -> Reference:
    found = extract(text, ExtractContext(gitlab_url=URL, project="acme/docs")).references
    assert len(found) == 1, found
    return found[0]


def recheck(gl: GitLabForge, text: str, corpus: CorpusConfig | None = None) -> Verdict:
    rules = CorpusRules(("acme",), corpus or CorpusConfig())
    return Validator(gl, rules, make_provider("offline", model="m")).recheck(reference(text))


# ---------------------------------------------------------------- diff limits


@pytest.mark.parametrize(
    "limit",
    [{"max_patch_bytes": 100}, {"collapse_bytes": 100}, {"max_files": 1}],
    ids=["too_large", "collapsed", "compare_timeout"],
)
def test_a_pinned_permalink_is_mapped_through_a_diff_gitlab_cut(
    server: GitLabServer, shas: dict[str, str], limit: dict[str, int]
) -> None:
    for name, value in limit.items():
        setattr(server.diff_limits, name, value)
    gl = forge(server)
    link = f"{URL}/acme/docs/-/blob/{shas['v1']}/docs/guide.md#L5-6"
    verdict = recheck(gl, link)
    # four lines were inserted above the cited ones: they are lines 9-10 at the head
    assert (verdict.status, verdict.target_lines) == ("accepted", (9, 10)), verdict.reason
    assert "Step 3" in verdict.passages[0].body


def test_a_rewritten_line_behind_a_cut_diff_is_a_stale_link(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    server.diff_limits.max_patch_bytes = 100
    verdict = recheck(forge(server), f"{URL}/acme/docs/-/blob/{shas['v1']}/docs/a-filler.md#L3")
    assert verdict.status == "rejected"
    assert verdict.reason == f"lines 3-3 of docs/a-filler.md changed since {shas['v1'][:12]}"


def test_a_file_missing_from_a_cut_compare_and_gone_cannot_be_checked(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    server.diff_limits.max_files = 1
    verdict = recheck(forge(server), f"{URL}/acme/docs/-/blob/{shas['v1']}/docs/gone.md#L1")
    assert (verdict.status, verdict.check) == ("rejected", "resolves")
    assert verdict.reason.startswith("cannot check: GitLab's diff is over its limits")


def test_a_commit_whose_diff_is_too_large_is_read_whole_not_rejected(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    server.diff_limits.max_patch_bytes = 10
    verdict = recheck(forge(server), f"acme/docs@{shas['v2']}")
    assert verdict.status == "accepted", verdict.reason
    assert verdict.target_path == "docs/a-filler.md"


def test_a_commit_diff_gitlab_cut_at_its_file_cap_cannot_be_checked(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    # 1,001 files: GitLab lists the first 1,000 (generated code, excluded from the corpus) and
    # says nothing of the rest; before, this was "adds no lines that could still stand"
    server.diff_limits.max_files = 1_000
    corpus = CorpusConfig(exclude_paths=["src/gen/*"])
    verdict = recheck(forge(server), f"acme/bulk@{shas['bulk']}", corpus)
    assert (verdict.status, verdict.check) == ("rejected", "resolves")
    assert verdict.reason.startswith("cannot check: GitLab's diff of commit"), verdict.reason


def test_a_commit_on_an_orphan_branch_is_not_merged(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    # GitLab answers merge_base with 404 "Merge Base not found" for unrelated histories
    verdict = recheck(forge(server), f"acme/docs@{shas['orphan']}")
    assert (verdict.status, verdict.check) == ("rejected", "resolves")
    assert "is not on the default branch" in verdict.reason


# ---------------------------------------------------------------- rate limits


def test_a_headerless_429_waits_for_the_window_boundary(server: GitLabServer) -> None:
    # GitLab.com's Projects API: a bare 429 until the fixed window ends
    server.rate_limits.add(1, window=2.0, match="/projects/", headers=False)
    gl = forge(server, rate_window=2.0)
    # The windows are the clock's (as GitLab's and the forge's): begun late in one, the two
    # lookups fell in two windows on a loaded machine, and nothing was throttled. From the
    # start of one, they have its whole two seconds.
    time.sleep(2.0 - time.time() % 2.0)
    gl.project("acme/docs")
    assert gl.project("acme/attic").path == "acme/attic"
    assert server.rate_limits.throttled >= 1
    assert gl._http.limiter.waited > 0


def test_headerless_429s_in_a_row_wait_one_then_two_seconds_not_a_minute_each(
    server: GitLabServer,
) -> None:
    # GitLab.com's Projects API, twice in a row: 1 s, then 2 s (before: to the minute boundary,
    # twice). Close to a boundary the waits are shorter still, never longer.
    server.inject("bare429", times=2, match="/projects/acme%2Fattic")
    gl = forge(server)
    assert gl.project("acme/attic").path == "acme/attic"
    statuses = [r.status for r in server.requests("/projects/acme%2Fattic")]
    assert statuses == [429, 429, 200]
    assert 0 < gl._http.limiter.waited <= 3.0 + 0.05


def test_headerless_429s_through_graphql_back_off_the_same_way(server: GitLabServer) -> None:
    from scout.forge.gitlab_graphql import GitLabGraphQLForge

    server.inject("bare429", times=2, match="/api/graphql")
    gl = GitLabGraphQLForge(server.url, TOKEN, ["acme"], api="graphql", backoff=0.01)
    try:
        issues = list(gl.issues_updated_after("acme", None))
        assert issues
        assert [r.status for r in server.requests("/api/graphql")][:3] == [429, 429, 200]
        assert 0 < gl._http.limiter.waited <= 3.0 + 0.05
    finally:
        gl.close()


def test_retry_after_and_reset_windows_longer_than_the_budget_stop_the_run_at_once(
    server: GitLabServer,
) -> None:
    # a self-managed instance with an hour-long window
    server.rate_limits.add(1, window=3600.0, match="/projects/", starting_now=True)
    gl = forge(server, rate_wait_budget=30.0)
    gl.project("acme/docs")
    with pytest.raises(RateLimitBudget) as caught:
        gl.project("acme/attic")
    # stopped at the first 429: no retry, so no pause was slept (one would last the hour)
    assert gl.requests == Counter(project=2) and server.rate_limits.throttled == 1
    assert caught.value.exit_code == 5 and caught.value.reason == "rate limited"
    assert "run again later to resume" in str(caught.value)


@pytest.mark.slow
@pytest.mark.faults
def test_a_sweep_throttled_past_its_budget_stops_at_once_with_exit_5_and_resumes(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> None:

    served = serve_demo(tmp_path, gitlab_server_factory)
    expected = reference_state(served, "index", "sweep")
    config = served.config("budget")
    assert invoke(config, "index").code == 0
    # an hour-long window: waiting it out would exceed the run's 15-minute budget
    served.server.rate_limits.add(1, window=3600.0, match="/issues", starting_now=True)
    served.server.clear_log()
    done = invoke(config, "sweep")
    assert (done.code, done.stdout) == (5, "")
    # stopped at the first 429, unretried: waiting out the hour would come before a retry. The
    # notes of the next issues are read ahead on the sweep's pool (CONCURRENCY at once), so a
    # read already in flight may meet the window too (2 once, under a loaded parallel run), but
    # no request is sent twice and nothing is asked after the first 429 but what was in flight.
    throttled = [r for r in served.server.requests("/issues") if r.status == 429]
    assert 1 <= len(throttled) == served.server.rate_limits.throttled <= CONCURRENCY + 1
    assert len({(r.path, str(sorted(r.query.items()))) for r in throttled}) == len(throttled)
    first = min(r.at for r in throttled)
    assert len([r for r in served.server.requests("/") if r.at > first]) <= CONCURRENCY
    assert_one_line_failure(done.stderr, "rate limited")
    assert "run again later to resume" in done.stderr
    served.server.clear_faults()
    assert invoke(config, "sweep").code == 0
    got = state(config.parent / "scout.db")
    assert (got["issues"], got["signposts"]) == (expected["issues"], expected["signposts"])


def test_ratelimit_remaining_zero_pauses_before_any_429(server: GitLabServer) -> None:
    server.rate_limits.add(2, window=1.0, match="/projects/", advertise=True)
    gl = forge(server)
    for _ in range(5):
        gl.project("acme/docs")
    assert server.rate_limits.throttled == 0
    assert gl._http.limiter.waited > 0


def test_one_429_pauses_every_thread(server: GitLabServer) -> None:
    gl = forge(server)
    gl.project("acme/docs")
    server.inject("429", times=1, retry_after=1, match="acme%2Fattic")

    def work(path: str, count: int) -> None:
        for _ in range(count):
            gl.project(path)

    # the other thread asks more often, so it has requests left whenever the 429 comes
    threads = [
        threading.Thread(target=work, args=(path, count))
        for path, count in (("acme/attic", 6), ("acme/docs", 16))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    throttled = next(r.at for r in server.log if r.status == 429)
    # For the second the 429 asked for, the other thread was held (before: it kept going and
    # ended its requests in milliseconds). The pause starts when the client reads the 429,
    # not when the server sent it: a request already in flight, and on a loaded machine one
    # sent while the 429 was on its way, land inside that second; the rest wait it out.
    docs = [r for r in server.log if r.path.endswith("acme%2Fdocs") and r.at > throttled]
    during = [r for r in docs if r.at < throttled + 0.9]
    assert len(during) <= 2 and len(docs) - len(during) >= 2, docs
    assert len(server.requests("/projects/")) == 1 + 1 + 6 + 16


def test_an_archive_429_falls_back_to_tree_and_documentation_files_only(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    # the archive endpoint's own limit, per project (5 a minute on GitLab.com)
    server.rate_limits.add(0, match="/repository/archive", per_project=True)
    gl = forge(server)
    project = gl.project("acme/docs")
    gl.requests.clear()
    files = {e.path: e for e in gl.files(project, shas["head"])}
    assert set(files) == {"docs/a-filler.md", "docs/guide.md", "docs/lfs.md", "src/tool.py"}
    # one archive attempt, no wait, and no read of src/tool.py, which can never qualify
    assert gl.requests == Counter(archive=1, tree=1, files=3)
    assert gl._http.limiter.waited == 0


# ---------------------------------------------------------------- amplification, Link headers


def test_fifty_long_blob_urls_cost_two_ref_listings(server: GitLabServer) -> None:
    gl = forge(server)
    project = gl.project("acme/docs")
    gl.requests.clear()
    deep = "/".join(f"level{i}" for i in range(12))
    for n in range(50):
        got = gl.resolve_ref_path(project, f"release/2026/spring/candidate/{deep}/page{n}.md")
        assert got is not None and got.ref == "release/2026/spring/candidate"
    assert gl.requests == Counter(refs=2)


def test_keyset_pages_linked_on_another_base_url_are_followed(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    server.link_base = "https://gitlab.external.example/api/v4"
    server.inject("refuse_archive", times=None)
    gl = forge(server, per_page=2)
    files = [e.path for e in gl.files(gl.project("acme/docs"), shas["head"])]
    assert files == ["docs/a-filler.md", "docs/guide.md", "docs/lfs.md", "src/tool.py"]


def test_a_page_link_that_cannot_be_followed_fails_loudly(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    server.link_base = "https://proxy.example/rest"
    server.inject("refuse_archive", times=None)
    gl = forge(server, per_page=2)
    with pytest.raises(ForgeError, match="cannot follow the next page link"):
        gl.files(gl.project("acme/docs"), shas["head"])


# ---------------------------------------------------------------- listings


def _issue_file(root: Path) -> Path:
    return root / "issues" / "acme" / "docs.jsonl"


def test_issues_tied_on_one_millisecond_survive_an_edit_between_pages(
    server: GitLabServer, estate: tuple[Path, dict[str, str]]
) -> None:
    path = _issue_file(estate[0])
    original = path.read_text(encoding="utf-8")
    gl = forge(server, per_page=2)
    seen: list[int] = []
    try:
        for issue in gl.issues_updated_after("acme", "2026-03-01T00:00:00Z"):
            seen.append(issue.iid)
            if len(seen) == 4:
                # an edit lands between pages: the issue read first moves to the end, and
                # every issue behind it slides back one place
                records = [json.loads(line) for line in original.splitlines()]
                for record in records:
                    if record["iid"] == seen[0]:
                        record["updated_at"] = "2026-04-01T00:00:00Z"
                text = "".join(json.dumps(r) + "\n" for r in records)
                path.write_text(text, encoding="utf-8")
    finally:
        path.write_text(original, encoding="utf-8")
    assert set(seen) >= {1, 2, 3, 4, 5, 6, 7}


def test_issues_of_archived_projects_are_listed(server: GitLabServer) -> None:
    gl = forge(server)
    got = [(i.project, i.iid) for i in gl.issues_updated_after("acme", "2026-02-01T00:00:00Z")]
    assert ("acme/attic", 1) in got


def test_projects_shared_into_the_group_are_not_its_own(server: GitLabServer) -> None:
    paths = [p.path for p in forge(server).projects()]
    assert paths == ["acme/docs", "acme/bulk", "acme/attic"]


def test_system_notes_are_left_out_by_gitlab(server: GitLabServer) -> None:
    gl = forge(server)
    issue = next(i for i in gl.issues_updated_after("acme", None) if i.iid == 7)
    assert [n.body for n in gl.issue_notes(issue)] == ["a comment"]
    asked = server.requests("/notes")[-1].query
    assert asked["activity_filter"] == "only_comments"


def test_group_paths_are_case_insensitive(server: GitLabServer) -> None:
    gl = GitLabForge(server.url, TOKEN, ["ACME"], backoff=0.01)
    rules = CorpusRules(("ACME",), CorpusConfig(include_archived=True))
    got = [p.path for p in gl.projects() if rules.project(p)]
    assert got == ["acme/docs", "acme/bulk", "acme/attic"]


def test_a_project_twenty_two_segments_deep_is_areference_state() -> None:
    deep = "/".join(["acme", *(f"g{i}" for i in range(20)), "docs"])
    found = reference(f"{URL}/{deep}/-/blob/main/docs/guide.md")
    assert found.project == deep


# ---------------------------------------------------------------- redirects and LFS


def test_a_moved_project_is_followed(server: GitLabServer) -> None:
    server.moved["acme/old-docs"] = "acme/docs"
    assert forge(server).project("acme/old-docs").path == "acme/docs"


def test_a_redirect_to_another_origin_never_carries_the_token(
    server: GitLabServer, estate: tuple[Path, dict[str, str]]
) -> None:
    with GitLabServer(estate[0], token="other") as elsewhere:
        # same machine, another host name: the token must stay home
        target = elsewhere.url.replace("127.0.0.1", "localhost") + "/api/v4/projects/acme%2Fdocs"
        server.inject("redirect", times=1, match="acme%2Fdocs", location=target)
        with pytest.raises(ForgeError):
            forge(server, max_retries=0).project("acme/docs")
        assert elsewhere.headers_seen, "the redirect was not followed"
        for _path, headers in elsewhere.headers_seen:
            assert {k.lower() for k in headers} & {"private-token", "authorization"} == set()
            assert TOKEN not in json.dumps(headers)


def test_lfs_files_read_alike_from_the_archive_and_the_raw_endpoint(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    gl = forge(server)
    project = gl.project("acme/docs")
    assert {e.path for e in gl.files(project, shas["head"])} >= {"docs/lfs.md"}
    assert gl.read(project, shas["head"], "docs/lfs.md") == LFS_CONTENT
    assert gl.requests["archive"] == 1 and gl.requests["files"] == 0
    raw = forge(server)
    assert raw.read(project, shas["head"], "docs/lfs.md") == LFS_CONTENT
    assert raw.requests == Counter(files=1)


# ---------------------------------------------------------------- the limiter's arithmetic


NOW = 1_800_000_005.0  # five seconds into a minute (2027)


@pytest.mark.parametrize(
    ("headers", "pause"),
    [
        ({"Retry-After": "30"}, 30.0),
        ({"Retry-After": email.utils.formatdate(NOW + 115, usegmt=True)}, 115.0),
        ({"RateLimit-Reset": str(int(NOW) + 3600)}, 3600.0),
        ({"RateLimit-Reset": "20"}, 20.0),
        ({"Retry-After": "soon", "RateLimit-Reset": "junk"}, 1.0),
        ({}, 1.0),
    ],
    ids=[
        "retry-after-seconds",
        "retry-after-http-date",
        "reset-unix-time-an-hour-away",
        "reset-as-seconds-from-now",
        "unreadable-headers-wait-a-second-first",
        "bare-429-waits-a-second-first",
    ],
)
def test_a_429_pauses_as_long_as_gitlab_says(headers: dict[str, str], pause: float) -> None:
    now = [NOW]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    limiter = RateLimiter(budget=1e6, clock=lambda: now[0], sleep=sleep)
    assert limiter.throttled(headers) == pytest.approx(pause)
    limiter.before_request()
    assert now[0] == pytest.approx(NOW + pause)
    assert limiter.waited == pytest.approx(pause)


def test_headerless_429s_in_a_row_double_from_one_second_up_to_the_minute_boundary() -> None:
    now = [NOW]
    limiter = RateLimiter(budget=1e6, clock=lambda: now[0], sleep=lambda s: None)
    pauses = []
    for _ in range(7):
        pauses.append(limiter.throttled({}))
        now[0] += pauses[-1]
    # five seconds into the minute: 1, 2, 4, 8, 16 (at 36 s), then only the 24 s left, then 1
    # more doubling from the new minute's start would be 64: capped at its boundary again
    assert pauses == pytest.approx([1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 60.0])
    limiter.observe({})  # an answer that is not a 429 starts the doubling again
    assert limiter.throttled({}) == pytest.approx(1.0)


def test_pauses_overlapping_across_threads_are_charged_once() -> None:
    now = [0.0]
    limiter = RateLimiter(budget=55.0, clock=lambda: now[0], sleep=lambda s: None)
    limiter.throttled({"Retry-After": "40"})
    limiter.throttled({"Retry-After": "30"})  # inside the first pause: nothing more to wait
    limiter.throttled({"Retry-After": "50"})  # ten seconds past it
    assert limiter.waited == pytest.approx(50.0)
    limiter.throttled({"Retry-After": "60"})  # 60 s of pause in all: past the budget
    with pytest.raises(RateLimitBudget):
        limiter.before_request()
