"""What retrieval uses besides the question, as the config and the command line set it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scout.config import Config

if TYPE_CHECKING:
    from scout.embeddings import Embeddings


@dataclass(frozen=True)
class RetrievalSettings:
    """Whether a model's terms are asked for (and how long that may take, and for how long a
    reply is reused), and the embedding model of the dense list (None: no dense list)."""

    expand: bool = False
    expand_timeout: float = 20.0
    cache_days: int = 0
    model: str = ""  # the answer model, part of the expansion cache's key
    embeddings: Embeddings | None = None

    @classmethod
    def of(
        cls, config: Config, provider: str, *, expand: bool = True, dense: bool = True
    ) -> RetrievalSettings:
        """The settings for questions answered by ``provider``; ``expand=False`` turns
        expansion off for one call (``--no-expand``), ``dense=False`` the dense list."""
        retrieval = config.retrieval
        embeddings = None
        if dense and retrieval.embeddings is not None:
            from scout.embeddings import configured

            embeddings = configured(retrieval.embeddings)
        return cls(
            expand=expand and retrieval.expands(provider),
            expand_timeout=retrieval.expand_timeout,
            cache_days=retrieval.expand_cache_days,
            model=config.answer.model,
            embeddings=embeddings,
        )


# The question's own words alone: no model's terms, no dense list.
WORDS_ONLY = RetrievalSettings()
