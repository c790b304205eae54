"""Extraction held against what GitLab itself links: one table per GitLab spec, each row citing it.

The rows are built from GitLab's own reference-filter specs and Markdown fixture (gitlab-org/gitlab,
read from its public mirror gitlabhq/gitlabhq):

- ``spec/lib/banzai/filter/autolink_filter_spec.rb`` (AUTOLINK): where a bare URL ends in prose;
- ``spec/lib/banzai/filter/references/merge_request_reference_filter_spec.rb`` (MR_SPEC);
- ``spec/lib/banzai/filter/references/commit_reference_filter_spec.rb`` (COMMIT_SPEC);
- ``spec/fixtures/markdown.md.erb`` (FIXTURE): "Link to ... by reference" rows and references
  inside emphasis.

GitLab renders the objects the specs create; here the issue's project is ``acme/app`` on
``https://gitlab.acme.example``. What GitLab links as a merge request, commit or file must come out
as that reference; what it links as an issue, snippet, range, label, milestone, user or alert
(things Scout never follows) must come out as nothing, and never as a bogus file.
"""

from __future__ import annotations

import pytest

from signposts.extract import extract
from signposts.references import ExtractContext

G = "https://gitlab.acme.example"
P = f"{G}/acme/app"
SHA = "0123456789abcdef0123456789abcdef01234567"
SHORT = "9f3a1c7e"  # a short sha mixing digits and letters, as GitLab prints them
CTX = ExtractContext(gitlab_url=G, docs_sites=(), project="acme/app")
MR = "acme/app!1"
COMMIT = f"acme/app@{SHA}"
BLOB = f"{P}/-/blob/main/docs/rates.md"

# autolink_filter_spec.rb, "does not include trailing punctuation":
#   ['.', ', ok?', '...', '?', '!', ': is that ok?'] after a link are not part of it.
AUTOLINK = [
    pytest.param(
        f"See {BLOB}{tail}", ["acme/app/-/blob/main/docs/rates.md"], id=f"autolink{tail!r}"
    )
    for tail in [".", ", ok?", "...", "?", "!", ": is that ok?"]
] + [
    pytest.param(f"See {P}/-/commit/{SHA}{tail}", [COMMIT], id=f"autolink-commit{tail!r}")
    for tail in [".", ", ok?", "...", "?", "!", ": is that ok?"]
]

MR_SPEC = [
    # "links with adjacent text": Merge (!1.)
    pytest.param("Merge (!1.)", [MR], id="mr-adjacent"),
    # cross-project complete reference: Merge (group/project!1.)
    pytest.param("Merge (acme/lib!1.)", ["acme/lib!1"], id="mr-cross-project-adjacent"),
    # "includes a data-reference-format attribute": !1+ and, for URLs, <url>+ and <url>+s
    pytest.param("Merge !1+", [MR], id="mr-plus"),
    pytest.param(f"Merge {P}/-/merge_requests/1+", [MR], id="mr-url-plus"),
    pytest.param(f"Merge {P}/-/merge_requests/1+s", [MR], id="mr-url-plus-s"),
    # "URL reference for a commit": <mr url>/diffs?commit_id=<sha>
    pytest.param(f"See {P}/-/merge_requests/1/diffs?commit_id={SHA}", [MR], id="mr-diffs-commit"),
    # cross-project URL reference, "links with adjacent text": Merge (<url>/diffs#note_123.)
    pytest.param(f"Merge ({P}/-/merge_requests/1/diffs#note_123.)", [MR], id="mr-url-adjacent"),
]

COMMIT_SPEC = [
    # "links with adjacent text": See (<sha>.)
    pytest.param(f"See ({SHA}.)", [COMMIT], id="commit-adjacent"),
    pytest.param(f"See ({SHORT}.)", [f"acme/app@{SHORT}"], id="commit-short-adjacent"),
    # cross-project complete reference: See (group/project@<short>.)
    pytest.param(f"See (acme/lib@{SHORT}.)", [f"acme/lib@{SHORT}"], id="commit-cross-adjacent"),
    # cross-project URL reference, "links with adjacent text": Fixed (<url>.)
    pytest.param(f"Fixed ({P}/-/commit/{SHA}.)", [COMMIT], id="commit-url-adjacent"),
    # "URL reference for a commit patch": <url>.patch
    pytest.param(f"See {P}/-/commit/{SHA}.patch", [COMMIT], id="commit-url-patch"),
    # "does not link to patch when extension match is after the path": GitLab links
    # <url>/builds for "(<url>/builds.patch)": the commit, whatever the sub-path
    pytest.param(f"See ({P}/-/commit/{SHA}/builds.patch)", [COMMIT], id="commit-builds-patch"),
    pytest.param(f"See {P}/-/commit/{SHA}/builds", [COMMIT], id="commit-builds"),
]

FIXTURE = [
    # "References should be parseable even inside _<%= merge_request.to_reference %>_ emphasis."
    pytest.param("inside _!1_ emphasis", [MR], id="emphasis-mr"),
    pytest.param("inside ~~!1~~ strike", [MR], id="strike-mr"),
    pytest.param(f"inside _{SHA}_ emphasis", [COMMIT], id="emphasis-commit"),
    pytest.param("inside _acme/lib!3_ emphasis", ["acme/lib!3"], id="emphasis-cross-mr"),
    pytest.param("inside __!1__ strong", [MR], id="strong-mr"),
    # ... but an underscore inside a word is no emphasis ("No Intra Emphasis": foo_bar_baz)
    pytest.param("build_1a2b3c4d is a word", [], id="intra-word-underscore"),
    # "Link to merge request by reference: [Merge request](!1)"
    pytest.param("[Merge request](!1)", [MR], id="link-to-mr"),
    pytest.param("[Merge request](acme/lib!2)", ["acme/lib!2"], id="link-to-cross-mr"),
    # "Link to commit by reference: [Commit](<sha>)"
    pytest.param(f"[Commit]({SHA})", [COMMIT], id="link-to-commit"),
    pytest.param(f"[Commit](acme/lib@{SHORT})", [f"acme/lib@{SHORT}"], id="link-to-cross-commit"),
    # "Link to range by reference: [Range](a...b)": a range, never a file
    pytest.param(f"[Range]({SHORT}...{SHA[8:16]})", [], id="link-to-range"),
    pytest.param(f"[Range](acme/lib@{SHORT}...{SHA[8:16]})", [], id="link-to-cross-range"),
    # "Link to snippet by reference: [Snippet]($5)"
    pytest.param("[Snippet]($5)", [], id="link-to-snippet"),
    # "Link to issue by reference: [Issue](#4)", and in another project
    pytest.param("[Issue](#4)", [], id="link-to-issue"),
    pytest.param("[Issue](acme/lib#4)", [], id="link-to-cross-issue"),
    # "Link to label / milestone / user / alert by reference"
    pytest.param("[Label](~bug)", [], id="link-to-label"),
    pytest.param("[Milestone](%1)", [], id="link-to-milestone"),
    pytest.param("[User](@someone)", [], id="link-to-user"),
    pytest.param("[Alert](^alert#7)", [], id="link-to-alert"),
    pytest.param("[Epic](acme&6)", [], id="link-to-epic"),
    # "Relative Link": a path in this project's repository is still a file
    pytest.param("[Relative Link](doc/README.md)", ["acme/app:doc/README.md"], id="relative"),
    # A link as GitLab renders it on its own host is site-relative
    pytest.param(
        "[rates](/acme/app/-/blob/main/docs/rates.md#L3)",
        ["acme/app/-/blob/main/docs/rates.md#L3"],
        id="site-relative-blob",
    ),
    pytest.param("[mr](/acme/lib/-/merge_requests/9)", ["acme/lib!9"], id="site-relative-mr"),
    pytest.param("[upload](/uploads/e90d/test.jpg)", [], id="site-relative-upload"),
    # a reference directly followed by an ellipsis, as in prose
    pytest.param("see !12...", ["acme/app!12"], id="mr-ellipsis"),
    pytest.param("see !12\u2026 later", ["acme/app!12"], id="mr-unicode-ellipsis"),
    pytest.param(f"{SHORT}...{SHA[8:16]}", [], id="bare-range"),
]


@pytest.mark.parametrize(("text", "expected"), AUTOLINK + MR_SPEC + COMMIT_SPEC + FIXTURE)
def test_extraction_links_what_gitlab_links(text: str, expected: list[str]) -> None:
    assert [r.reference for r in extract(text, CTX).references] == expected
