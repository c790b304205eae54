"""The fastembed kind: a sentence-embedding ONNX model run in this process by fastembed.

``[retrieval.embeddings] model`` is either a name fastembed lists (``BAAI/bge-small-en-v1.5``),
downloaded into ``cache_dir`` on first use (fastembed's own cache when unset) and read from there
afterwards, or a local folder holding an ONNX export (an air-gapped machine; what runs is what
the folder's files say, see ``scout.embeddings.model_folder``). The main rule: fastembed is
imported here and nowhere else, and every error of fastembed, onnxruntime, tokenizers and
huggingface_hub is translated here: ConfigError for a setting that can never work (the extra not
installed, a name fastembed does not list, a folder lacking a file), EmbeddingError for a model
that cannot be had or run (no network to download it, a corrupt file, output Scout cannot use).
fastembed takes a second to import, so it is imported when an embedder is made, not with this
module.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scout.config import EmbeddingsConfig
from scout.embeddings import model_folder
from scout.errors import ConfigError, EmbeddingError

if TYPE_CHECKING:
    import numpy
    import numpy.typing
    from fastembed import TextEmbedding

INSTALL = "install the embeddings extra: pip install 'scout[embeddings]'"
# A text is cut to this many characters before it is tokenized, so a huge one costs no more to
# tokenize than this (the tokenizer reads it all before cutting at the model's length). Passages
# (3,000 characters) and questions (4,000) are far below it; it is 8,192 tokens, the length most
# of fastembed's long-context models read, at 8 characters a token.
MAX_CHARS = 65_536
# Longest part of an upstream message repeated in Scout's one line.
_MAX_CAUSE = 300
# fastembed keeps models it does not list in one registry for the process: a folder is
# registered once under a name made of its fingerprint, so the same name is the same model.
_REGISTERING = threading.Lock()


def make(config: EmbeddingsConfig) -> FastembedEmbedder:
    """The embedder ``config`` describes; ConfigError when it can never run. Nothing is loaded
    (or downloaded) until the first ``embed``."""
    listed = _listed_models()
    path = Path(config.model).expanduser()
    if path.is_dir():
        folder = model_folder.read(path.resolve())
        # The fingerprint is of the files' bytes, not their size and time: a model copied to
        # another machine (new times) must not re-embed a corpus (an hour on two cores), and an
        # edited tokenizer or weights file of the same size must.
        return FastembedEmbedder(
            config,
            model=f"scout-folder/{folder.fingerprint[:32]}",
            name=f"fastembed:{_printable(folder.path.name)}#{folder.fingerprint[:12]}",
            dimension=folder.dimension,
            folder=folder,
        )
    known = listed.get(config.model.lower())
    if known is None:
        raise ConfigError(
            f"[retrieval.embeddings] model {config.model!r} is neither a folder nor a model "
            "fastembed lists (such as BAAI/bge-small-en-v1.5; python -c 'from fastembed import "
            "TextEmbedding; print(TextEmbedding.list_supported_models())' lists them)"
        )
    model, dimension = known
    return FastembedEmbedder(config, model=model, name=f"fastembed:{model}", dimension=dimension)


class FastembedEmbedder:
    """An ONNX model run by fastembed, loaded on the first ``embed``.

    A call with a ``deadline`` (a question being answered) never downloads: a model not yet in
    the cache fails it at once, and ``scout index``, which calls without one, downloads it.
    """

    def __init__(
        self,
        config: EmbeddingsConfig,
        *,
        model: str,
        name: str,
        dimension: int,
        folder: model_folder.ModelFolder | None = None,
    ) -> None:
        self._config = config
        self.model = model  # the name fastembed knows it by (a folder's: registered by Scout)
        self.name = name
        self.dimension = dimension
        self._folder = folder
        self._loaded: TextEmbedding | None = None
        self._loading = threading.Lock()

    def embed(
        self, texts: Sequence[str], *, deadline: float | None = None
    ) -> numpy.typing.NDArray[numpy.float32]:
        """One row per text, in order, as float32; EmbeddingError when the model cannot be
        loaded or run, or ``deadline`` passes (checked between batches: a batch is not cut)."""
        import numpy

        if not texts:
            return numpy.zeros((0, self.dimension), dtype=numpy.float32)
        self._check(deadline)
        model = self._model(offline=deadline is not None)
        rows: list[Any] = []
        for start in range(0, len(texts), self._config.batch):
            self._check(deadline)
            batch = [_bounded(text) for text in texts[start : start + self._config.batch]]
            try:
                rows.extend(model.embed(batch, batch_size=len(batch)))
            except Exception as exc:  # onnxruntime's and tokenizers' errors derive from Exception
                raise EmbeddingError(f"{self._described()} failed to embed: {_cause(exc)}") from exc
        self._check(deadline)
        return self._validated(rows, len(texts))

    def _model(self, *, offline: bool) -> TextEmbedding:
        with self._loading:
            if self._loaded is None:
                self._loaded = self._load(offline=offline)
            return self._loaded

    def _load(self, *, offline: bool) -> TextEmbedding:
        from fastembed import TextEmbedding

        options: dict[str, Any] = {}
        cache = self._config.cache_dir
        if self._folder is not None:
            _register(self.model, self._folder)
            options["specific_model_path"] = str(self._folder.path)
            # fastembed creates its cache folder even for a model it does not download: the
            # folder itself stands in, rather than a fastembed_cache in the temporary folder.
            cache = cache or self._folder.path
        elif offline:
            options["local_files_only"] = True
        try:
            return TextEmbedding(
                model_name=self.model, cache_dir=str(cache) if cache else None, **options
            )
        except Exception as exc:  # download (OSError, ValueError), onnxruntime, tokenizers
            raise EmbeddingError(self._load_failure(exc, offline=offline)) from exc

    def _load_failure(self, exc: Exception, *, offline: bool) -> str:
        if self._folder is not None:
            return f"{self._described()} could not be loaded: {_cause(exc)}"
        where = f" in {self._config.cache_dir}" if self._config.cache_dir else ""
        if offline:
            return (
                f"fastembed model {self.model!r} is not downloaded{where} ({_cause(exc)}); "
                "scout index downloads it, or set model to a local folder holding it"
            )
        return (
            f"fastembed could not download model {self.model!r}{where} ({_cause(exc)}); "
            "without a network to the Hugging Face hub, set model to a local folder holding "
            "the model exported to ONNX"
        )

    def _validated(self, rows: list[Any], expected: int) -> numpy.typing.NDArray[numpy.float32]:
        import numpy

        if len(rows) != expected:
            raise EmbeddingError(
                f"{self._described()} returned {len(rows)} vectors for {expected} texts"
            )
        shapes = {numpy.shape(row) for row in rows}
        if shapes != {(self.dimension,)}:
            found = ", ".join(sorted(str(s) for s in shapes))
            raise EmbeddingError(
                f"{self._described()} returned vectors of shape {found}, not ({self.dimension},)"
                " as its configuration says"
            )
        matrix = numpy.asarray(rows, dtype=numpy.float32)
        if not numpy.isfinite(matrix).all():
            raise EmbeddingError(f"{self._described()} returned numbers that are not finite")
        return matrix

    def _check(self, deadline: float | None) -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise EmbeddingError(f"{self._described()} ran out of time")

    def _described(self) -> str:
        if self._folder is not None:
            return f"the fastembed model in {_printable(str(self._folder.path))}"
        return f"fastembed model {self.model!r}"


def _listed_models() -> dict[str, tuple[str, int]]:
    """fastembed's models by lower-cased name (it compares names so): (name, dimension)."""
    try:
        from fastembed import TextEmbedding
    except ImportError as exc:
        raise ConfigError(f"[retrieval.embeddings] kind 'fastembed': {INSTALL}") from exc
    return {
        str(model["model"]).lower(): (str(model["model"]), int(model["dim"]))
        for model in TextEmbedding.list_supported_models()
    }


def _register(name: str, folder: model_folder.ModelFolder) -> None:
    """Describe the folder's model to fastembed under ``name``, once a process."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _REGISTERING:
        if name.lower() in _listed_models():
            return  # the name holds the fingerprint: registered already, with these settings
        TextEmbedding.add_custom_model(
            model=name,
            pooling=PoolingType(folder.pooling),
            normalization=folder.normalize,
            # never fetched: specific_model_path is read instead, but fastembed wants a source
            sources=ModelSource(hf=name),
            dim=folder.dimension,
            model_file=folder.model_file,
        )


def _bounded(text: str) -> str:
    """``text`` as the tokenizer takes it: cut at MAX_CHARS, a lone surrogate (a JSON question
    may hold one, "\\ud800") as "?" where tokenizers would refuse the whole batch."""
    return text[:MAX_CHARS].encode("utf-8", "replace").decode("utf-8")


def _cause(exc: BaseException) -> str:
    """The first line of an upstream message, bounded, for Scout's one line."""
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    return _printable(text[:_MAX_CAUSE])


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)
