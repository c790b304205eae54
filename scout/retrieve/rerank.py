"""The re-ranking stage: what the ranking does beyond term overlap and meaning.

The main rule: re-ranking only re-orders a pool, the candidates the earlier stages found and
fused, with factors read from the question and the passages' own fields; it never adds a passage
no stage found, never drops one (a passage it puts back only moves behind), and every factor is a
constant measured on realdocs-dev's ``tune`` questions (bench/realdocs_recall.py), not per question:

- a changelog-kind passage (``scout.kinds``) counts ``CHANGELOG_WEIGHT`` of its score unless the
  question asks about a version or a release: a changelog records what was true then;
- a passage of a project the question names (its name's words, :func:`named_projects`) counts
  ``NAMED_WEIGHT`` times its score: a small project's answer is not buried by a large one's;
- a passage that holds a code-like span of the question as written (``--force``,
  ``gl.projects.list``, ``exclude_patterns``, ``!=``) counts ``CODE_WEIGHT`` times: the
  tokeniser splits such spans into common words, the span itself is the evidence;
- then one file gives at most ``FILE_CAP`` of the first places and one section (its chunks, its
  copies) one: the rest of them follow the passages of other files and sections.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence

from scout.store import PassageHit

# BM25's exact top POOL passages are re-ranked (at least as many as asked for). Measured on the
# tune questions: recall@8 and MRR the same at 8, 20, 40 and 80, and every 8 more costs the
# staged ranking rows it could otherwise prove out of reach (bench/realdocs_tune.py).
POOL = 8
CHANGELOG_WEIGHT = 0.6
NAMED_WEIGHT = 1.7
CODE_WEIGHT = 1.15
FILE_CAP = 4
SECTION_CAP = 2
# A word names a project when that project holds this share of the passages that use it: "hugo",
# "sphinx", "charts" do; "docs", "site", "python" (words of project names too) do not.
NAME_SHARE = 0.8


def name_words(path: str) -> tuple[str, ...]:
    """The words of a project's name, the last segment of its path ("python-gitlab")."""
    return _words_of(path.rsplit("/", 1)[-1])


def path_words(path: str) -> tuple[str, ...]:
    """The words of every segment of a project's path ("gitlab-org/charts/gitlab": gitlab,
    org, charts), each once: a subgroup names its projects as the project's own name does."""
    return tuple(dict.fromkeys(w for segment in path.split("/") for w in _words_of(segment)))


def _words_of(segment: str) -> tuple[str, ...]:
    return tuple(w for w in re.split(r"[\W_]+", segment.casefold()) if w)


def named_projects(
    words: list[str],
    projects: Iterable[str],
    share: Callable[[str, str], float],
) -> set[str]:
    """The projects ``words`` (the question's, case-folded, in order) name.

    A project is named by the words of its name written together ("python gitlab"), or by one
    word of its path (its name, or a group's: "charts" of "gitlab-org/charts/gitlab") that no
    other project's path has and that ``share(word, project)`` (the project's share of the
    passages using it) shows to be its own. A group above every project is in every path, so
    it names none of them.
    """
    paths = {project: path_words(project) for project in projects}
    owners: dict[str, set[str]] = {}
    for project, parts in paths.items():
        for part in parts:
            owners.setdefault(part, set()).add(project)
    text = f" {' '.join(words)} "
    asked = set(words)
    named = set()
    for project, segments in paths.items():
        parts = name_words(project)
        if len(parts) > 1 and f" {' '.join(parts)} " in text:
            named.add(project)
            continue
        for part in segments:
            if part in asked and owners[part] == {project} and share(part, project) >= NAME_SHARE:
                named.add(project)
                break
    return named


def rerank(
    hits: list[PassageHit],
    limit: int,
    *,
    named: set[str],
    versions: bool,
    spans: Sequence[str],
) -> list[PassageHit]:
    """The pool ``hits`` re-ordered (see the module's rules), cut to ``limit``; each hit's
    ``score`` becomes the score it was ranked by."""
    return diverse(factored(hits, named=named, versions=versions, spans=spans), limit)


def factored(
    hits: list[PassageHit], *, named: set[str], versions: bool, spans: Sequence[str]
) -> list[PassageHit]:
    """``hits`` with each score times its factors (the module's first three rules), best
    first."""
    scored = []
    for hit in hits:
        factor = 1.0
        if not versions and hit.kind == "changelog":
            factor *= CHANGELOG_WEIGHT
        if hit.project in named:
            factor *= NAMED_WEIGHT
        if spans:
            text = f"{hit.heading}\n{hit.body}".casefold()
            if any(span in text for span in spans):
                factor *= CODE_WEIGHT
        scored.append(dataclasses.replace(hit, score=hit.score * factor))
    scored.sort(key=lambda h: (h.score, h.id))
    return scored


def diverse(hits: list[PassageHit], limit: int) -> list[PassageHit]:
    """``hits`` in order, except that a file's passages after its first ``FILE_CAP``, and a
    section's after its first, wait until every other passage has had its place."""
    first: list[PassageHit] = []
    later: list[PassageHit] = []
    per_file: dict[tuple[str, str], int] = {}
    sections: dict[tuple[str, ...], int] = {}
    for hit in hits:
        where = (hit.project, hit.path)
        # A section's chunks share its heading; its copies in other files (one paragraph
        # included in every chart's page) share its own heading and its text.
        section = (hit.project, hit.path, " ".join(hit.heading.split()))
        copy = (hit.heading.rsplit(" > ", 1)[-1].strip(), " ".join(hit.body.split()))
        if (
            sections.get(section, 0) >= SECTION_CAP
            or copy in sections
            or per_file.get(where, 0) >= FILE_CAP
        ):
            later.append(hit)
            continue
        sections[section] = sections.get(section, 0) + 1
        sections[copy] = 1
        per_file[where] = per_file.get(where, 0) + 1
        first.append(hit)
    return [*first, *later][:limit]
