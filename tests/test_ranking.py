"""Ranking beyond BM25 (scout.rank) on small real corpora: changelogs below docs, a named
project favoured, code spans matched as written, one file and one section no more than their
share; each shown against the store's plain BM25 order on the same passages, so the test fails
if the rule stops acting. Excerpts: tests/fixtures/ranking/SOURCES.md (their licences beside them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scout.corpus.passages import split_document
from scout.kinds import passage_kind
from scout.retrieve import lexical, retrieve
from scout.retrieve import question as asked
from scout.retrieve import rerank as rank
from scout.retrieve.lexical import HEADING_WEIGHT, build_query
from scout.store import PassageHit, PassageRecord, Store
from tests.fakes.corpus import filler
from tests.helpers.growth import assert_linear

FIXTURES = Path(__file__).parent / "fixtures" / "ranking"
SHA = "0" * 40


def excerpt(project: str, path: str, name: str, title: str = "") -> list[PassageRecord]:
    """The passages of fixture file ``name`` (folder/file) as the indexer makes them, read as
    ``path``; ``title`` stands for the page title above an excerpt that starts below it."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    url = f"https://gitlab.example/{project}/-/blob/{SHA}/{path}"
    return [
        PassageRecord(
            project,
            path,
            SHA,
            s.line_start,
            s.line_end,
            f"{title} > {s.heading}" if title else s.heading,
            s.body,
            "docs",
            "corpus",
            f"{url}#L{s.line_start}-{s.line_end}",
        )  # fmt: skip
        for s in split_document(path, text)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "scout.db", create=True) as s:
        yield s


def plain(store: Store, question: str, limit: int = 8) -> list[PassageHit]:
    """The store's plain BM25 order for the question's words: what ranking starts from."""
    return store.search(build_query(question), limit, heading_weight=HEADING_WEIGHT)


def test_kind_follows_the_path() -> None:
    assert passage_kind("CHANGELOG.md", "docs") == "changelog"
    assert passage_kind("docs/changelog/index.md", "docs") == "changelog"
    assert passage_kind("doc/changes/7.2.rst", "docs") == "changelog"
    assert passage_kind("docs/release-notes.rst", "docs") == "changelog"
    assert passage_kind("content/en/news/_index.md", "docs") == "changelog"
    assert passage_kind("docs/blog/posts/mkdocs-2.0.md", "docs") == "changelog"
    assert passage_kind("docs/blog/posts/zensical.md", "docs") == "docs"
    assert passage_kind("doc/development/release.md", "docs") == "docs"  # how to release
    assert passage_kind("docs/changes-to-config.md", "docs") == "docs"
    assert passage_kind("README.rst", "docs") == "readme"
    assert passage_kind("sub/readme.md", "docs") == "readme"
    assert passage_kind("src/app.py", "code") == "code"
    assert passage_kind("", "docs") == "docs"


def test_changelog_ranks_below_docs_unless_the_question_asks_about_a_release(
    store: Store,
) -> None:
    project = "squidfunk/mkdocs-material"
    store.insert_passages(
        [
            *excerpt(project, "docs/changelog/index.md", "mkdocs-material/changelog.md"),
            *excerpt(
                project,
                "docs/setup/setting-up-social-cards.md",
                "mkdocs-material/setting-up-social-cards.md",
            ),
            *filler(),
        ]
    )
    question = "is the social cards plugin sandboxed?"
    assert plain(store, question)[0].kind == "changelog"  # BM25 alone: the changelog line
    hits = retrieve(store, question, 8).hits
    assert hits[0].kind == "docs"
    assert {h.kind for h in hits} == {"docs", "changelog"}  # moved down, not dropped
    asked = retrieve(store, "which release sandboxed the social cards plugin?", 8).hits
    assert asked[0].kind == "changelog"
    assert retrieve(store, "social cards plugin sandboxed in 9.7.4?", 8).hits[0].kind == "changelog"


@pytest.mark.parametrize(
    "sphinx",
    # GitLab paths hold a tool's name in a group as often as in the project's own name
    # (gitlab-org/charts/gitlab): in the second, the Sphinx excerpt's project is called "docs".
    ["sphinx-doc/sphinx", "tools/sphinx/docs"],
    ids=["by_its_name", "by_a_group_in_its_path"],
)
def test_a_named_project_is_favoured(store: Store, sphinx: str) -> None:
    store.insert_passages(
        [
            *excerpt(
                "squidfunk/mkdocs-material",
                "docs/setup/setting-up-site-analytics.md",
                "mkdocs-material/setting-up-site-analytics.md",
            ),
            *excerpt(sphinx, "doc/faq.rst", "sphinx/faq.rst"),
            *filler(),
        ]
    )
    question = "add google analytics tracking to my sphinx site"
    assert plain(store, question)[0].project == "squidfunk/mkdocs-material"
    assert retrieve(store, question, 8).hits[0].project == sphinx
    # Without the name, the plain order stands.
    unnamed = "add google analytics tracking to my site"
    assert retrieve(store, unnamed, 1).hits[0].id == plain(store, unnamed, 1)[0].id


def test_path_words_shared_by_projects_name_none_of_them() -> None:
    projects = ["gitlab-org/charts/gitlab", "gitlab-org/charts/auto-deploy-app", "gitlab-org/cli"]
    share = lambda word, project: 1.0  # noqa: E731
    named = rank.named_projects
    assert named(["the", "charts"], projects, share) == set()  # a group of two projects
    assert named(["gitlab", "org"], projects, share) == set()  # the group above every project
    deploy = {"gitlab-org/charts/auto-deploy-app"}
    assert named(["auto", "deploy", "app"], projects, share) == deploy
    assert named(["deploy", "charts"], projects, share) == deploy  # its own word, not the group's
    assert named(["the", "charts"], projects[:1] + projects[2:], share) == {projects[0]}
    assert rank.path_words("gitlab-org/charts/gitlab") == ("gitlab", "org", "charts")


def test_name_words_shared_or_common_name_nothing() -> None:
    projects = ["g/python-gitlab", "g/gitlab-charts", "g/hugo-docs"]
    everywhere = {"gitlab": 1.0, "docs": 0.2, "hugo": 0.97, "python": 0.5}
    share = lambda word, project: everywhere.get(word, 0.0)  # noqa: E731
    named = rank.named_projects
    assert named(["my", "gitlab", "site"], projects, share) == set()  # in two names
    assert named(["hugo", "site"], projects, share) == {"g/hugo-docs"}
    assert named(["the", "docs"], projects, share) == set()  # a word every project uses
    assert named(["python", "gitlab", "cli"], projects, share) == {"g/python-gitlab"}
    assert named(["python", "client"], projects, share) == set()


def test_code_spans_are_matched_as_written(store: Store) -> None:
    store.insert_passages(
        [
            *excerpt(
                "gohugoio/hugoDocs",
                "content/en/commands/hugo_new_content.md",
                "hugo-docs/hugo_new_content.md",
            ),
            *excerpt(
                "gohugoio/hugoDocs", "content/en/configuration/server.md", "hugo-docs/server.md"
            ),
            *filler(),
        ]  # fmt: skip
    )
    assert asked.code_spans("does `hugo new` take --force, or -f?") == ["hugo new", "--force", "-f"]
    assert asked.code_spans("gl.projects.list() and exclude_patterns, a != b, not 18.8.2") == [
        "gl.projects.list()",
        "exclude_patterns",
        "!=",
    ]
    question = "force redirects when running the server, or --force on new content?"
    span = next(h for h in retrieve(store, question, 8).hits if "--force" in h.body)
    plain_rank = [h.id for h in plain(store, question)].index(span.id)
    assert [h.id for h in retrieve(store, question, 8).hits].index(span.id) < plain_rank


def test_one_file_and_one_section_take_no_more_than_their_share(store: Store) -> None:
    charts = "gitlab-org/charts"
    store.insert_passages(
        [
            *excerpt(
                charts,
                "doc/charts/globals.md",
                "gitlab-charts/globals.md",
                "Configure charts using globals",
            ),
            *[
                p
                for chart in ("gitaly", "sidekiq", "webservice")
                for p in excerpt(
                    charts,
                    f"doc/charts/gitlab/{chart}/_index.md",
                    f"gitlab-charts/{chart}-tolerations.md",
                    f"Using the {chart} chart > Chart configuration examples",
                )
            ],
            *filler(),
        ]
    )
    question = "schedule gitlab pods on tainted worker nodes with tolerations"
    top = plain(store, question, 3)
    assert all("tolerations" in h.heading for h in top)  # BM25 alone: three copies of one text
    hits = retrieve(store, question, 4).hits
    copies = [h for h in hits[:3] if h.heading.endswith("tolerations")]
    assert len(copies) == 1
    assert len(hits) == 4  # the copies follow, they are not dropped
    per_file: dict[str, int] = {}
    for hit in retrieve(store, "configure pods labels affinity node selector globals", 6).hits[:4]:
        per_file[hit.path] = per_file.get(hit.path, 0) + 1
    assert max(per_file.values()) <= rank.FILE_CAP


def test_pool_is_bm25s_exact_top(store: Store) -> None:
    """Re-ranking never reaches past BM25's top POOL: every hit is one BM25 ranks there."""
    store.insert_passages(
        [*excerpt("sphinx-doc/sphinx", "doc/faq.rst", "sphinx/faq.rst"), *filler(200)]
    )
    question = "how do I use sphinx with github pages or read the docs?"
    pool = {h.id for h in plain(store, question, rank.POOL * 2)}
    assert {h.id for h in retrieve(store, question, 20).hits} <= pool


@pytest.mark.parametrize(
    "unit",
    ["-" * 50 + " ", "`" * 3 + "a", "a_" * 40 + " ", "a." * 40 + " ", "!=" * 20, "--x" * 30],
)
def test_code_spans_grow_linearly(unit: str) -> None:
    assert_linear(lambda n: lambda: asked.code_spans(unit * n), 40)


@pytest.mark.parametrize("unit", ["a-/", "ab" * 20 + "/", "_-./" * 5])
def test_naming_grows_linearly_in_path_length(unit: str) -> None:
    # Project paths come from the forge: one long path, or many segments, stays linear.
    def named(n: int) -> Callable[[], object]:
        projects = [unit * n, "g/" + unit * n]
        return lambda: rank.named_projects(["ab", "a"] * n, projects, lambda w, p: 1.0)

    assert_linear(named, 50)


def test_kind_grows_linearly() -> None:
    assert_linear(lambda n: lambda: passage_kind("changes-" * n + "/news" * n + ".md", "docs"), 200)


def test_project_scope_keeps_to_its_projects_whether_their_rows_are_one_run_or_not(
    store: Store,
) -> None:
    sphinx = excerpt("sphinx-doc/sphinx", "doc/faq.rst", "sphinx/faq.rst")
    material = excerpt(
        "squidfunk/mkdocs-material",
        "docs/setup/setting-up-site-analytics.md",
        "mkdocs-material/setting-up-site-analytics.md",
    )
    # sphinx's rows in two runs (as after a signpost's passages), material's in one
    store.insert_passages([*sphinx[:3], *material, *sphinx[3:], *filler()])
    question = "add google analytics tracking to my site"
    for globs, wanted in [
        (["sphinx-doc/*"], {"sphinx-doc/sphinx"}),
        (["squidfunk/*"], {"squidfunk/mkdocs-material"}),
        (["sphinx-doc/sphinx", "squid*"], {"sphinx-doc/sphinx", "squidfunk/mkdocs-material"}),
    ]:
        hits = retrieve(store, question, 20, projects=globs).hits
        assert hits and {h.project for h in hits} <= wanted
    assert {h.project for h in retrieve(store, question, 20).hits} > {"sphinx-doc/sphinx"}


def _pages(project: str, words: str, count: int) -> list[PassageRecord]:
    return [
        PassageRecord(
            project,
            f"docs/p{n}.md",
            SHA,
            1,
            3,
            f"{project} page {n}",
            f"{words} {'filler ' * n}",
            "docs",
            "corpus",
            f"https://gitlab.example/{project}/-/blob/{SHA}/docs/p{n}.md#L1-3",
        )
        for n in range(count)
    ]


@pytest.mark.parametrize(
    "others",
    ["build cache" + " filler" * 12, "build cache build cache"],
    ids=["named_fills_the_top", "others_in_the_top"],
)
def test_a_named_project_is_ranked_apart_only_when_the_whole_ranking_leaves_it_out(
    store: Store, others: str
) -> None:
    # The named project's own ranking is the whole one's without the other projects: when the
    # whole top 8 is the named project's already, ranking it again adds nothing (and is not
    # done); when other projects' passages are in it, the named one's are ranked on their own.
    store.insert_passages(
        [*_pages("g/hugo", "build cache", 12), *_pages("g/other", others, 12), *filler()]
    )
    named = ("g/hugo",)
    terms = lexical.Terms.of(store, asked.Question.of("build cache"))
    live = terms.live(terms.own)
    whole = terms.ranked(live, 8, None)
    part = terms.ranked(live, 8, named)
    expected = [*whole, *(h for h in part if h.id not in {w.id for w in whole})]
    searches: list[str] = []
    store.trace(lambda sql: searches.append(sql) if "bm25(" in sql else None)
    hits = lexical.own_words(terms, 8, [None, named])
    store.trace(None)
    assert [h.id for h in hits] == [h.id for h in expected]
    ranked_apart = any("between" in sql for sql in searches)
    if "filler" in others:  # the other project's pages are longer: hugo's fill the top
        assert {h.project for h in whole} == {"g/hugo"} and not ranked_apart
        assert len(hits) == 8
    else:
        assert "g/other" in {h.project for h in whole} and ranked_apart
        assert {h.project for h in hits[8:]} == {"g/hugo"} and len(hits) > 8
