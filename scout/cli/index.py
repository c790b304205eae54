"""``scout index`` (and ``--rebuild``: a fresh store in place of a damaged one)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime
from scout.errors import EmbeddingError, UsageError


@click.command()
@click.option(
    "--rebuild",
    is_flag=True,
    help="Index into a fresh store and put it in place of the old one, which is kept aside as "
    "PATH.before-rebuild-TIME (for a damaged store; run `scout sweep` after it).",
)
@click.option(
    "--reembed",
    is_flag=True,
    help="Embed every passage again ([retrieval.embeddings]): for a model that changed under "
    "the same name (a new version pulled, another dimension).",
)
@json_option
@pass_runtime
def index(runtime: Runtime, rebuild: bool, reembed: bool, as_json: bool) -> None:
    """Index every qualifying project whose default-branch head moved since last time."""
    from ingest.recheck import rejudge_rule_withdrawals
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules

    runtime.on_interrupt = (
        "projects indexed before the interrupt are kept; "
        "the project being indexed keeps its previous passages"
    )
    config = runtime.config
    if reembed and config.retrieval.embeddings is None:
        raise UsageError("--reembed: the config has no [retrieval.embeddings] to embed with")
    forge = runtime.forge()
    path = config.store.path
    fresh = path.with_name(f".{path.name}.rebuild-{os.getpid()}") if rebuild else path
    if rebuild:
        runtime.on_interrupt = f"the store at {path} is as it was: the rebuild was discarded"
    store = runtime.store(create=True, path=fresh)
    if rebuild:
        kept = _keep_caches(store, path)
    rules = CorpusRules(tuple(config.forge.groups), config.corpus)
    try:
        with runtime.progress() as progress:
            summary = index_estate(
                forge, store, rules, progress=progress, docs_sites=config.docs_site
            )
            fault = summary.fault()
            if fault is not None:
                # what was read is embedded too; the forge's fault is the one to report
                with contextlib.suppress(EmbeddingError):
                    _embed(config, store, progress, reembed)
                raise fault
            summary.signposts_reinstated = rejudge_rule_withdrawals(config, forge, store)
            embedded = _embed(config, store, progress, reembed)
    except BaseException:
        if rebuild:
            runtime.close()
            _discard(fresh)
        raise
    result: dict[str, Any] = summary.to_json()
    if embedded is not None:
        result["embeddings"] = embedded.to_json()
    if rebuild:
        result = {**result, "kept": kept, "previous": _swap(runtime, fresh, path)}
    emit(result, as_json, lambda _: _describe(summary, result))


def _embed(config: Any, store: Any, progress: Any, again: bool) -> Any:
    """Embed what has no vector yet (``[retrieval.embeddings]``; ``again``: everything);
    EmbeddingError (exit 6, naming the server) keeps every batch that came back, and the
    passages stay searchable."""
    from scout.embeddings.indexing import embed_configured

    return embed_configured(config, store, progress=progress, again=again)


def _keep_caches(fresh: Any, path: Path) -> dict[str, int]:
    """What a rebuild carries over from the store it replaces: the expansion cache and the
    passages' vectors (both keyed by content, so still true of the passages indexed again).
    A store too damaged to read them from keeps nothing, and the rebuild goes on."""
    if not path.exists():
        return {"expansions": 0, "vectors": 0}
    return dict(fresh.copy_caches(path))


def _swap(runtime: Runtime, fresh: Path, path: Path) -> str | None:
    from scout import timefmt
    from scout.store.backup import replace_store

    runtime.close()  # the fresh store is closed (its WAL folded in) before it is renamed
    stamp = timefmt.now().replace(":", "")
    previous = replace_store(fresh, path, path.with_name(f"{path.name}.before-rebuild-{stamp}"))
    return None if previous is None else str(previous)


def _discard(fresh: Path) -> None:
    from scout.store.backup import discard

    discard(fresh)


def _describe(summary: Any, result: dict[str, Any]) -> str:
    text = str(summary.describe())
    embedded = result.get("embeddings")
    if embedded is not None:
        text += (
            f"\nembedded {embedded['embedded']} passage(s) with {embedded['model']} "
            f"in {embedded['seconds']}s"
        )
    if "previous" in result:
        previous = result["previous"]
        text += f"\nrebuilt the store; the previous one is kept at {previous}" if previous else ""
        text += "\nnow run `scout sweep` to read every issue again"
    return text
