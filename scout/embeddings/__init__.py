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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

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
