"""Docs site URLs map back to their source files, per generator, on real sites' URLs.

tests/fixtures/realdocs/docs_urls.json holds real page URLs of six published sites (GitLab's
Helm chart and Hugo's docs on Hugo, python-gitlab and Sphinx on Sphinx, Material for MkDocs,
Stencil on Docusaurus), the source file that builds each, and for each case part of that
repository's file list with the files' front matter copied unedited (origins and licences in
tests/fixtures/realdocs/SOURCES.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scout.config import load_config
from scout.demo.builder import EstateBuilder
from scout.errors import ConfigError
from signposts.docs_map import (
    detect_generator,
    find_source,
    front_matter,
    page_urls,
    source_candidates,
)
from signposts.extract import extract
from tests.helpers.validator import local_validator

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent / "fixtures" / "realdocs" / "docs_urls.json").read_text("utf-8")
)
DETECTED = {"Hugo": "hugo", "Sphinx": "sphinx", "MkDocs": "mkdocs", "Docusaurus": "docusaurus"}


def resolve(case: dict[str, Any], generator: str) -> str | None:
    """What validation does: the generator's candidates first, then the listing's URLs."""
    listing: list[str] = case["listing"]
    page = case["url"][len(case["site"]) :]
    for candidate in source_candidates(page, case["root"], generator):
        if candidate in listing:
            return candidate
    if generator == "auto":
        generator = detect_generator(listing, case["root"]) or "auto"
    return find_source(page, case["root"], generator, listing, case["front_matter"].get)


@pytest.mark.parametrize("case", CASES, ids=[c["url"] for c in CASES])
def test_real_page_urls_map_to_their_source(case: dict[str, Any]) -> None:
    assert resolve(case, "auto") == case["path"]
    # The generator named in the config gives the same answer, except that the Helm chart's
    # site config lives in another project, so only "auto" (which tries each) can know it.
    if case["project"] != "devdocs/gitlab-charts":
        assert resolve(case, DETECTED[case["generator"]]) == case["path"]


@pytest.mark.parametrize(
    ("project", "generator"),
    [
        ("devdocs/hugo-docs", "hugo"),
        ("devdocs/python-gitlab", "sphinx"),
        ("devdocs/sphinx", "sphinx"),
        ("devdocs/mkdocs-material", "mkdocs"),
        ("devdocs/stencil-site", "docusaurus"),
        ("devdocs/gitlab-charts", None),
    ],
)
def test_auto_reads_the_generator_from_the_config_file(project: str, generator: str) -> None:
    case = next(c for c in CASES if c["project"] == project)
    assert detect_generator(case["listing"], case["root"]) == generator


@pytest.mark.parametrize(
    ("path", "generator", "front", "urls"),
    [
        ("content/en/functions/strings/Contains.md", "hugo", {}, {"functions/strings/contains/"}),
        ("content/en/x/_index.md", "hugo", {}, {"x/"}),
        ("content/en/x/index.md", "hugo", {}, {"x/"}),
        ("content/en/a/b.md", "hugo", {"slug": "c"}, {"a/c/"}),
        ("content/en/a/b.md", "hugo", {"url": "/d/e/", "aliases": ["/old/"]}, {"d/e/", "old/"}),
        ("docs/a/b.md", "mkdocs", {}, {"a/b/"}),
        ("docs/a/index.md", "mkdocs", {}, {"a/"}),
        ("docs/blog/posts/z.md", "mkdocs", {"date": "2025-11-05", "slug": "zz"},
         {"blog/posts/z/", "blog/2025/11/05/zz/"}),
        ("docs/a/b.rst", "sphinx", {}, {"a/b.html", "a/b/"}),
        ("docs/index.rst", "sphinx", {}, {""}),
        ("docs/testing/03-api.md", "docusaurus", {}, {"testing/api"}),
        ("docs/components/events.md", "docusaurus", {"slug": "/events"}, {"events"}),
        ("docs/guide/x.md", "docusaurus", {"slug": "y"}, {"guide/y"}),
        ("docs/guide/guide.md", "docusaurus", {}, {"guide"}),
        ("docs/notes.txt.bak", "sphinx", {}, set()),
    ],
)  # fmt: skip
def test_page_urls_per_generator(
    path: str, generator: str, front: dict[str, object], urls: set[str]
) -> None:
    root = "content/en/" if path.startswith("content/") else "docs/"
    assert page_urls(path, root, generator, front.get) == urls


def test_front_matter_scalars_and_lists() -> None:
    text = (
        "---\ntitle: 'A: b'\nslug: /events\naliases: [/x/, \"/y/\"]\nkeywords:\n  - one\n"
        "  - two\nurl: /z/ # moved\n---\nbody\n"
    )
    assert front_matter(text) == {
        "title": "A: b",
        "slug": "/events",
        "aliases": ["/x/", "/y/"],
        "keywords": ["one", "two"],
        "url": "/z/",
    }
    toml = '+++\ntitle = "Deploy"\nurl = "/d/"\naliases = ["/x/", \'/y/\']\ndraft = false\n+++\n'
    assert front_matter(toml) == {"title": "Deploy", "url": "/d/", "aliases": ["/x/", "/y/"]}
    assert front_matter("no front matter\n---\n") == {}
    assert front_matter("---\nunclosed: yes\n") == {}


def test_source_candidates_refuse_traversal() -> None:
    assert source_candidates("../secrets/", "docs/") == []
    assert source_candidates("a/../../b.html", "docs/", "sphinx") == []


@pytest.mark.parametrize(
    ("generator", "page", "source"),
    [
        ("hugo", "functions/strings/contains/", "Contains.md"),  # Hugo lowercased the URL
        ("auto", "functions/strings/contains/", "Contains.md"),  # hugo.toml names Hugo
        ("hugo", "commands/deploy-now/", "deploy.md"),  # front matter url
        ("hugo", "old-deploy/", "deploy.md"),  # an alias still leads to the page
        ("hugo", "functions/strings/nowhere/", None),
        ("docusaurus", "events", "events.md"),  # slug: /events, whatever the file path
        ("sphinx", "functions/strings/Contains.html", "Contains.md"),
        ("sphinx", "glossary.html#term-builder", "glossary.rst"),  # a glossary term
        ("sphinx", "glossary/#terms", "glossary.rst"),  # a label, dirhtml page
        ("sphinx", "glossary.html#id1", "glossary.rst"),  # docutils' id of a repeated title
        ("auto", "glossary.html#nowhere", None),
    ],
)
def test_validation_maps_docs_urls_through_the_generator(
    tmp_path: Path, estate_builder: EstateBuilder, generator: str, page: str, source: str | None
) -> None:
    repo = estate_builder.project("acme/handbook")
    repo.commit(
        {
            "hugo.toml": "baseURL = 'https://docs.acme.example/handbook/'\n",
            "docs/functions/strings/Contains.md": (
                "---\ntitle: strings.Contains\ndescription: Reports whether the given string "
                "contains the given substring.\n---\n\nThe check is case sensitive.\n"
            ),
            "docs/commands/deploy.md": (
                "---\ntitle: deploy\nurl: /commands/deploy-now/\naliases: [/old-deploy/]\n---\n"
                "\nDeploy the site to the configured target.\n"
            ),
            "docs/glossary.rst": (
                "Glossary\n========\n\n.. _terms:\n\nTerms\n-----\n\n.. glossary::\n\n"
                "   builder\n      A class that turns documents into a site.\n\n"
                "Terms\n-----\n\nMore terms for the site.\n"
            ),
            "docs/components/events.md": (
                "---\ntitle: Events\nslug: /events\n---\n\n# Events\n\nEmit a custom event.\n"
            ),
        },
        "init",
    )
    estate_builder.write()
    validator, forge, context = local_validator(tmp_path, estate_builder, generator=generator)
    try:
        (reference,) = extract(f"https://docs.acme.example/handbook/{page}", context).references
        verdict = validator.validate(reference, "Which string does the site deploy or emit?")
        if source is None:
            assert (verdict.check, verdict.status) == ("resolves", "rejected")
            assert "no source file" in verdict.reason or "matches no heading" in verdict.reason
        else:
            assert verdict.check != "resolves", verdict.reason
            assert verdict.target_path is not None and verdict.target_path.endswith(source)
    finally:
        forge.close()


def test_an_unknown_generator_is_a_config_error(tmp_path: Path) -> None:
    target = tmp_path / "scout.toml"
    target.write_text(
        "[forge]\nkind = 'gitlab'\nurl = 'https://g.example'\ngroups = ['acme']\n"
        "[[docs_site]]\nurl = 'https://docs.example/'\nproject = 'acme/docs'\n"
        "generator = 'jekyll'\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(target)
    assert "docs_site.0.generator" in str(caught.value)
