"""Short forms in issue text: ``!12``, ``project!12``, ``group/project@sha``, bare shas, bare
repository paths, and relative Markdown link targets.

Main rule: a short form counts only as a whole token. It must start the text or follow
whitespace, an opening bracket, a quote, a backtick, ``<``, ``>``, ``,``, ``;``, ``*`` or ``|``,
and end the text or be followed by whitespace, a closing bracket, a quote, a backtick, ``,``,
``;``, ``*``, ``|``, or a ``.``, ``:``, ``!``, ``?`` that ends the sentence. So ``\\!12`` (escaped),
``@abc1234`` (a user), ``#abc1234``, ``a..b`` ranges, ``/etc/passwd`` and the inside of URLs (the
caller blanks those first) never count. Short forms need the issue's project; without it they
are counted as ``no_project`` and dropped.
"""

from __future__ import annotations

import regex

from signposts.extract_norm import (
    clean_path,
    make_lines,
    parse_iid,
    parse_lines,
    resolve_project,
)
from signposts.references import Reference, commit_ref, file_ref, merge_request_ref

_BEFORE = r"(?<![^\s(\[{\"'`<>,;*|])"
# An ellipsis ends a sentence too (``!12...``), unless a range goes on after it (``a...b``).
_AFTER = r"(?=[\s)\]}\"'`>,;*|]|\.{2,3}+(?![\w./])|\u2026|[.:!?](?![\w./])|$)"
# References (not paths) may also sit inside ``_emphasis_`` and ``~~strike~~``: GitLab links
# them there, since emphasis markers are Markdown, not part of the text.
_BEFORE_REF = (
    r"(?:(?<![^\s(\[{\"'`<>,;*|])"
    r"|(?<=(?:^|[\s(\[{\"'`<>,;*|])(?:__?|~~)))"  # only an opening marker: not snake_case_abc1234
)
_AFTER_REF = (
    r"(?=[\s)\]}\"'`>,;*|]|(?:__?|~~)(?:[\s)\]}\"'`>,;*|.:!?]|$)"
    r"|\.{2,3}+(?![\w./])|\u2026|[.:!?](?![\w./])|$)"
)
_SEGMENT = r"[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}+"
_PROJECT = rf"{_SEGMENT}(?:/{_SEGMENT}){{0,20}}+"
# In a reference, a leading ``_`` opens emphasis (``_group/project!3_``), so the first segment
# of its project does not start with one (GitLab allows it; top-level groups rarely do).
_PROJECT_REF = rf"[A-Za-z0-9.][A-Za-z0-9_.-]{{0,254}}+(?:/{_SEGMENT}){{0,20}}+"

MERGE_REQUEST_RE = regex.compile(
    rf"{_BEFORE_REF}(?P<project>{_PROJECT_REF})?!(?P<iid>[0-9]{{1,10}}+)(?:\+s?)?{_AFTER_REF}"
)
COMMIT_RE = regex.compile(
    rf"{_BEFORE_REF}(?P<project>{_PROJECT_REF})@(?P<sha>[0-9a-fA-F]{{7,64}}+){_AFTER_REF}"
)
BARE_SHA_RE = regex.compile(rf"{_BEFORE_REF}(?P<sha>[0-9a-fA-F]{{7,64}}+){_AFTER_REF}")
# A Markdown link target that is a GitLab reference rather than a path: GitLab links
# ``[text](!1)`` to the merge request and ``[text](<sha>)`` to the commit, and ``#4``, ``$5``,
# ``&6``, ``%m``, ``~l``, ``@u``, ``^7`` (issue, snippet, epic, milestone, label, user, alert) and
# ranges ``a...b`` to things Scout never follows, so such a target is never read as a file.
_LINKED_MR = regex.compile(rf"(?P<project>{_PROJECT})?!(?P<iid>[0-9]{{1,10}}+)(?:\+s?)?")
_LINKED_COMMIT = regex.compile(rf"(?:(?P<project>{_PROJECT})@)?(?P<sha>[0-9a-fA-F]{{7,64}}+)")
_LINKED_OTHER = regex.compile(
    rf"(?:{_PROJECT})?[#$&^][0-9]{{1,10}}|[%~@^][^\s]{{0,256}}"
    rf"|(?:(?:{_PROJECT})@)?[0-9A-Za-z_./-]{{1,256}}?\.{{2,3}}[0-9A-Za-z_./-]{{1,256}}"
)
BARE_PATH_RE = regex.compile(
    # the lookahead rejects, inside the engine, tokens with neither a slash nor a dot+letter
    rf"{_BEFORE}(?=[A-Za-z0-9_.+-]{{0,255}}?(?:/|\.[A-Za-z]))"
    r"(?P<path>[A-Za-z0-9_.+-]{1,255}+(?:/[A-Za-z0-9_.+-]{1,255}+){0,64}+)"
    r"(?::(?P<a>[0-9]{1,9}+)(?:-(?P<b>[0-9]{1,9}+))?"
    r"|#L(?P<c>[0-9]{1,9}+)(?:-L?(?P<d>[0-9]{1,9}+))?"
    r"|#[A-Za-z][A-Za-z0-9_-]{0,100}+)?"
    rf"{_AFTER}"
)
_HAS_DIGIT = regex.compile(r"[0-9]")
_HAS_LETTER = regex.compile(r"[a-fA-F]")
_EXTENSION = regex.compile(r"\.([A-Za-z][A-Za-z0-9]{0,15})$")
# A first segment shaped like a host name (``docs.acme.example/x.md``) is a schemeless URL.
_HOSTLIKE = regex.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,63}")

# Without a slash, a bare word is a file only with one of these extensions (docs and code),
# so ``e.g.``, ``v1.2`` or ``image.jpg`` are not files.
DOC_CODE_EXTENSIONS = frozenset(
    """md markdown mdx rst txt adoc asciidoc org py pyi js mjs cjs ts tsx jsx go rb rs java kt
    kts scala c h cc cpp cxx hpp cs php sh bash zsh ps1 sql toml yaml yml json jsonc ini cfg conf
    xml html htm css scss tf tfvars hcl gradle proto graphql mk cmake ipynb lua pl swift ex exs
    erl vue svelte dart r jl nix j2 jinja tpl lock""".split()
)
# With a slash, a last segment without any extension counts only if it is one of these.
EXTENSIONLESS_FILES = frozenset(
    """Makefile Dockerfile Containerfile Jenkinsfile Gemfile Rakefile Procfile Vagrantfile
    Brewfile Justfile LICENSE LICENCE README CHANGELOG CODEOWNERS NOTICE AUTHORS CONTRIBUTING
    VERSION COPYING""".split()
)


def merge_request(match: regex.Match[str], own: str | None) -> Reference | None:
    project = resolve_project(match.group("project"), own)
    iid = parse_iid(match.group("iid"))
    if project is None or iid is None:
        return None
    return merge_request_ref(project, iid)


def commit(match: regex.Match[str], own: str | None) -> Reference | None:
    project = resolve_project(match.group("project"), own)
    return commit_ref(project, match.group("sha")) if project is not None else None


def bare_sha(match: regex.Match[str], own: str | None) -> Reference | None:
    """A bare hex word mixing digits and letters, in the issue's own project."""
    sha = match.group("sha")
    if own is None or not (_HAS_DIGIT.search(sha) and _HAS_LETTER.search(sha)):
        return None
    return commit_ref(own, sha) if resolve_project(None, own) else None


def bare_path(match: regex.Match[str], own: str | None) -> Reference | None:
    """A repository path in the issue's project: with a slash, its last segment must look like a
    file (an extension, or a name like ``Makefile``); without one, it needs a docs or code
    extension. Host-like first segments (schemeless URLs) do not count."""
    raw = match.group("path")
    if match.group("a") is None and match.group("c") is None:
        raw = raw.rstrip(".")
    path = clean_path(raw)
    if path is None or own is None or resolve_project(None, own) is None:
        return None
    segments = path.split("/")
    if any(s.endswith(".") for s in segments):
        return None
    if not _looks_like_file(segments, slash="/" in raw):
        return None
    if match.group("a") is not None:
        lines = make_lines(match.group("a"), match.group("b"))
    elif match.group("c") is not None:
        lines = make_lines(match.group("c"), match.group("d"))
    else:
        lines = None
    return file_ref(own, path, lines)


def _looks_like_file(segments: list[str], *, slash: bool) -> bool:
    last = segments[-1]
    extension = _EXTENSION.search(last)
    if len(segments) == 1 and not slash:
        return extension is not None and extension.group(1).lower() in DOC_CODE_EXTENSIONS
    if len(segments) > 1 and _schemeless_url("/".join(segments)):
        return False
    return extension is not None or last in EXTENSIONLESS_FILES


def linked_reference(target: str, own: str | None) -> tuple[bool, Reference | None]:
    """(whether a link target is written as a GitLab reference, the reference it yields)."""
    if (mr := _LINKED_MR.fullmatch(target)) is not None:
        return True, merge_request(mr, own)
    if (sha := _LINKED_COMMIT.fullmatch(target)) is not None:
        if sha.group("project") is not None:
            return True, commit(sha, own)
        found = bare_sha(sha, own)
        if found is not None:
            return True, found
    if _LINKED_OTHER.fullmatch(target) is not None:
        return True, None
    return False, None


def relative_link(target: str, own: str | None) -> Reference | None:
    """A relative Markdown link target (``docs/setup.md#L13``) in the issue's project. Targets
    starting with ``/`` are dropped: GitLab reads them against the repository in some places and
    the host in others, and Scout does not guess. A target ending in ``/`` is a folder, no file
    (``relative_folder``)."""
    if own is None or resolve_project(None, own) is None:
        return None
    if target.startswith(("/", "#", "~", "\\", "?")) or not target:
        return None
    rest, _, fragment = target.partition("#")
    rest = rest.partition("?")[0]
    if rest.endswith("/"):
        return None
    path = clean_path(rest)
    if path is None or _schemeless_url(path):
        return None
    lines = parse_lines(fragment) if fragment else None
    return file_ref(own, path, lines)


def relative_folder(target: str, own: str) -> bool:
    """Whether a relative Markdown link target names a folder of the issue's project
    (``docs/runbooks/``): no signpost, dropped as ``folder``."""
    rest = target.partition("#")[0].partition("?")[0]
    if not rest.endswith("/") or target.startswith(("/", "#", "~", "\\", "?")):
        return False
    path = clean_path(rest)
    return path is not None and not _schemeless_url(path) and relative_link(path, own) is not None


def _schemeless_url(path: str) -> bool:
    """``example.com`` or ``docs.acme.example/x``: a URL written without its scheme."""
    first, slash, _ = path.partition("/")
    if not _HOSTLIKE.fullmatch(first):
        return False
    extension = _EXTENSION.search(first)
    return bool(slash) or extension is None or extension.group(1).lower() not in DOC_CODE_EXTENSIONS
