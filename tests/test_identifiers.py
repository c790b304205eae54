"""The words of camelCase identifiers are indexed beside a passage's text (scout.identifiers).

On Stencil's docs (MIT, tests/fixtures/realdocs/stencil-site-docs.tar.xz) the
``invisiblePrehydration`` option is what a user asks about when components are "invisible until
they hydrate", and FTS5 keeps the option as one token; names written the same way recur across
a project's pages and are left whole.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from scout.identifiers import batch_words, identifier_words, identifiers
from scout.retrieve import retrieve
from scout.store import PassageRecord, Store
from scout.store.schema import MIGRATIONS
from tests.helpers.stencil import records

pytestmark = pytest.mark.xdist_group("stencil-docs")


def stencil() -> list[PassageRecord]:
    return list(records())


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Set `openBrowser` to `false`.", "open Browser"),
        ("raises gitlab.exceptions.RedirectionError", "Redirection Error"),
        ("a XMLHttpRequest", "XML Http Request"),
        ("the APIs and URLs of fetchURLs", "fetch URLs"),
        ("resources.GetRemote and .HasNext", "Get Remote; Has Next"),
        ("componentWillLoad() and componentDidLoad()", "component Did Load; component Will Load"),
        # not identifiers: one case throughout, snake_case (the tokeniser splits it already),
        # versions, a hash
        ("README, config.toml, exclude_patterns, v4.26, 9f8e7d6c5b4a", ""),
    ],
)
def test_an_identifier_s_words(text: str, words: str) -> None:
    assert identifier_words(identifiers(text)) == words


def test_a_token_longer_than_a_name_is_left_out() -> None:
    assert identifiers("a" * 63 + "B") == {"a" * 63 + "B"}
    assert identifiers("a" * 64 + "B") == set()


def test_identifiers_common_in_a_batch_are_names_and_stay_whole() -> None:
    # GitLab in every passage is a name: split, "git" would match every one of them.
    texts = [f"GitLab page {n}" for n in range(200)] + ["GitLab and the openBrowser option"]
    words = batch_words(texts)
    assert words[:200] == [""] * 200
    assert words[200] == "open Browser"
    # A small batch (one signposted file) has too few passages to call anything common.
    assert batch_words(["GitLab openBrowser"] * 3) == ["Git Lab; open Browser"] * 3


def test_the_stencil_docs_index_their_options_words() -> None:
    records = stencil()
    found = batch_words(f"{r.heading}\n{r.body}" for r in records)
    words = dict(zip([(r.path, r.heading) for r in records], found, strict=True))
    option = [
        w
        for (path, heading), w in words.items()
        if path.endswith("config/dev-server.md") and heading.endswith("openBrowser")
    ]
    assert option and all("open Browser" in w for w in option)
    # TypeScript, named on 38 of these 704 passages, is a name and stays whole; the lifecycle
    # method componentWillLoad, on 16, is an identifier, however often its docs use it.
    assert sum("TypeScript" in f"{r.heading} {r.body}" for r in records) > 10
    assert not any("Type Script" in w for w in found)
    assert sum("component Will Load" in w for w in found) >= 10


QUESTION = "our components are invisible until they hydrate, can they show before hydration?"


def _found(store: Store) -> bool:
    # Stencil's `invisiblePrehydration` option: its heading is the one word.
    return any(
        h.heading.endswith("invisiblePrehydration") for h in retrieve(store, QUESTION, 8).hits
    )


def test_a_question_in_words_finds_the_option_written_as_one(tmp_path: Path) -> None:
    with Store.open(tmp_path / "scout.db", create=True) as store:
        store.insert_passages(stencil())
        assert _found(store)
    # The same passages without their identifiers' words (as a store before this change
    # holds them): the option is not among the first 8.
    db = sqlite3.connect(tmp_path / "scout.db")
    db.execute("update passages set words = ''")
    db.commit()
    db.close()
    with Store.open(tmp_path / "scout.db") as store:
        assert not _found(store)


OTHERS = ["Ports and hosts.", "Reloading on change.", "Logging requests.", "HTTPS certificates."]


def test_a_store_from_before_gets_the_column_and_keeps_its_passages(tmp_path: Path) -> None:
    # Schema 9: two full-text columns. Opening it migrates, re-indexing what it holds.
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(";".join(m() for m in MIGRATIONS[:9]) + ";pragma user_version = 9;")
    # BM25 gives a word in every row no weight: other rows, so that the words below count.
    for n, body in enumerate(["Set openBrowser to false to keep tabs shut.", *OTHERS]):
        db.execute(
            "insert into passages (project, path, sha, line_start, line_end, heading, body, "
            "source, origin, url) values ('acme/a', ?, 'a', 1, 2, 'Dev server', ?, 'docs', "
            "'corpus', 'u')",
            [f"docs/{n}.md", body],
        )
    db.commit()
    db.close()
    with Store.open(path) as store:
        assert store.schema_version == len(MIGRATIONS)
        assert [h.path for h in retrieve(store, "keep tabs shut", 8).hits] == ["docs/0.md"]
        # No words until `scout index` reads the project again (PASSAGES_FORMAT). (Words
        # written side by side, "open browser", find it already: retrieve.joins.)
        assert retrieve(store, "a browser opening", 8).hits == []
        store.insert_passages(
            [
                PassageRecord(
                    "acme/b",
                    "docs/y.md",
                    "b",
                    1,
                    2,
                    "Dev server",
                    "Set openBrowser to false.",
                    "docs",
                    "corpus",
                    "u",
                )
            ]
        )
        assert [h.path for h in retrieve(store, "a browser opening", 8).hits] == ["docs/y.md"]
    db = sqlite3.connect(path)
    db.execute("insert into passages_fts(passages_fts) values('integrity-check')")
    db.close()


def test_a_signposted_file_s_identifiers_are_searchable_by_their_words(tmp_path: Path) -> None:
    # The sweep writes an accepted target's passages through the same insert as the corpus.
    from scout.store import IssueRow
    from scout.verdict import Kind, Status, Verdict

    target = "file:acme/app:src/retry.py"
    code = PassageRecord(
        "acme/app", "src/retry.py", "c" * 40, 1, 9, "src/retry.py",
        "class BackoffPolicy:\n    def nextDelay(self, attempt): ...", "code", "signpost",
        "https://g/acme/app/-/blob/c/src/retry.py#L1-9", target,
    )  # fmt: skip
    verdict = Verdict(
        Kind.FILE, "src/retry.py", "{}", Status.ACCEPTED, None, "ok",
        target_project="acme/app", target_path="src/retry.py", target_sha="c" * 40, target=target,
    )  # fmt: skip
    with Store.open(tmp_path / "scout.db", create=True) as store:
        store.insert_passages(
            PassageRecord("acme/a", f"docs/{n}.md", "a", 1, 2, "Page", body, "docs", "corpus", "u")
            for n, body in enumerate(OTHERS)
        )
        issue = IssueRow("acme/app", 1, "https://g/acme/app/-/issues/1", "t", ("src/retry.py",))
        store.save_issue(issue, [verdict], {target: [code]}, None)
        found = retrieve(
            store, "which policy for a backoff decides the delay to wait next?", 8
        ).hits
    assert [h.path for h in found] == ["src/retry.py"]
