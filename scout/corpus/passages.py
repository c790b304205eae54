"""Splitting one documentation file into passages: sections with a heading path and exact lines.

Main rule: every passage is a contiguous run of the file's lines, numbered 1-based against the
file as GitLab numbers it (lines end at "\\n"; a "\\r" before it is dropped; NUL becomes U+FFFD),
and no passage body is longer than MAX_PASSAGE_CHARS. A section too long for one passage is cut
at the gentlest boundary that fits: top-level blocks (a fenced code block stays whole), then
paragraphs, then lines, and a single huge line is cut hard. Sections with a heading but no body
are dropped: their heading lives on in the heading path of the sections under them, and an empty
passage gives retrieval nothing to match. Nothing here raises on any input, and the work done is
bounded by MAX_DOCUMENT_CHARS; inside `budget.split_budget`, splitting also gives up
(SplitTooSlow) between stages once the file's time budget is spent.
"""

from __future__ import annotations

import logging
import posixpath
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate

import regex

from scout.corpus import budget, markdown, markup, rst, rst_ids
from scout.corpus.outline import Heading, Table

log = logging.getLogger(__name__)

# Markdown, and MDX (Markdown with JSX, Docusaurus' .mdx pages).
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")

# How files become passages, as a version: a release that changes what a passage holds (a markup
# rule, a heading rule) raises it, and `scout index` then re-reads every project once, rather
# than keeping the old passages until each project's next commit.
PASSAGES_FORMAT = 4

# Prompt cost: `scout ask` sends 8 passages. 3,000 characters is about 750 tokens of English prose
# (about 1,000 of code), so 8 passages stay under 8,000 tokens of context: a few tenths of a cent
# per question on a small model, and short enough that a passage is one topic, not a chapter.
# Most real documentation sections fit whole, so the bound rarely cuts one.
MAX_PASSAGE_CHARS = 3_000

# One heading in a heading path; the path as a whole. A 100 KB heading line must not become a
# 100 KB heading in every passage of its section.
MAX_HEADING_CHARS = 200
MAX_PATH_CHARS = 1_000

# Only this much of a file is split; the corpus rules already cap files at 1 MiB.
MAX_DOCUMENT_CHARS = 1 << 20

# markdown-it-py's block parser spends 30 to 110 microseconds a line (list items cost most: a line
# of a nested list is two list blocks), so a megabyte of short list lines would take over 10
# seconds. Only this many lines are parsed: about 2 s at worst (20,000 nested list items), 0.7 s
# for 20,000 one-character headings, where 50,000 lines took 5.7 s; the longest file of the six
# real docs sets in bench/ (a 9,000-line changelog) splits in 0.23 s. Any rest of the file stays
# under the last heading, cut at paragraphs, so its text is still indexed with exact lines.
MAX_PARSED_LINES = 20_000

HEADING_SEPARATOR = " > "

# A table cut across passages repeats its header row, which costs each later passage that much of
# its bound; a header longer than this is not repeated.
MAX_TABLE_HEADER_CHARS = 600

_GITLAB_NON_WORD = regex.compile(r"[^\p{Word}\- ]")
_HYPHENS = regex.compile(r"-{2,}")
_MKDOCS_DROP = regex.compile(r"[^\w\s-]")
_MKDOCS_SPACES = regex.compile(r"[-\s]+")
# Headings whose GitLab, MkDocs and GitHub ids are the same (ASCII words and single spaces).
_SAME_SLUGS = regex.compile(r"[A-Za-z0-9_]+(?: [A-Za-z0-9_]+)*")
_BLANK_RUN = regex.compile(r"\n(?:[ \t]*\n){2,}")


# A stretch of a document that becomes passages: (body start, body end, heading line or None,
# heading path, anchor), 0-based, body end exclusive.
Region = tuple[int, int, int | None, str, str | None]


@dataclass(frozen=True)
class Section:
    """One passage of a file: its heading path, its text and the lines it came from."""

    heading: str  # heading path joined with " > "; "" before any heading
    body: str  # the text, without its own heading line, no leading or trailing blank lines
    line_start: int  # 1-based first line in the file (the heading line where there is one)
    line_end: int  # 1-based last line, inclusive
    anchor: str | None  # slug of the section's own heading, for matching docs URL #anchors
    # Other ids a docs URL may use to land here: reST labels, glossary terms, the ids of headings
    # with no text of their own before this, their first subsection.
    aliases: tuple[str, ...] = ()
    # The file the passage comes from when an include pulled it in; None: the file being split.
    path: str | None = None

    def has_anchor(self, anchor: str) -> bool:
        """Whether a docs URL's `#anchor` lands in this passage (ids compare case-blind)."""
        wanted = anchor.lower()
        return (self.anchor or "").lower() == wanted or wanted in (a.lower() for a in self.aliases)


def source_lines(text: str) -> list[str]:
    """The file's lines as passages number them: split at "\\n", a trailing "\\r" dropped,
    NUL replaced by U+FFFD (SQLite FTS and C tools stop at NUL)."""
    lines = text.split("\n")
    return [line.removesuffix("\r").replace("\0", "\ufffd") for line in lines]


# Reads a repository file for an include: its text, or None when it may not or cannot be read.
Reader = Callable[[str], str | None]

# An include directive: (its line, 0-based; the path as written; whether the path is from the
# repository root first, as a snippet's is, rather than from the including file).
Include = tuple[int, str, bool]

# Includes followed per document; an included file's own includes are not followed (no cycles).
MAX_INCLUDES = 20


def split_document(path: str, text: str, read: Reader | None = None) -> list[Section]:
    """Passages of a documentation file, by extension: Markdown, reST, or plain text. With
    `read`, reST `.. include::` and MyST `{include}` directives pull in the passages of the
    files they name (inside the repository only; see `include_path`), cited at those files."""
    name = path.rsplit("/", 1)[-1].lower()
    includes: list[Include] = []
    if name.endswith(MARKDOWN_SUFFIXES):
        sections = split_markdown(text, includes, mdx=name.endswith(".mdx"))
    elif name.endswith(".rst"):
        sections = split_rst(text, includes)
    else:
        return split_plain(text)
    if read is None or not includes:
        return sections
    for line, argument, from_root in includes[:MAX_INCLUDES]:
        budget.check()
        target, included = _read_include(read, path, argument, from_root)
        if target is None or included is None:
            continue  # unresolved: the directive shows nothing, as it was rendered
        before = [s for s in sections if s.path is None and s.line_start <= line + 1]
        context = before[-1].heading if before else ""
        pulled = [
            replace(
                s,
                heading=HEADING_SEPARATOR.join(h for h in (context, s.heading) if h)[
                    :MAX_PATH_CHARS
                ],
                path=target,
            )
            for s in split_document(target, included)
        ]
        at = sections.index(before[-1]) + 1 if before else 0
        sections[at:at] = pulled
    return sections


# A redirect stub: a page whose whole text is a pointer elsewhere ("This document was moved to
# another location", GitLab's docs; "This page has moved", Hugo and MkDocs redirect pages; "See
# _build_.", a glossary entry that defers to another). Its link is rendered away already; what
# is left is the pointing sentence, which answers nothing. Only short pages are read (the
# patterns see at most MAX_STUB_CHARS), so a long page that mentions a move is never a stub, and
# a page that says one thing more (a second sentence after a "See ...") is not either.
MAX_STUB_CHARS = 300
_MOVED = regex.compile(
    r"\b(?:(?:was|were|is|are|has been|have been|now)\s(?:moved|relocated|migrated|merged)"
    r"|moved\s(?:permanently\s)?to|can now be found|now lives|(?:page|document) has moved"
    r"|redirect(?:s|ed|ing)?\sto)\b",
    regex.IGNORECASE,
)
_SEE = regex.compile(r"^(?:please\s)?see\b", regex.IGNORECASE)
_SENTENCE_END = regex.compile(r"[.!?](?:\s|$)")


def redirect_stub(sections: Sequence[Section]) -> bool:
    """Whether a document's passages are only a pointer to another page (see above)."""
    own = [s.body for s in sections if s.path is None]
    text = " ".join(" ".join(own).split())
    if not own or len(text) > MAX_STUB_CHARS:
        return False
    sentences = len(_SENTENCE_END.findall(text))
    if _MOVED.search(text) is not None and sentences <= 2:
        return True
    return _SEE.match(text) is not None and sentences <= 1


def _read_include(
    read: Reader, including: str, argument: str, from_root: bool
) -> tuple[str | None, str | None]:
    """The path and text an include names, or (None, None). A snippet (`from_root`) is looked
    for where its tools look: the repository root (pymdownx.snippets' default base path), the
    including file's folder, and the root again without leading `../` (a docs folder's
    relative path to a shared source folder)."""
    candidates = [include_path(including, argument)]
    if from_root:
        stripped = argument
        while stripped.startswith(("../", "./")):
            stripped = stripped.split("/", 1)[1]
        candidates = [include_path("", argument), candidates[0], include_path("", stripped)]
    for target in dict.fromkeys(c for c in candidates if c is not None):
        text = read(target)
        if text is not None:
            return target, text
    return None, None


def include_path(including: str, argument: str) -> str | None:
    """The repository path an include directive in `including` names, or None when it names
    none or one outside the repository. Relative paths are relative to the including file; a
    leading "/" is relative to the docs folder (Sphinx's source directory), taken to be the
    including file's top-level folder; docutils' `<standard>` includes name no file."""
    argument = argument.strip()
    if not argument or argument.startswith("<") or "\0" in argument or "\\" in argument:
        return None
    if argument.startswith("/"):
        base = including.split("/", 1)[0] if "/" in including else ""
        joined = posixpath.join(base, argument.lstrip("/"))
    else:
        joined = posixpath.join(posixpath.dirname(including), argument)
    normal = posixpath.normpath(joined)
    if normal in (".", "..") or normal.startswith(("../", "/")):
        return None
    return normal


def rendered_lines(path: str, text: str) -> list[str]:
    """The lines passages of this file are cut from: its source lines with generator markup
    rendered (`markup`), one for one, so passage line numbers stay the source's."""
    lines = _bounded_lines(text)
    name = path.rsplit("/", 1)[-1].lower()
    if name.endswith(MARKDOWN_SUFFIXES):
        src = "\n".join(lines[:MAX_PARSED_LINES]).replace("\r", " ")
        try:
            found = markdown.outline(src)
        except Exception:  # as in split_markdown: the file is then plain text
            return lines
        rendered = markup.render_markdown(lines, found.code, mdx=name.endswith(".mdx"))
        for start, end, _argument in found.includes:
            rendered[start:end] = [""] * (end - start)
        for line, _argument in found.snippets:
            rendered[line] = ""
        if found.description is not None:
            line, rendered[line] = found.description
            for k in range(line + 1, found.first_line):
                rendered[k] = ""
        return rendered
    if name.endswith(".rst"):
        return _render_rst(lines).lines
    return lines


def _render_rst(lines: list[str]) -> markup.RstMarkup:
    rendered = markup.render_rst(lines)
    for k in range(rst.header_end(lines)):  # header fields are metadata, not a passage
        rendered.lines[k] = ""
    return rendered


def split_markdown(
    text: str, includes: list[Include] | None = None, *, mdx: bool = False
) -> list[Section]:
    """Passages of a Markdown (or MDX) file: ATX and setext headings, front matter dropped (its
    `title:` heads the path), anchors as GitLab generates them (duplicates numbered -1, -2, ...)
    unless a heading sets its own (`{#id}`), generator markup rendered (`markup`), and a table
    cut across passages repeating its header row."""
    lines = _bounded_lines(text)
    # markdown-it treats a lone "\r" as a line break; a space keeps its line map aligned with ours.
    src = "\n".join(lines[:MAX_PARSED_LINES]).replace("\r", " ")
    try:
        found = markdown.outline(src)
    except Exception:  # a parser bug must cost one file its structure, never the whole index
        log.warning("markdown parser failed; splitting as plain text", exc_info=True)
        return split_plain(text)
    budget.check()
    tail = _paragraph_starts(lines, MAX_PARSED_LINES, len(lines))
    seen: dict[str, int] = {}
    anchors: list[str | None] = []
    variants: list[tuple[int, str]] = []  # the ids other generators give the same heading
    for start, _end, _level, heading in found.headings:
        explicit = found.anchors.get(start)
        slug = explicit or slugify(heading)
        if not slug:
            anchors.append(None)
            continue
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.append(f"{slug}-{count}" if count and not explicit else slug)
        if explicit is None and _SAME_SLUGS.fullmatch(heading):
            if count:  # every generator agrees on the slug; MkDocs numbers it with "_"
                variants.append((start, f"{slug}_{count}"))
        elif explicit is None:
            # For ASCII text MkDocs' rule gives GitLab's slug; it differs on folded letters.
            mkdocs = slug if heading.isascii() else mkdocs_slug(heading)
            for other, joiner in ((mkdocs, "_"), (github_slug(heading), "-")):
                name = f"{other}{joiner}{count}" if count else other
                if other and name != anchors[-1]:
                    variants.append((start, name))
    rendered = markup.render_markdown(lines, found.code, mdx=mdx)
    budget.check()
    for start, end, argument in found.includes:  # the directive shows the included file
        rendered[start:end] = [""] * (end - start)
        if includes is not None:
            includes.append((start, argument, False))
    for line, argument in found.snippets:  # so does a snippet line (or nothing)
        rendered[line] = ""
        if includes is not None and argument:
            includes.append((line, argument, True))
    block_starts = found.block_starts + tail
    first_line = found.first_line
    if found.description is not None:
        # A page's front matter summary is what the site shows under its title (and often the
        # only prose of a reference page): it opens the first passage, at its own line.
        first_line, rendered[first_line] = found.description
        for k in range(first_line + 1, found.first_line):
            rendered[k] = ""
    return _assemble(
        rendered,
        found.headings,
        block_starts,
        first_line,
        found.title,
        anchors,
        extra=variants,
        tables=found.tables,
        lead=first_line if found.description is not None else None,
    )


def split_rst(text: str, includes: list[Include] | None = None) -> list[Section]:
    """Passages of a reStructuredText file, by section titles; anchors as docutils ids (a
    repeated title gets the page's next `id<n>`, see `rst_ids`); `.. _label:` targets belong to
    the section or block they label; the title comes from PEP-style header fields or a `:title:`
    field when present."""
    lines = _bounded_lines(text)
    titles, block_starts = rst.outline(lines)
    budget.check()
    titles = [Heading(s, e, level, _rst_title(lines, s, e, t)) for s, e, level, t in titles]
    rendered = _render_rst(lines)
    budget.check()
    title = rst.document_title(lines) or implied_title(titles)
    if includes is not None:
        includes += [(line, argument, False) for line, argument in rendered.includes]
    headings, object_ids = _with_objects(titles, rendered.objects, rendered.lines)
    ids = rst_ids.assign(lines, [(start, end, text) for start, end, _level, text in titles])
    anchors: list[str | None] = []
    for index, (start, _end, _level, _heading) in enumerate(headings):
        if index in object_ids:
            anchors.append(object_ids[index])
            continue
        ident = ids.titles.get(start)
        anchors.append(ident if ident is not None and ids.placed(start, ident) else None)
    # A label directly above a title (blank lines and other labels between) names that section:
    # the section starts at the label, so the label never trails the section before it.
    starts = {start: index for index, (start, *_rest) in enumerate(headings)}
    moved: list[Heading] = list(headings)
    extra: list[tuple[int, str]] = []
    label_lines = {line for line, _ in rendered.labels}
    for line, label in rendered.labels:
        k = line + 1
        while k < len(lines) and (k in label_lines or not lines[k].strip()):
            k += 1
        target = starts.get(k)
        ident = ids.labels.get(line) or rst.docutils_id(label) or label.lower()
        if target is None:
            extra.append((line, ident))
            continue
        start, end, level, heading = moved[target]
        moved[target] = Heading(min(start, line), end, level, heading)
        extra.append((k, ident))
    extra += [(line, "term-" + (rst.docutils_id(term) or term)) for line, term in rendered.terms]
    extra += [(line, ident) for line, ident in ids.others if ids.placed(line, ident)]
    tables = rst.tables(lines)
    return _assemble(
        rendered.lines, moved, block_starts, 0, title, anchors, extra=extra, tables=tables
    )


def _rst_title(lines: list[str], start: int, end: int, text: str) -> str:
    """A reST title's text with its roles shown as text (`:ref:`Text <target>`` -> "Text"),
    which the title scanner, knowing no roles, leaves with their target."""
    raw = lines[start + 1] if end - start == 3 else lines[start]
    if "`" not in raw:
        return text
    return rst.title_text(markup.render_roles(raw.strip()))


def implied_title(headings: Sequence[Heading]) -> str | None:
    """With no title field, a first heading that every other heading is under is the document's
    title (docutils' rule), so passages of its sections carry it whatever their level."""
    if headings and all(h[2] > headings[0][2] for h in headings[1:]):
        return headings[0][3]
    return None


def _with_objects(
    titles: list[Heading],
    objects: list[tuple[int, int, int, int, str, str]],
    lines: list[str],
) -> tuple[list[Heading], dict[int, str | None]]:
    """Section titles with Sphinx object descriptions (`markup.RstMarkup.objects`) made into
    sections one level under the section or object holding them, and the ids of those (by
    index). Text after an object's block, before the next title or object, goes back to the
    section holding it: a heading of no lines with that section's level and text resumes it."""
    merged: list[Heading] = []
    ids: dict[int, str | None] = {}
    # (first line, 0 for a title or 1 for an object, its index in its list), in document order
    events = sorted(
        [(t[0], 0, k) for k, t in enumerate(titles)] + [(o[0], 1, k) for k, o in enumerate(objects)]
    )
    parents: list[tuple[int, int, str]] = []  # (block end, level, text) of objects still open
    section: tuple[int, str] | None = None  # the title above, as (level, text)
    for index, (_line, is_object, at) in enumerate(events):
        following = events[index + 1][0] if index + 1 < len(events) else len(lines)
        if not is_object:
            parents = []
            section = (titles[at][2], titles[at][3])
            merged.append(titles[at])
            continue
        line, signature_end, end, _indent, directive, names = objects[at]
        parents = [p for p in parents if p[0] > line]
        level = (parents[-1][1] if parents else section[0] if section else 0) + 1
        ids[len(merged)] = _object_id(directive, names)
        merged.append(Heading(line, signature_end, level, names[:MAX_HEADING_CHARS]))
        parents.append((end, level, names[:MAX_HEADING_CHARS]))
        # Where text goes on after this block, before the next event, it is its holders' again:
        # the innermost open object's up to that one's end, and so on out to the section.
        at = end
        outer = (following, *section) if section else (following, 0, "")
        for holder_end, holder_level, holder_text in [*reversed(parents[:-1]), outer]:
            if holder_end <= at or at >= following:
                continue
            stop = min(holder_end, following)
            if holder_text and any(lines[k].strip() for k in range(at, stop)):
                ids[len(merged)] = None
                merged.append(Heading(at, at, holder_level, holder_text))
            at = holder_end
    return merged, ids


def _object_id(directive: str, names: str) -> str | None:
    """The id Sphinx gives a `confval` or `envvar` entry (`confval-project`); None for others,
    whose ids need the current module or program."""
    kind = directive.rsplit(":", 1)[-1]
    first = names.split(",", 1)[0].strip()
    return f"{kind}-{first}" if kind in ("confval", "envvar") and first else None


def split_plain(text: str) -> list[Section]:
    """Passages of a plain-text file: paragraphs grouped up to the bound, heading ""."""
    lines = _bounded_lines(text)
    return _assemble(lines, [], _paragraph_starts(lines, 0, len(lines)), 0, None, [])


def slugify(heading: str) -> str:
    """The anchor GitLab gives a Markdown heading (docs.gitlab.com, "Heading IDs and links"):
    lowercase; every character that is not a letter, mark, digit, underscore, hyphen or space
    removed; spaces become hyphens; runs of hyphens become one. "Rotating keys (v2.1)" ->
    "rotating-keys-v21". Duplicates in one document get -1, -2 (see `split_markdown`).

    MkDocs' default slug (Python-Markdown's toc) is the same rule after folding the heading to
    ASCII, so the two agree except on non-ASCII letters ("Café" is "café" here, "cafe" there).
    """
    slug = _GITLAB_NON_WORD.sub("", heading.lower()).replace(" ", "-")
    return str(_HYPHENS.sub("-", slug))  # str(): the regex package has no type stubs


def mkdocs_slug(heading: str) -> str:
    """The id MkDocs gives a heading (Python-Markdown's toc `slugify`): folded to ASCII, every
    character that is not a word character, space or hyphen removed, runs of spaces and hyphens
    one hyphen. Duplicates get _1, _2."""
    folded = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return str(_MKDOCS_SPACES.sub("-", _MKDOCS_DROP.sub("", folded).strip().lower()))


def github_slug(heading: str) -> str:
    """The id Hugo (goldmark's "github" ids) and Docusaurus (github-slugger) give a heading:
    GitLab's rule without merging runs of hyphens ("A -- B" is "a----b")."""
    return str(_GITLAB_NON_WORD.sub("", heading.lower())).replace(" ", "-")


def window(
    text: str,
    lines: tuple[int, int] | None,
    *,
    context: int = 20,
    max_chars: int = MAX_PASSAGE_CHARS,
) -> Section:
    """A passage of a (code) file: the cited lines plus up to `context` lines either side as far
    as `max_chars` allows, or the file's opening when `lines` is None. Out-of-range lines are
    clamped to the file. When the cited lines alone exceed `max_chars`, the passage is their
    first lines that fit (a single huge line is cut). The heading is "" (the caller names it)."""
    src = source_lines(text)
    limit = max(1, max_chars)
    prefix = _prefix(src)
    if lines is None:
        first = last = 0
        extra = len(src)
    else:
        first, last = sorted(max(1, min(n, len(src))) - 1 for n in lines)
        extra = max(0, context)
    cited = first
    if _size(prefix, first, last + 1) > limit:
        last = first
        while last + 1 < len(src) and _size(prefix, first, last + 2) <= limit:
            last += 1
    else:
        for _ in range(extra):
            grew = False
            if first > 0 and _size(prefix, first - 1, last + 1) <= limit:
                first, grew = first - 1, True
            if last + 1 < len(src) and _size(prefix, first, last + 2) <= limit:
                last, grew = last + 1, True
            if not grew:
                break
    # Blank lines at the edges carry nothing (a passage never starts or ends with one).
    while first < last and _blank(src[first]):
        first += 1
    while last > first and _blank(src[last]):
        last -= 1
    body = "\n".join(src[first : last + 1])[:limit]
    if not body.strip():  # nothing but blank lines: an empty passage at the first cited line
        return Section("", "", cited + 1, cited + 1, None)
    return Section("", body, first + 1, last + 1, None)


def _bounded_lines(text: str) -> list[str]:
    if len(text) > MAX_DOCUMENT_CHARS:
        log.info("document of %d characters split up to %d only", len(text), MAX_DOCUMENT_CHARS)
        text = text[:MAX_DOCUMENT_CHARS]
    return source_lines(text)


def _blank(line: str) -> bool:
    return not line.strip()


def _prefix(lines: Sequence[str]) -> list[int]:
    """prefix[i] is the length of lines[:i] joined by "\\n", plus one; sizes are then O(1)."""
    return [0, *accumulate(len(line) + 1 for line in lines)]


def _size(prefix: list[int], start: int, end: int) -> int:
    """Characters in "\\n".join(lines[start:end])."""
    return max(0, prefix[end] - prefix[start] - 1)


def _paragraph_starts(lines: Sequence[str], start: int, end: int) -> list[int]:
    """Lines in [start, end) that begin a paragraph: not blank, after a blank line."""
    return [
        i
        for i in range(start, end)
        if not _blank(lines[i]) and (i == start or _blank(lines[i - 1]))
    ]


def _assemble(
    lines: list[str],
    headings: Sequence[Heading],
    block_starts: Sequence[int],
    first_line: int,
    title: str | None,
    anchors: Sequence[str | None],
    *,
    extra: Sequence[tuple[int, str]] = (),
    tables: Sequence[Table] = (),
    lead: int | None = None,
) -> list[Section]:
    """Sections from an outline: one region per heading (and one before the first), each cut
    into pieces that fit the bound. `headings` are (start, end, level, text), 0-based, end
    exclusive, in order, and `anchors` their ids; `block_starts` are the lines where cutting is
    gentlest; `extra` are (line, id) anchors of the section holding that line; `tables` are
    (start, end, body start): a piece that starts inside a table's body repeats its header (the
    lines from its start to its body); `lead` is a line that opens the first passage with text
    (a page's summary) when nothing else comes before the first heading."""
    prefix = _prefix(lines)
    boundaries = sorted(set(block_starts))
    ordered: list[tuple[int, int, int, str, str | None]] = []
    for heading, anchor in zip(headings, anchors, strict=False):
        # defensive: a malformed outline must not make lines overlap
        # (a heading of no lines resumes the section it repeats: see `_with_objects`)
        if heading[0] >= (ordered[-1][1] if ordered else first_line) and heading[1] >= heading[0]:
            ordered.append((*heading, anchor))
    if not title:
        title = implied_title([Heading(*h[:4]) for h in ordered])
    stack: list[tuple[int, str]] = [(0, _clip(title))] if title else []
    regions: list[Region] = [
        (first_line, ordered[0][0] if ordered else len(lines), None, _path(stack), None)
    ]
    for index, (start, end, level, text, anchor) in enumerate(ordered):
        text = _clip(text)
        while stack and stack[-1][0] >= level:
            stack.pop()
        # An h1 repeating the title, or the first heading, is the title itself.
        if not (stack == [(0, text)] and (level == 1 or index == 0)):
            stack.append((level, text))
        body_end = ordered[index + 1][0] if index + 1 < len(ordered) else len(lines)
        regions.append((end, body_end, start, _path(stack), anchor))
    if lead is not None:
        lines, regions = _lead_into(lines, regions, lead)
        prefix = _prefix(lines)
    extra_lines = sorted(extra)

    sections: list[Section] = []
    pending: list[str] = []  # ids of headings with no text yet: they land on the next passage
    for body_start, body_end, heading_line, path, anchor in regions:
        budget.check()
        region_start = body_start if heading_line is None else heading_line
        here = extra_lines[
            bisect_left(extra_lines, (region_start, "")) : bisect_left(extra_lines, (body_end, ""))
        ]
        header = _table_header(lines, tables, body_start, body_end)
        limit = MAX_PASSAGE_CHARS - len(header) - 1 if header else MAX_PASSAGE_CHARS
        pieces = _cover(lines, prefix, boundaries, body_start, body_end, limit)
        if not pieces:
            pending = [*pending, *(i for _, i in here), *([anchor] if anchor else [])]
            continue
        for number, (first, last, body) in enumerate(pieces):
            line_start = heading_line if number == 0 and heading_line is not None else first
            table = _table_of_row(tables, first)
            if header and table is not None:
                body = f"{_lines_header(lines, table)}\n{body}"
            # An id lands on the piece holding its line (a label above a block: the next piece).
            after = pieces[number - 1][1] if number else -1
            until = last if number < len(pieces) - 1 else body_end
            ids = (pending if number == 0 else []) + [i for n, i in here if after < n <= until]
            pending = []
            aliases = tuple(dict.fromkeys(ids))
            sections.append(Section(path, body, line_start + 1, last + 1, anchor, aliases))
    return sections


def _lead_into(
    lines: list[str], regions: list[Region], lead: int
) -> tuple[list[str], list[Region]]:
    """Regions where a lone `lead` line before the first heading opens the first region with
    text instead of making a one-line passage of its own: that region then starts at the lead
    line, and the heading lines in between show nothing (they are in its heading path)."""
    body_start, body_end = regions[0][0], regions[0][1]
    if body_start != lead or any(not _blank(lines[k]) for k in range(lead + 1, body_end)):
        return lines, regions
    for index in range(1, len(regions)):
        start, end, heading_line, path, anchor = regions[index]
        if all(_blank(lines[k]) for k in range(start, end)):
            continue
        merged = list(lines)
        for _start, _end, line, _path, _anchor in regions[1 : index + 1]:
            for k in range(line if line is not None else _start, _start):
                merged[k] = ""
        moved = list(regions)
        moved[0] = (lead, lead, None, regions[0][3], None)
        moved[index] = (lead, end, lead, path, anchor)
        return merged, moved
    return lines, regions


def _table_header(lines: list[str], tables: Sequence[Table], start: int, end: int) -> str:
    """The longest header (with its rule) of the tables with a body in [start, end)."""
    inside = tables[bisect_left(tables, (start, 0, 0)) : bisect_left(tables, (end, 0, 0))]
    headers = [_lines_header(lines, table) for table in inside if table[1] > table[2]]
    header = max(headers, key=len, default="")
    return header if len(header) <= MAX_TABLE_HEADER_CHARS else ""  # too big to repeat


def _lines_header(lines: list[str], table: Table) -> str:
    return "\n".join(lines[table[0] : table[2]]).rstrip("\n \t")


def _table_of_row(tables: Sequence[Table], line: int) -> Table | None:
    """The table whose body (past its header) holds `line`."""
    index = bisect_right(tables, (line, 1 << 62, 1 << 62)) - 1  # the last starting at or before
    if index >= 0 and tables[index][2] <= line < tables[index][1]:
        return tables[index]
    return None


def _clip(text: str | None) -> str:
    return (text or "")[:MAX_HEADING_CHARS]


def _path(stack: list[tuple[int, str]]) -> str:
    return HEADING_SEPARATOR.join(text for _, text in stack if text)[:MAX_PATH_CHARS]


def _cover(
    lines: list[str],
    prefix: list[int],
    boundaries: list[int],
    start: int,
    end: int,
    limit: int,
) -> list[tuple[int, int, str]]:
    """Pieces (first line, last line, text), 0-based and inclusive, covering the non-blank
    lines of [start, end) in order, each at most `limit` characters."""
    while start < end and _blank(lines[start]):
        start += 1
    while end > start and _blank(lines[end - 1]):
        end -= 1
    pieces: list[tuple[int, int, str]] = []
    if start < end:
        _pack(lines, prefix, boundaries, start, end, 0, limit, pieces)
    return pieces


def _pack(
    lines: list[str],
    prefix: list[int],
    boundaries: list[int],
    start: int,
    end: int,
    depth: int,
    limit: int,
    pieces: list[tuple[int, int, str]],
) -> None:
    """Greedily group the units of [start, end) (trimmed) into pieces; a unit too big alone is
    packed again with finer units. Depth 0: top-level blocks; 1: paragraphs; 2: lines; 3: a
    single line cut into `limit`-character slices."""
    if depth == 3:
        line = lines[start]
        for offset in range(0, len(line), limit):
            piece = line[offset : offset + limit]
            if piece.strip():  # a slice of a long run of spaces would be a passage of nothing
                pieces.append((start, start, piece))
        return
    if depth == 0:
        cuts = _between(boundaries, start, end)
    elif depth == 1:
        cuts = _paragraph_starts(lines, start, end)
    else:
        cuts = list(range(start, end))
    units = _units(lines, [start, *cuts, end])
    group: tuple[int, int] | None = None
    for unit_start, unit_end in units:
        if group is not None and _size(prefix, group[0], unit_end) <= limit:
            group = (group[0], unit_end)
            continue
        if group is not None:
            pieces.append(_piece(lines, *group))
            group = None
        if _size(prefix, unit_start, unit_end) <= limit:
            group = (unit_start, unit_end)
        else:
            _pack(lines, prefix, boundaries, unit_start, unit_end, depth + 1, limit, pieces)
    if group is not None:
        pieces.append(_piece(lines, *group))


def _between(boundaries: list[int], start: int, end: int) -> list[int]:
    """Boundaries strictly inside (start, end), from a sorted list, by bisection."""
    return boundaries[bisect_right(boundaries, start) : bisect_left(boundaries, end)]


def _units(lines: list[str], cuts: list[int]) -> list[tuple[int, int]]:
    """Consecutive [a, b) spans between sorted cut points, trimmed of blank lines at both ends,
    empty spans left out."""
    units: list[tuple[int, int]] = []
    for a, b in zip(cuts, cuts[1:], strict=False):
        while a < b and _blank(lines[a]):
            a += 1
        while b > a and _blank(lines[b - 1]):
            b -= 1
        if a < b:
            units.append((a, b))
    return units


def _piece(lines: list[str], start: int, end: int) -> tuple[int, int, str]:
    return start, end - 1, collapse_blank_lines("\n".join(lines[start:end]))


def collapse_blank_lines(text: str) -> str:
    """Runs of blank lines as one: rendered-away markup leaves blank lines that carry nothing."""
    if "\n\n\n" in text or " \n" in text or "\t\n" in text:  # a run needs one of these
        return str(_BLANK_RUN.sub("\n\n", text))
    return text
