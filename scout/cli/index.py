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
    emit(summary.to_json(), as_json, _human)


def _human(result: dict[str, object]) -> str:
    skipped = result["skipped"]
    line = (
        f"indexed {result['projects_indexed']} project(s), "
        f"{result['projects_unchanged']} unchanged, "
        f"{result['projects_removed']} removed; {result['passages']} passage(s) written "
        f"in {result['seconds']}s"
    )
    if skipped:
        line += "\nskipped: " + ", ".join(f"{k} {v}" for k, v in skipped.items())  # type: ignore[attr-defined]
    return line
