"""``scout demo``: build the bundled estate, then index, sweep, ask and audit it, offline.

It drives the same core functions as the commands (no shortcuts), with the offline provider, so
what it shows is what a maintainer would see on a real estate without a model.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scout.config import load_config
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


def invocation() -> str:
    """How the user's shell can run this Scout: bare ``scout`` only when that finds this one
    (scripts/setup does not put ``.venv/bin`` on PATH), else its absolute path."""
    argv0 = Path(sys.argv[0])
    if argv0.name == "scout" and argv0.exists():
        found = shutil.which("scout")
        if found and Path(found).resolve() == argv0.resolve():
            return "scout"
        return shlex.quote(str(argv0.absolute()))
    return f"{shlex.quote(sys.executable)} -m scout"


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
    )


def _evaluate(store: Any, provider: Any, passages: int) -> EvalReport:
    """The demo's own eval file through the answer path, offline (not logged as questions)."""
    from scout.evaluation.evalfile import load
    from scout.evaluation.runner import run_eval

    with resources.as_file(resources.files("scout.demo") / EVAL_FILE) as path:
        questions = load(path)
    return run_eval(questions, store=store, provider=provider, passages=passages, model=None)


def render(result: DemoResult) -> str:
    from scout.verdict import Check

    index, sweep = result.index, result.sweep
    lines = [
        f"Demo estate built in {result.directory} (config: {result.config})",
        "",
        f"index: {index.projects_indexed} project(s) indexed, {index.passages} passages; "
        f"left out: " + ", ".join(f"{k} {v}" for k, v in sorted(index.skipped.items())),
        f"sweep: {sweep.issues_read} issue(s), {sweep.references} reference(s): "
        f"{sweep.accepted} accepted, "
        + ", ".join(f"{sweep.rejected[check]} rejected by {check.value}" for check in Check),
        "",
    ]
    for name, answer in result.answers.items():
        question = result.questions[name]
        lines.append(f"Q ({name}): {question}")
        if answer.outcome == "answered":
            lines.append(f"  answered: {answer.answer}")
            lines += [f"  [{c.n}] {c.url}" for c in answer.citations]
        else:
            lines.append(f"  declined: {answer.reason}")
        lines.append("")
    from scout.evaluation.render import summary as eval_summary

    lines.append(f"Eval ({EVAL_FILE}, offline provider):")
    lines += [f"  {line}" for line in eval_summary(result.eval)]
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
