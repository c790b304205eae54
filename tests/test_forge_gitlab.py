"""The GitLab forge: real python-gitlab against the GitLab API test server on loopback."""

from __future__ import annotations

import logging
import socket
from collections import Counter
from pathlib import Path

import pytest

from scout.errors import ForgeError, NotFound
from scout.forge.base import FileDiff, FileEntry, Project, RefPath
from scout.forge.gitlab import GitLabForge
from scout.forge.gitlab_archive import BadArchive, parse_archive
from scout.forge.gitlab_http import TooLarge, retry_after_seconds
from scout.forge.retry import MAX_THROTTLED
from tests.gitlab_server.server import GitLabServer
from tests.helpers.forge_estate import SECRET, TOKEN, URL, build_estate


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("estate")
    return root, build_estate(root)


@pytest.fixture(scope="module")
def shared_server(estate: tuple[Path, dict[str, str]]):  # type: ignore[no-untyped-def]
    with GitLabServer(estate[0], token=TOKEN) as running:
        yield running


@pytest.fixture
def server(shared_server: GitLabServer) -> GitLabServer:
    # one server for the module (its start is most of a short test), reset for every test: a
    # fault one test left pending must not answer another (a 429 once did, in a random order)
    shared_server.reset()
    return shared_server


@pytest.fixture
def gl(server: GitLabServer):  # type: ignore[no-untyped-def]
    forge = GitLabForge(server.url, TOKEN, ["acme"], timeout=5.0, max_retries=3, backoff=0.01)
    yield forge
    forge.close()


@pytest.fixture
def shas(estate: tuple[Path, dict[str, str]]) -> dict[str, str]:
    return estate[1]


def config(gl: GitLabForge) -> Project:
    project = gl.project("acme/config")
    gl.requests.clear()
    return project


# projects


def test_projects_of_a_group_include_subgroups_and_report_metadata(gl: GitLabForge) -> None:
    found = {p.path: p for p in gl.projects()}
    assert sorted(found) == ["acme/config", "acme/empty", "acme/old", "acme/sub/secret"]
    assert [found[p].visibility for p in sorted(found)] == ["public", "public", "public", "private"]
    assert found["acme/old"].archived is True
    assert found["acme/config"].archived is False
    assert found["acme/config"].default_branch == "main"
    assert found["acme/config"].web_url == f"{URL}/acme/config"
    assert isinstance(found["acme/config"].id, int)
    assert found["acme/config"].last_activity_at
    assert gl.requests == Counter(projects=1)


def test_a_private_project_visible_to_the_token_still_reports_private(gl: GitLabForge) -> None:
    assert gl.project("acme/sub/secret").visibility == "private"
    assert gl.requests == Counter(project=1)


def test_an_unknown_project_is_not_found(gl: GitLabForge) -> None:
    with pytest.raises(NotFound):
        gl.project("acme/nope")


def test_an_unchanged_project_costs_one_head_request(gl: GitLabForge, shas: dict[str, str]) -> None:
    project = config(gl)
    assert gl.head(project) == shas["head"]
    assert gl.requests == Counter(head=1)


def test_an_empty_repository_has_no_head(gl: GitLabForge) -> None:
    assert gl.head(gl.project("acme/empty")) is None


# content


EXPECTED_FILES = [
    FileEntry("README.md", 27),
    FileEntry("docs/new.md", 6),
    FileEntry("docs/setup.md", 23),
    FileEntry("link.md", 13, "symlink"),
]


def test_files_and_reads_cost_one_archive_request(gl: GitLabForge, shas: dict[str, str]) -> None:
    project = config(gl)
    assert gl.files(project, shas["head"]) == EXPECTED_FILES
    assert gl.read(project, shas["head"], "docs/setup.md") == b"# Setup\n\none\ntwo\nthree\n"
    assert gl.read(project, shas["head"], "link.md") == b"docs/setup.md"
    assert gl.line_count(project, shas["head"], "README.md") == 3
    with pytest.raises(NotFound):
        gl.read(project, shas["head"], "docs/missing.md")
    assert gl.requests == Counter(archive=1)


def test_a_refused_archive_falls_back_to_tree_and_raw_files(
    gl: GitLabForge, server: GitLabServer, shas: dict[str, str]
) -> None:
    project = config(gl)
    server.inject("refuse_archive", times=1)
    assert gl.files(project, shas["head"]) == EXPECTED_FILES
    assert gl.read(project, shas["head"], "docs/setup.md") == b"# Setup\n\none\ntwo\nthree\n"
    assert gl.requests == Counter(archive=1, tree=1, files=4)


@pytest.mark.parametrize(
    ("path", "at", "lines"),
    [
        ("docs/setup.md", "head", 5),
        ("docs/setup.md", "first", 4),
        ("README.md", "head", 3),
        ("docs/missing.md", "head", None),
        ("docs", "head", None),
    ],
    ids=["file", "older-sha", "no-final-newline", "missing", "directory"],
)
def test_line_count_reads_the_file_once(
    gl: GitLabForge, shas: dict[str, str], path: str, at: str, lines: int | None
) -> None:
    project = config(gl)
    assert gl.line_count(project, shas[at], path) == lines
    assert gl.line_count(project, shas[at], path) == lines
    assert gl.requests == Counter(files=1)


def test_permalink_pins_the_sha_and_lines(gl: GitLabForge, shas: dict[str, str]) -> None:
    project = config(gl)
    assert gl.permalink(project, shas["head"], "docs/setup.md", (2, 4)) == (
        f"{URL}/acme/config/-/blob/{shas['head']}/docs/setup.md#L2-4"
    )


# history


def test_commit_by_sha_and_by_prefix(gl: GitLabForge, shas: dict[str, str]) -> None:
    project = config(gl)
    full = gl.commit(project, shas["head"])
    assert (full.sha, full.parents, full.title) == (
        shas["head"],
        (shas["merge"],),
        "Add step three",
    )
    assert gl.commit(project, shas["head"][:8]).sha == shas["head"]
    with pytest.raises(NotFound):
        gl.commit(project, "0123456789abcdef0123456789abcdef01234567")
    assert gl.requests == Counter(commits=3)


@pytest.mark.parametrize(
    ("ancestor", "descendant", "expected"),
    [("first", "head", True), ("feature", "head", True), ("head", "first", False)],
    ids=["first-parent", "merged-branch", "reverse"],
)
def test_is_ancestor_uses_the_merge_base(
    gl: GitLabForge, shas: dict[str, str], ancestor: str, descendant: str, expected: bool
) -> None:
    assert gl.is_ancestor(config(gl), shas[ancestor], shas[descendant]) is expected


def test_commit_diff_is_against_the_first_parent(gl: GitLabForge, shas: dict[str, str]) -> None:
    diffs = gl.commit_diff(config(gl), shas["head"])
    assert [(d.old_path, d.new_path, d.new_file) for d in diffs] == [
        ("docs/setup.md", "docs/setup.md", False),
        ("link.md", "link.md", True),
    ]
    assert diffs[0].diff.startswith("@@") and "+three" in diffs[0].diff


def test_compare_is_straight_from_old_to_new(gl: GitLabForge, shas: dict[str, str]) -> None:
    diffs = gl.compare(config(gl), shas["head"], shas["feature"])
    assert [(d.new_path, d.new_file, d.deleted_file) for d in diffs] == [
        ("docs/setup.md", False, False),
        ("link.md", False, True),
    ]
    assert gl.requests == Counter(diff=1)


def test_merge_request_and_its_diffs(gl: GitLabForge, shas: dict[str, str]) -> None:
    project = config(gl)
    mr = gl.merge_request(project, 1)
    assert (mr.iid, mr.state, mr.target_branch, mr.source_branch, mr.merge_commit_sha) == (
        1,
        "merged",
        "main",
        "feature/x",
        shas["merge"],
    )
    diffs = gl.merge_request_diffs(project, 1)
    assert diffs == [FileDiff("docs/new.md", "docs/new.md", "@@ -0,0 +1 @@\n+# New\n", True)]
    with pytest.raises(NotFound):
        gl.merge_request(project, 99)


@pytest.mark.parametrize(
    ("ref_and_path", "expected"),
    [
        ("feature/x/docs/new.md", ("feature/x", "docs/new.md", "feature")),
        ("main/docs/setup.md", ("main", "docs/setup.md", "head")),
        ("v1.0/docs/setup.md", ("v1.0", "docs/setup.md", "merge")),
        ("{head}/docs/setup.md", ("{head}", "docs/setup.md", "head")),
        ("nope/docs/setup.md", None),
        ("0123456789abcdef0123456789abcdef01234567/a.md", None),
    ],
    ids=["branch-with-slash", "branch", "tag", "sha", "unknown-ref", "unknown-sha"],
)
def test_resolve_ref_path_tries_the_longest_ref_first(
    gl: GitLabForge, shas: dict[str, str], ref_and_path: str, expected: tuple[str, str, str] | None
) -> None:
    got = gl.resolve_ref_path(config(gl), ref_and_path.format(head=shas["head"]))
    if expected is None:
        assert got is None
    else:
        ref, path, at = expected
        assert got == RefPath(ref.format(head=shas["head"]), path, shas[at])


# issues


def test_issues_updated_at_or_after_oldest_first(gl: GitLabForge) -> None:
    everything = list(gl.issues_updated_after("acme", None))
    assert [(i.project, i.iid, i.updated_at) for i in everything] == [
        ("acme/config", 1, "2026-02-01T10:00:00Z"),
        ("acme/config", 2, "2026-02-03T10:00:00Z"),
    ]
    assert everything[0].user_notes_count == 1
    assert everything[0].web_url == f"{URL}/acme/config/-/issues/1"
    assert [i.iid for i in gl.issues_updated_after("acme", "2026-02-01T10:00:00Z")] == [1, 2]
    assert [i.iid for i in gl.issues_updated_after("acme", "2026-02-01T10:00:01Z")] == [2]


def test_issue_notes_skip_system_notes(gl: GitLabForge) -> None:
    issue = next(iter(gl.issues_updated_after("acme", None)))
    assert [n.body for n in gl.issue_notes(issue)] == ["Try the setup page"]
    assert gl.requests == Counter(issues=1, notes=1)


# faults


def test_a_429_with_retry_after_is_waited_out(gl: GitLabForge, server: GitLabServer) -> None:
    server.inject("429", times=1, retry_after=1)
    assert gl.project("acme/config").path == "acme/config"
    assert gl._http.limiter.waited == pytest.approx(1.0, abs=0.1)  # the pause it was told
    assert gl.requests == Counter(project=2)


def test_rate_limiting_beyond_the_retries_is_rate_limited(
    gl: GitLabForge, server: GitLabServer
) -> None:
    server.inject("429", times=None, retry_after=0)
    with pytest.raises(ForgeError) as caught:
        gl.project("acme/config")
    assert caught.value.reason == "rate limited"
    assert gl.requests == Counter(project=MAX_THROTTLED + 1)


@pytest.mark.parametrize("fault", ["500", "502", "503", "drop"])
def test_three_transient_failures_then_success(
    gl: GitLabForge, server: GitLabServer, fault: str
) -> None:
    server.inject(fault, times=3)
    assert gl.project("acme/config").path == "acme/config"
    assert gl.requests == Counter(project=4)


@pytest.mark.parametrize(("fault", "reason"), [("500", "server error"), ("drop", "unreachable")])
def test_four_transient_failures_give_up(
    gl: GitLabForge, server: GitLabServer, fault: str, reason: str
) -> None:
    server.inject(fault, times=4)
    with pytest.raises(ForgeError) as caught:
        gl.project("acme/config")
    assert caught.value.reason == reason


def test_a_truncated_json_answer_is_bad_data(gl: GitLabForge, server: GitLabServer) -> None:
    server.inject("truncate", times=1)
    with pytest.raises(ForgeError) as caught:
        gl.project("acme/config")
    assert caught.value.reason == "bad data"
    assert gl.requests == Counter(project=1)


def test_a_truncated_archive_falls_back_to_files(
    gl: GitLabForge, server: GitLabServer, shas: dict[str, str]
) -> None:
    project = config(gl)
    server.inject("truncate", times=1, match="archive")
    assert gl.files(project, shas["head"]) == EXPECTED_FILES
    assert gl.requests == Counter(archive=1, tree=1, files=4)


def test_transient_failures_in_a_later_page_are_retried(
    gl: GitLabForge, server: GitLabServer
) -> None:
    server.inject("500", times=1, match=r"[?&]page=2")
    paged = GitLabForge(server.url, TOKEN, ["acme"], backoff=0.01, per_page=2)
    assert len(list(paged.projects())) == 4
    assert paged.requests == Counter(projects=3)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_server_that_is_down_is_unreachable_at_the_first_refusal() -> None:
    forge = GitLabForge(f"http://127.0.0.1:{free_port()}", TOKEN, ["acme"], backoff=0.01)
    with pytest.raises(ForgeError) as caught:
        list(forge.projects())
    assert caught.value.reason == "unreachable"
    # a refused connection is not retried: one attempt, no back-off
    assert "connection refused" in str(caught.value)
    assert forge.requests == Counter(projects=1)


@pytest.mark.parametrize("token", [None, SECRET])
def test_a_wrong_token_is_unauthorized_and_never_printed(
    server: GitLabServer, caplog: pytest.LogCaptureFixture, token: str | None
) -> None:
    caplog.set_level(logging.DEBUG)
    forge = GitLabForge(server.url, token, ["acme"], backoff=0.01)
    with pytest.raises(ForgeError) as caught:
        forge.project("acme/config")
    assert caught.value.reason == "unauthorized"
    assert str(caught.value).startswith(
        "forge unauthorized: GET /projects/acme%2Fconfig answered 401"
    )
    if token:
        for text in (str(caught.value), repr(caught.value), repr(forge), caplog.text):
            assert token not in text


def test_the_token_never_appears_in_retries_logs_or_errors(
    estate: tuple[Path, dict[str, str]], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with GitLabServer(estate[0], token=SECRET) as own:
        forge = GitLabForge(own.url, SECRET, ["acme"], max_retries=1, backoff=0.01)
        own.inject("500", times=5)
        with pytest.raises(ForgeError) as caught:
            forge.project("acme/config")
    assert caught.value.reason == "server error"
    for text in (str(caught.value), repr(caught.value), repr(forge), caplog.text):
        assert SECRET not in text


@pytest.mark.parametrize("status", [403, 404])
def test_an_archive_refused_with_either_status_falls_back(
    gl: GitLabForge, server: GitLabServer, shas: dict[str, str], status: int
) -> None:
    server.inject("refuse_archive", times=1, status=status)
    assert gl.files(config(gl), shas["head"]) == EXPECTED_FILES


def test_an_archive_beyond_the_size_cap_falls_back_and_rereads(
    server: GitLabServer, shas: dict[str, str]
) -> None:
    capped = GitLabForge(server.url, TOKEN, ["acme"], archive_limit=40)
    project = config(capped)
    assert capped.files(project, shas["head"]) == EXPECTED_FILES
    assert capped.read(project, shas["head"], "docs/setup.md") == b"# Setup\n\none\ntwo\nthree\n"
    # 27 + 6 bytes stay in memory; docs/setup.md would pass the cap, so it is read again.
    assert capped.requests == Counter(archive=1, tree=1, files=5)


def test_a_slow_answer_times_out_and_is_retried(gl: GitLabForge, server: GitLabServer) -> None:
    quick = GitLabForge(server.url, TOKEN, ["acme"], timeout=0.3, backoff=0.01)
    server.inject("slow", times=1, delay=2.0)
    assert quick.project("acme/config").path == "acme/config"
    # the second request is the retry after the first timed out: had the forge waited for the
    # slow answer, that one would have served it
    assert quick.requests == Counter(project=2)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("1", 1.0),
        ("0", 0.0),
        ("2.5", 2.5),
        ("3600", 3600.0),
        ("-4", 0.0),
        (None, None),
        ("soon", None),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.0),
        ("Thu, 01 Jan 1970 00:01:00 GMT", 59.5),
    ],
    ids=[
        "seconds",
        "zero",
        "fraction",
        "an-hour-window",
        "negative",
        "absent",
        "garbage",
        "past-date",
        "http-date",
    ],
)
def test_retry_after_in_seconds_or_as_an_http_date(header: str | None, seconds: float) -> None:
    # now = 0.5 s after the epoch: the HTTP date is a minute after the epoch
    assert retry_after_seconds(header, 0.5) == seconds


def _tar(members: list[tuple[str, bytes | None, bytes]]) -> bytes:
    import io
    import tarfile

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, link, body in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.LNKTYPE, link.decode()
            elif name.endswith("/"):
                info.type = tarfile.DIRTYPE
            info.size = len(body) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(body) if info.isreg() else None)
    return out.getvalue()


def test_an_archive_is_read_safely_in_memory() -> None:
    data = _tar(
        [
            ("p-sha/", None, b""),
            ("p-sha/docs/", None, b""),
            ("p-sha/docs/a.md", None, b"a\n"),
            ("p-sha/../../etc/passwd", None, b"x"),
            ("/abs/file", None, b"x"),
            ("p-sha/hard", b"p-sha/docs/a.md", b""),
            ("p-sha/vendor/lib/", None, b""),
        ]
    )
    snapshot = parse_archive(data, 20_000)  # every tar byte counts, headers included
    assert sorted(snapshot.entries.values(), key=lambda e: e.path) == [
        FileEntry("docs/a.md", 2),
        FileEntry("vendor/lib", 0, "submodule"),
    ]
    with pytest.raises(TooLarge):
        parse_archive(data, 1)
    with pytest.raises(BadArchive):
        parse_archive(data[: len(data) // 2], 20_000)
