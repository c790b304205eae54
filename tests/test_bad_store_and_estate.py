"""Bad input found late by the seams review: an empty file as the store, and an estate.toml whose
values have the wrong types. Each is a one-line error with its documented exit code, never a
traceback (exit 1) and never a quiet decline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fakes.corpus import write_config
from tests.helpers.run import Result


def test_an_empty_file_as_the_store_is_no_index(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    config = write_config(tmp_path)
    (tmp_path / "scout.db").write_bytes(b"")
    for command in (["ask", "How do I rotate keys?"], ["search", "rotate keys"], ["gaps"]):
        done = scout(*command, config=config)
        assert (done.code, done.stdout) == (4, ""), (command, done.stderr)
        assert done.stderr == (
            f"scout: {tmp_path / 'scout.db'} holds no Scout index: run `scout index` first\n"
        )
    # Nothing was written into the file the user pointed at.
    assert (tmp_path / "scout.db").read_bytes() == b""


def test_a_sqlite_file_that_never_held_an_index_is_no_index(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    import sqlite3

    config = write_config(tmp_path)
    with sqlite3.connect(tmp_path / "scout.db") as other:
        other.execute("create table notes (body text)")
    done = scout("ask", "How do I rotate keys?", config=config)
    assert (done.code, done.stdout) == (4, ""), done.stderr
    assert "holds no Scout index" in done.stderr


@pytest.mark.parametrize(
    ("estate", "problem"),
    [
        ('url = 5\n[[project]]\npath = "acme/a"\n', "`url` must be a string"),
        (
            "[[project]]\nvisibility = 'public'\n",
            "[[project]] 1: `path` must be a non-empty string",
        ),
        ("project = 3\n", "`project` must be an array of tables ([[project]])"),
        (
            '[[project]]\npath = "acme/a"\n[[merge_request]]\nproject = "acme/a"\niid = "7"\n',
            "[[merge_request]] 1: `iid` must be an integer",
        ),
        ('[[project]]\npath = "acme/a"\nrepo = 5\n', "[[project]] 1: `repo` must be a string"),
        (
            '[[project]]\npath = "acme/a"\nweb_url = []\n',
            "[[project]] 1: `web_url` must be a string",
        ),
        (
            '[[project]]\npath = "acme/a"\nrepo = "x"\nfolder = "y"\n',
            "[[project]] 1: give `repo` or `folder`, not both",
        ),
    ],
)
def test_an_estate_toml_of_the_wrong_shape_is_bad_data(
    tmp_path: Path, scout: Callable[..., Result], estate: str, problem: str
) -> None:
    root = tmp_path / "estate"
    root.mkdir()
    (root / "estate.toml").write_text(estate, encoding="utf-8")
    config = tmp_path / "scout.toml"
    config.write_text(
        f'[forge]\nkind = "local"\nurl = "https://gitlab.acme.example"\npath = "{root}"\n'
        'groups = ["acme"]\n\n[store]\npath = "scout.db"\n',
        encoding="utf-8",
    )
    done = scout("index", config=config)
    assert (done.code, done.stdout) == (5, ""), done.stderr
    assert done.stderr == f"scout: estate: {root / 'estate.toml'}: {problem}\n"


LOCAL_ONLY_WORDS = ("forge unreachable", "server error", "token", "GitLab", "unreachable")


def _estate_config(tmp_path: Path, estate: Path, groups: str = '["acme"]') -> Path:
    config = tmp_path / "scout.toml"
    config.write_text(
        f'[forge]\nkind = "local"\nurl = "https://gitlab.acme.example"\npath = "{estate}"\n'
        f'groups = {groups}\n\n[store]\npath = "scout.db"\n',
        encoding="utf-8",
    )
    return config


@pytest.mark.parametrize("command", ["index", "sweep"])
def test_a_local_estate_s_errors_speak_of_the_estate_never_of_a_server_or_token(
    tmp_path: Path, scout: Callable[..., Result], command: str
) -> None:
    from scout.demo.builder import EstateBuilder

    root = tmp_path / "estate"
    builder = EstateBuilder(root)
    for name in ("acme/docs", "acme/more"):
        builder.project(name).commit({"README.md": f"# {name}\n\nWords about {name}.\n"}, "init")
    builder.write()
    assert scout("index", config=_estate_config(tmp_path, root)).code == 0
    # a repository moved away, a group that holds nothing, a path with no estate at all
    (root / "repos" / "acme" / "more").rename(tmp_path / "moved")
    moved = scout(command, config=_estate_config(tmp_path, root))
    nothing = scout(command, config=_estate_config(tmp_path, root, '["acmee"]'))
    nowhere = scout(command, config=_estate_config(tmp_path, tmp_path / "nowhere"))
    if command == "index":
        assert (moved.code, moved.stderr) == (
            5,
            "scout: could not read 1 project(s), their passages are kept and the others were "
            f"indexed: acme/more (estate: cannot read the repository at "
            f"{root / 'repos' / 'acme' / 'more'}: no folder)\n",
        )
    else:  # nothing to re-validate there: the sweep reads issues only
        assert moved.code == 0, moved.stderr
    assert (nothing.code, nothing.stderr) == (
        3,
        f"scout: forge.groups: no project of {root / 'estate.toml'} is in group 'acmee'; "
        "nothing was removed: check the group against the [[project]] paths there\n",
    )
    assert (nowhere.code, nowhere.stderr) == (
        5,
        f"scout: estate: no estate.toml in {tmp_path / 'nowhere'}: check forge.path in the "
        "config (`scout init` writes both)\n",
    )
    for done in (moved, nothing, nowhere):
        assert done.stdout == "" or done.code == 0
        assert not any(word in done.stderr for word in LOCAL_ONLY_WORDS), done.stderr
