"""The values signpost extraction works with: its context, the references it returns, and their
normalised reference strings.

Main rule: a ``Reference`` is fully normalised when it is built, so its ``reference`` string is a
stable de-duplication key and the exact text an audit shows. The forms are:

    docs_page       the normalised URL, ``https://docs.acme.example/config/guide/x.html#anchor``
    file (URL)      ``acme/config/-/blob/<sha>/<path>#L10-20`` or ``.../-/blob/<ref/path>`` when the
                    ref is not a full sha (it cannot be split from the path offline)
    file (no ref)   ``acme/config:<path>#L10-20`` (a relative link or a bare path)
    commit          ``acme/config@<sha>`` (lower-case hex), whatever form it was written in
    merge_request   ``acme/config!12``, whatever form it was written in
"""

from __future__ import annotations

import collections
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from scout.config import Config
from scout.forge.base import lines_fragment
from scout.verdict import Kind


@dataclass(frozen=True)
class DocsSite:
    """A configured docs site (config ``[[docs_site]]``): pages below ``url`` come from ``root``."""

    url: str
    project: str
    root: str


@dataclass(frozen=True)
class ExtractContext:
    """Everything extraction needs to know besides the text; all bounds are per issue."""

    gitlab_url: str  # configured GitLab web URL, e.g. https://gitlab.acme.example
    docs_sites: tuple[DocsSite, ...] = ()
    project: str | None = None  # the issue's own project (full path); short forms need it
    max_bytes: int = 1 << 20  # UTF-8 bytes read per issue (all texts together); rest counted
    max_references: int = 50  # distinct references per issue; rest counted as skipped
    timeout: float = 2.0  # regex timeout budget per text, seconds
    # other names of the same GitLab (forge.url behind forge.web_url, forge.aliases): references
    # on them are read, and written, as on gitlab_url
    aliases: tuple[str, ...] = ()


def extract_context(config: Config, project: str | None) -> ExtractContext:
    """The context for extracting from an issue of `project` under `config` (the sweep and the CLI's
    `signposts` commands build it the same way)."""
    return ExtractContext(
        gitlab_url=config.forge.public_url,
        aliases=config.forge.other_names,
        docs_sites=tuple(DocsSite(s.url, s.project, s.root) for s in config.docs_site),
        project=project,
    )


@dataclass(frozen=True)
class Reference:
    """One resolvable reference found in issue text, normalised."""

    kind: Kind
    reference: str  # normalised reference string (stable; de-dup key; what audits show)
    project: str | None  # target project full path
    path: str | None  # file path in repo (file), page path below site root (docs_page)
    lines: tuple[int, int] | None  # (a, b); a single line is (a, a)
    sha: str | None  # commit sha (commit) or pinned sha of a blob URL (file)
    iid: int | None  # merge request iid
    url: str | None  # the normalised URL when the reference came from a URL
    ref_path: str | None = None  # "<ref>/<path>" of a blob URL whose ref is not a full sha
    anchor: str | None = None  # docs_page #anchor
    docs_site: str | None = None  # the matching DocsSite.url for docs_page

    def to_json(self) -> dict[str, Any]:
        """docs/design.md's ``scout signposts extract --json`` fields, absent ones null."""
        return {
            "kind": self.kind,
            "reference": self.reference,
            "project": self.project,
            "path": self.path,
            "lines": list(self.lines) if self.lines is not None else None,
            "sha": self.sha,
            "iid": self.iid,
            "url": self.url,
        }

    def to_store(self) -> str:
        """The whole reference as the store's ``reference_json`` column keeps it."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_store(cls, text: str) -> Reference:
        """A reference read back from ``reference_json``."""
        data = json.loads(text)
        data["kind"] = Kind(data["kind"])
        if data.get("lines") is not None:
            data["lines"] = tuple(data["lines"])
        return cls(**data)


# A reference longer than this is not a reference: real paths, URLs and shas are far shorter,
# and a longer "path" is a sentence an issue author wants kept and shown in the audit.
MAX_REFERENCE_CHARS = 512
MAX_DROPPED = 200  # dropped references kept per issue for --dropped (all are counted)
MAX_DROPPED_CHARS = MAX_REFERENCE_CHARS  # of each dropped one's text, for --dropped


@dataclass
class Extraction:
    """The distinct references of an issue in order of first appearance, and what was skipped.

    ``skipped`` keys: ``bytes_over_limit`` (UTF-8 bytes not read), ``references_over_limit``
    (distinct references past ``max_references``), ``timeout`` (texts abandoned on the regex
    timeout), ``no_project`` (short forms seen while the issue's project is unknown),
    ``reference_too_long`` (distinct references over MAX_REFERENCE_CHARS, dropped),
    ``other_host`` (GitLab-shaped URLs on a host that is not this GitLab), ``folder`` (links to
    a folder: a tree URL, a blob URL or relative link ending in ``/``). ``dropped`` names the
    references left out with their reason (``other_host``, ``folder``, ``reference_too_long``,
    ``references_over_limit``), at most
    ``MAX_DROPPED`` of them, for ``scout signposts extract --dropped``.
    """

    references: list[Reference] = field(default_factory=list)
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)
    dropped: list[tuple[str, str]] = field(default_factory=list)

    def drop(self, reference: str, reason: str) -> None:
        """Count a reference left out, and keep it (bounded) to say what was dropped and why."""
        self.skipped[reason] += 1
        if len(self.dropped) < MAX_DROPPED:
            self.dropped.append((reference[:MAX_DROPPED_CHARS], reason))


def file_ref(project: str, path: str, lines: tuple[int, int] | None) -> Reference:
    """A file in the issue's (or a named) project at the default branch, from a link or path."""
    return Reference(
        kind=Kind.FILE,
        reference=f"{project}:{path}{lines_fragment(lines)}",
        project=project,
        path=path,
        lines=lines,
        sha=None,
        iid=None,
        url=None,
    )


def commit_ref(project: str, sha: str, url: str | None = None) -> Reference:
    sha = sha.lower()
    return Reference(
        kind=Kind.COMMIT,
        reference=f"{project}@{sha}",
        project=project,
        path=None,
        lines=None,
        sha=sha,
        iid=None,
        url=url,
    )


def merge_request_ref(project: str, iid: int, url: str | None = None) -> Reference:
    return Reference(
        kind=Kind.MERGE_REQUEST,
        reference=f"{project}!{iid}",
        project=project,
        path=None,
        lines=None,
        sha=None,
        iid=iid,
        url=url,
    )
