"""Sentence embeddings: a passage's or a question's meaning as a vector, for dense retrieval.

The main rule: an embedder turns texts into vectors or raises ``EmbeddingError``; it never
returns fewer vectors than texts, vectors of mixed dimensions, or numbers that are not finite.
Scout normalises the vectors itself (cosine is then a dot product), adds the configured prefixes,
and records the embedder's ``name`` with every stored vector, so that vectors of two models are
never compared. Each kind lives in its own module, imported only when configured (numpy, the
openai SDK and fastembed are optional extras): ``openai_server`` (any OpenAI-compatible
``/v1/embeddings``) and ``fastembed_local`` (an ONNX model run in-process).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from scout.config import EmbeddingsConfig

if TYPE_CHECKING:
    import numpy
    import numpy.typing


class Embedder(Protocol):
    """Something that embeds texts: ``embed`` returns one row per text, in order."""

    # What the vectors are, as the store records it: a change re-embeds every passage.
    name: str

    def embed(
        self, texts: Sequence[str], *, deadline: float | None = None
    ) -> numpy.typing.NDArray[numpy.float32]:
        """The texts' vectors as a (len(texts), dimension) float32 array; ``deadline`` is a
        ``time.monotonic()`` instant the call must end by (EmbeddingError past it)."""
        ...


def one_blas_thread() -> None:
    """Ask numpy's BLAS for one thread, unless the environment says otherwise; before numpy is
    first imported, as it reads the variable then. The dense stage's product of the passages'
    matrix and a question's vector is bound by memory: at 95k passages two threads took the same
    wall time (7 ms) and twice the CPU, spinning, and the server runs questions side by side."""
    import os

    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")


MAX_VECTOR_DIMENSION = 8_192  # no sentence-embedding model has more; a reply that has is broken


class Embeddings:
    """The configured model as retrieval uses it: prefixes added, vectors checked and made unit
    length (cosine is then a dot product), batches of ``batch`` texts."""

    def __init__(
        self,
        model: Embedder,
        *,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch: int = 64,
        timeout: float = 30.0,
    ) -> None:
        self.model = model
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch = batch
        self.timeout = timeout
        # The prefix a passage is embedded with is part of what its vector means.
        self.name = model.name + (f" passage_prefix={passage_prefix!r}" if passage_prefix else "")

    def passages(
        self, texts: Sequence[str], deadline: float | None = None
    ) -> numpy.typing.NDArray[numpy.float32]:
        """Unit vectors of passage texts, one row each, in order."""
        return _unit(self.model.embed([self.passage_prefix + t for t in texts], deadline=deadline))

    def query(
        self, text: str, deadline: float | None = None
    ) -> numpy.typing.NDArray[numpy.float32]:
        """The unit vector of a question, within ``timeout`` and ``deadline``, whichever ends
        first: a question never waits on a model as an index run may (no retries, and an
        in-process model is never downloaded for it)."""
        own = time.monotonic() + self.timeout
        deadline = own if deadline is None else min(own, deadline)
        vector: numpy.typing.NDArray[numpy.float32] = _unit(
            self.model.embed([self.query_prefix + text], deadline=deadline)
        )[0]
        return vector


def _unit(vectors: numpy.typing.NDArray[numpy.float32]) -> numpy.typing.NDArray[numpy.float32]:
    import numpy

    from scout.errors import EmbeddingError

    if vectors.ndim != 2 or not 1 <= vectors.shape[1] <= MAX_VECTOR_DIMENSION:
        raise EmbeddingError(f"the model returned vectors of shape {vectors.shape}")
    if not numpy.isfinite(vectors).all():
        raise EmbeddingError("the model returned a vector with a number that is not finite")
    norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
    if (norms == 0).any():
        raise EmbeddingError("the model returned a vector of zeros")
    unit: numpy.typing.NDArray[numpy.float32] = (vectors / norms).astype(numpy.float32)
    return unit


def configured(config: EmbeddingsConfig) -> Embeddings:
    """The model ``[retrieval.embeddings]`` names; ConfigError when its extra is not installed."""
    one_blas_thread()
    model: Embedder
    if config.kind == "openai":
        from scout.embeddings.openai_server import ServerEmbedder

        model = ServerEmbedder.of(config)
    else:
        from scout.embeddings.fastembed_local import make

        model = make(config)
    return Embeddings(
        model,
        query_prefix=config.query_prefix,
        passage_prefix=config.passage_prefix,
        batch=config.batch,
        timeout=config.timeout,
    )
