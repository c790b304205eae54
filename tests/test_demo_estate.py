"""The bundled demo estate: deterministic, complete, and its named commits are what they claim."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from scout.config import load_config
from scout.demo.estate import OFF_CORPUS_PHRASES, QUESTIONS, DemoEstate, build_demo_estate
from scout.errors import UsageError

CANARY = "CANARY-7f3a-never-stored"
CONFIG = Path(__file__).resolve().parent.parent / "config" / "demo.toml"
DOC_SUFFIXES = (".md", ".markdown", ".rst")


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> DemoEstate:
    return build_demo_estate(tmp_path_factory.mktemp("demo") / "estate", canary=CANARY)


def git(estate: DemoEstate, project: str, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", *args], cwd=estate.root / "repos" / project, capture_output=True, text=True
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {args}: {done.stderr}")
    return done.stdout if check else str(done.returncode)


def is_ancestor(estate: DemoEstate, project: str, sha: str, ref: str) -> bool:
    return git(estate, project, "merge-base", "--is-ancestor", sha, ref, check=False) == "0"


def show(estate: DemoEstate, project: str, ref: str, path: str) -> str | None:
    done = subprocess.run(
        ["git", "show", f"{ref}:{path}"],
        cwd=estate.root / "repos" / project,
        capture_output=True,
        text=True,
    )
    return done.stdout if done.returncode == 0 else None


def added_lines(estate: DemoEstate, project: str, sha: str) -> dict[str, list[str]]:
    """Non-blank lines a commit added, per file (against its first parent)."""
    diff = git(estate, project, "show", "--first-parent", "-U0", "--format=", sha)
    added: dict[str, list[str]] = {}
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line.removeprefix("+++ b/")
        elif line.startswith("+") and line[1:].strip():
            added.setdefault(path, []).append(line[1:])
    return added


def blamed_to(estate: DemoEstate, project: str, path: str, sha: str) -> int:
    """How many lines of ``path`` at the head git blame attributes to ``sha``."""
    blame = git(estate, project, "blame", "--porcelain", "main", "--", path)
    return sum(1 for line in blame.splitlines() if line.startswith(sha + " "))


def issues(estate: DemoEstate) -> dict[tuple[str, int], dict[str, Any]]:
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for file in sorted((estate.root / "issues").rglob("*.jsonl")):
        project = file.relative_to(estate.root / "issues").with_suffix("").as_posix()
        for line in file.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            found[(project, record["iid"])] = record
    return found


def head_docs(estate: DemoEstate, project: str) -> dict[str, str]:
    files = git(estate, project, "ls-tree", "-r", "--name-only", "main").split()
    docs = [f for f in files if f.endswith(DOC_SUFFIXES) or f.split("/")[-1].startswith("README")]
    return {f: show(estate, project, "main", f) or "" for f in docs}


# --- determinism and speed ---------------------------------------------------------------------


def test_two_builds_give_identical_shas_and_files(estate: DemoEstate, tmp_path: Path) -> None:
    again = build_demo_estate(tmp_path / "estate")
    assert again.shas == estate.shas
    assert again.cases.keys() == estate.cases.keys()
    assert (again.root / "estate.toml").read_text() == (estate.root / "estate.toml").read_text()
    for project in ("acme/ledger", "acme/handbook"):
        refs = git(estate, project, "show-ref")
        assert git(again, project, "show-ref") == refs


def test_build_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not empty"):
        build_demo_estate(tmp_path)


# --- projects, merge requests, issues ----------------------------------------------------------


def test_every_project_kind_is_declared(estate: DemoEstate) -> None:
    meta = tomllib.loads((estate.root / "estate.toml").read_text())
    assert meta["url"] == "https://gitlab.acme.example"
    assert [(p["path"], p["visibility"], p["archived"]) for p in meta["project"]] == [
        ("acme/handbook", "public", False),
        ("acme/ledger", "public", False),
        ("acme/secrets", "private", False),
        ("acme/infra", "public", False),
        ("acme/legacy", "public", True),
        ("acme/platform/gateway", "public", False),
    ]
    for project in meta["project"]:
        assert git(estate, project["path"], "rev-parse", "main").strip()


def test_merge_requests_cover_every_state(estate: DemoEstate) -> None:
    meta = tomllib.loads((estate.root / "estate.toml").read_text())
    rows = {(m["project"], m["iid"]): m for m in meta["merge_request"]}
    assert {key: m["state"] for key, m in rows.items()} == {
        ("acme/ledger", 1): "merged",
        ("acme/ledger", 2): "merged",
        ("acme/ledger", 3): "closed",
        ("acme/ledger", 4): "opened",
    }
    s = estate.shas
    assert rows[("acme/ledger", 1)]["merge_commit_sha"] == s["ledger:mr1_merge"]
    assert rows[("acme/ledger", 2)]["squash_commit_sha"] == s["ledger:mr2_squash"]
    assert "merge_commit_sha" not in rows[("acme/ledger", 2)]
    assert rows[("acme/ledger", 4)]["source_branch"] == "feature/fx-rates"
    for m in rows.values():
        head = git(estate, "acme/ledger", "rev-parse", m["source_branch"]).strip()
        assert head == m["sha"]


def test_issue_lines_follow_the_estate_format(estate: DemoEstate) -> None:
    found = issues(estate)
    assert sorted(found) == [
        ("acme/handbook", 1),
        ("acme/handbook", 2),
        ("acme/ledger", 1),
        ("acme/ledger", 2),
        ("acme/ledger", 3),
        ("acme/ledger", 4),
        ("acme/ledger", 5),
        ("acme/secrets", 1),
    ]
    keys = {"iid", "title", "description", "state", "created_at", "updated_at", "web_url", "notes"}
    note_keys = {"id", "body", "system", "created_at", "updated_at"}
    for (project, iid), record in found.items():
        assert set(record) == keys
        assert record["web_url"] == f"https://gitlab.acme.example/{project}/-/issues/{iid}"
        assert all(set(note) == note_keys for note in record["notes"])
    notes = [n for r in found.values() for n in r["notes"]]
    assert {n["system"] for n in notes} == {True, False}
    assert {r["state"] for r in found.values()} == {"opened", "closed"}


def test_canary_is_in_every_title_description_and_note(estate: DemoEstate) -> None:
    for record in issues(estate).values():
        assert CANARY in record["title"]
        assert CANARY in record["description"]
        for note in record["notes"]:
            assert CANARY in note["body"]
    for project in ("acme/handbook", "acme/ledger"):
        assert CANARY not in git(estate, project, "log", "--all", "-p")


def test_every_case_is_planted_in_its_issue(estate: DemoEstate) -> None:
    found = issues(estate)
    for case in estate.cases.values():
        record = found[(case.project, case.iid)]
        text = "\n".join(
            [record["title"], record["description"]] + [n["body"] for n in record["notes"]]
        )
        assert case.text in text, case.name


def test_cases_cover_every_signpost_kind(estate: DemoEstate) -> None:
    expect = {name: case.expect for name, case in estate.cases.items()}
    assert expect == {
        "docs_anchor_good": "accepted",
        "docs_anchor_bad": "resolves",
        "file_pinned_moved": "accepted",
        "file_relative_link": "accepted",
        "docs_off_topic": "addresses",
        "system_note_commit": "ignored",
        "docs_index_page": "accepted",
        "file_relative_link_release": "accepted",
        "docs_html_suffix": "accepted",
        "docs_missing_page": "resolves",
        "file_bare_path_line": "accepted",
        "file_blob_slashed_branch": "accepted",
        "file_only_on_branch": "resolves",
        "commit_unmerged_branch": "resolves",
        "mr_opened": "resolves",
        "file_bare_path_line_posting": "accepted",
        "commit_bare_sha": "accepted",
        "file_relative_link_posting": "accepted",
        "mr_url_diffs": "accepted",
        "commit_project_at_sha": "accepted",
        "mr_merged_merge_commit": "accepted",
        "mr_squash_merged": "accepted",
        "file_line_past_end": "resolves",
        "commit_reverted": "resolves",
        "commit_superseded": "resolves",
        "commit_url": "accepted",
        "mr_closed": "resolves",
        "file_deleted": "resolves",
        "private_project": "corpus_rules",
        "private_project_mr": "corpus_rules",
        "excluded_project": "corpus_rules",
        "archived_project": "corpus_rules",
        "outside_group": "corpus_rules",
        "other_host": "ignored",
        "issue_ref_short": "ignored",
        "issue_ref_full": "ignored",
        "issue_url": "ignored",
        "work_item_url": "ignored",
        "subgroup_project": "accepted",
        "issue_in_private_project": "ignored",
    }


# --- named commits are what they claim ---------------------------------------------------------


@pytest.mark.parametrize("name", ["ledger:reverted", "ledger:superseded"])
def test_reverted_and_superseded_commits_leave_no_line_at_head(
    estate: DemoEstate, name: str
) -> None:
    sha = estate.shas[name]
    assert is_ancestor(estate, "acme/ledger", sha, "main")
    added = added_lines(estate, "acme/ledger", sha)
    assert added
    for path, lines in added.items():
        assert blamed_to(estate, "acme/ledger", path, sha) == 0
        at_head = (show(estate, "acme/ledger", "main", path) or "").splitlines()
        assert not set(lines) & set(at_head), path


def test_the_revert_names_the_reverted_commit(estate: DemoEstate) -> None:
    message = git(estate, "acme/ledger", "log", "-1", "--format=%B", estate.shas["ledger:revert"])
    assert f"This reverts commit {estate.shas['ledger:reverted']}." in message


@pytest.mark.parametrize("name", ["ledger:in_effect", "ledger:superseding", "ledger:mr2_squash"])
def test_commits_in_effect_keep_all_their_lines_at_head(estate: DemoEstate, name: str) -> None:
    sha = estate.shas[name]
    assert is_ancestor(estate, "acme/ledger", sha, "main")
    for path, lines in added_lines(estate, "acme/ledger", sha).items():
        assert blamed_to(estate, "acme/ledger", path, sha) > 0
        at_head = (show(estate, "acme/ledger", "main", path) or "").splitlines()
        assert set(lines) <= set(at_head), path


def test_merge_request_commits(estate: DemoEstate) -> None:
    s = estate.shas
    parents = git(estate, "acme/ledger", "rev-list", "--parents", "-n1", s["ledger:mr1_merge"])
    assert parents.split()[1:] == [
        git(estate, "acme/ledger", "rev-parse", f"{s['ledger:mr1_merge']}^1").strip(),
        s["ledger:mr1_head"],
    ]
    assert len(git(estate, "acme/ledger", "rev-list", "--parents", "-n1", s["ledger:mr2_squash"])
               .split()) == 2  # fmt: skip
    assert is_ancestor(estate, "acme/ledger", s["ledger:mr1_merge"], "main")
    assert is_ancestor(estate, "acme/ledger", s["ledger:mr2_squash"], "main")
    for unmerged in ("ledger:mr2_head", "ledger:mr3_head", "ledger:mr4_head", "ledger:unmerged"):
        assert not is_ancestor(estate, "acme/ledger", s[unmerged], "main"), unmerged
    # The squash commit carries exactly the change of the source branch.
    base = git(estate, "acme/ledger", "merge-base", "main", "docs/posting-rules").strip()
    branch = git(estate, "acme/ledger", "diff", base, s["ledger:mr2_head"])
    assert git(estate, "acme/ledger", "diff", f"{s['ledger:mr2_squash']}^", s["ledger:mr2_squash"]
               ) == branch  # fmt: skip


def test_slashed_branch_holds_a_file_absent_at_head(estate: DemoEstate) -> None:
    path = "src/ledger/fx_sources.py"
    assert is_ancestor(estate, "acme/ledger", estate.shas["ledger:unmerged"], "feature/fx-rates")
    assert show(estate, "acme/ledger", "feature/fx-rates", path) is not None
    assert show(estate, "acme/ledger", "main", path) is None
    assert git(estate, "acme/ledger", "rev-parse", "v1.0.0").strip() == estate.shas["ledger:v1.0.0"]


def test_deleted_file_existed_where_the_issue_pinned_it(estate: DemoEstate) -> None:
    case = estate.cases["file_deleted"]
    assert estate.shas["ledger:initial"] in case.text
    old = show(estate, "acme/ledger", estate.shas["ledger:initial"], "docs/migration-v1.md")
    assert old is not None and len(old.splitlines()) >= 11
    assert show(estate, "acme/ledger", "main", "docs/migration-v1.md") is None
    assert show(estate, "acme/ledger", f"{estate.shas['ledger:head']}^", "docs/migration-v1.md")


def test_head_shas_are_the_default_branch_heads(estate: DemoEstate) -> None:
    for name, project in (("ledger", "acme/ledger"), ("handbook", "acme/handbook"),
                          ("gateway", "acme/platform/gateway")):  # fmt: skip
        assert git(estate, project, "rev-parse", "main").strip() == estate.shas[f"{name}:head"]


# --- line-level cases --------------------------------------------------------------------------


def lines_of(text: str, span: tuple[int, int]) -> list[str]:
    return text.splitlines()[span[0] - 1 : span[1]]


def test_pinned_lines_moved_but_still_stand(estate: DemoEstate) -> None:
    case = estate.cases["file_pinned_moved"]
    match = re.search(r"/-/blob/([0-9a-f]{40})/(\S+)#L(\d+)-(\d+)$", case.text)
    assert match and match[1] == estate.shas["handbook:initial"]
    old_span = (int(match[3]), int(match[4]))
    old = show(estate, "acme/handbook", match[1], match[2]) or ""
    new = show(estate, "acme/handbook", "main", match[2]) or ""
    assert case.lines and case.lines != old_span
    assert lines_of(old, old_span) == lines_of(new, case.lines)
    assert lines_of(new, case.lines)[0] == "## Rotating deploy keys"


def test_blob_on_the_slashed_branch_maps_to_the_same_line_at_head(estate: DemoEstate) -> None:
    case = estate.cases["file_blob_slashed_branch"]
    line = int(case.text.rsplit("#L", 1)[1])
    branch = show(estate, "acme/ledger", "feature/fx-rates", "src/ledger/rates.py") or ""
    head = show(estate, "acme/ledger", "main", "src/ledger/rates.py") or ""
    assert case.lines and line != case.lines[0]
    assert branch.splitlines()[line - 1] == head.splitlines()[case.lines[0] - 1]
    assert head.splitlines()[case.lines[0] - 1] == "FX_RATE_PLACES = 6"


def test_bare_path_lines_and_line_past_end(estate: DemoEstate) -> None:
    rates = show(estate, "acme/ledger", "main", "src/ledger/rates.py") or ""
    line = int(estate.cases["file_bare_path_line"].text.rsplit(":", 1)[1])
    assert rates.splitlines()[line - 1] == "FX_RATE_PLACES = 6"
    posting = show(estate, "acme/ledger", "main", "src/ledger/posting.py") or ""
    assert len(posting.splitlines()) < 900
    assert estate.cases["file_line_past_end"].text == "src/ledger/posting.py:900"


def test_docs_anchors(estate: DemoEstate) -> None:
    credentials = show(estate, "acme/handbook", "main", "docs/credentials.md") or ""
    slugs = {
        re.sub(r"[^a-z0-9 -]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
        for line in credentials.splitlines()
        if line.startswith("#")
    }
    assert "rotating-deploy-keys" in slugs
    assert "rotating-ssh-certificates" not in slugs
    assert show(estate, "acme/handbook", "main", "docs/onboarding/index.md")
    assert show(estate, "acme/handbook", "main", "docs/release-process.md")
    assert show(estate, "acme/handbook", "main", "docs/security.md") is None


def test_short_shas_are_unique_and_look_like_shas(estate: DemoEstate) -> None:
    for name in ("commit_bare_sha", "commit_superseded", "system_note_commit"):
        text = estate.cases[name].text
        assert re.fullmatch(r"[0-9a-f]{12}", text) and re.search(r"[a-f]", text), name
        assert re.search(r"[0-9]", text), name
    for name in ("commit_project_at_sha", "commit_unmerged_branch"):
        project, short = estate.cases[name].text.split("@")
        full = git(estate, project, "rev-parse", "--verify", f"{short}^{{commit}}").strip()
        assert full.startswith(short)


# --- what the docs say and do not say ----------------------------------------------------------


def test_handbook_pages_exercise_every_markup_case(estate: DemoEstate) -> None:
    docs = head_docs(estate, "acme/handbook")
    assert len([p for p in docs if p.startswith("docs/")]) >= 8
    assert docs["docs/credentials.md"].startswith("---\ntitle: Credentials and key rotation\n")
    assert "\nEnvironments\n------------\n" in docs["docs/deployment.md"]
    assert "```sh\n# Start from an up-to-date main\n" in docs["docs/release-process.md"]
    assert "docs/incident-review.rst" in docs
    assert show(estate, "acme/handbook", "main", "mkdocs.yml")


def test_the_signposted_fact_lives_only_in_code(estate: DemoEstate) -> None:
    rates = show(estate, "acme/ledger", "main", "src/ledger/rates.py") or ""
    words = re.compile(r"half-even|banker|decimal places|six places|ROUND_HALF_EVEN", re.I)
    assert words.search(rates)
    for project in ("acme/handbook", "acme/ledger", "acme/platform/gateway"):
        for path, text in head_docs(estate, project).items():
            assert not words.search(text), (project, path)
    for record in issues(estate).values():
        text = json.dumps(record)
        assert not words.search(text)
        assert "90 days" not in text  # issues ask; they never answer


def test_questions_match_what_the_docs_hold(estate: DemoEstate) -> None:
    assert estate.questions == QUESTIONS
    docs = {
        (project, path): text
        for project in ("acme/handbook", "acme/ledger", "acme/platform/gateway")
        for path, text in head_docs(estate, project).items()
    }
    assert "Deploy keys are rotated every 90 days" in docs[("acme/handbook", "docs/credentials.md")]
    assert not any(re.search(r"backup|retain|retention", t, re.I) for t in docs.values())


@pytest.mark.parametrize("project", sorted(OFF_CORPUS_PHRASES))
def test_off_corpus_phrases_live_only_in_their_project(estate: DemoEstate, project: str) -> None:
    phrase = OFF_CORPUS_PHRASES[project]
    assert phrase in "".join(head_docs(estate, project).values())
    for other in ("acme/handbook", "acme/ledger", "acme/platform/gateway"):
        assert phrase not in "".join(head_docs(estate, other).values())


def test_demo_config_loads_next_to_the_estate(estate: DemoEstate, tmp_path: Path) -> None:
    shutil.copy(CONFIG, tmp_path / "scout.toml")
    (tmp_path / "estate").symlink_to(estate.root)
    config = load_config(tmp_path / "scout.toml")
    assert config.forge.kind == "local"
    assert config.forge.path == (tmp_path / "estate").resolve()
    assert config.forge.url == "https://gitlab.acme.example"
    assert config.forge.groups == ["acme"]
    assert config.corpus.visibility == ["public"]
    assert config.corpus.exclude_projects == ["acme/infra"]
    assert [(d.url, d.project, d.root) for d in config.docs_site] == [
        ("https://docs.acme.example/handbook/", "acme/handbook", "docs/")
    ]
    assert config.answer.provider == "offline"
    assert config.store.path == (tmp_path / "scout.db").resolve()
    keys = [ln for ln in CONFIG.read_text().splitlines() if re.match(r"^[a-z_]+ = ", ln)]
    assert keys and all("#" in ln for ln in keys)
