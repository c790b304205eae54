"""``scout eval FILE``: answer an eval file's questions and report how well (see scout/evaluation).
``scout eval --compare A.json B.json`` sets two runs side by side."""

from __future__ import annotations

from pathlib import Path

import click

from scout.cli.runtime import (
    Runtime,
    emit_rows,
    json_option,
    pass_runtime,
    passages_option,
    provider_option,
    rows_option,
)
from scout.errors import UsageError
from scout.providers import configured_provider
from scout.retrieve.settings import RetrievalSettings


@click.command(name="eval")
@click.argument("file", required=False, type=click.Path(dir_okay=False, path_type=Path))
@provider_option("Who composes the answers (default: answer.provider).")
@click.option(
    "--model",
    default=None,
    help="Model for claude-local, anthropic and openai (default: answer.model).",
)
@passages_option("--passages", "Passages per question")
@click.option(
    "--expand",
    type=click.Choice(["auto", "model", "off"]),
    default=None,
    help="Query expansion for this run (default: retrieval.expand); run it both ways on one "
    "file and --compare the two to see what expansion buys and costs.",
)
@click.option(
    "--compare",
    nargs=2,
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="A.json B.json",
    help="Set two runs' --json outputs side by side instead of running FILE.",
)
@rows_option
@json_option
@pass_runtime
def evaluate(
    runtime: Runtime,
    file: Path | None,
    provider: str | None,
    model: str | None,
    passages: int | None,
    expand: str | None,
    compare: tuple[Path, Path] | None,
    as_nl: bool,
    as_json: bool,
) -> None:
    """Run FILE's questions through the answer path and report correctness, citation precision,
    recall, the score-floor figure, cost and latency. Eval runs are not logged as questions.
    With --nl, one line per question (or, with --compare, per figure)."""
    from scout.evaluation import compare as comparing
    from scout.evaluation import render

    if compare is not None:
        if file is not None:
            raise UsageError("give either FILE or --compare A.json B.json, not both")
        comparison = comparing.compare(*compare)
        document = comparison.to_json()
        emit_rows(
            document["figures"],
            as_json,
            as_nl,
            lambda _: render.render_comparison(comparison),
            document=document,
        )
        return
    if file is None:
        raise UsageError("missing FILE: scout eval FILE, or scout eval --compare A.json B.json")
    from scout.evaluation.evalfile import load
    from scout.evaluation.runner import run_eval

    questions = load(file)
    settings = runtime.config.answer
    name = provider or settings.provider
    chosen_model = model or settings.model
    with runtime.progress() as progress:
        report = run_eval(
            questions,
            store=runtime.store(),
            provider=configured_provider(runtime.config, name, model=model),
            passages=passages or settings.passages,
            model=None if name == "offline" else chosen_model,
            progress=progress,
            retrieval=_settings(runtime, name, expand),
        )
    document = report.to_json()
    emit_rows(document["rows"], as_json, as_nl, lambda _: render.render(report), document=document)


def _settings(runtime: Runtime, provider: str, expand: str | None) -> RetrievalSettings:
    """The config's retrieval settings, with ``--expand`` in place of ``retrieval.expand``."""
    config = runtime.config
    if expand is not None:
        retrieval = config.retrieval.model_copy(update={"expand": expand})
        config = config.model_copy(update={"retrieval": retrieval})
    return RetrievalSettings.of(config, provider)
