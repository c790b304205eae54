"""``scout demo``: build the bundled estate, then index, sweep, ask and audit it, offline.

It drives the same core functions as the commands (no shortcuts), with the offline provider, so
what it shows is what a maintainer would see on a real estate without a model.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from scout.config import load_config
from scout.errors import UsageError

MARKER = ".scout-demo"
# Scout is installed from its source tree (scripts/setup installs it editable): the demo reads
# the config it documents from there.
CONFIG = Path(__file__).parent.parent.parent / "config" / "demo.toml"


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


def run_demo(directory: Path) -> dict[str, Any]:
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
        indexed = index_estate(forge, store, rules).to_json()
        swept = Sweep(config, forge, store, provider).run().to_json()
        answers = {
            name: ask(
                question,
                store=store,
                provider=provider,
                passages=config.answer.passages,
                provider_name="offline",
            ).to_json()
            for name, question in demo.questions.items()
        }
        verdicts = store.signposts()
        audit = {
            "accepted": sum(v.status == "accepted" for v in verdicts),
            "rejected_by_check": dict(
                Counter(v.check_name for v in verdicts if v.status == "rejected")
            ),
        }
    finally:
        forge.close()
        store.close()
    return {
        "directory": str(directory),
        "config": str(config_path),
        "questions": demo.questions,
        "index": indexed,
        "sweep": swept,
        "answers": answers,
        "audit": audit,
    }


def render(result: dict[str, Any]) -> str:
    index, sweep = result["index"], result["sweep"]
    lines = [
        f"Demo estate built in {result['directory']} (config: {result['config']})",
        "",
        f"index: {index['projects_indexed']} project(s) indexed, {index['passages']} passages; "
        f"left out: " + ", ".join(f"{k} {v}" for k, v in index["skipped"].items()),
        f"sweep: {sweep['issues_read']} issue(s), {sweep['references']} reference(s): "
        f"{sweep['accepted']} accepted, "
        + ", ".join(f"{v} rejected by {k}" for k, v in sweep["rejected"].items()),
        "",
    ]
    for name, answer in result["answers"].items():
        question = result["questions"][name]
        lines.append(f"Q ({name}): {question}")
        if answer["outcome"] == "answered":
            lines.append(f"  answered: {answer['answer']}")
            lines += [f"  [{c['n']}] {c['url']}" for c in answer["citations"]]
        else:
            lines.append(f"  declined: {answer['reason']}")
        lines.append("")
    scout = invocation()
    lines.append(
        f"Audit with: {scout} --config {shlex.quote(str(result['config']))} signposts   "
        f"(and `signposts --status accepted`, `gaps`)"
    )
    activate = Path(sys.executable).parent / "activate"
    if scout != "scout" and activate.exists():
        lines.append(f"(or `source {activate}` first, then run plain `scout`)")
    return "\n".join(lines)
