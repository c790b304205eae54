"""Embedding at index time: every passage without a vector for the configured model gets one.

Run after ``scout index`` (and after a sweep that added signposted targets' passages). The rules:
- what is embedded is the passage's heading path and text (``scout.records.embed_text``), one
  vector per distinct text (copies of a section share it);
- a passage already embedded by this model is never sent again, so a second ``scout index`` with
  nothing changed sends nothing;
- a change of model, of the passage prefix or of the dimension the model returns starts over:
  every vector of the old kind is removed and every passage embedded again;
- each batch is committed as it comes back, so an interruption, or a server that fails half-way,
  keeps what was embedded; the passages themselves stay searchable by their words whatever
  happens here (the caller turns an ``EmbeddingError`` into exit 6, naming the server).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from scout.config import Config
from scout.embeddings import Embeddings, configured
from scout.progress import Progress
from scout.records import embed_text
from scout.store import Store

PHASE = "embeddings"


@dataclass
class EmbedSummary:
    """What an embedding pass did."""

    model: str
    dimension: int | None = None
    embedded: int = 0  # passage texts embedded by this pass
    removed: int = 0  # vectors removed (of another model or dimension, or of no passage)
    started_over: bool = False  # the model, prefix or dimension changed: everything again
    seconds: float = 0.0
    stopped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dimension": self.dimension,
            "embedded": self.embedded,
            "removed": self.removed,
            "started_over": self.started_over,
            "seconds": round(self.seconds, 3),
        }


def embed_passages(
    store: Store,
    embeddings: Embeddings,
    *,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    again: bool = False,
) -> EmbedSummary:
    """Embed every passage that has no vector for ``embeddings``' model (``again``: every
    passage, for a model that changed under its name); EmbeddingError (after keeping every
    batch that came back) when the model fails."""
    started = time.monotonic()
    progress = progress or Progress()
    name = embeddings.name
    summary = EmbedSummary(name)
    store.fill_embed_keys()
    recorded = store.vector_model()
    dimension = recorded[1] if recorded is not None and recorded[0] == name else None
    if again:
        summary.started_over = True
        summary.removed += store.start_vectors(name, None, every=True)
        dimension = None
    elif recorded is None or recorded[0] != name:
        summary.started_over = recorded is not None
        summary.removed += store.start_vectors(name, None)
    summary.dimension = dimension
    progress.phase(PHASE, store.count_unembedded(name))
    after = 0
    while not (stop is not None and stop.is_set()):
        rows = store.unembedded(name, after, embeddings.batch)
        if not rows:
            break
        after = rows[-1][0]
        texts = {key: embed_text(heading, body) for _, key, heading, body in rows}
        vectors = embeddings.passages(list(texts.values()))
        if vectors.shape[1] != dimension:
            # The first vectors, or the model behind the name changed its dimension: the
            # vectors already stored cannot be compared with these, so everything again.
            summary.started_over = summary.started_over or dimension is not None
            summary.removed += store.start_vectors(name, int(vectors.shape[1]))
            dimension = summary.dimension = int(vectors.shape[1])
            progress.phase(PHASE, store.count_unembedded(name))
            after = 0 if summary.started_over else after
        blobs = [vector.astype("<f4").tobytes() for vector in vectors]
        store.save_vectors(name, list(zip(texts, blobs, strict=True)))
        summary.embedded += len(texts)
        progress.advance(PHASE, len(texts))
    summary.stopped = stop is not None and stop.is_set()
    if not summary.stopped:
        summary.removed += store.prune_vectors()
    summary.seconds = time.monotonic() - started
    return summary


def embed_configured(
    config: Config,
    store: Store,
    *,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    again: bool = False,
) -> EmbedSummary | None:
    """:func:`embed_passages` with the model ``[retrieval.embeddings]`` names (None: none)."""
    if config.retrieval.embeddings is None:
        return None
    return embed_passages(
        store, configured(config.retrieval.embeddings), progress=progress, stop=stop, again=again
    )
