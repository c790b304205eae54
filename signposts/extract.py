"""Signpost extraction: the resolvable references in an issue's untrusted text, nothing else.

Pure code: no network, no store. Each text (title, description, each non-system note) is read in
three passes, each blanking what it consumed so later passes cannot re-read it: Markdown link
targets and ``<...>`` autolinks (read exactly), then bare URLs (linkify-it boundaries), then short
forms and bare paths. Main rule: bounded in size and time. At most ``max_bytes`` of UTF-8 are read
per issue, at most ``max_references`` distinct references kept, and every pattern runs under the
``regex`` timeout; a text that times out is skipped whole and counted, never half-read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable

import regex

from signposts.extract_norm import valid_project_path
from signposts.extract_scan import remaining, scan_links
from signposts.extract_text import (
    BARE_PATH_RE,
    BARE_SHA_RE,
    COMMIT_RE,
    MERGE_REQUEST_RE,
    bare_path,
    bare_sha,
    commit,
    linked_reference,
    merge_request,
    relative_folder,
    relative_link,
)
from signposts.extract_urls import (
    Sites,
    folder_link,
    other_host,
    reference_from_url,
    sites_for,
)
from signposts.references import MAX_REFERENCE_CHARS, ExtractContext, Extraction, Reference

_ANY_PROJECT = "group/project"  # stands in for an unknown issue project when counting
_BACKTRACK_WINDOW = 4096  # characters searched back for whitespace when cutting at the budget
_SHORT_FORMS: tuple[tuple[regex.Pattern[str], Callable[..., Reference | None]], ...] = (
    (MERGE_REQUEST_RE, merge_request),
    (COMMIT_RE, commit),
    (BARE_SHA_RE, bare_sha),
    (BARE_PATH_RE, bare_path),
)


def extract(text: str, ctx: ExtractContext) -> Extraction:
    """The references in one text, as for an issue with no title and no notes."""
    return extract_issue("", text, (), ctx)


def extract_issue(
    title: str, description: str | None, notes: Iterable[str], ctx: ExtractContext
) -> Extraction:
    """The distinct references of an issue, in order of first appearance across its title,
    description and notes, under one byte budget and one reference budget."""
    result = Extraction()
    sites = sites_for(ctx)
    seen: set[str] = set()
    budget = ctx.max_bytes
    texts: list[str] = [title, description or "", *notes]
    for text in texts:
        if not text:
            continue
        text, budget = _within_budget(text, budget, result)
        try:
            found, no_project, dropped = _extract_text(
                text, ctx, sites, time.monotonic() + ctx.timeout
            )
        except TimeoutError:
            result.skipped["timeout"] += 1
            continue
        if no_project:
            result.skipped["no_project"] += no_project
        for text_dropped, reason in dropped:
            result.drop(text_dropped, reason)
        for ref in found:
            if ref.reference in seen:
                continue
            seen.add(ref.reference)
            if len(ref.reference) > MAX_REFERENCE_CHARS:  # prose dressed as a path
                result.drop(ref.reference, "reference_too_long")
            elif len(result.references) < ctx.max_references:
                result.references.append(ref)
            else:
                result.drop(ref.reference, "references_over_limit")
    return result


def _within_budget(text: str, budget: int, result: Extraction) -> tuple[str, int]:
    """Cut ``text`` to ``budget`` UTF-8 bytes, at whitespace when there is some near the cut so a
    URL or path is not read half; count what is cut."""
    head = text[: max(budget, 0)]
    encoded = head.encode("utf-8", "surrogatepass")
    if len(encoded) <= budget and len(head) == len(text):
        return text, budget - len(encoded)
    kept = encoded[: max(budget, 0)].decode("utf-8", "ignore")
    if len(kept) < len(text):
        space = max(kept.rfind(c, max(len(kept) - _BACKTRACK_WINDOW, 0)) for c in " \t\n")
        if space > 0:
            kept = kept[:space]
    result.skipped["bytes_over_limit"] += len(text[len(kept) :].encode("utf-8", "surrogatepass"))
    return kept, 0


def _extract_text(
    text: str, ctx: ExtractContext, sites: Sites, deadline: float
) -> tuple[list[Reference], int, list[tuple[str, str]]]:
    """References in one text in order of position, how many short forms were dropped for
    want of the issue's project, and the links dropped with their reason (``other_host``:
    GitLab-shaped URLs on other hosts; ``folder``: links to a folder); raises TimeoutError past
    ``deadline``."""
    found: list[tuple[int, Reference]] = []
    dropped: list[tuple[str, str]] = []
    no_project = 0
    links, rest = scan_links(text, deadline)
    targets: set[tuple[str, str]] = set()  # a repeated link is the same reference, met earlier
    for link in links:
        if (link.kind, link.target) in targets:
            continue
        targets.add((link.kind, link.target))
        if link.kind == "relative" and link.target.startswith("/") and sites.gitlab:
            # ``/group/project/-/blob/...`` is how GitLab renders a link on its own host
            url = sites.gitlab.host_url + link.target
            ref = reference_from_url(url, ctx, sites)
            if ref is None and folder_link(url, sites):
                dropped.append((link.target, "folder"))
        elif link.kind == "relative":
            shaped, ref = linked_reference(link.target, ctx.project)
            if not shaped:
                ref = relative_link(link.target, ctx.project)
                if ref is None and ctx.project and relative_folder(link.target, ctx.project):
                    dropped.append((link.target, "folder"))
                no_project += ref is None and _needs_project(relative_link, link.target, ctx)
        else:
            ref = reference_from_url(link.target, ctx, sites, shown=link.shown)
            if ref is None and other_host(link.target, sites):
                dropped.append((link.target, "other_host"))
            elif ref is None and folder_link(link.target, sites):
                dropped.append((link.target, "folder"))
        if ref is not None:
            found.append((link.start, ref))
    for pattern, make in _SHORT_FORMS:
        tokens: set[str] = set()  # a repeated token is the same reference, met earlier
        for match in pattern.finditer(rest, timeout=remaining(deadline)):
            if match.group() in tokens:
                continue
            tokens.add(match.group())
            ref = make(match, ctx.project)
            if ref is not None:
                found.append((match.start(), ref))
            else:
                no_project += _needs_project(make, match, ctx)
    found.sort(key=lambda pair: pair[0])
    return [ref for _, ref in found], no_project, dropped


def _needs_project(make: Callable[..., Reference | None], arg: object, ctx: ExtractContext) -> bool:
    """Whether a form that yielded nothing would have yielded a reference with a project known."""
    return ctx.project is None and make(arg, _ANY_PROJECT) is not None


def parse_issue_document(raw: str) -> tuple[str, str, list[str], str | None]:
    """(title, description, note bodies, project path) from an estate issue line (docs/design.md's
    issue format, system notes skipped; the project comes from ``web_url``) or plain text (all of
    it the description, no project)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return "", raw, [], None
    title = doc.get("title")
    description = doc.get("description")
    notes = [
        note["body"]
        for note in doc.get("notes") or []
        if isinstance(note, dict) and not note.get("system") and isinstance(note.get("body"), str)
    ]
    return (
        title if isinstance(title, str) else "",
        description if isinstance(description, str) else "",
        notes,
        _project_of(doc.get("web_url")),
    )


def _project_of(web_url: object) -> str | None:
    """``https://host/acme/config/-/issues/3`` -> ``acme/config`` (GitLab at the host root)."""
    if not isinstance(web_url, str) or "://" not in web_url:
        return None
    path = web_url.split("://", 1)[1].partition("/")[2]
    project, dash, _ = path.partition("/-/")
    return project if dash and valid_project_path(project) else None
