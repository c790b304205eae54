"""``scout index``."""

from __future__ import annotations

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime


@click.command()
@json_option
@pass_runtime
def index(runtime: Runtime, as_json: bool) -> None:
    """Index every qualifying project whose default-branch head moved since last time."""
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules

    runtime.on_interrupt = (
        "projects indexed before the interrupt are kept; "
        "the project being indexed keeps its previous passages"
    )
    config = runtime.config
    forge = runtime.forge()
    store = runtime.store(create=True)
    rules = CorpusRules(tuple(config.forge.groups), config.corpus)
    with runtime.progress() as progress:
        summary = index_estate(forge, store, rules, progress=progress)
    fault = summary.fault()
    if fault is not None:
        raise fault
    emit(summary, as_json, lambda result: result.describe())
