"""The GitLab REST v4 test server: shapes, pagination, auth, files, history, faults and the log.

Driven with the real python-gitlab client and, where headers and faults matter, with httpx.
Required fields come from GitLab's published schemas (spec/fixtures/api/schemas/public_api/v4/).
"""

from __future__ import annotations

import base64
import io
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Any

import gitlab
import httpx
import pytest

from tests.gitlab_server.pytest_plugin import TOKEN, GitLabSample
from tests.gitlab_server.sample import URL, build_sample_estate
from tests.gitlab_server.server import GitLabServer, Request

# Required fields of GitLab's schemas: commit/basic.json, branch.json, tag.json, issue.json,
# notes.json (items), merge_request.json, user/basic.json.
COMMIT_BASIC = {
    "id",
    "short_id",
    "title",
    "created_at",
    "parent_ids",
    "message",
    "author_name",
    "author_email",
    "authored_date",
    "committer_name",
    "committer_email",
    "committed_date",
    "web_url",
}
BRANCH = {
    "name",
    "commit",
    "merged",
    "protected",
    "default",
    "developers_can_push",
    "developers_can_merge",
    "web_url",
}
TAG = {"name", "message", "commit", "release"}
ISSUE = {
    "id",
    "iid",
    "project_id",
    "title",
    "description",
    "state",
    "created_at",
    "updated_at",
    "labels",
    "milestone",
    "assignees",
    "author",
    "user_notes_count",
    "upvotes",
    "downvotes",
    "due_date",
    "confidential",
    "web_url",
}
NOTE = {
    "id",
    "body",
    "attachment",
    "author",
    "created_at",
    "updated_at",
    "system",
    "noteable_id",
    "noteable_type",
}
MERGE_REQUEST = {
    "id",
    "iid",
    "project_id",
    "title",
    "description",
    "state",
    "created_at",
    "updated_at",
    "target_branch",
    "source_branch",
    "upvotes",
    "downvotes",
    "author",
    "assignee",
    "source_project_id",
    "target_project_id",
    "labels",
    "work_in_progress",
    "milestone",
    "merge_when_pipeline_succeeds",
    "merge_status",
    "sha",
    "merge_commit_sha",
    "user_notes_count",
    "should_remove_source_branch",
    "force_remove_source_branch",
    "web_url",
    "squash",
}
USER = {"id", "name", "username", "state", "avatar_url", "web_url"}
DIFF = {
    "old_path",
    "new_path",
    "a_mode",
    "b_mode",
    "diff",
    "new_file",
    "renamed_file",
    "deleted_file",
}


@pytest.fixture
def sample(gitlab_sample: GitLabSample) -> GitLabSample:
    gitlab_sample.server.reset()  # shared by the module: every test starts from a fresh one
    return gitlab_sample


@pytest.fixture
def api(sample: GitLabSample) -> Any:
    with httpx.Client(
        base_url=f"{sample.server.url}/api/v4", headers={"PRIVATE-TOKEN": TOKEN}, timeout=10
    ) as client:
        yield client


@pytest.fixture
def gl(sample: GitLabSample) -> gitlab.Gitlab:
    return gitlab.Gitlab(sample.server.url, private_token=TOKEN, timeout=10)


# shapes -----------------------------------------------------------------------------------------

SHAPES = [
    ("branch", "/projects/1/repository/branches/main", BRANCH),
    ("tag", "/projects/1/repository/tags/v1.0", TAG),
    ("commit", "/projects/1/repository/commits/main", COMMIT_BASIC | {"project_id"}),
    ("merge_base", "/projects/1/repository/merge_base?refs[]=main&refs[]=wip", COMMIT_BASIC),
    ("merge_request", "/projects/1/merge_requests/1", MERGE_REQUEST),
    ("issue", "/projects/1/issues/1", ISSUE | {"references"}),
    ("user", "/user", USER),
]


@pytest.mark.parametrize(("name", "path", "required"), SHAPES, ids=[s[0] for s in SHAPES])
def test_responses_carry_the_fields_gitlabs_schemas_require(
    api: httpx.Client, name: str, path: str, required: set[str]
) -> None:
    body = api.get(path).json()
    assert required <= body.keys()
    if "commit" in body:
        assert COMMIT_BASIC <= body["commit"].keys()


LISTS = [
    ("branches", "/projects/1/repository/branches", BRANCH),
    ("tags", "/projects/1/repository/tags", TAG),
    ("issues", "/groups/1/issues", ISSUE),
    ("notes", "/projects/1/issues/1/notes", NOTE),
    ("commit_diff", "/projects/1/repository/commits/main/diff", DIFF),
    ("mr_diffs", "/projects/1/merge_requests/1/diffs", DIFF),
]


@pytest.mark.parametrize(("name", "path", "required"), LISTS, ids=[s[0] for s in LISTS])
def test_list_items_carry_the_required_fields(
    api: httpx.Client, name: str, path: str, required: set[str]
) -> None:
    body = api.get(path).json()
    assert body and all(required <= item.keys() for item in body)


def test_note_and_issue_authors_have_user_fields(api: httpx.Client) -> None:
    assert USER <= api.get("/projects/1/issues/1/notes").json()[0]["author"].keys()
    assert USER <= api.get("/projects/1/issues/1").json()["author"].keys()


# projects and groups ----------------------------------------------------------------------------


def test_group_projects_with_and_without_subgroups(gl: gitlab.Gitlab) -> None:
    group = gl.groups.get("acme")
    deep = group.projects.list(include_subgroups=True, get_all=True)
    direct = group.projects.list(get_all=True)
    # GitLab's default order is created_at descending; ids follow estate.toml order
    assert [p.path_with_namespace for p in deep] == [
        "acme/platform/empty",
        "acme/infra",
        "acme/platform/api",
        "acme/config",
    ]
    assert [p.path_with_namespace for p in direct] == ["acme/infra", "acme/config"]
    sub = gl.groups.get("acme/platform")
    assert (sub.id, sub.full_path, sub.parent_id) == (2, "acme/platform", group.id)


def test_project_by_id_and_by_path_agree_and_report_metadata(gl: gitlab.Gitlab) -> None:
    by_path = gl.projects.get("acme/platform/api")
    by_id = gl.projects.get(by_path.id)
    assert by_path.asdict() == by_id.asdict()
    assert (by_path.id, by_path.visibility, by_path.archived) == (2, "private", False)
    assert by_path.web_url == f"{URL}/acme/platform/api"
    assert by_path.http_url_to_repo == f"{URL}/acme/platform/api.git"
    assert by_path.namespace["full_path"] == "acme/platform"
    infra = gl.projects.get("acme/infra")
    assert (infra.visibility, infra.archived) == ("internal", True)


def test_last_activity_is_the_newest_commit_in_utc(gl: gitlab.Gitlab, sample: GitLabSample) -> None:
    project = gl.projects.get("acme/config")
    assert project.last_activity_at == project.commits.get("wip").committed_date.replace(
        "+00:00", "Z"
    )


def test_an_empty_repository_has_no_default_branch(gl: gitlab.Gitlab) -> None:
    empty = gl.projects.get("acme/platform/empty")
    assert (empty.default_branch, empty.empty_repo) == (None, True)
    with pytest.raises(gitlab.GitlabGetError) as caught:
        empty.branches.get("main")
    assert caught.value.response_code == 404


NOT_FOUND = [
    ("project", "/projects/acme%2Fnope", {"message": "404 Project Not Found"}),
    ("group", "/groups/nope", {"message": "404 Group Not Found"}),
    ("branch", "/projects/1/repository/branches/nope", {"message": "404 Branch Not Found"}),
    ("tag", "/projects/1/repository/tags/nope", {"message": "404 Tag Not Found"}),
    ("commit", "/projects/1/repository/commits/deadbeef00", {"message": "404 Commit Not Found"}),
    ("file", "/projects/1/repository/files/nope.md?ref=main", {"message": "404 File Not Found"}),
    ("directory", "/projects/1/repository/files/docs?ref=main", {"message": "404 File Not Found"}),
    (
        "file_ref",
        "/projects/1/repository/files/README.md?ref=nope",
        {"message": "404 Commit Not Found"},
    ),
    ("tree", "/projects/1/repository/tree?path=nope", {"message": "404 Tree Not Found"}),
    ("merge_request", "/projects/1/merge_requests/99", {"message": "404 Not found"}),
    ("issue", "/projects/1/issues/99/notes", {"message": "404 Issue Not Found"}),
    ("route", "/projects/1/wikis", {"error": "404 Not Found"}),
]


@pytest.mark.parametrize(("name", "path", "body"), NOT_FOUND, ids=[c[0] for c in NOT_FOUND])
def test_missing_things_answer_gitlabs_404_bodies(
    api: httpx.Client, name: str, path: str, body: dict[str, str]
) -> None:
    response = api.get(path)
    assert (response.status_code, response.json()) == (404, body)


def test_bad_parameters_answer_400(api: httpx.Client) -> None:
    assert api.get("/projects/1/repository/files/README.md").json() == {
        "error": "ref is missing, ref is empty"
    }
    assert api.get("/projects/1/repository/merge_base?refs[]=main").status_code == 400
    assert api.get("/projects/1/repository/merge_base?refs[]=main&refs[]=nope").json() == {
        "message": "Could not find ref: nope"
    }
    assert api.get("/groups/1/issues?updated_after=yesterday").status_code == 400


# authentication -------------------------------------------------------------------------------

AUTH = [
    ("no_token", {}, 401),
    ("wrong_token", {"PRIVATE-TOKEN": "glpat-wrong"}, 401),
    ("private_token", {"PRIVATE-TOKEN": TOKEN}, 200),
    ("bearer", {"Authorization": f"Bearer {TOKEN}"}, 200),
]


@pytest.mark.parametrize(("name", "headers", "status"), AUTH, ids=[a[0] for a in AUTH])
@pytest.mark.parametrize("path", ["/api/v4/projects/1", "/api/v4/nowhere"])
def test_every_request_checks_the_token(
    sample: GitLabSample, name: str, headers: dict[str, str], status: int, path: str
) -> None:
    response = httpx.get(sample.server.url + path, headers=headers)
    if status == 401:
        assert (response.status_code, response.json()) == (401, {"message": "401 Unauthorized"})
    else:
        assert response.status_code in (200, 404)


def test_python_gitlab_with_a_wrong_token_is_refused(sample: GitLabSample) -> None:
    wrong = gitlab.Gitlab(sample.server.url, private_token="glpat-wrong")
    with pytest.raises(gitlab.GitlabAuthenticationError):
        wrong.auth()
    me = gitlab.Gitlab(sample.server.url, private_token=TOKEN).http_get("/user")
    assert isinstance(me, dict) and me["username"] == "scout-bot"


def test_writes_are_refused(api: httpx.Client) -> None:
    assert api.post("/projects/1/issues", json={"title": "x"}).status_code == 405


# pagination -----------------------------------------------------------------------------------


def test_offset_pagination_headers(api: httpx.Client, sample: GitLabSample) -> None:
    response = api.get(
        "/groups/1/projects", params={"include_subgroups": "true", "per_page": 1, "page": 2}
    )
    h = response.headers
    assert [p["id"] for p in response.json()] == [3]
    assert (h["x-page"], h["x-per-page"], h["x-next-page"], h["x-prev-page"]) == (
        "2",
        "1",
        "3",
        "1",
    )
    assert (h["x-total"], h["x-total-pages"]) == ("4", "4")
    base = f"{sample.server.url}/api/v4/groups/1/projects?include_subgroups=true"
    assert h["link"] == ", ".join(
        [
            f'<{base}&page=1&per_page=1>; rel="prev"',
            f'<{base}&page=3&per_page=1>; rel="next"',
            f'<{base}&page=1&per_page=1>; rel="first"',
            f'<{base}&page=4&per_page=1>; rel="last"',
        ]
    )
    last = api.get(
        "/groups/1/projects", params={"include_subgroups": "true", "per_page": 1, "page": 4}
    ).headers
    assert (last["x-next-page"], 'rel="next"' in last["link"]) == ("", False)


PER_PAGE = [("default", None, 20), ("capped", 500, 100), ("given", 7, 7), ("zero", 0, 20)]


@pytest.mark.parametrize(("name", "asked", "given"), PER_PAGE, ids=[p[0] for p in PER_PAGE])
def test_per_page_defaults_to_20_and_is_capped_at_100(
    api: httpx.Client, name: str, asked: int | None, given: int
) -> None:
    params: dict[str, Any] = {"recursive": "true"}
    if asked is not None:
        params["per_page"] = asked
    response = api.get("/projects/1/repository/tree", params=params)
    assert response.headers["x-per-page"] == str(given)
    assert len(response.json()) == min(given, 32)


def test_python_gitlab_follows_offset_and_keyset_pages(gl: gitlab.Gitlab) -> None:
    project = gl.projects.get(1, lazy=True)
    offset = project.repository_tree(recursive=True, per_page=5, get_all=True)
    keyset = project.repository_tree(
        recursive=True, per_page=5, pagination="keyset", order_by="path", get_all=True
    )
    assert [e["path"] for e in offset] == [e["path"] for e in keyset]
    assert len(offset) == 32  # 30 files and 2 directories (docs, notes; docs/guide is gone)
    assert {e["type"] for e in offset} == {"blob", "tree"}


# files and archives -----------------------------------------------------------------------------


def test_file_json_head_and_raw_agree(api: httpx.Client, sample: GitLabSample) -> None:
    body = api.get(
        "/projects/acme%2Fconfig/repository/files/docs%2Fsetup.md", params={"ref": "main"}
    ).json()
    content = base64.b64decode(body["content"])
    assert content == b"# Setup\n\nInstall it.\nSet the credentials.\nThen run it.\n"
    assert {
        k: body[k]
        for k in (
            "file_name",
            "file_path",
            "size",
            "encoding",
            "ref",
            "commit_id",
            "last_commit_id",
        )
    } == {
        "file_name": "setup.md",
        "file_path": "docs/setup.md",
        "size": len(content),
        "encoding": "base64",
        "ref": "main",
        "commit_id": sample.shas["main"],
        "last_commit_id": sample.shas["feature"],
    }
    blob = subprocess.run(
        ["git", "-C", str(sample.estate / "repos/acme/config"), "rev-parse", "main:docs/setup.md"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert body["blob_id"] == blob
    head = api.head("/projects/1/repository/files/docs%2Fsetup.md", params={"ref": "main"})
    assert head.status_code == 200 and head.content == b""
    assert head.headers["x-gitlab-size"] == str(len(content))
    assert head.headers["x-gitlab-blob-id"] == blob
    assert head.headers["x-gitlab-commit-id"] == sample.shas["main"]
    assert head.headers["x-gitlab-last-commit-id"] == sample.shas["feature"]
    raw = api.get("/projects/1/repository/files/docs%2Fsetup.md/raw", params={"ref": "main"})
    assert raw.content == content


def test_python_gitlab_reads_files_heads_and_binary_raw(
    gl: gitlab.Gitlab, sample: GitLabSample
) -> None:
    project = gl.projects.get("acme/config")
    assert project.files.raw("logo.bin", ref=sample.shas["first"]) == bytes(range(256))
    assert project.files.get("link.md", ref="main").decode() == b"README.md"
    assert project.files.head("README.md", ref="main")["X-Gitlab-File-Name"] == "README.md"
    with pytest.raises(gitlab.GitlabHeadError):
        project.files.head("nope.md", ref="main")
    with pytest.raises(gitlab.GitlabGetError):
        project.files.get("docs/wip.md", ref="main")
    assert project.files.raw("docs/wip.md", ref="wip") == b"draft\n"


def _archive_members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: m for m in tar.getmembers()}


def test_archive_is_a_gzip_tar_with_gitlabs_top_folder(
    gl: gitlab.Gitlab, sample: GitLabSample
) -> None:
    sha = sample.shas["main"]
    data = gl.projects.get(1, lazy=True).repository_archive(sha=sha, format="tar.gz")
    members = _archive_members(data)
    top = f"config-{sha}-{sha}"
    assert {n.split("/", 1)[0] for n in members} == {top}
    assert members[f"{top}/link.md"].issym() and members[f"{top}/link.md"].linkname == "README.md"
    assert f"{top}/docs/renamed.md" in members and f"{top}/docs/old.md" not in members
    assert len([m for m in members.values() if m.isfile() or m.issym()]) == 30


@pytest.mark.parametrize(("status", "message"), [(403, "403 Forbidden"), (404, "404 Not Found")])
def test_refused_archives_answer_like_instances_that_disable_them(
    api: httpx.Client, sample: GitLabSample, status: int, message: str
) -> None:
    sample.server.inject("refuse_archive", times=None, status=status)
    refused = api.get("/projects/1/repository/archive.tar.gz", params={"sha": "main"})
    assert (refused.status_code, refused.json()) == (status, {"message": message})
    assert api.get("/projects/1/repository/files/README.md/raw").status_code == 200
    sample.server.clear_faults()
    assert api.get("/projects/1/repository/archive.tar.gz").status_code == 200


# history ---------------------------------------------------------------------------------------


def test_commits_by_ref_sha_and_prefix(gl: gitlab.Gitlab, sample: GitLabSample) -> None:
    project = gl.projects.get(1, lazy=True)
    merge = sample.shas["merge"]
    by_prefix = project.commits.get(merge[:10])
    assert by_prefix.id == merge and by_prefix.short_id == merge[:8]
    assert by_prefix.parent_ids == [sample.shas["first"], sample.shas["feature"]]
    assert by_prefix.title == "Merge branch 'feature/creds'"
    first = project.commits.get(sample.shas["first"])
    assert (first.title, first.message) == ("Initial docs", "Initial docs\n\nWith a body.\n")
    assert first.authored_date == "2026-01-01T00:03:00.000+00:00"  # EstateBuilder's clock
    assert project.commits.get("v1.0").id == sample.shas["squash"]


def test_commit_diffs_are_against_the_first_parent(api: httpx.Client, sample: GitLabSample) -> None:
    merge = api.get(f"/projects/1/repository/commits/{sample.shas['merge']}/diff").json()
    assert [(d["new_path"], d["diff"]) for d in merge] == [
        (
            "docs/setup.md",
            "@@ -1,4 +1,5 @@\n # Setup\n \n Install it.\n+Set the credentials.\n Then run it.\n",
        )
    ]
    squash = api.get(f"/projects/1/repository/commits/{sample.shas['squash']}/diff").json()
    flags = {
        (
            d["old_path"],
            d["new_path"],
            d["new_file"],
            d["renamed_file"],
            d["deleted_file"],
            d["a_mode"],
            d["b_mode"],
        )
        for d in squash
    }
    assert flags == {
        ("docs/guide/intro.md", "docs/renamed.md", False, True, False, "100644", "100644"),
        ("docs/old.md", "docs/old.md", False, False, True, "100644", "0"),
    }
    root = api.get(
        f"/projects/1/repository/commits/{sample.shas['first']}/diff", params={"per_page": 100}
    ).json()
    assert len(root) == 31 and all(d["new_file"] and d["a_mode"] == "0" for d in root)
    binary = next(d for d in root if d["new_path"] == "logo.bin")
    assert binary["diff"] == ""


REFS = [
    ("branch", "first", "branch", ["cleanup", "feature/creds", "main", "wip"]),
    ("tag", "first", "tag", ["v1.0"]),
    ("all", "wip", "all", ["wip"]),
]


@pytest.mark.parametrize(("name", "commit", "kind", "names"), REFS, ids=[r[0] for r in REFS])
def test_refs_containing_a_commit(
    api: httpx.Client, sample: GitLabSample, name: str, commit: str, kind: str, names: list[str]
) -> None:
    refs = api.get(
        f"/projects/1/repository/commits/{sample.shas[commit]}/refs", params={"type": kind}
    ).json()
    assert sorted(r["name"] for r in refs) == names
    assert {r["type"] for r in refs} == ({"branch", "tag"} if kind == "all" else {kind}) - (
        {"tag"} if commit == "wip" else set()
    )


def test_merge_base_and_compare(api: httpx.Client, sample: GitLabSample) -> None:
    base = api.get(
        "/projects/1/repository/merge_base", params={"refs[]": [sample.shas["first"], "main"]}
    ).json()
    assert base["id"] == sample.shas["first"]
    compare = api.get("/projects/1/repository/compare", params={"from": "main", "to": "wip"}).json()
    assert [c["id"] for c in compare["commits"]] == [sample.shas["wip"]]
    assert [d["new_path"] for d in compare["diffs"]] == ["docs/wip.md"]
    assert compare["commit"]["id"] == sample.shas["wip"]


# merge requests ---------------------------------------------------------------------------------

MRS = [
    ("merge_commit", 1, "merged", "feature", "merge", None, ["docs/setup.md"]),
    ("squash", 2, "merged", "cleanup", None, "squash", ["docs/old.md", "docs/renamed.md"]),
    ("opened", 3, "opened", "wip", None, None, ["docs/wip.md"]),
]


@pytest.mark.parametrize(
    ("name", "iid", "state", "head", "merge", "squash", "paths"), MRS, ids=[m[0] for m in MRS]
)
def test_merge_requests_and_their_diffs(
    gl: gitlab.Gitlab,
    sample: GitLabSample,
    name: str,
    iid: int,
    state: str,
    head: str,
    merge: str | None,
    squash: str | None,
    paths: list[str],
) -> None:
    mr = gl.projects.get(1, lazy=True).mergerequests.get(iid)
    assert (mr.state, mr.sha) == (state, sample.shas[head])
    assert mr.merge_commit_sha == (sample.shas[merge] if merge else None)
    assert mr.squash_commit_sha == (sample.shas[squash] if squash else None)
    assert mr.web_url == f"{URL}/acme/config/-/merge_requests/{iid}"
    assert (mr.merged_at is not None) == (state == "merged")
    diffs = gl.http_list(f"/projects/1/merge_requests/{iid}/diffs", get_all=True)
    assert [d["new_path"] for d in diffs] == paths
    assert all(d["diff"].startswith("@@") or d["renamed_file"] for d in diffs)


# issues and notes -------------------------------------------------------------------------------


def test_group_issues_updated_after_oldest_first(gl: gitlab.Gitlab) -> None:
    issues = gl.groups.get("acme").issues.list(
        updated_after="2026-01-20T00:00:00Z",
        order_by="updated_at",
        sort="asc",
        scope="all",
        get_all=True,
    )
    assert [(i.references["full"], i.updated_at, i.user_notes_count) for i in issues] == [
        ("acme/config#1", "2026-02-01T10:00:00.000Z", 1),
        ("acme/platform/api#5", "2026-03-01T00:00:00.000Z", 2),
    ]
    assert issues[0].project_id == 1 and issues[0].web_url == f"{URL}/acme/config/-/issues/1"
    everything = gl.groups.get("acme").issues.list(get_all=True)
    assert [i.iid for i in everything] == [5, 1, 2]  # default: created_at descending
    on_the_dot = gl.groups.get("acme").issues.list(
        updated_after="2026-03-01T00:00:00Z", get_all=True
    )
    assert [i.iid for i in on_the_dot] == [5]  # GitLab's updated_after is inclusive


def test_notes_include_system_notes_in_order(gl: gitlab.Gitlab) -> None:
    issue = gl.projects.get(1, lazy=True).issues.get(1, lazy=True)
    notes = issue.notes.list(sort="asc", order_by="updated_at", get_all=True)
    assert [(n.id, n.system, n.body) for n in notes] == [
        (1001, False, "Try docs/setup.md#L4"),
        (1002, True, "changed the description"),
    ]
    assert notes[0].noteable_type == "Issue" and notes[0].noteable_iid == 1


# faults, latency, log ----------------------------------------------------------------------------


def test_429_carries_retry_after_then_recovers(api: httpx.Client, sample: GitLabSample) -> None:
    sample.server.inject("429", times=2, retry_after=1)
    first, second, third = (api.get("/projects/1") for _ in range(3))
    assert (first.status_code, first.headers["retry-after"], first.json()) == (
        429,
        "1",
        {"message": "Retry later"},
    )
    assert second.status_code == 429 and third.status_code == 200
    assert [r.status for r in sample.server.log] == [429, 429, 200]


@pytest.mark.parametrize(("fault", "status"), [("500", 500), ("502", 502), ("503", 503)])
def test_server_errors_then_success(
    api: httpx.Client, sample: GitLabSample, fault: str, status: int
) -> None:
    sample.server.inject(fault, times=3)
    assert [api.get("/user").status_code for _ in range(4)] == [status] * 3 + [200]


def test_python_gitlab_retries_transient_errors_through_the_server(
    sample: GitLabSample,
) -> None:
    sample.server.inject("502", times=2)
    client = gitlab.Gitlab(sample.server.url, private_token=TOKEN, retry_transient_errors=True)
    assert client.projects.get(1).path == "config"
    assert [r.status for r in sample.server.log] == [502, 502, 200]


def test_faults_match_the_raw_target_including_the_query(
    api: httpx.Client, sample: GitLabSample
) -> None:
    sample.server.inject("500", times=None, match=r"projects\?.*page=2")
    assert api.get("/groups/1/projects", params={"page": 1}).status_code == 200
    assert api.get("/groups/1/projects", params={"page": 2}).status_code == 500
    assert api.get("/groups/1/projects", params={"page": 2}).status_code == 500


def test_a_dropped_connection_gets_no_response(api: httpx.Client, sample: GitLabSample) -> None:
    sample.server.inject("drop")
    with pytest.raises(httpx.RemoteProtocolError):
        api.get("/projects/1")
    assert api.get("/projects/1").status_code == 200
    assert [r.status for r in sample.server.log] == [0, 200]


def test_a_slow_answer_times_out_the_client(sample: GitLabSample) -> None:
    sample.server.inject("slow", delay=0.5)
    with pytest.raises(httpx.ReadTimeout):
        httpx.get(f"{sample.server.url}/api/v4/user", headers={"PRIVATE-TOKEN": TOKEN}, timeout=0.1)
    # the server finishes the request after its delay; wait for it so no later test sees it
    deadline = time.monotonic() + 5
    while not sample.server.log and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [r.status for r in sample.server.log] == [200]


def test_a_truncated_body_is_invalid_json(api: httpx.Client, sample: GitLabSample) -> None:
    sample.server.inject("truncate")
    response = api.get("/projects/1")
    whole = api.get("/projects/1")
    assert response.status_code == 200
    assert response.content == whole.content[: len(whole.content) // 2]
    with pytest.raises(ValueError):
        response.json()


def test_probabilistic_faults_repeat_for_the_same_seed(sample: GitLabSample) -> None:
    def statuses(seed: int) -> list[int]:
        with GitLabServer(sample.estate, seed=seed) as server:
            server.inject("500", probability=0.5)
            with httpx.Client(headers={"PRIVATE-TOKEN": TOKEN}) as client:
                return [client.get(f"{server.url}/api/v4/user").status_code for _ in range(20)]

    once, again, other = statuses(7), statuses(7), statuses(8)
    assert once == again and once != other and {500, 200} == set(once)


def test_latency_is_added_to_every_request(sample: GitLabSample) -> None:
    with GitLabServer(sample.estate, latency=0.2) as server:
        started = time.monotonic()
        httpx.get(f"{server.url}/api/v4/user", headers={"PRIVATE-TOKEN": TOKEN})
        assert time.monotonic() - started >= 0.2


def test_the_log_records_method_raw_path_query_and_status(
    api: httpx.Client, sample: GitLabSample
) -> None:
    api.get("/projects/acme%2Fconfig/repository/files/docs%2Fsetup.md", params={"ref": "main"})
    api.get("/projects/1/repository/merge_base", params={"refs[]": ["a", "b"]})
    api.head("/projects/1/repository/files/nope", params={"ref": "main"})
    assert sample.server.log == [
        Request(
            "GET",
            "/api/v4/projects/acme%2Fconfig/repository/files/docs%2Fsetup.md",
            {"ref": "main"},
            200,
        ),
        Request("GET", "/api/v4/projects/1/repository/merge_base", {"refs[]": ["a", "b"]}, 400),
        Request("HEAD", "/api/v4/projects/1/repository/files/nope", {"ref": "main"}, 404),
    ]
    sample.server.clear_log()
    assert sample.server.log == []


def test_metadata_and_issue_files_can_change_while_serving(
    tmp_path: Path, gitlab_server_factory: Any
) -> None:
    estate = tmp_path / "estate"
    build_sample_estate(estate)
    server = gitlab_server_factory(estate)
    client = gitlab.Gitlab(server.url, private_token=TOKEN)
    server.set_visibility("acme/config", "private")
    server.set_archived("acme/config", True)
    project = client.projects.get("acme/config")
    assert (project.visibility, project.archived) == ("private", True)
    toml = (estate / "estate.toml").read_text(encoding="utf-8")
    (estate / "estate.toml").write_text(
        toml.replace('visibility = "private"', 'visibility = "internal"'), encoding="utf-8"
    )
    assert client.projects.get("acme/platform/api").visibility == "internal"
    issues = estate / "issues" / "acme" / "config.jsonl"
    issues.write_text(issues.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    assert [i.iid for i in client.projects.get(1, lazy=True).issues.list(get_all=True)] == [1]


def test_runs_as_a_module_in_the_foreground(sample: GitLabSample) -> None:
    command = [
        sys.executable,
        "-m",
        "tests.gitlab_server",
        str(sample.estate),
        "--token",
        "t0k",
        "--quiet",
    ]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            url = process.stdout.readline().strip()
            assert url.startswith("http://127.0.0.1:")
            response = httpx.get(f"{url}/api/v4/projects/1", headers={"PRIVATE-TOKEN": "t0k"})
            assert response.json()["path_with_namespace"] == "acme/config"
        finally:
            process.terminate()
            process.wait(timeout=10)
