"""Prompt composition and the citation check: pure functions between retrieval and the provider."""

from scout.compose.citations import CitationCheck, check, markers, unreadable
from scout.compose.prompt import (
    addresses_task,
    answer_task,
    neutralise,
    prompt_passages,
    render_passages,
)
from scout.normalise import prose
from scout.providers.schema import AddressesOutput, AnswerOutput

__all__ = [
    "AddressesOutput",
    "AnswerOutput",
    "CitationCheck",
    "addresses_task",
    "answer_task",
    "check",
    "markers",
    "neutralise",
    "prompt_passages",
    "prose",
    "render_passages",
    "unreadable",
]
