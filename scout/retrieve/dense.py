"""The dense stage: the passages nearest a question in meaning, by a sentence-embedding model.

The main rule: exact, not approximate. Every passage's vector is compared with the question's
(cosine, as a dot product of unit vectors) and the top ``depth`` kept; no approximate index is
built below 200k passages, where an exact pass over a matrix in memory takes milliseconds. The
matrix is read from the store once per process and read again only when the store changed
(``Store.generation``), so the server pays for it once, ``scout ask`` once a question.

Only vectors of the configured model and dimension are read (``Store.passage_vectors``); a
passage without one (embedding not yet run, or failed half-way) is simply not a candidate here:
the lexical stage still finds it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy

from scout.embeddings import Embeddings
from scout.errors import EmbeddingError
from scout.store import PassageHit, Store

if TYPE_CHECKING:
    import numpy.typing

# Matrices kept per process, by store file and model: a server with one store holds one.
MAX_MATRICES = 4


@dataclass(frozen=True)
class _Matrix:
    stamp: int
    ids: numpy.typing.NDArray[numpy.int64]
    vectors: numpy.typing.NDArray[numpy.float32]


_matrices: dict[tuple[str, str, int], _Matrix] = {}
_lock = threading.Lock()


def nearest(
    store: Store,
    embeddings: Embeddings,
    question: str,
    depth: int,
    within: tuple[str, ...] | None,
    deadline: float | None = None,
    also: Sequence[int] = (),
) -> list[tuple[int, float, int]]:
    """The ``depth`` passages nearest ``question`` (in ``within``'s projects), nearest first,
    then those of ``also`` (row ids) not among them: (row id, cosine, rank among all the
    passages). EmbeddingError when the question cannot be embedded or its vector is not of the
    stored vectors' dimension."""
    recorded = store.vector_model()
    if recorded is None or recorded[0] != embeddings.name or recorded[1] is None:
        return []
    dimension = recorded[1]
    matrix = _matrix(store, embeddings.name, dimension)
    if not len(matrix.ids):
        return []
    vector = embeddings.query(question, deadline=deadline)
    if vector.shape != (dimension,):
        raise EmbeddingError(
            f"the question's vector has {vector.shape[-1]} dimensions, the stored passages' "
            f"{dimension}: the model behind {embeddings.name} changed; `scout index --reembed` "
            "embeds every passage again"
        )
    scores = matrix.vectors @ vector
    ids = matrix.ids
    if within is not None:
        allowed = numpy.isin(ids, numpy.array(store.passage_ids(within), dtype=numpy.int64))
        scores, ids = scores[allowed], ids[allowed]
    if not len(ids):
        return []
    depth = min(depth, len(ids))
    top = numpy.argpartition(-scores, depth - 1)[:depth]
    # Ties break by row, as the lexical stage's do, so an order never depends on the platform.
    order = sorted(top.tolist(), key=lambda i: (-float(scores[i]), int(ids[i])))
    found = [(int(ids[i]), float(scores[i]), rank) for rank, i in enumerate(order, 1)]
    held = {pid for pid, _, _ in found}
    wanted = [pid for pid in dict.fromkeys(also) if pid not in held]
    if wanted:
        where = numpy.flatnonzero(numpy.isin(ids, numpy.array(wanted, dtype=numpy.int64)))
        for i in where.tolist():
            # its rank: one more than the passages nearer than it
            rank = int(numpy.count_nonzero(scores > scores[i])) + 1
            found.append((int(ids[i]), float(scores[i]), rank))
    return sorted(found, key=lambda row: (row[2], row[0]))


def hits(store: Store, ranked: list[tuple[int, float, int]]) -> list[PassageHit]:
    """The passages of ``ranked`` (row id, cosine, rank), in its order, scored by cosine."""
    found = {hit.id: hit for hit in store.passages_by_id([pid for pid, _, _ in ranked])}
    return [
        dataclasses.replace(found[pid], score=-cosine, dense_rank=rank)
        for pid, cosine, rank in ranked
        if pid in found
    ]


def _matrix(store: Store, model: str, dimension: int) -> _Matrix:
    key = (str(store.path.resolve()), model, dimension)
    stamp = store.generation()
    with _lock:
        held = _matrices.get(key)
        if held is not None and held.stamp == stamp:
            return held
    rows = store.passage_vectors(model, dimension)
    ids = numpy.fromiter((pid for pid, _ in rows), dtype=numpy.int64, count=len(rows))
    vectors = numpy.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(
        len(rows), dimension
    )
    matrix = _Matrix(stamp, ids, vectors)
    with _lock:
        if len(_matrices) >= MAX_MATRICES and key not in _matrices:
            _matrices.pop(next(iter(_matrices)))
        _matrices[key] = matrix
    return matrix
