"""``scout index`` on local estates: what qualifies, what is re-read, what is removed."""

from __future__ import annotations

import re
import sqlite3
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.config import load_config
from scout.corpus.index import index_estate
from scout.corpus.passages import PASSAGES_FORMAT
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder, Symlink
from scout.forge.local import LocalForge
from scout.store import Store

DOC = (
    "# Rotating keys\n\nRotate the signing keys every ninety days.\n\n"
    "## Revoking\n\nRevoke old keys.\n"
)


def _estate(builder: EstateBuilder) -> EstateBuilder:
    for path, visibility, archived in [
        ("acme/handbook", "public", False),
        ("acme/secrets", "private", False),
        ("acme/infra", "public", False),
        ("acme/legacy", "public", True),
        ("acme/platform/gateway", "public", False),
        ("other/outside", "public", False),
    ]:
        repo = builder.project(path, visibility=visibility, archived=archived)
        repo.commit(
            {
                "docs/keys.md": DOC,
                "README.md": f"# {path}\n\nAbout {path}.\n",
                "src/app.py": "print('code is not docs')\n",
            },
            "init",
        )
    return builder


def _run(config_path: Path) -> tuple[dict[str, object], LocalForge, Store]:
    config = load_config(config_path)
    assert config.forge.path is not None
    forge = LocalForge(config.forge.path, config.forge.groups)
    store = Store.open(config.store.path, create=True)
    try:
        summary = index_estate(forge, store, CorpusRules(tuple(config.forge.groups), config.corpus))
    finally:
        forge.close()
    return summary.to_json(), forge, store


def test_only_qualifying_projects_contribute(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    _estate(estate_builder).write()
    summary, _forge, store = _run(write_config())
    assert sorted(store.projects()) == ["acme/handbook", "acme/platform/gateway"]
    assert {p.project for p in store.passages()} == {"acme/handbook", "acme/platform/gateway"}
    assert {p.path for p in store.passages()} == {"README.md", "docs/keys.md"}
    assert summary["projects_indexed"] == 2
    assert summary["skipped"] == {
        "project_archived": 1,
        "project_excluded": 1,
        "project_private": 1,
    }


def test_every_passage_url_is_a_permalink_at_the_indexed_sha(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    _estate(estate_builder).write()
    _summary, _forge, store = _run(write_config())
    heads = {path: row.indexed_sha for path, row in store.projects().items()}
    for passage in store.passages():
        assert passage.sha == heads[passage.project]
        expected = (
            f"https://gitlab.acme.example/{passage.project}/-/blob/{passage.sha}/{passage.path}"
            f"#L{passage.line_start}-{passage.line_end}"
        )
        assert passage.url == expected or passage.url == re.sub(r"-\d+$", "", expected)
    keys = [p for p in store.passages() if p.path == "docs/keys.md"][0]
    assert (keys.heading, keys.line_start, keys.line_end) == ("Rotating keys", 1, 3)


def test_an_unmoved_head_is_not_reread(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    _estate(estate_builder).write()
    config = write_config()
    _run(config)
    summary, forge, _store = _run(config)
    assert summary["projects_indexed"] == 0 and summary["projects_unchanged"] == 2
    assert forge.requests["files"] == 0 and forge.requests["tree"] == 0
    assert forge.requests["head"] == 2


def test_a_scout_that_cuts_passages_differently_rereads_every_project_once(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    # An upgrade that changes how files become passages (PASSAGES_FORMAT) must not leave the old
    # passages in place until each project's next commit.
    _estate(estate_builder).write()
    config = write_config()
    _summary, _forge, store = _run(config)
    store.close()
    with sqlite3.connect(store.path) as db:  # as an older Scout left it
        db.execute("update projects set rules = replace(rules, ?, ?)", [
            f"/passages-{PASSAGES_FORMAT}", f"/passages-{PASSAGES_FORMAT - 1}"
        ])  # fmt: skip
    summary, forge, _store = _run(config)
    assert summary["projects_indexed"] == 2 and summary["projects_unchanged"] == 0
    assert forge.requests["files"] > 0
    summary, _forge, _store = _run(config)
    assert summary["projects_unchanged"] == 2


def test_a_moved_head_replaces_the_projects_passages(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    _estate(estate_builder)
    repo = estate_builder.project("acme/docs")
    repo.commit({"docs/a.md": "# Alpha\n\nfirst words\n"}, "one")
    estate_builder.write()
    config = write_config()
    _run(config)
    new_sha = repo.commit({"docs/a.md": "# Beta\n\nsecond words\n"}, "two")
    summary, forge, store = _run(config)
    assert summary["projects_indexed"] == 1
    assert [(p.heading, p.sha) for p in store.passages("acme/docs")] == [("Beta", new_sha)]


def test_a_project_made_private_loses_its_passages(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    _estate(estate_builder).write()
    config = write_config()
    _run(config)
    estate_toml = estate_builder.root / "estate.toml"
    text = estate_toml.read_text()
    text = text.replace(
        'path = "acme/handbook"\nvisibility = "public"',
        'path = "acme/handbook"\nvisibility = "private"',
    )
    estate_toml.write_text(text)
    assert tomllib.loads(text)["project"][0]["visibility"] == "private"
    summary, _forge, store = _run(config)
    assert summary["projects_removed"] == 1
    assert store.passages("acme/handbook") == []
    assert "acme/handbook" not in store.projects()


def test_a_deleted_project_loses_its_passages(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    _estate(estate_builder).write()
    config = write_config()
    _run(config)
    estate_builder.projects = [p for p in estate_builder.projects if p["path"] != "acme/handbook"]
    estate_builder.write()
    summary, _forge, store = _run(config)
    assert summary["projects_removed"] == 1 and store.passages("acme/handbook") == []


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({"docs/logo.md": b"\x89PNG\r\n\x1a\n\x00\x00binary"}, "file_not_utf8"),
        ({"docs/latin1.md": "# Caf\xe9\n".encode("latin-1")}, "file_not_utf8"),
        ({"docs/huge.md": "# Huge\n\n" + "words " * ((50 << 20) // 6)}, "file_too_large"),
        ({"docs/link.md": Symlink("../../../../etc/passwd")}, "file_symlink"),
    ],
)
def test_bad_files_are_skipped_with_a_reason_and_the_rest_is_indexed(
    estate_builder: EstateBuilder, write_config: Callable[..., Path], files: dict, reason: str
) -> None:
    repo = estate_builder.project("acme/docs")
    repo.commit({"docs/good.md": "# Good\n\nfine words\n", **files}, "mixed")
    estate_builder.write()
    summary, _forge, store = _run(write_config())
    assert summary["skipped"] == {reason: 1}
    assert [p.path for p in store.passages()] == ["docs/good.md"]


def test_ten_thousand_headings_and_an_empty_repository(
    estate_builder: EstateBuilder, write_config: Callable[..., Path]
) -> None:
    repo = estate_builder.project("acme/docs")
    repo.commit({"docs/many.md": "".join(f"# H{n}\n\nbody {n}\n\n" for n in range(10_000))}, "many")
    estate_builder.project("acme/empty")
    estate_builder.write()
    summary, _forge, store = _run(write_config())
    assert summary["skipped"] == {"project_empty": 1}
    assert summary["projects_indexed"] == 1
    assert store.passage_count() > 0


def test_scout_index_json_summary(
    estate_builder: EstateBuilder, write_config: Callable[..., Path], scout: Callable
) -> None:
    _estate(estate_builder).write()
    result = scout("index", "--json", config=write_config())
    assert result.code == 0, result.stderr
    body = result.json()
    assert {
        "projects_indexed",
        "projects_unchanged",
        "projects_removed",
        "passages",
        "seconds",
    } <= set(body)
    assert body["projects_indexed"] == 2 and body["passages"] > 0
    again = scout("index", "--json", config=write_config())
    assert again.json()["projects_unchanged"] == 2


def test_index_with_a_missing_estate_fails_with_one_line(
    write_config: Callable[..., Path], scout: Callable, tmp_path: Path
) -> None:
    result = scout("index", config=write_config(estate=tmp_path / "nowhere"))
    assert result.code == 5
    assert result.stdout == ""
    assert result.stderr == (
        f"scout: estate: no estate.toml in {tmp_path / 'nowhere'}: check forge.path in the "
        "config (`scout init` writes both)\n"
    )
