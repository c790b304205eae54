"""``scout ask QUESTION``: answer with checked citations, or decline (both exit 0)."""

from __future__ import annotations

import click

from scout.answer import AnswerResult, render
from scout.answer import ask as answer_question
from scout.cli.runtime import (
    Runtime,
    emit,
    json_option,
    no_expand_option,
    pass_runtime,
    passages_option,
    project_option,
    provider_option,
    question_argument,
    question_text,
)
from scout.progress import Progress
from scout.providers import configured_provider
from scout.providers.base import Metered, Provider, T, Task, run_metered
from scout.retrieve.settings import RetrievalSettings


class _Shown:
    """A provider whose work shows as a spinner: a model may take up to answer.timeout."""

    def __init__(self, provider: Provider, progress: Progress) -> None:
        self.provider = provider
        self.progress = progress
        self.name = provider.name

    def run(self, task: Task[T]) -> T:
        return self.run_metered(task).output

    def run_metered(self, task: Task[T]) -> Metered[T]:
        # metered, so the question log still gets the wrapped provider's tokens and cost
        doing = "suggesting search terms" if task.kind == "expand" else "composing an answer"
        with self.progress.waiting(f"{self.name} is {doing}"):
            return run_metered(self.provider, task)


@click.command()
@question_argument
@passages_option("--passages", "Passages to give the model")
@provider_option("Who composes the answer (default: answer.provider). offline is not a model.")
@project_option
@no_expand_option
@json_option
@pass_runtime
def ask(
    runtime: Runtime,
    question: tuple[str, ...],
    passages: int | None,
    provider: str | None,
    projects: tuple[str, ...],
    no_expand: bool,
    as_json: bool,
) -> None:
    """Answer QUESTION from the documentation, citing passages, or decline with a reason. With
    a model provider the model is first asked for search terms, with the question alone
    (retrieval.expand = "auto"); --no-expand turns that off.

    QUESTION may be given unquoted (`scout ask How often are rates fetched`); `-` reads it from
    standard input.
    """
    asked = question_text(question)
    runtime.on_interrupt = "nothing was logged: the question is not on the gap backlog"
    settings = runtime.config.answer
    name = provider or settings.provider
    with runtime.progress() as progress:
        result: AnswerResult = answer_question(
            asked,
            store=runtime.store(),
            provider=lambda: _Shown(configured_provider(runtime.config, name), progress),
            passages=passages or settings.passages,
            provider_name=name,
            projects=projects or None,
            retrieval=RetrievalSettings.of(runtime.config, name, expand=not no_expand),
        )
    emit(result.to_json(), as_json, lambda _: render(result))
