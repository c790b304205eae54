"""``scout demo``: build the bundled estate, then index, sweep, ask and audit it, offline.

It drives the same core functions as the commands (no shortcuts), with the offline provider, so
what it shows is what a maintainer would see on a real estate without a model.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections import Counter
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scout.config import load_config
from scout.environment import invocation
from scout.errors import UsageError

if TYPE_CHECKING:
    from ingest.sweep import SweepSummary
    from scout.answer import AnswerResult
    from scout.corpus.index import IndexSummary
    from scout.evaluation.figures import EvalReport

MARKER = ".scout-demo"
# Package data, not a file of the source tree: `scout demo` must work from an installed wheel.
# (config/demo.toml in the repository is a link to this file, for readers of the README.)
CONFIG = resources.files("scout.demo").joinpath("demo.toml")
EVAL_FILE = "eval.toml"  # package data beside this module: the demo estate's eval questions


def prepare(directory: Path) -> Path:
    """An empty data folder for the demo; a previous demo's folder is cleared, nothing else is."""
    if directory.exists() and any(directory.iterdir()):
        if not (directory / MARKER).exists():
            raise UsageError(
                f"{directory} is not empty and holds no earlier demo: pick another --dir"
            )
        shutil.rmtree(directory)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / MARKER).write_text("built by scout demo; safe to delete\n", encoding="utf-8")
    config = directory / "scout.toml"
    config.write_text(CONFIG.read_text(encoding="utf-8"), encoding="utf-8")
    return config


@dataclass(frozen=True)
class DemoAudit:
    accepted: int
    rejected_by_check: dict[str, int]  # in the order the verdicts were read


@dataclass(frozen=True)
class DemoResult:
    """What ``scout demo`` did, as typed records; :meth:`to_json` is its ``--json`` document."""

    directory: str
    config: str
    questions: dict[str, str]  # name -> question
    index: IndexSummary
    sweep: SweepSummary
    answers: dict[str, AnswerResult]  # by question name
    audit: DemoAudit
    eval: EvalReport
    # question name -> (cited file, issue reference, issue URL) for files in the corpus only
    # because an accepted signpost brought them in (shown to people, not in --json)
    brought_in: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": self.directory,
            "config": self.config,
            "questions": dict(self.questions),
            "index": self.index.to_json(),
            "sweep": self.sweep.to_json(),
            "answers": {name: answer.to_json() for name, answer in self.answers.items()},
            "audit": {
                "accepted": self.audit.accepted,
                "rejected_by_check": dict(self.audit.rejected_by_check),
            },
            "eval": self.eval.to_json(),
        }


def run_demo(directory: Path) -> DemoResult:
    from ingest.sweep import Sweep
    from scout.answer import ask
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules
    from scout.demo.estate import build_demo_estate
    from scout.forge import open_forge
    from scout.providers import make_provider
    from scout.store import Store

    config_path = prepare(directory)
    demo = build_demo_estate(directory / "estate")
    config = load_config(config_path)
    forge = open_forge(config)
    store = Store.open(config.store.path, create=True)
    provider = make_provider("offline", model=config.answer.model)
    try:
        rules = CorpusRules(tuple(config.forge.groups), config.corpus)
        indexed = index_estate(forge, store, rules)
        swept = Sweep(config, forge, store, provider).run()
        answers = {
            name: ask(
                question,
                store=store,
                provider=provider,
                passages=config.answer.passages,
                provider_name="offline",
            )
            for name, question in demo.questions.items()
        }
        evaluation = _evaluate(store, provider, config.answer.passages)
        verdicts = store.signposts()
        brought_in = {name: _brought_in(store, verdicts, a) for name, a in answers.items()}
        rejected = Counter(str(v.check_name) for v in verdicts if v.status == "rejected")
        audit = DemoAudit(
            accepted=sum(v.status == "accepted" for v in verdicts), rejected_by_check=dict(rejected)
        )
    finally:
        forge.close()
        store.close()
    return DemoResult(
        directory=str(directory),
        config=str(config_path),
        questions=dict(demo.questions),
        index=indexed,
        sweep=swept,
        answers=answers,
        audit=audit,
        eval=evaluation,  # serialised at the edge (--json), by DemoResult.to_json()
        brought_in={name: found for name, found in brought_in.items() if found},
    )


def _brought_in(
    store: Any, verdicts: list[Any], answer: AnswerResult
) -> list[tuple[str, str, str]]:
    """The cited files no corpus rule let in, each with the issue whose link brought it in."""
    found = []
    for c in answer.citations:
        in_corpus = any(
            p.path == c.path and p.origin == "corpus" for p in store.passages(c.project)
        )
        issues = [
            v
            for v in verdicts
            if v.status == "accepted" and (v.target_project, v.target_path) == (c.project, c.path)
        ]
        if issues and not in_corpus:
            first = min(issues, key=lambda v: (v.issue_project, v.issue_iid))
            found.append((c.path, f"{first.issue_project}#{first.issue_iid}", first.issue_url))
    return found


def _evaluate(store: Any, provider: Any, passages: int) -> EvalReport:
    """The demo's own eval file through the answer path, offline (not logged as questions)."""
    from scout.evaluation.evalfile import load
    from scout.evaluation.runner import run_eval

    with resources.as_file(resources.files("scout.demo") / EVAL_FILE) as path:
        questions = load(path)
    return run_eval(questions, store=store, provider=provider, passages=passages, model=None)


# What each check's rejections mean, in the words a newcomer would use.
REJECTED = {
    "corpus_rules": "pointed into private, excluded or archived projects, so were never read",
    "resolves": "pointed at things no longer true at the head: a deleted line, a reverted "
    "commit, an unmerged merge request",
    "addresses": "pointed at a page that does not answer the question the issue asked",
}
LEFT_OUT = {
    "project_archived": "archived",
    "project_excluded": "excluded by the config",
    "project_private": "private",
}


def render(result: DemoResult) -> str:
    from scout.verdict import Check

    index, sweep = result.index, result.sweep
    left_out = ", ".join(
        f"{v} {LEFT_OUT.get(k, k.replace('_', ' '))}" for k, v in sorted(index.skipped.items())
    )
    lines = [
        f"Demo estate built in {result.directory} (config: {result.config})",
        "",
        f"index: {index.projects_indexed} project(s) indexed, {index.passages} passages of "
        f"documentation; project(s) left out: {left_out}",
        f"sweep: {sweep.issues_read} issue(s) read for links to files, pages, commits and merge "
        f"requests (the issues' own text is never kept); {sweep.references} link(s) found:",
        f"  {sweep.accepted} accepted: what they point at is now searchable, and cited as itself",
    ]
    lines += [
        f"  {sweep.rejected[check]} refused: they {REJECTED[check.value]}"
        for check in Check
        if sweep.rejected[check]
    ]
    lines.append("")
    for name, answer in result.answers.items():
        lines.append(f"Q ({name}): {result.questions[name]}")
        lines += _answer_lines(answer, result.brought_in.get(name, []))
        lines.append("")
    lines.append(
        "Offline mode shows where to look and never composes an answer. With a model "
        "([answer] provider = claude-local, anthropic or openai), Scout reads these passages, "
        "answers with checked citations or declines, and its declines are documentation gaps."
    )
    lines.append("")
    lines.append(
        f"Eval ({EVAL_FILE}, offline provider): {len(result.eval.rows)} test questions "
        "with known right answers, asked as a user would"
    )
    lines += [f"  {line}" for line in _eval_lines(result.eval)]
    lines.append("")
    scout = invocation()
    lines.append(
        f"Audit with: {scout} --config {shlex.quote(result.config)} signposts   "
        f"(and `signposts --status accepted`, `gaps`)"
    )
    activate = Path(sys.executable).parent / "activate"
    if scout != "scout" and activate.exists():
        lines.append(f"(or `source {activate}` first, then run plain `scout`)")
    return "\n".join(lines)


SHOWN_PLACES = 3  # places of where to look the demo prints per question


def _answer_lines(answer: AnswerResult, brought_in: list[tuple[str, str, str]]) -> list[str]:
    """One question's outcome as the demo tells it: offline mode's where to look (the passage
    holding the question's words with its matching sentences), a decline offline mode made
    (not a gap), or a decline retrieval could not help (a gap)."""
    from scout.answer import matching_sentences

    if answer.outcome == "answered":
        lines = [
            "  where to look (offline mode: no model read the passages; these hold its words):"
        ]
    elif answer.cause == "offline":
        lines = [
            f"  not answered in offline mode ({answer.reason}); no model read the passages, so "
            "this is not counted as a documentation gap. Where to look:"
        ]
    else:
        return [
            f"  declined: {answer.reason}: no passage shares a word with it, so it is a "
            "documentation gap now (`scout gaps` lists it)"
        ]
    cited = {c.n for c in answer.citations}
    for place in answer.where_to_look:
        if place.n > SHOWN_PLACES and place.n not in cited:
            continue
        start, end = place.lines
        lines.append(f"  [{place.n}] {place.project} {place.path} L{start}-{end}")
        lines.append(f"      {place.url}")
        if place.n in cited:
            lines.append(f"      matching: {matching_sentences(answer)}")
    for path, issue, url in brought_in:
        lines.append(
            f"  {path} is in the corpus only because issue {issue} linked to it "
            f"({url}); it is listed as the file, never as the issue"
        )
    return lines


def _eval_lines(report: EvalReport) -> list[str]:
    """The eval's figures, each saying what it measures."""
    from scout.evaluation.evalfile import Band
    from scout.evaluation.figures import bands, citations, floor_loss, recall

    by_band = bands(report.rows)

    def of(band: Band) -> str:
        b = by_band.get(band)
        return f"{b.correct} of {b.n}" if b else "0 of 0"

    total = sum(b.correct for b in by_band.values())
    cites, found = citations(report.rows), recall(report.rows, report.k)

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    return [
        f"{total} of {len(report.rows)} handled right. Answered, citing the right file: "
        f"{of(Band.ANSWERABLE)} questions the docs answer, {of(Band.CONTRADICTS)} whose "
        f"premise the docs contradict. Declined: {of(Band.COVERED)} on a documented topic the "
        f"docs do not answer, {of(Band.UNANSWERABLE)} the docs say nothing about.",
        f"{cites.precise} of {cites.answers} answers cited only the right files; the right file "
        f"was among the {found.k} passages retrieved for {share(found.recall_at_k)} of the "
        "questions the docs answer.",
        "What a cut-off on retrieval's score would cost instead of the model's judgement: "
        "one strict enough to keep out 90% of the questions the docs say nothing about would "
        f"lose {share(floor_loss(report.rows, Band.UNANSWERABLE))} of the answerable ones; one "
        "keeping out 90% of those on a documented topic would lose "
        f"{share(floor_loss(report.rows, Band.COVERED))} of them.",
    ]
