"""A realdocs folder in miniature for the bench tools' tests: a stand-in ``recall.py`` (a hit
counts when it is a target's file), the question files, and a config for a store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# A stand-in for a realdocs folder's recall.py: a hit counts when it is a target's file.
RECALL = """
def first_rank(hits, targets):
    for rank, hit in enumerate(hits, start=1):
        if any(hit["project"] == t["project"] and hit["path"] == t["path"] for t in targets):
            return rank
    return None
"""


def write_realdocs(directory: Path, questions: list[dict[str, Any]]) -> tuple[Path, Path]:
    """``directory/scout.toml`` for the store at ``directory/scout.db``, and a realdocs folder
    holding ``questions`` as its ``questions-more.json``; returns both."""
    config = directory / "scout.toml"
    config.write_text(
        '[forge]\nkind = "local"\nurl = "https://gitlab.acme.example"\npath = "."\n'
        'groups = ["acme"]\n[store]\npath = "scout.db"\n'
    )
    realdocs = directory / "realdocs"
    realdocs.mkdir()
    (realdocs / "recall.py").write_text(RECALL)
    (realdocs / "questions.json").write_text("[]")
    (realdocs / "questions-more.json").write_text(json.dumps(questions))
    return config, realdocs
