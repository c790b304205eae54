"""Which reference a URL yields: only URLs on a configured host, on a route that names a file,
commit, merge request or docs page.

Main rule: a URL yields a reference only when its scheme, host and port are exactly those of the
configured GitLab URL (``forge.web_url``, else ``forge.url``), one of its other names (the API's
``forge.url`` behind a public ``web_url``, ``forge.aliases``: read as on the main one, so a
reference is the same whichever name it was written with) or a docs site (and its path is below
that site's root). A URL shaped like a GitLab reference (``/-/blob/``, ``/-/raw/``, ``/-/tree/``,
``/-/commit/``, ``/-/merge_requests/``) on any other host is reported (``other_host``): it is
dropped all the same, but an operator who forgot an alias can see it. Anything else
(other hosts, look-alike hosts, user info, other ports, other schemes, issue and wiki routes,
paths that climb out of their root, control or format characters) yields nothing. Where a URL
ends in text is ``extract_scan``'s business.

A URL shown as its own text (a bare URL, an ``<autolink>``) names a merge request or commit from
its start, as GitLab reads it (``AbstractReferenceFilter#call``: ``link == text && text =~
link_pattern_start``): ``.../merge_requests/12(the fix)`` is ``!12`` followed by text. A Markdown
link target must be the reference whole (``link_pattern_anchor``). A link to a folder (a tree URL,
a blob URL ending in ``/``) is no signpost (docs/design.md): ``folder_link`` tells the caller,
which drops it as ``folder``.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from scout.forge.base import lines_fragment
from scout.verdict import Kind
from signposts.extract_norm import (
    ascii_lower,
    clean_segments,
    decode,
    encode,
    is_sha,
    parse_iid,
    parse_lines,
    valid_project_path,
)
from signposts.references import (
    DocsSite,
    ExtractContext,
    Reference,
    commit_ref,
    merge_request_ref,
)

_PORT = regex.compile(r"[0-9]{1,5}")
_UNSAFE = regex.compile(r"[\s\p{Z}\p{Cc}\p{Cf}\\]")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_FILE_ROUTES = ("blob", "raw", "blame")
# ``tree`` too: GitLab reserves these words as project names, so none of them is a project's.
_LEGACY_ROUTES = frozenset(("blob", "raw", "blame", "tree", "commit", "merge_requests"))
# A route's sub-path segment as GitLab's link patterns accept it (``(/[a-z0-9_=-]+)*``).
_SUB_PATH = regex.compile(r"[a-z0-9_=-]{1,64}")
_MR_FORMAT = regex.compile(r"\+s?$")
# What GitLab's link patterns read at the start of a shown URL's id segment (Referable's
# ``merge_requests/(?<merge_request>\d+)``, Commit's ``commit/(?<commit>\h{7,40})``): one past
# the longest valid id, so a longer run is refused rather than cut.
_LEADING_IID = regex.compile(r"[0-9]{1,11}")
_LEADING_SHA = regex.compile(r"[0-9a-fA-F]{7,65}")


@dataclass(frozen=True)
class Origin:
    """A configured site: exact scheme, host and port, and the path segments it lives under."""

    scheme: str
    host: str
    port: int
    prefix: tuple[str, ...]

    @property
    def host_url(self) -> str:
        """Scheme, host and port: what a site-relative link (``/group/project/...``) is read on."""
        port = "" if _DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}"

    @property
    def base(self) -> str:
        """The normalised URL of the site root, without a trailing slash."""
        port = "" if _DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        path = "".join("/" + encode(s) for s in self.prefix)
        return f"{self.scheme}://{self.host}{port}{path}"


@dataclass(frozen=True)
class Sites:
    """The parsed configuration: the GitLab origin and the docs sites, longest prefix first."""

    gitlab: Origin | None
    docs: tuple[tuple[Origin, DocsSite], ...]
    aliases: tuple[Origin, ...] = ()

    def known(self, parts: SplitUrl) -> bool:
        """Whether a URL is on a configured host at all (GitLab under any name, a docs site)."""
        origins = [self.gitlab, *self.aliases, *(o for o, _ in self.docs)]
        return any(
            (parts.scheme, parts.host, parts.port) == (o.scheme, o.host, o.port)
            for o in origins
            if o is not None
        )


@dataclass(frozen=True)
class SplitUrl:
    scheme: str
    host: str
    port: int
    segments: list[str]  # decoded path segments, empty ones kept
    query: str
    fragment: str | None


def split_url(url: str) -> SplitUrl | None:
    """Split and decode an http(s) URL; None for any other scheme, user info, a bad port or host,
    bad percent-encoding, or whitespace/control/format characters anywhere."""
    if _UNSAFE.search(url):
        return None
    scheme, sep, rest = url.partition("://")
    scheme = ascii_lower(scheme)
    if not sep or scheme not in _DEFAULT_PORTS:
        return None
    cut = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    authority, rest = rest[:cut], rest[cut:]
    rest, hash_sign, fragment = rest.partition("#")
    path, _, query = rest.partition("?")
    if "@" in authority or "%" in authority or "[" in authority:
        return None
    host, colon, port_text = authority.partition(":")
    if colon:
        if not _PORT.fullmatch(port_text):
            return None
        port = int(port_text)
    else:
        port = _DEFAULT_PORTS[scheme]
    host = ascii_lower(host)
    decoded = decode(path)
    if not host or decoded is None:
        return None
    segments = decoded.split("/")[1:]
    return SplitUrl(scheme, host, port, segments, query, fragment if hash_sign else None)


def parse_origin(url: str) -> Origin | None:
    parts = split_url(url)
    if parts is None:
        return None
    prefix = clean_segments(parts.segments)
    if prefix is None:
        return None
    return Origin(parts.scheme, parts.host, parts.port, tuple(prefix))


def sites_for(ctx: ExtractContext) -> Sites:
    """Parse the configured URLs once per issue; a site whose URL does not parse matches nothing."""
    docs = [(o, s) for s in ctx.docs_sites if (o := parse_origin(s.url)) is not None]
    docs.sort(key=lambda pair: -len(pair[0].prefix))
    aliases = tuple(o for url in ctx.aliases if (o := parse_origin(url)) is not None)
    return Sites(parse_origin(ctx.gitlab_url), tuple(docs), aliases)


def _under(parts: SplitUrl, origin: Origin) -> list[str] | None:
    """The raw segments below ``origin``'s root, or None if ``parts`` is not on that site."""
    if (parts.scheme, parts.host, parts.port) != (origin.scheme, origin.host, origin.port):
        return None
    segments = [s for s in parts.segments if s != ""]
    n = len(origin.prefix)
    if tuple(segments[:n]) != origin.prefix:
        return None
    return segments[n:]


def reference_from_url(
    url: str, ctx: ExtractContext, sites: Sites, *, shown: bool = False
) -> Reference | None:
    """The reference an exact http(s) URL yields on a configured site, or None. ``shown``: the
    URL is its own link text (bare or autolinked), so a merge request or commit is read from the
    start of its id segment and what follows is text."""
    parts = split_url(url)
    if parts is None:
        return None
    for origin, site in sites.docs:
        below = _under(parts, origin)
        if below is not None:
            return _docs_page(parts, below, origin, site)
    if sites.gitlab is not None:
        for origin in (sites.gitlab, *sites.aliases):
            below = _under(parts, origin)
            if below is not None:
                # written on the main name: the same file is one reference whatever host it had
                return _gitlab(parts, below, sites.gitlab, shown)
    return None


_GITLAB_SHAPED = frozenset(("blob", "raw", "tree", "commit", "merge_requests"))


def other_host(url: str, sites: Sites) -> bool:
    """Whether ``url`` looks like a GitLab reference (``/-/blob/`` and the like) on a host that is
    none of this GitLab's names and no docs site: dropped, and counted as ``other_host``."""
    parts = split_url(url)
    if parts is None or sites.known(parts):
        return False
    segments = parts.segments
    return any(
        segments[i] == "-" and segments[i + 1] in _GITLAB_SHAPED
        for i in range(1, len(segments) - 1)
    )


def _docs_page(
    parts: SplitUrl, below: list[str], origin: Origin, site: DocsSite
) -> Reference | None:
    cleaned = clean_segments(below)
    if cleaned is None:
        return None
    page = "/".join(cleaned)
    if page and parts.segments and parts.segments[-1] == "":
        page += "/"
    anchor = decode(parts.fragment) if parts.fragment else None
    if parts.fragment and anchor is None:
        return None
    url = origin.base + "/" + encode(page) + ("#" + encode(anchor) if anchor else "")
    return Reference(
        kind=Kind.DOCS_PAGE,
        reference=url,
        project=site.project,
        path=page,
        lines=None,
        sha=None,
        iid=None,
        url=url,
        anchor=anchor or None,
        docs_site=site.url,
    )


def _route(segments: list[str]) -> tuple[str, str, list[str]] | None:
    """(project, route, the segments after it) of a GitLab URL's path, or None."""
    if "-" in segments:
        i = segments.index("-")
        route, rest = (segments[i + 1], segments[i + 2 :]) if i + 1 < len(segments) else ("", [])
    else:  # the legacy routes without ``/-/`` still work on GitLab
        i = next((k for k, s in enumerate(segments) if k >= 2 and s in _LEGACY_ROUTES), -1)
        if i < 0:
            return None
        route, rest = segments[i], segments[i + 1 :]
    project = "/".join(segments[:i])
    if not valid_project_path(project) or segments[0] == "groups":
        return None
    return project, route, rest


def folder_link(url: str, sites: Sites) -> bool:
    """Whether ``url`` on this GitLab links a folder: a tree route (``/-/tree/<ref>/<dir>``, also
    the legacy ``/tree/``), or a blob or raw route ending in ``/`` (GitLab sends that to the
    tree). A folder is no signpost: the caller drops it as ``folder``."""
    parts = split_url(url)
    if parts is None or sites.gitlab is None:
        return False
    for origin in (sites.gitlab, *sites.aliases):
        below = _under(parts, origin)
        found = _route(below) if below is not None else None
        if found is None:
            continue
        _project, route, rest = found
        if route == "tree" and rest:
            return True
        return route in _FILE_ROUTES and len(rest) > 1 and parts.segments[-1] == ""
    return False


def _gitlab(parts: SplitUrl, segments: list[str], origin: Origin, shown: bool) -> Reference | None:
    """Blob, raw, commit and merge request routes; every other route (issues, work items, tree,
    compare, snippets, wikis, groups, ...) yields nothing."""
    found = _route(segments)
    if found is None:
        return None
    project, route, rest = found
    if route in _FILE_ROUTES:
        return _blob(parts, project, rest, origin)
    if shown and route in ("commit", "merge_requests") and rest:
        return _leading(project, route, rest[0], origin)
    if route == "commit" and rest:
        # GitLab links a commit URL with any sub-path (``/builds``) and a ``.patch`` or ``.diff``
        # ending (commit_reference_filter_spec.rb, "URL reference for a commit patch").
        *inner, last = rest
        last = last.removesuffix(".patch").removesuffix(".diff")
        sha, tail = (last, []) if not inner else (inner[0], [*inner[1:], last])
        tail = tail[:-1] if tail and tail[-1] == "" else tail  # a trailing slash
        if not is_sha(sha) or not all(_SUB_PATH.fullmatch(t) for t in tail):
            return None
        sha = sha.lower()
        return commit_ref(project, sha, f"{origin.base}/{project}/-/commit/{sha}")
    if route == "merge_requests" and rest:
        # Any sub-path (``/diffs``, ``/pipelines``), and the ``+``/``+s`` summary formats at the
        # end (merge_request_reference_filter_spec.rb, "data-reference-format").
        *inner, last = rest
        last = _MR_FORMAT.sub("", last)
        number, tail = (last, []) if not inner else (inner[0], [*inner[1:], last])
        tail = tail[:-1] if tail and tail[-1] == "" else tail  # a trailing slash
        if not all(_SUB_PATH.fullmatch(t) for t in tail):
            return None
        iid = parse_iid(number) if number.isascii() and number.isdigit() else None
        if iid is None:
            return None
        return merge_request_ref(project, iid, f"{origin.base}/{project}/-/merge_requests/{iid}")
    return None


def _leading(project: str, route: str, segment: str, origin: Origin) -> Reference | None:
    """The merge request or commit a shown URL names by the start of its id segment, whatever
    follows (a sub-path, ``+s``, ``.patch``, or text glued on: ``12(the fix)``, ``12"``)."""
    if route == "merge_requests":
        digits = _LEADING_IID.match(segment)
        iid = parse_iid(digits.group()) if digits is not None else None
        if iid is None:
            return None
        return merge_request_ref(project, iid, f"{origin.base}/{project}/-/merge_requests/{iid}")
    run = _LEADING_SHA.match(segment)
    if run is None or not is_sha(run.group()):
        return None
    sha = run.group().lower()
    return commit_ref(project, sha, f"{origin.base}/{project}/-/commit/{sha}")


def _blob(parts: SplitUrl, project: str, rest: list[str], origin: Origin) -> Reference | None:
    if parts.segments and parts.segments[-1] == "":
        return None  # ``blob/<ref>/<dir>/``: a folder (``folder_link``)
    lines = parse_lines(parts.fragment) if parts.fragment else None
    ref_type = next((q for q in parts.query.split("&") if q in _REF_TYPES), "")
    suffix = ("?" + ref_type if ref_type else "") + lines_fragment(lines)
    if rest and is_sha(rest[0], full=True):
        sha: str | None = rest[0].lower()
        path_segments = clean_segments(rest[1:])
        if not path_segments:
            return None
        path: str | None = "/".join(path_segments)
        ref_path = None
        written = f"{sha}/{path}"
    else:
        sha = path = None
        ref_segments = clean_segments(rest)
        # the first segment always belongs to the ref: a ``..`` that climbs into it (often
        # percent-encoded, ``%2e%2e%2f``) would turn the link into another ref, so it is refused
        if ref_segments is None or len(ref_segments) < 2 or clean_segments(rest[1:]) is None:
            return None
        ref_path = written = "/".join(ref_segments)
    reference = f"{project}/-/blob/{written}{lines_fragment(lines)}"
    return Reference(
        kind=Kind.FILE,
        reference=reference,
        project=project,
        path=path,
        lines=lines,
        sha=sha,
        iid=None,
        url=f"{origin.base}/{project}/-/blob/{encode(written)}{suffix}",
        ref_path=ref_path,
    )


_REF_TYPES = frozenset(("ref_type=heads", "ref_type=tags"))
