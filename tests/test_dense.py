"""The dense stage on a real store: exact nearest passages, the matrix read once and read again
when the passages or their vectors change, scopes, and the lexical candidates' own ranks."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy
import numpy.typing

from scout.embeddings import Embeddings
from scout.embeddings.indexing import embed_passages
from scout.retrieve import dense
from scout.store import Store
from tests.fakes.corpus import BACKUPS, CREDENTIALS, make_store, passage


class Words:
    """An embedder that puts each word in a dimension of its own (a real, if simple, model):
    texts that share words are near, and nothing is downloaded."""

    name = "test:words"

    def __init__(self) -> None:
        self.calls = 0

    def embed(
        self, texts: Sequence[str], *, deadline: float | None = None
    ) -> numpy.typing.NDArray[numpy.float32]:
        self.calls += 1
        rows = numpy.zeros((len(texts), 64), dtype=numpy.float32)
        for n, text in enumerate(texts):
            for word in text.lower().split():
                slot = int.from_bytes(hashlib.sha256(word.strip(".,?`").encode()).digest()[:2])
                rows[n, slot % 64] += 1.0
            rows[n, 0] += 0.01
        return rows


def _store(tmp_path: Path) -> tuple[Store, Embeddings]:
    store = make_store(tmp_path, [CREDENTIALS, BACKUPS])
    embeddings = Embeddings(Words())
    embed_passages(store, embeddings)
    return store, embeddings


def test_the_nearest_passage_by_meaning_comes_first_with_its_rank(tmp_path: Path) -> None:
    store, embeddings = _store(tmp_path)
    found = dense.nearest(store, embeddings, "backups nightly restore", 5, None)
    hits = dense.hits(store, found)
    assert [h.path for h in hits][0] == BACKUPS.path
    assert [h.dense_rank for h in hits] == list(range(1, len(hits) + 1))
    store.close()


def test_the_matrix_is_read_again_only_when_the_passages_change(tmp_path: Path) -> None:
    store, embeddings = _store(tmp_path)
    reads: list[str] = []
    store.trace(lambda sql: reads.append(sql) if "join vectors" in sql else None)
    dense.nearest(store, embeddings, "backups", 5, None)
    dense.nearest(store, embeddings, "keys", 5, None)
    assert len(reads) <= 1  # read once (or not at all: an earlier call read this store)
    added = passage("acme/ops", "docs/tape.md", (1, 3), "Tape", "Backups go to tape weekly.")
    store.insert_passages([added])
    embed_passages(store, embeddings)
    reads.clear()
    found = dense.hits(store, dense.nearest(store, embeddings, "tape weekly", 5, None))
    assert len(reads) == 1 and found[0].path == "docs/tape.md"
    store.close()


def test_a_scope_and_the_lexical_candidates_ranks(tmp_path: Path) -> None:
    store, embeddings = _store(tmp_path)
    everyone = dense.nearest(store, embeddings, "backups nightly", 1, None)
    ops = dense.nearest(store, embeddings, "rotate the keys", 1, ("acme/ops",))
    assert [store.passages_by_id([pid])[0].project for pid, _, _ in ops] == ["acme/ops"]
    credentials = next(
        p.id for p in store.passages_by_id(list(range(1, 10))) if p.path == CREDENTIALS.path
    )
    also = dense.nearest(store, embeddings, "backups nightly", 1, None, also=[credentials])
    assert len(everyone) == 1 and len(also) == 2
    assert also[1][0] == credentials and also[1][2] == 2  # its rank among all the passages
    store.close()
