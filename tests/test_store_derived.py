"""What the store keeps of the passages between questions (row counts, a project's rows) follows
every write: this connection's, another connection's, a write half-way through."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scout.records import PassageRecord
from scout.store import ProjectRow, Store, base, corpus

HEADING_WEIGHT = 2.0


def _passage(n: int, project: str, word: str = "widget", origin: str = "corpus") -> PassageRecord:
    return PassageRecord(
        project,
        f"docs/{n}.md",
        "a" * 40,
        1,
        3,
        f"Heading {n}",
        f"the {word} number {n}",
        "docs",
        origin,
        f"https://g/{project}/-/blob/{'a' * 40}/docs/{n}.md#L1-3",
    )


def _row(path: str) -> ProjectRow:
    return ProjectRow(path, "public", False, "main", f"https://g/{path}", "a" * 40, "2026-01-01")


def _counts(store: Store) -> list[str]:
    seen: list[str] = []
    store.trace(seen.append)
    return seen


def _found(store: Store, match: str, projects: tuple[str, ...] | None = None) -> set[str]:
    hits = store.search(match, 50, heading_weight=HEADING_WEIGHT, projects=projects)
    return {f"{hit.project}:{hit.path}" for hit in hits}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    store = Store.open(tmp_path / "s.db", create=True)
    store.replace_project(_row("acme/a"), [_passage(n, "acme/a") for n in range(3)])
    store.replace_project(_row("acme/b"), [_passage(n, "acme/b") for n in range(2)])
    return store


def test_a_count_asked_again_reads_no_rows_again(store: Store) -> None:
    assert store.count_matches('"widget"', 100) == 5
    assert store.passage_count() == 5
    seen = _counts(store)
    assert store.count_matches('"widget"', 100) == 5
    assert store.passage_count() == 5
    assert store.count_matches('"widget"', 100, projects=("acme/a",)) == 3
    assert store.count_matches('"widget"', 100, projects=("acme/a",)) == 3
    store.trace(None)
    # the scope's id runs and the word's count in it, each once: nothing else read twice
    assert sum("count(*)" in sql for sql in seen) == 2


def test_counts_and_scopes_follow_this_connections_writes(store: Store) -> None:
    assert store.count_matches('"widget"', 100) == 5
    assert _found(store, '"widget"', ("acme/a",)) == {f"acme/a:docs/{n}.md" for n in range(3)}
    store.replace_project(_row("acme/a"), [_passage(n, "acme/a") for n in range(4)])
    assert store.count_matches('"widget"', 100) == 6
    assert store.passage_count() == 6
    # acme/a's rows moved after acme/b's: the scope's rows are read again
    assert _found(store, '"widget"', ("acme/a",)) == {f"acme/a:docs/{n}.md" for n in range(4)}
    assert store.count_matches('"widget"', 100, projects=("acme/b",)) == 2
    store.remove_project("acme/b")
    assert store.count_matches('"widget"', 100, projects=("acme/b",)) == 0
    assert store.count_matches('"widget"', 100) == 4


def test_another_connections_write_is_seen(store: Store) -> None:
    assert store.count_matches('"widget"', 100, projects=("acme/a",)) == 3
    assert store.passage_count() == 5
    other = Store.open(store.path)
    # a project's rows in two runs now: signposted passages of acme/a after acme/b's
    other.insert_passages([_passage(9, "acme/a", origin="signpost")])
    other.close()
    assert store.passage_count() == 6
    assert store.count_matches('"widget"', 100, projects=("acme/a",)) == 4
    assert "acme/a:docs/9.md" in _found(store, '"widget"', ("acme/a",))
    assert not {f for f in _found(store, '"widget"', ("acme/a",)) if f.startswith("acme/b")}


def test_nothing_read_half_way_through_a_write_is_kept(store: Store) -> None:
    assert store.count_matches('"gadget"', 100) == 0
    with store.transaction():
        store._passages_changed()  # as a writer does, before its rows
        assert store.count_matches('"gadget"', 100) == 0
        store._insert_passage(_passage(7, "acme/a", "gadget"), "")
    assert store.count_matches('"gadget"', 100) == 1


def test_what_is_kept_is_bounded(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "MAX_COUNTS", 8)
    monkeypatch.setattr(corpus, "MAX_SCOPES", 2)
    for n in range(50):
        assert store.count_matches(f'"word{n}"', 100) == 0
        assert store.count_matches('"widget"', 100, projects=(f"acme/{n}",)) == 0
        assert len(store._derived["count"]) <= 8
        assert len(store._derived["scope"]) <= 2
    assert store.count_matches('"widget"', 100) == 5
    assert store.count_matches('"widget"', 100, projects=("acme/a", "acme/b")) == 5


def test_every_writer_of_passages_counts_its_write() -> None:
    # What readers keep (the dense matrix, a connection's counts) is read again when the
    # generation moves: a write to the passages that does not move it leaves them stale.
    writes = re.compile(
        r"delete from passages\b|update passages\b|insert into passages\b|_insert_passage\("
    )
    unmarked = []
    for path in sorted((Path(base.__file__).parent).glob("*.py")):
        if path.name == "schema.py":  # migrations run as a store is opened, before any reader
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.FunctionDef) or node.name == "_insert_passage":
                continue
            body = ast.get_source_segment(source, node) or ""
            if writes.search(body) and "self._passages_changed()" not in body:
                unmarked.append(f"{path.name}:{node.name}")
    assert unmarked == []
