"""Corpus rules: which projects and files may inform answers.

One module, called by indexing and by signpost validation alike (docs/design.md, invariant 2), and
it looks at metadata only: a project's path, visibility and archived flag; a file's path, kind and
size. Nothing here fetches content, so a target that fails can never have been read. Each rejection
carries a machine-readable reason that audits and logs show as-is.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from scout.config import CorpusConfig
from scout.doc_paths import is_documentation, left_out
from scout.forge.base import FileEntry, Project, in_groups

MAX_FILE_BYTES = 1 << 20  # 1 MiB: larger "docs" are generated dumps, not prose people wrote


@dataclass(frozen=True)
class RuleDecision:
    """The outcome of a rule check: ``ok`` or a reason such as ``project_private``."""

    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None

    def __bool__(self) -> bool:
        return self.ok


OK = RuleDecision()


@dataclass(frozen=True)
class CorpusRules:
    groups: tuple[str, ...]
    corpus: CorpusConfig

    @property
    def fingerprint(self) -> str:
        """Changes whenever any rule does (groups or any ``corpus.*`` key): stored with what was
        judged under them, so a change of rules is noticed without a commit to trigger it."""
        rules = {"groups": sorted(self.groups), "corpus": self.corpus.model_dump(mode="json")}
        text = json.dumps(rules, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def group(self, path: str) -> RuleDecision:
        """Whether a project path lies in a configured group: decidable before any lookup."""
        return OK if in_groups(path, list(self.groups)) else RuleDecision("project_outside_groups")

    def project(self, project: Project) -> RuleDecision:
        """Whether a project may contribute passages, from its metadata alone."""
        inside = self.group(project.path)
        if not inside:
            return inside
        if any(fnmatchcase(project.path, pattern) for pattern in self.corpus.exclude_projects):
            return RuleDecision("project_excluded")
        if project.visibility not in self.corpus.visibility:
            return RuleDecision(f"project_{project.visibility}")
        if project.archived and not self.corpus.include_archived:
            return RuleDecision("project_archived")
        return OK

    def path(self, path: str) -> RuleDecision:
        """Whether a repository path may be read at all (exclusions and traversal)."""
        parts = PurePosixPath(path).parts
        if not parts or path.startswith("/") or ".." in parts or "\0" in path:
            return RuleDecision("path_invalid")
        if any(fnmatchcase(path, pattern) for pattern in self.corpus.exclude_paths):
            return RuleDecision("path_excluded")
        if left_out(path, self.corpus.languages) is not None:
            return RuleDecision("path_translation")
        return OK

    def file(self, entry: FileEntry) -> RuleDecision:
        """Whether a file may be indexed: a regular, small, non-excluded documentation file."""
        path_verdict = self.path(entry.path)
        if not path_verdict:
            return path_verdict
        if entry.kind != "blob":
            return RuleDecision(f"file_{entry.kind}")
        if not is_documentation(entry.path):
            return RuleDecision("file_not_documentation")
        if entry.size > MAX_FILE_BYTES:
            return RuleDecision("file_too_large")
        return OK
