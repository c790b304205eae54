"""Sample inputs more than one suite uses."""

from __future__ import annotations

from scout.providers.base import Task
from scout.providers.schema import AnswerOutput

# An answer task as the providers' own suites send it (the prompt is not what they test).
ANSWER_TASK = Task(
    kind="answer",
    system="You answer from passages.",
    user="Question: How do I rotate keys?\n\nPassages: ...",
    output=AnswerOutput,
    question="How do I rotate keys?",
    passages=(),
)

# An eval file over the corpus of tests/fakes/corpus.py: two answerable questions, one the docs
# contradict, one they only cover, two they cannot answer.
EVAL = """
[[question]]
question = "How do I rotate the database keys?"
band = "answerable"
sources = [{ project = "acme/config", path = "docs/credentials.md", lines = [20, 40] }]

[[question]]
question = "When do backups run nightly?"
band = "answerable"
sources = [{ project = "acme/ops", path = "docs/backups.md" }]

[[question]]
question = "Why do production deploys need three approvals?"
band = "contradicts"
sources = [{ project = "acme/ops", path = "deploy/README.md" }]

[[question]]
question = "Which vault version rotates the database keys?"
band = "covered"
sources = [{ project = "acme/config", path = "docs/credentials.md" }]

[[question]]
question = "What is the weather in Lisbon?"
band = "unanswerable"

[[question]]
question = "Who restores a backup on weekends?"
band = "unanswerable"
"""

# Where retrieval found the nearest passage to a declined question (what the question log keeps).
NEAR = {
    "project": "acme/handbook",
    "path": "docs/it.md",
    "heading": "IT > Network",
    "lines": [3, 9],
    "url": "https://gitlab.acme.example/acme/handbook/-/blob/" + "a" * 40 + "/docs/it.md#L3-9",
}
