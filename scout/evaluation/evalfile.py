"""Eval files: TOML ``[[question]]`` tables with a band and, except for ``unanswerable``, the
sources that answer them. Everything is checked on load; a bad file is a UsageError (exit 2: the
file is the command's argument) naming the file and the entry, so a typo never turns into a
silently wrong figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from scout.errors import UsageError
from scout.retrieve.question import Question
from scout.toml_input import TomlProblem, read_toml

MAX_QUESTIONS = 10_000


class Band(StrEnum):
    """What the documentation does for a question, and so what a correct outcome is."""

    ANSWERABLE = "answerable"  # it answers: correct is an answer citing an expected source
    CONTRADICTS = "contradicts"  # it contradicts the premise, which is an answer: likewise
    COVERED = "covered"  # it discusses the subject without answering: correct is a decline
    UNANSWERABLE = "unanswerable"  # it says nothing: correct is a decline

    @property
    def wants_answer(self) -> bool:
        return self in (Band.ANSWERABLE, Band.CONTRADICTS)


@dataclass(frozen=True)
class Source:
    """Where an answer may be cited from: a file of a project, optionally a line range of it."""

    project: str
    path: str
    lines: tuple[int, int] | None = None

    def holds(self, project: str, path: str, lines: tuple[int, int]) -> bool:
        """Whether a citation or passage at ``lines`` of ``project``/``path`` lies in this source
        (same project and path; overlapping lines when the source names lines)."""
        if (project, path) != (self.project, self.path):
            return False
        if self.lines is None:
            return True
        return lines[0] <= self.lines[1] and self.lines[0] <= lines[1]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"project": self.project, "path": self.path}
        if self.lines is not None:
            out["lines"] = list(self.lines)
        return out


@dataclass(frozen=True)
class EvalQuestion:
    """One entry of an eval file."""

    question: str
    band: Band
    sources: tuple[Source, ...]

    def expects(self, project: str, path: str, lines: tuple[int, int]) -> bool:
        return any(source.holds(project, path, lines) for source in self.sources)


def load(path: Path) -> tuple[EvalQuestion, ...]:
    """The questions of the eval file at ``path``, in file order, or UsageError."""
    try:
        data = read_toml(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: eval file not found") from None
    except TomlProblem as exc:
        raise UsageError(f"{path}: {exc}") from exc
    return parse(data, path)


def parse(data: dict[str, Any], path: Path) -> tuple[EvalQuestion, ...]:
    """Check and convert an eval file's parsed TOML (``path`` names it in errors)."""
    unknown = sorted(set(data) - {"question"})
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r} (an eval file holds [[question]])")
    entries = data.get("question")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: no questions: add [[question]] tables")
    if len(entries) > MAX_QUESTIONS:
        raise UsageError(f"{path}: {len(entries)} questions; the limit is {MAX_QUESTIONS}")
    return tuple(_entry(entry, f"{path}: question {n}") for n, entry in enumerate(entries, 1))


def _entry(entry: Any, where: str) -> EvalQuestion:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: must be a table")
    unknown = sorted(set(entry) - {"question", "band", "sources"})
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (question, band, sources)")
    question = entry.get("question")
    if not isinstance(question, str) or not question.strip():
        raise UsageError(f"{where}: `question` must be a non-empty string")
    try:
        Question.of(question)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    choices = ", ".join(b.value for b in Band)
    band_name = entry.get("band")
    if band_name is None:
        raise UsageError(f"{where}: missing `band` (one of {choices})")
    try:
        band = Band(str(band_name))
    except ValueError:
        raise UsageError(f"{where}: unknown band {band_name!r} (one of {choices})") from None
    raw = entry.get("sources", [])
    if not isinstance(raw, list):
        raise UsageError(f"{where}: `sources` must be a list of {{project, path, lines?}}")
    sources = tuple(_source(item, f"{where}, source {n}") for n, item in enumerate(raw, 1))
    if band is Band.UNANSWERABLE and sources:
        raise UsageError(f"{where}: an unanswerable question has no sources")
    if band is not Band.UNANSWERABLE and not sources:
        raise UsageError(f"{where}: missing `sources` (a {band} question names what answers it)")
    return EvalQuestion(question.strip(), band, sources)


def _source(item: Any, where: str) -> Source:
    if not isinstance(item, dict):
        raise UsageError(f"{where}: must be a table {{project, path, lines?}}")
    unknown = sorted(set(item) - {"project", "path", "lines"})
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} (project, path, lines)")
    project, path = item.get("project"), item.get("path")
    if not isinstance(project, str) or not project or not isinstance(path, str) or not path:
        raise UsageError(f"{where}: `project` and `path` must be non-empty strings")
    lines = item.get("lines")
    if lines is None:
        return Source(project, path.lstrip("/"))
    if (
        not isinstance(lines, list)
        or len(lines) != 2
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in lines)
        or not 1 <= lines[0] <= lines[1]
    ):
        raise UsageError(f"{where}: `lines` must be [first, last] with 1 <= first <= last")
    return Source(project, path.lstrip("/"), (lines[0], lines[1]))
