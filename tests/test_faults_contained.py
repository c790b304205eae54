"""Faults are contained per reference and per project (docs/design.md; issues 15 and 16, item 1).

A reference whose check can never complete is rejected ``cannot check:`` and the sweep goes on; a
transient fault stops the sweep before its issue (exit 5), three in a row pass the issue; a
repository that cannot be read is a fault, never a verdict: ``scout index`` keeps its passages
and exits 5 naming it, a sweep withdraws nothing into it, and both recover once it is repaired.
Everything runs the real CLI on real git repositories (and the GitLab API test server).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scout.cli.main import cli
from scout.demo.builder import EstateBuilder, Repo
from tests.gitlab_server.server import GitLabServer
from tests.helpers.run import Result
from tests.helpers.served import TOKEN, TOKEN_ENV, config_text, placeholder

pytestmark = pytest.mark.faults

GUIDE = "# Rates\n\nExchange rates are rounded half even to four places.\n" + "".join(
    f"Line {n} about exchange rates.\n" for n in range(3, 12)
)
UNKNOWN_SHA = "0123456789abcdef0123456789abcdef01234567"
# Over the 32 MiB read limit of both forges, in short lines so that a diff of it is as large.
BIG = ("exchange rates " * 4 + "\n").encode() * (33 * 1024 * 1024 // 61 + 1)


def invoke(config: Path, *args: str) -> Result:
    """The real CLI in-process, with the GitLab token in its environment."""
    done = CliRunner(env={TOKEN_ENV: TOKEN}).invoke(cli, ["--config", str(config), *args])
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return Result(done.exit_code, done.stdout, done.stderr)


def verdicts(db: Path) -> dict[str, tuple[str, str | None, str]]:
    """reference -> (status or 'withdrawn', failed check, reason)."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(
            "select reference, status, withdrawn_at, check_name, reason from signposts"
        ).fetchall()
    finally:
        conn.close()
    return {r: ("withdrawn" if w else s, c, why) for r, s, w, c, why in rows}


def passages_of(db: Path, project: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "select path, sha, line_start, body from passages where project = ? and origin = "
            "'corpus' order by path, line_start",
            [project],
        ).fetchall()
    finally:
        conn.close()


# ---------------------------------------------------------------------------------- poison


def build_poison_estate(root: Path, url: str, *, corrupt: bool) -> dict[str, str]:
    """One project holding every reference a check cannot complete on, an issue for each, and
    a last issue with a sound reference that must still be read."""
    estate = EstateBuilder(root, url=url)
    repo = estate.project("acme/poison")
    # broken.md (its blob corrupted at the end) lands first, so no later diff has to read it
    first = repo.commit(
        {
            "docs/guide.md": GUIDE,
            "docs/my page.md": GUIDE,
            "docs/broken.md": "# Broken\n\nexchange rates\n",
        },
        "guide",
    )
    repo.git("checkout", "-q", "--orphan", "side")
    orphan = repo.commit({"docs/side.md": "# Side\n\nexchange rates elsewhere\n"}, "orphan")
    repo.checkout("main")
    repo.git("branch", "-q", "-D", "side")  # reachable from no branch: only its sha is known
    repo.commit({"docs/big.md": BIG}, "big")
    base = f"{url}/acme/poison/-/blob"
    poison = {
        "orphan": f"acme/poison@{orphan}",
        "big_file": f"{base}/main/docs/big.md",
        "big_compare": f"{base}/{first}/docs/guide.md#L2-3",
        "space": f"{base}/main/docs/old%20page.md",
        "unknown_sha": f"{base}/{UNKNOWN_SHA}/docs/guide.md#L2",
    }
    if corrupt:
        poison["corrupt"] = f"{base}/main/docs/broken.md"
    for n, (_name, link) in enumerate(poison.items(), start=1):
        estate.issue(
            "acme/poison",
            n,
            "How are exchange rates rounded?",
            f"See {link}",
            updated_at=f"2026-02-01T10:0{n}:00Z",
        )
    estate.issue(
        "acme/poison",
        99,
        "How are exchange rates rounded?",
        f"See {base}/main/docs/guide.md#L3",
        updated_at="2026-02-01T11:00:00Z",
    )
    estate.write()
    if corrupt:
        _corrupt_blob(repo, "docs/broken.md")
    return {"first": first, "orphan": orphan}


def _corrupt_blob(repo: Repo, path: str) -> None:
    blob = repo.git("rev-parse", f"HEAD:{path}")
    loose = repo.dir / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"this is not a zlib stream")


def _expected(kind: str, shas: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Poison name -> (check, reason prefix) each forge must record."""
    orphan = shas["orphan"][:12]
    return {
        # git answers "not an ancestor" for an unrelated history; GitLab answers merge_base 404
        # "Merge Base not found", which the GitLab forge reads as the same answer
        "orphan": ("resolves", f"commit {orphan} is not on the default branch"),
        "big_file": ("resolves", "cannot check: docs/big.md is over the 32 MiB read limit"),
        # only GitLab's compare answer carries the big file's diff over the JSON limit
        "big_compare": (
            ("addresses", "")
            if kind == "local"
            else ("resolves", "cannot check: GitLab's answer to /projects/")
        ),
        # one space: git's "<name> missing" line then has three fields, like a found object's
        "space": ("resolves", "docs/old page.md does not exist at the head"),
        "unknown_sha": (
            "resolves",
            f"cannot check: the pinned commit {UNKNOWN_SHA[:12]} is not in acme/poison",
        ),
        "corrupt": ("resolves", "cannot check: git cannot read docs/broken.md"),
    }


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["local", "gitlab"])
def test_a_sweep_over_every_poison_reference_completes_and_reads_every_issue(
    kind: str, tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> None:
    root = placeholder(tmp_path / "estate")
    server = gitlab_server_factory(root, token=TOKEN)
    (root / "estate.toml").unlink()
    url = server.url if kind == "gitlab" else "https://gitlab.acme.example"
    # The test server reads objects itself and fails on a corrupt one (a 500, which is transient).
    shas = build_poison_estate(root, url, corrupt=kind == "local")
    config = tmp_path / "scout.toml"
    config.write_text(config_text(url, kind=kind, estate=root), encoding="utf-8")

    done = invoke(config, "sweep", "--json")

    assert done.code == 0, done.stderr
    summary = done.json()
    issues = 7 if kind == "local" else 6
    assert summary["issues_read"] == issues and summary["references"] == issues
    got = verdicts(tmp_path / "scout.db")
    expected = _expected(kind, shas)
    links = {
        name: next(r for r in got if r.endswith(tail))
        for name, tail in {
            "orphan": f"@{shas['orphan']}",
            "big_file": "main/docs/big.md",
            "big_compare": f"{shas['first']}/docs/guide.md#L2-3",
            "space": "old page.md",
            "unknown_sha": f"{UNKNOWN_SHA}/docs/guide.md#L2",
            "corrupt": "main/docs/broken.md",
        }.items()
        if kind == "local" or name != "corrupt"
    }
    for name, reference in links.items():
        status, check, reason = got[reference]
        want_check, want_reason = expected[name]
        if want_check == "addresses":  # judged in full: it resolved
            assert check in (None, "addresses"), (name, reason)
            continue
        assert (status, check) == ("rejected", want_check), (name, reason)
        assert reason.startswith(want_reason), (name, reason)
    assert got["acme/poison/-/blob/main/docs/guide.md#L3"][0] == "accepted"


# ---------------------------------------------------------------------------------- unreadable


def build_two_projects(root: Path) -> tuple[EstateBuilder, Repo, Repo]:
    estate = EstateBuilder(root)
    handbook = estate.project("acme/handbook")
    handbook.commit(
        {
            "docs/rates.md": GUIDE,
            "docs/deploy.md": "# Deploy\n\nDeployments run on Tuesdays after review.\n",
        },
        "docs",
    )
    other = estate.project("acme/other")
    other.commit({"README.md": "# Other\n\nThe other project keeps its notes here.\n"}, "readme")
    estate.issue(
        "acme/other",
        1,
        "How are exchange rates rounded?",
        "See https://gitlab.acme.example/acme/handbook/-/blob/main/docs/rates.md and "
        "https://gitlab.acme.example/acme/handbook/-/blob/main/docs/deploy.md (deployments run "
        "on Tuesdays after review): how are exchange rates rounded?",
    )
    estate.write()
    return estate, handbook, other


def _break_by_move(repo: Repo) -> Callable[[], None]:
    moved = repo.dir.with_name(repo.dir.name + ".moved")
    repo.dir.rename(moved)
    return lambda: moved.rename(repo.dir)


def _break_objects(repo: Repo) -> Callable[[], None]:
    objects = repo.dir / ".git" / "objects"
    aside = repo.dir / ".git" / "objects.aside"
    objects.rename(aside)
    return lambda: aside.rename(objects)


def _break_permissions(repo: Repo) -> Callable[[], None]:
    if os.geteuid() != 0:
        repo.dir.chmod(0)
        return lambda: repo.dir.chmod(0o755)
    # root reads through permission bits; git itself refuses a repository another user owns
    # ("detected dubious ownership"), which is the permission fault root meets.
    owner = repo.dir.stat()
    _chown_tree(repo.dir, 54321, 54321)
    return lambda: _chown_tree(repo.dir, owner.st_uid, owner.st_gid)


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


BREAKS = {"moved": _break_by_move, "objects": _break_objects, "permissions": _break_permissions}


@pytest.mark.parametrize("how", list(BREAKS))
def test_an_unreadable_repository_keeps_its_passages_and_signposts_until_repaired(
    how: str, tmp_path: Path, write_config: Callable[..., Path]
) -> None:
    root = tmp_path / "estate"
    _estate, handbook, other = build_two_projects(root)
    config = write_config(root)
    db = tmp_path / "scout.db"
    assert invoke(config, "index").code == 0
    swept = invoke(config, "sweep", "--json")
    assert swept.code == 0, swept.stderr
    before = verdicts(db)
    accepted = [r for r, v in before.items() if v[0] == "accepted"]
    assert len(accepted) == 2, before
    kept = passages_of(db, "acme/handbook")
    assert kept

    repair = BREAKS[how](handbook)
    other.commit({"README.md": "# Other\n\nThe other project now says more.\n"}, "more")
    try:
        indexed = invoke(config, "index", "--json")
        assert indexed.code == 5, indexed.stdout
        assert indexed.stdout == ""
        assert len(indexed.stderr.strip().splitlines()) == 1, indexed.stderr
        assert "acme/handbook" in indexed.stderr and "acme/other" not in indexed.stderr
        assert passages_of(db, "acme/handbook") == kept
        assert "now says more" in " ".join(str(p[3]) for p in passages_of(db, "acme/other"))

        # the other project's head moved, so every accepted signpost is re-validated
        other_issue_changes = invoke(config, "sweep", "--json")
        assert other_issue_changes.code == 5, other_issue_changes.stdout
        assert "acme/handbook" in other_issue_changes.stderr
        assert verdicts(db) == before
        rechecked = invoke(config, "signposts", "recheck", "--all")
        assert rechecked.code == 5 and "acme/handbook" in rechecked.stderr
        assert verdicts(db) == before
    finally:
        repair()

    reindexed = invoke(config, "index", "--json")
    assert reindexed.code == 0, reindexed.stderr
    assert passages_of(db, "acme/handbook") == kept
    again = invoke(config, "sweep", "--json")
    assert again.code == 0, again.stderr
    assert verdicts(db) == before


@pytest.mark.slow
def test_a_gitlab_project_failing_with_5xx_keeps_its_passages_and_signposts(
    tmp_path: Path, gitlab_server_factory: Callable[..., GitLabServer]
) -> None:
    root = placeholder(tmp_path / "estate")
    server = gitlab_server_factory(root, token=TOKEN)
    (root / "estate.toml").unlink()
    estate = EstateBuilder(root, url=server.url)
    handbook = estate.project("acme/handbook")
    handbook.commit({"docs/rates.md": GUIDE}, "rates")
    other = estate.project("acme/other")
    other.commit({"README.md": "# Other\n\nThe other project keeps its notes here.\n"}, "readme")
    estate.issue(
        "acme/other",
        1,
        "How are exchange rates rounded?",
        f"See {server.url}/acme/handbook/-/blob/main/docs/rates.md",
    )
    estate.write()
    config = tmp_path / "scout.toml"
    config.write_text(config_text(server.url), encoding="utf-8")
    db = tmp_path / "scout.db"
    assert invoke(config, "index").code == 0
    assert invoke(config, "sweep").code == 0
    before, kept = verdicts(db), passages_of(db, "acme/handbook")
    assert [v[0] for v in before.values()] == ["accepted"]

    handbook.commit({"docs/more.md": "# More\n\nMore about exchange rates.\n"}, "more")
    other.commit({"README.md": "# Other\n\nThe other project now says more.\n"}, "more")
    pid = server.estate.data().project("acme/handbook").id  # type: ignore[union-attr]
    # Every content read of one project answers 500 (after Scout's retries: a server error).
    server.inject("500", times=None, match=rf"/projects/{pid}/repository/(archive|tree|files)")
    indexed = invoke(config, "index")
    assert indexed.code == 5 and indexed.stdout == ""
    assert "acme/handbook" in indexed.stderr and "acme/other" not in indexed.stderr
    assert passages_of(db, "acme/handbook") == kept
    assert "now says more" in " ".join(str(p[3]) for p in passages_of(db, "acme/other"))
    swept = invoke(config, "sweep")
    assert swept.code == 5 and "acme/handbook" in swept.stderr
    assert verdicts(db) == before

    server.clear_faults()
    assert invoke(config, "index").code == 0
    assert len(passages_of(db, "acme/handbook")) > len(kept)
    assert invoke(config, "sweep").code == 0
    assert [v[0] for v in verdicts(db).values()] == ["accepted"]


def test_a_project_that_left_the_estate_is_still_removed(
    tmp_path: Path, write_config: Callable[..., Path]
) -> None:
    root = tmp_path / "estate"
    estate, handbook, _other = build_two_projects(root)
    config = write_config(root)
    assert invoke(config, "index").code == 0
    estate.projects[:] = [p for p in estate.projects if p["path"] != "acme/handbook"]
    estate.write()
    shutil.rmtree(handbook.dir)
    done = invoke(config, "index", "--json")
    assert done.code == 0, done.stderr
    assert done.json()["projects_removed"] == 1
    assert passages_of(tmp_path / "scout.db", "acme/handbook") == []


def test_a_withdrawn_signpost_is_accepted_again_when_its_target_comes_back(
    tmp_path: Path, write_config: Callable[..., Path]
) -> None:
    root = tmp_path / "estate"
    _estate, handbook, _other = build_two_projects(root)
    config = write_config(root)
    db = tmp_path / "scout.db"
    assert invoke(config, "sweep").code == 0
    reference = "acme/handbook/-/blob/main/docs/rates.md"
    assert verdicts(db)[reference][0] == "accepted"

    handbook.commit({"docs/rates.md": None}, "retire the rates page")
    assert invoke(config, "sweep").code == 0
    assert verdicts(db)[reference][:2] == ("withdrawn", "resolves")

    handbook.commit({"docs/rates.md": GUIDE}, "bring the rates page back")
    done = invoke(config, "sweep", "--json")
    assert done.code == 0, done.stderr
    assert verdicts(db)[reference][0] == "accepted"
    assert done.json()["revalidated"] >= 1


# ---------------------------------------------------------------------------------- three strikes


def test_an_issue_failing_three_sweeps_in_a_row_is_recorded_and_passed(
    tmp_path: Path, write_config: Callable[..., Path]
) -> None:
    root = tmp_path / "estate"
    estate = EstateBuilder(root)
    docs = estate.project("acme/docs")
    docs.commit({"docs/rates.md": GUIDE}, "rates")
    broken = estate.project("acme/broken")
    broken.commit({"docs/a.md": "# A\n\nexchange rates\n"}, "a")
    question = "How are exchange rates rounded?"
    estate.issue("acme/docs", 1, question, "See docs/rates.md", updated_at="2026-02-01T10:00:00Z")
    estate.issue(
        "acme/docs",
        2,
        question,
        "See https://gitlab.acme.example/acme/broken/-/blob/main/docs/a.md and docs/rates.md#L3",
        updated_at="2026-02-01T10:01:00Z",
    )
    estate.issue(
        "acme/docs", 3, question, "See docs/rates.md#L2", updated_at="2026-02-01T10:02:00Z"
    )
    estate.write()
    config = write_config(root)
    db = tmp_path / "scout.db"
    repair = _break_by_move(broken)

    for attempt in (1, 2):
        done = invoke(config, "sweep", "--json")
        assert done.code == 5, done.stdout
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1
        assert f"stopped before acme/docs#2 (failure {attempt} of 3)" in done.stderr
        # the whole issue before it is kept, nothing of it or after it
        assert set(verdicts(db)) == {"acme/docs:docs/rates.md"}

    third = invoke(config, "sweep", "--json")
    assert third.code == 0, third.stderr
    assert third.json()["skipped"]["issue_failed_repeatedly"] == 1
    got = verdicts(db)
    assert got["acme/docs:docs/rates.md#L2"][0] == "accepted"  # the issue after it was read
    passed = {
        r: v for r, v in got.items() if r.startswith(("acme/broken", "acme/docs:docs/rates.md#L3"))
    }
    assert len(passed) == 2
    for status, check, reason in passed.values():
        assert (status, check) == ("rejected", "resolves")
        assert reason.startswith("cannot check: estate: cannot read the repository at ")
    assert invoke(config, "sweep", "--json").json()["issues_read"] == 0

    repair()
    rechecked = invoke(config, "signposts", "recheck", "--all", "--json")
    assert rechecked.code == 0, rechecked.stderr
    changed = {c["reference"]: c for c in rechecked.json()["changed"]}
    assert set(changed) == set(passed)
    assert all("now resolves" in c["after"]["reason"] for c in changed.values())
