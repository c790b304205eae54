"""Signpost extraction, one table per form: the text an issue holds -> the normalised references.

Each row is (text, expected reference strings in order). The issue's project is ``acme/app``,
GitLab is ``https://gitlab.acme.example`` and the docs site ``https://docs.acme.example/config/``
(project ``acme/config``). Rows whose comment says "decision" record a choice made for an
ambiguous case.
"""

from __future__ import annotations

import pytest

from signposts.extract import extract
from signposts.references import DocsSite, ExtractContext

G = "https://gitlab.acme.example"
D = "https://docs.acme.example/config"
SHA = "0123456789abcdef0123456789abcdef01234567"
SHA256 = "ab12" * 16
DOCS = DocsSite(url=D + "/", project="acme/config", root="docs/")
CTX = ExtractContext(gitlab_url=G, docs_sites=(DOCS,), project="acme/app")
NO_PROJECT = ExtractContext(gitlab_url=G, docs_sites=(DOCS,), project=None)


def refs(text: str, ctx: ExtractContext = CTX) -> list[str]:
    return [r.reference for r in extract(text, ctx).references]


DOCS_PAGES: list[tuple[str, list[str]]] = [
    (f"{D}/guide/setup.html", [f"{D}/guide/setup.html"]),
    (f"See {D}/guide/setup.html#install.", [f"{D}/guide/setup.html#install"]),
    (f"{D}/guide/", [f"{D}/guide/"]),
    (f"{D}/", [f"{D}/"]),  # decision: the site root is a page (path "")
    (f"{D}", [f"{D}/"]),
    ("HTTPS://DOCS.ACME.EXAMPLE/config/a.html", [f"{D}/a.html"]),
    (f"{D}//guide//a.html", [f"{D}/guide/a.html"]),
    (f"{D}/guide/./a.html", [f"{D}/guide/a.html"]),
    (f"{D}/guide/../a.html", [f"{D}/a.html"]),
    (f"{D}/../admin/a.html", []),  # climbs out of the site root
    (f"{D}/%2e%2e/admin/a.html", []),
    (f"{D}/my%20page.html", [f"{D}/my%20page.html"]),
    (f"{D}/%61.html", [f"{D}/a.html"]),
    (f"{D}/a.html?x=1", [f"{D}/a.html"]),  # decision: the query is not part of a page
    (f"({D}/a.html)", [f"{D}/a.html"]),
    (f"[{D}/a.html]", [f"{D}/a.html"]),
    (f'"{D}/a.html"', [f"{D}/a.html"]),
    (f"{D}/a_(b).html", [f"{D}/a_%28b%29.html"]),
    (f"{D}/a.html, {D}/b.html!", [f"{D}/a.html", f"{D}/b.html"]),
    (f"{D}/a.html...", [f"{D}/a.html"]),
    ("https://docs.acme.example/other/a.html", []),  # same host, outside the site prefix
    ("https://docs.acme.example/configuration/a.html", []),  # prefix is by segment
    ("http://docs.acme.example/config/a.html", []),  # decision: scheme must match exactly
    ("https://docs.acme.example:8443/config/a.html", []),
    ("https://docs.acme.example:443/config/a.html", [f"{D}/a.html"]),
    (f"{D}/a.html#", [f"{D}/a.html"]),
    (f"{D}/a.html#%E2%9C%93", [f"{D}/a.html#%E2%9C%93"]),
]

FILES: list[tuple[str, list[str]]] = [
    (f"{G}/acme/config/-/blob/main/docs/x.md", ["acme/config/-/blob/main/docs/x.md"]),
    (f"{G}/acme/config/-/blob/main/docs/x.md#L10", ["acme/config/-/blob/main/docs/x.md#L10"]),
    (f"{G}/acme/config/-/blob/main/x.md#L10-20", ["acme/config/-/blob/main/x.md#L10-20"]),
    (f"{G}/acme/config/-/blob/main/x.md#L10-L20", ["acme/config/-/blob/main/x.md#L10-20"]),
    (f"{G}/acme/config/-/blob/main/x.md#L20-10", ["acme/config/-/blob/main/x.md#L10-20"]),
    (f"{G}/acme/config/-/blob/main/x.md#L0", ["acme/config/-/blob/main/x.md"]),  # no line 0
    (f"{G}/acme/config/-/blob/main/x.md#intro", ["acme/config/-/blob/main/x.md"]),
    (f"{G}/acme/config/-/blob/{SHA}/a/b.py#L3", [f"acme/config/-/blob/{SHA}/a/b.py#L3"]),
    (f"{G}/acme/config/-/blob/{SHA.upper()}/a.py", [f"acme/config/-/blob/{SHA}/a.py"]),
    (f"{G}/acme/config/-/blob/{SHA256}/a.py", [f"acme/config/-/blob/{SHA256}/a.py"]),
    (f"{G}/acme/config/-/blob/feature/x/a.py", ["acme/config/-/blob/feature/x/a.py"]),
    (f"{G}/acme/config/-/raw/main/a.py", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/blob/main/a.py", ["acme/config/-/blob/main/a.py"]),  # legacy route
    (f"{G}/acme/config/raw/main/a.py", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blame/main/a.py#L4", ["acme/config/-/blob/main/a.py#L4"]),
    (f"{G}/acme/sub/config/-/blob/main/a.py", ["acme/sub/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py?ref_type=heads", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py?plain=1#L2", ["acme/config/-/blob/main/a.py#L2"]),
    (f"{G}/acme/config/-/blob/main/my%20file.md", ["acme/config/-/blob/main/my file.md"]),
    (f"{G}/acme/config/-/blob/main/docs/../a.py", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/../../x", []),  # climbs out of the repository
    (f"{G}/acme/config/-/blob/main/%2e%2e/%2e%2e/x", []),
    (f"{G}/acme/config/-/blob/{SHA}/../a.py", []),
    (f"{G}/acme/config/-/blob/{SHA}/", []),  # no file path
    (f"{G}/acme/config/-/blob/main", []),
    (f"{G}/acme/config/-/blob/main/a%00.py", []),  # control character after decoding
    (f"{G}//acme//config/-/blob/main//a.py", ["acme/config/-/blob/main/a.py"]),
    ("HTTPS://GITLAB.ACME.EXAMPLE/acme/config/-/blob/main/a.py", ["acme/config/-/blob/main/a.py"]),
    (f"{G}:443/acme/config/-/blob/main/a.py", ["acme/config/-/blob/main/a.py"]),
    (f"<{G}/acme/config/-/blob/main/a.py>.", ["acme/config/-/blob/main/a.py"]),
    (f"[rates]({G}/acme/config/-/blob/main/a.py#L5)", ["acme/config/-/blob/main/a.py#L5"]),
    (f"[a](<{G}/acme/config/-/blob/main/a b.py>)", ["acme/config/-/blob/main/a b.py"]),
    (f"{G}/acme/config/-/blob/main/文档.md#L2", ["acme/config/-/blob/main/文档.md#L2"]),
    # decision: project paths keep the case they were written in (GitLab resolves either)
    (f"{G}/Acme/Config/-/blob/main/a.py", ["Acme/Config/-/blob/main/a.py"]),
    (f"`{G}/acme/config/-/blob/main/a.py`", ["acme/config/-/blob/main/a.py"]),
    (f"see {G}/acme/config/-/blob/main/a.py.", ["acme/config/-/blob/main/a.py"]),
    (f"({G}/acme/config/-/blob/main/a.py)", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config.git/-/blob/main/a.py", []),  # not a project path
    (f"{G}/acme/-/blob/main/a.py", []),  # a project needs a namespace
    (f"{G}/acme/config/-/tree/main/docs", []),  # a directory
    ("[setup](docs/setup.md#L13)", ["acme/app:docs/setup.md#L13"]),
    ("[setup](docs/setup.md)", ["acme/app:docs/setup.md"]),
    ("[setup](./docs/setup.md#L3-L9)", ["acme/app:docs/setup.md#L3-9"]),
    ("[setup](<docs/my setup.md>)", ["acme/app:docs/my setup.md"]),
    ('[setup](docs/setup.md "Setup")', ["acme/app:docs/setup.md"]),
    ("[setup](docs/setup.md?plain=1)", ["acme/app:docs/setup.md"]),
    ("[setup](docs/my%20setup.md)", ["acme/app:docs/my setup.md"]),
    ("![shot](img/shot.png)", ["acme/app:img/shot.png"]),
    ("[up](../other/x.md)", []),  # climbs out of the repository
    ("[up](docs/../../x.md)", []),
    ("[root](/docs/setup.md)", []),  # decision: root-relative targets are ambiguous, dropped
    ("[anchor](#install)", []),
    ("![shot](/uploads/0a1b2c/shot.png)", []),  # an issue attachment, not a repository file
    ("[site](www.example.com)", []),  # a schemeless URL, not a file
    ("[site](docs.acme.example/config/a.html)", []),
    ("[setup](setup.py)", ["acme/app:setup.py"]),
    ("src/ledger/rates.py", ["acme/app:src/ledger/rates.py"]),
    ("docs/x.md:42", ["acme/app:docs/x.md#L42"]),
    ("docs/x.md:42-50", ["acme/app:docs/x.md#L42-50"]),
    ("src/a.py#L10-20", ["acme/app:src/a.py#L10-20"]),
    ("src/a.py#L10-L20", ["acme/app:src/a.py#L10-20"]),
    ("src/a.py#L10", ["acme/app:src/a.py#L10"]),
    ("see `src/a.py`.", ["acme/app:src/a.py"]),
    ("see src/a.py: it breaks", ["acme/app:src/a.py"]),
    ("see docs/x.md:42.", ["acme/app:docs/x.md#L42"]),
    ("(src/a.py)", ["acme/app:src/a.py"]),
    ("**src/a.py**", ["acme/app:src/a.py"]),
    ("| src/a.py | b |", ["acme/app:src/a.py"]),
    ("README.md", ["acme/app:README.md"]),
    (".gitlab-ci.yml", ["acme/app:.gitlab-ci.yml"]),
    (".github/workflows/ci.yml", ["acme/app:.github/workflows/ci.yml"]),
    ("docker/Dockerfile", ["acme/app:docker/Dockerfile"]),
    ("include/x.h", ["acme/app:include/x.h"]),
    ("./docs/x.md", ["acme/app:docs/x.md"]),
    ("docs/../x.md", ["acme/app:x.md"]),
    ("docs/x.md#install", ["acme/app:docs/x.md"]),
    ("node.js and io.js", ["acme/app:node.js", "acme/app:io.js"]),  # decision: .js is code
    ("../x.md", []),  # climbs out
    ("docs/../../x.md", []),
    ("/etc/passwd", []),  # absolute filesystem path
    ("/etc/ssl/openssl.cnf", []),
    ("~/notes/a.md", []),
    ("C:\\docs\\x.md", []),
    ("and/or", []),  # a slash but nothing file-like
    ("src/ledger", []),  # decision: a directory is not a file signpost
    ("2024/01/02", []),
    ("e.g./i.e.", []),
    ("1/2.5", []),
    ("image.jpg", []),  # no slash and not a docs or code extension
    ("v1.2.3", []),
    ("e.g.", []),
    ("docs.acme.example/config/a.html", []),  # schemeless URL
    ("src/a.py#12", []),  # looks like an issue reference
    ("src/a.py@main", []),
    ("path:to:file.pm", []),
    ("snake_src/a.py", ["acme/app:snake_src/a.py"]),
    ("docs/x.md:0", ["acme/app:docs/x.md"]),  # decision: line 0 is no line, the file counts
]

COMMITS: list[tuple[str, list[str]]] = [
    (f"{G}/acme/config/-/commit/{SHA}", [f"acme/config@{SHA}"]),
    (f"{G}/acme/config/-/commit/abc1234", ["acme/config@abc1234"]),
    (f"{G}/acme/config/-/commit/ABC1234.patch", ["acme/config@abc1234"]),
    (f"{G}/acme/config/-/commit/abc1234.diff", ["acme/config@abc1234"]),
    (f"{G}/acme/config/commit/abc1234", ["acme/config@abc1234"]),  # legacy route
    (f"{G}/acme/config/-/commit/abc123", []),  # too short
    (f"{G}/acme/config/-/commit/xyz1234", []),
    # GitLab links a commit URL with any sub-path (commit_reference_filter_spec.rb)
    (f"{G}/acme/config/-/commit/abc1234/extra", ["acme/config@abc1234"]),
    # ... and a bare URL from its start, the rest being text (AbstractReferenceFilter's
    # link_pattern_start); a Markdown link target must match whole (link_pattern_anchor)
    (f"{G}/acme/config/-/commit/abc1234/Extra", ["acme/config@abc1234"]),
    (f"[c]({G}/acme/config/-/commit/abc1234/Extra)", []),
    (f"acme/config@{SHA}", [f"acme/config@{SHA}"]),
    ("acme/config@abc1234", ["acme/config@abc1234"]),
    ("config@abc1234", ["acme/config@abc1234"]),  # same namespace as the issue's project
    ("acme/sub/config@deadbeef", ["acme/sub/config@deadbeef"]),  # a named sha may be all letters
    ("acme/config@ABC1234", ["acme/config@abc1234"]),
    ("abc1234", ["acme/app@abc1234"]),
    (f"fixed in {SHA}.", [f"acme/app@{SHA}"]),
    (f"fixed in {SHA256}", [f"acme/app@{SHA256}"]),
    ("(abc1234)", ["acme/app@abc1234"]),
    ("`abc1234`", ["acme/app@abc1234"]),
    ("1234567", []),  # a bare sha must mix digits and letters
    ("defaced", []),
    ("abc123", []),  # too short
    ("a" * 65, []),
    ("@abc1234", []),  # a user mention
    ("#abc1234", []),
    ("abc1234...def5678", []),  # a compare range
    ("abc1234..def5678", []),
    ("acme/config@abc1234...def5678", []),
    ("bob@cafe123.com", []),  # an e-mail address
    ("0xabc1234", []),
    ("550e8400-e29b-41d4-a716-446655440000", []),
    ("acme/config.git@abc1234", []),
    ("x/abc1234", []),
]

MERGE_REQUESTS: list[tuple[str, list[str]]] = [
    ("!12", ["acme/app!12"]),
    ("fixed by !12.", ["acme/app!12"]),
    ("(!12)", ["acme/app!12"]),
    ("!12+", ["acme/app!12"]),
    ("!12+s", ["acme/app!12"]),
    ("config!12", ["acme/config!12"]),
    ("acme/config!12", ["acme/config!12"]),
    ("acme/sub/config!12", ["acme/sub/config!12"]),
    ("!2147483647", ["acme/app!2147483647"]),
    ("!2147483648", []),
    ("!0", []),
    ("!012", ["acme/app!12"]),  # decision: leading zeros read as the number
    ("\\!12", []),  # escaped
    ("wow!12", ["acme/wow!12"]),  # decision: GitLab reads this as a sibling project's MR
    ("!12a", []),
    ("!!12", []),
    ("!12 and !12", ["acme/app!12"]),  # de-duplicated
    ("!12 then acme/app!12", ["acme/app!12"]),
    (f"{G}/acme/config/-/merge_requests/12", ["acme/config!12"]),
    (f"{G}/acme/config/-/merge_requests/12/diffs", ["acme/config!12"]),
    (f"{G}/acme/config/-/merge_requests/12/commits", ["acme/config!12"]),
    (f"{G}/acme/config/-/merge_requests/12#note_99", ["acme/config!12"]),
    (f"{G}/acme/config/-/merge_requests/12/diffs#note_99", ["acme/config!12"]),
    (f"{G}/acme/config/merge_requests/12", ["acme/config!12"]),  # legacy route
    (f"{G}/acme/config/-/merge_requests/0", []),
    (f"{G}/acme/config/-/merge_requests/2147483648", []),
    # GitLab links an MR URL with any sub-path (merge_request_reference_filter_spec.rb)
    (f"{G}/acme/config/-/merge_requests/12/edit", ["acme/config!12"]),
    # a bare URL names it from its start (".dit" is text after it); a link target must match whole
    (f"{G}/acme/config/-/merge_requests/12/e.dit", ["acme/config!12"]),
    (f"[mr]({G}/acme/config/-/merge_requests/12/e.dit)", []),
    (f"{G}/acme/config/-/merge_requests", []),
    (f"{G}/acme/config/-/merge_requests/12 and !12", ["acme/config!12", "acme/app!12"]),
    (f"{G}/acme/config/-/merge_requests/12 then acme/config!12", ["acme/config!12"]),
]

DROPPED: list[tuple[str, list[str]]] = [
    ("#12", []),
    ("acme/config#12", []),
    ("config#12", []),
    ("GL-12", []),
    ("[issue:12]", []),
    ("[issue:acme/config/12]", []),
    ("[work_item:acme/config/12]", []),
    ("&12", []),
    ("[epic:acme/12]", []),
    ("$12", []),
    ("~bug", []),
    ('~"needs docs"', []),
    ("%v1.0", []),
    ("@alice", []),
    ("^alert#12", []),
    ("[[Home]]", []),
    ("[[docs/x.md]]", []),  # a wiki link, not a file
    (f"{G}/acme/config/-/issues/12", []),
    (f"{G}/acme/config/-/issues/incident/12", []),
    (f"{G}/acme/config/issues/12", []),
    (f"{G}/acme/config/-/work_items/12", []),
    (f"{G}/groups/acme/-/work_items/12", []),
    (f"{G}/groups/acme/-/epics/3", []),
    (f"{G}/acme/config/-/snippets/3", []),
    (f"{G}/acme/config/-/wikis/home", []),
    (f"{G}/acme/config/-/compare/abc1234...def5678", []),
    (f"{G}/acme/config/-/tree/main", []),
    (f"{G}/acme/config/-/labels", []),
    (f"{G}/acme/config/-/milestones/1", []),
    (f"{G}/alice", []),
    (f"{G}/acme/config", []),
    ("https://evil.test/acme/config/-/blob/main/a.py", []),
    ("https://evil.test/acme/config/-/merge_requests/12", []),
    ("https://evil.test/acme/app@abc1234def", []),  # short forms inside a URL are not read
    ("https://evil.test/src/a.py", []),
    ("https://gitlab.acme.example.evil.test/acme/config/-/blob/main/a.py", []),
    ("https://evilgitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("https://gitlab.acme.example@evil.test/acme/config/-/blob/main/a.py", []),  # user info
    ("https://user:pw@gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("https://gitlab.acme.example:8443/acme/config/-/blob/main/a.py", []),  # other port
    ("https://gitlab.acme.example:/acme/config/-/blob/main/a.py", []),
    ("http://gitlab.acme.example/acme/config/-/blob/main/a.py", []),  # other scheme
    ("https://gitlab.acme.example./acme/config/-/blob/main/a.py", []),  # decision: exact host
    ("https://gitlab.\u0430cme.example/acme/config/-/blob/main/a.py", []),  # Cyrillic a
    ("https://gitla\u212a.acme.example/acme/config/-/blob/main/a.py", []),  # Kelvin sign
    ("https://gitlab\u3002acme\u3002example/acme/config/-/blob/main/a.py", []),  # ideographic dot
    ("https://ｇｉｔｌａｂ.acme.example/acme/config/-/blob/main/a.py", []),  # fullwidth
    ("ｈｔｔｐｓ://gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("https://gitlab.acme.example\u200b.evil.test/acme/config/-/blob/main/a.py", []),
    ("https://gitlab.acme.example/acme/con\u200bfig/-/blob/main/a.py", []),
    ("https://gitlab.acme.example/acme/config/-/blob/main/a\u202e.py", []),
    ("https://gitlab.acme.example\\@evil.test/acme/config/-/blob/main/a.py", []),
    ("https://[::1]/acme/config/-/blob/main/a.py", []),
    ("javascript:alert(1)//gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("data:text/html,acme/config!12", []),
    ("file:///etc/passwd", []),
    ("file://gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("ftp://gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("ssh://git@gitlab.acme.example/acme/config.git", []),
    ("git+ssh://gitlab.acme.example/src/a.py", []),
    ("[x](javascript:alert(1))", []),
    ("[x](data:text/html;base64,AAAA)", []),
    ("[x](mailto:a@acme.example)", []),
    ("<javascript:alert(1)>", []),
    ("<mailto:alice@acme.example>", []),
    ("https://docs.acme.example.evil.test/config/a.html", []),
    ("https://evil.test/?u=https://gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("_https://gitlab.acme.example/acme/config/-/blob/main/a.py", []),
    ("hxxps://gitlab.acme.example/acme/config/-/blob/main/a.py", []),
]

URL_BOUNDARIES: list[tuple[str, list[str]]] = [
    # An invisible character drops the URL it touches, and what follows it in the same token.
    (f"{G}/acme/config/-/blob/main/a.py\u200bsrc/b.py", []),
    (f"{G}/acme/config/-/blob/main/a.py\u200bhttps://evil.test/x", []),
    (f"{G}/acme/config/-/blob/main/a.py\u2066 src/b.py", ["acme/app:src/b.py"]),
    (f"{G}/acme/config/-/blob/main/a.py\ufeff", []),
    (f"{G}/acme/config/-/blob/main/a.py!", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py?", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py;", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py'", ["acme/config/-/blob/main/a.py"]),
    (f"'{G}/acme/config/-/blob/main/a.py'", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py>", ["acme/config/-/blob/main/a.py"]),
    (f"{G}/acme/config/-/blob/main/a.py\\n", ["acme/config/-/blob/main/a.py"]),
    (
        f"{G}/acme/config/-/blob/main/a.py\nsrc/b.py",
        ["acme/config/-/blob/main/a.py", "acme/app:src/b.py"],
    ),
    (f"{G}/acme/config/-/blob/main/a (1).py", ["acme/config/-/blob/main/a"]),
    (f"[a]({G}/acme/config/-/blob/main/a%20(1).py)", ["acme/config/-/blob/main/a (1).py"]),
    (f"{G}/acme/config/-/blob/main/a_(1).py", ["acme/config/-/blob/main/a_(1).py"]),
    (f"{G}/acme/config/-/blob/main/a.py:12", ["acme/config/-/blob/main/a.py:12"]),
    # A comma followed by more URL characters is inside the URL (linkify-it's rule): the second
    # URL becomes part of the first one's path, on the configured host, and resolves to nothing.
    (
        f"{G}/acme/config/-/blob/main/a.py,{G}/acme/config/-/blob/main/b.py",
        ["acme/config/-/blob/main/a.py,https:/gitlab.acme.example/acme/config/-/blob/main/b.py"],
    ),
]

ORDER_AND_MIX: list[tuple[str, list[str]]] = [
    (
        f"!3 then {G}/acme/config/-/blob/main/a.py and src/b.py and abc1234 and {D}/x.html",
        [
            "acme/app!3",
            "acme/config/-/blob/main/a.py",
            "acme/app:src/b.py",
            "acme/app@abc1234",
            f"{D}/x.html",
        ],
    ),
    (
        f"[a](docs/a.md) {G}/acme/app/-/commit/abc1234 acme/app@abc1234",
        ["acme/app:docs/a.md", "acme/app@abc1234"],
    ),
    ("src/a.py:3 src/a.py#L3", ["acme/app:src/a.py#L3"]),
    ("```\nsrc/a.py\n!4\n```", ["acme/app:src/a.py", "acme/app!4"]),  # code is read too
    ("", []),
    ("nothing to see here.", []),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    DOCS_PAGES + FILES + COMMITS + MERGE_REQUESTS + DROPPED + URL_BOUNDARIES + ORDER_AND_MIX,
)
def test_extracts_exactly_the_normalised_references(text: str, expected: list[str]) -> None:
    assert refs(text) == expected


SHORT_FORMS_NEED_A_PROJECT: list[tuple[str, list[str], int]] = [
    ("!12", [], 1),
    ("config!12", [], 1),
    ("acme/config!12", ["acme/config!12"], 0),
    ("abc1234", [], 1),
    ("acme/config@abc1234", ["acme/config@abc1234"], 0),
    ("src/a.py", [], 1),
    ("[a](docs/a.md)", [], 1),
    ("src/a.py src/a.py !3", [], 2),
    ("defaced and/or", [], 0),
    (f"{G}/acme/config/-/blob/main/a.py", ["acme/config/-/blob/main/a.py"], 0),
]


@pytest.mark.parametrize(("text", "expected", "counted"), SHORT_FORMS_NEED_A_PROJECT)
def test_short_forms_without_the_issue_project_are_counted_not_kept(
    text: str, expected: list[str], counted: int
) -> None:
    result = extract(text, NO_PROJECT)
    assert [r.reference for r in result.references] == expected
    assert result.skipped["no_project"] == counted


def test_full_fields_of_each_kind() -> None:
    text = (
        f"{D}/guide/a.html#install {G}/acme/config/-/blob/{SHA}/docs/x.md#L3-4 "
        f"{G}/acme/config/-/blob/feature/x/a.py?ref_type=tags#L2 docs/y.md:7 "
        f"{G}/acme/config/-/commit/ABC1234 config!9"
    )
    got = [
        r.to_json() | {"ref_path": r.ref_path, "anchor": r.anchor, "site": r.docs_site}
        for r in extract(text, CTX).references
    ]
    assert got == [
        {
            "kind": "docs_page",
            "reference": f"{D}/guide/a.html#install",
            "project": "acme/config",
            "path": "guide/a.html",
            "lines": None,
            "sha": None,
            "iid": None,
            "url": f"{D}/guide/a.html#install",
            "ref_path": None,
            "anchor": "install",
            "site": D + "/",
        },
        {
            "kind": "file",
            "reference": f"acme/config/-/blob/{SHA}/docs/x.md#L3-4",
            "project": "acme/config",
            "path": "docs/x.md",
            "lines": [3, 4],
            "sha": SHA,
            "iid": None,
            "url": f"{G}/acme/config/-/blob/{SHA}/docs/x.md#L3-4",
            "ref_path": None,
            "anchor": None,
            "site": None,
        },
        {
            "kind": "file",
            "reference": "acme/config/-/blob/feature/x/a.py#L2",
            "project": "acme/config",
            "path": None,
            "lines": [2, 2],
            "sha": None,
            "iid": None,
            "url": f"{G}/acme/config/-/blob/feature/x/a.py?ref_type=tags#L2",
            "ref_path": "feature/x/a.py",
            "anchor": None,
            "site": None,
        },
        {
            "kind": "file",
            "reference": "acme/app:docs/y.md#L7",
            "project": "acme/app",
            "path": "docs/y.md",
            "lines": [7, 7],
            "sha": None,
            "iid": None,
            "url": None,
            "ref_path": None,
            "anchor": None,
            "site": None,
        },
        {
            "kind": "commit",
            "reference": "acme/config@abc1234",
            "project": "acme/config",
            "path": None,
            "lines": None,
            "sha": "abc1234",
            "iid": None,
            "url": f"{G}/acme/config/-/commit/abc1234",
            "ref_path": None,
            "anchor": None,
            "site": None,
        },
        {
            "kind": "merge_request",
            "reference": "acme/config!9",
            "project": "acme/config",
            "path": None,
            "lines": None,
            "sha": None,
            "iid": 9,
            "url": None,
            "ref_path": None,
            "anchor": None,
            "site": None,
        },
    ]


def test_gitlab_under_a_relative_url_root() -> None:
    ctx = ExtractContext(gitlab_url="https://acme.example/gitlab/", project="acme/app")
    text = (
        "https://acme.example/gitlab/acme/config/-/merge_requests/3 "
        "https://acme.example/acme/config/-/merge_requests/4"
    )
    assert [(r.reference, r.url) for r in extract(text, ctx).references] == [
        ("acme/config!3", "https://acme.example/gitlab/acme/config/-/merge_requests/3")
    ]


def test_docs_site_on_the_gitlab_host_takes_precedence_by_prefix() -> None:
    site = DocsSite(url=f"{G}/help/", project="acme/handbook", root="doc/")
    ctx = ExtractContext(gitlab_url=G, docs_sites=(site,), project="acme/app")
    text = f"{G}/help/user/index.md {G}/acme/config/-/blob/main/a.py"
    assert refs(text, ctx) == [f"{G}/help/user/index.md", "acme/config/-/blob/main/a.py"]


def test_unparseable_configured_sites_match_nothing() -> None:
    ctx = ExtractContext(
        gitlab_url="gitlab.acme.example",
        docs_sites=(DocsSite(url="ftp://docs.acme.example/", project="a/b", root="d/"),),
        project="acme/app",
    )
    assert refs(f"{G}/acme/config/-/merge_requests/3 ftp://docs.acme.example/x !4", ctx) == [
        "acme/app!4"
    ]
