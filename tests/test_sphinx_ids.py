"""Sphinx's numbered ids (`#id1`, `#id2`, ...) land where Sphinx put them, on real Sphinx pages.

tests/fixtures/sphinx holds reST sources and the HTML Sphinx 9.0.4 built from them (BSD, see
its LICENSE.rst and SOURCES.md). Every id in the HTML must land, through Scout's passages, in the
passage of the section that holds it on the built page; where Scout cannot know the number (an
`include` before it), the id lands nowhere, and a docs URL with it takes the page as its target
and says so. Sphinx is not run here.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from scout.corpus.passages import Section, split_rst
from scout.demo.builder import EstateBuilder
from signposts.extract import extract
from tests.helpers.validator import local_validator

SPHINX = Path(__file__).parent / "fixtures" / "sphinx"
SITE = "https://docs.acme.example/handbook/"


class _Ids(HTMLParser):
    """Every id of a built page with the id of the innermost ``<section>`` holding it."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str | None] = []  # one per open tag: the section id, or None
        self.found: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        ident = dict(attrs).get("id")
        self.open.append(ident if tag == "section" else None)
        holder = next((s for s in reversed(self.open) if s), None)
        if ident and holder:
            self.found[ident] = holder

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.open.pop()

    def handle_endtag(self, tag: str) -> None:
        if self.open:
            self.open.pop()


def built_ids(page: str) -> dict[str, str]:
    parser = _Ids()
    parser.feed((SPHINX / f"{page}.html").read_text(encoding="utf-8"))
    return parser.found


def landing(sections: list[Section], anchor: str) -> list[str]:
    return [s.heading for s in sections if s.has_anchor(anchor)]


def test_every_id_sphinx_built_lands_in_the_section_holding_it() -> None:
    sections = split_rst((SPHINX / "deploy.rst").read_text(encoding="utf-8"))
    ids = built_ids("deploy")
    numbered = [i for i in ids if i.startswith("id") and i[2:].isdigit()]
    assert len(numbered) >= 12  # the page is full of them: the fixture is what it says
    for ident, section in ids.items():
        where = landing(sections, ident)
        assert len(where) == 1, f"#{ident} lands in {where}"
        assert where == landing(sections, section), f"#{ident} is in #{section} on the page"


@pytest.mark.parametrize(
    ("anchor", "heading"),
    [
        ("configuration", "Linux > Configuration"),
        ("id4", "Windows > Configuration"),  # the anonymous target before it took no number...
        ("id7", "macOS > Configuration"),  # ... the one after Windows' took id5
        ("id9", "macOS > Troubleshooting"),
        ("upgrading", "Deploying the ingest service > Upgrading"),  # the label's id
        ("id10", "Deploying the ingest service > Upgrading"),  # the title's own
        ("id13", "Rotating tokens > Expired token"),  # an inline target took its name
        ("id14", "Deploying the ingest service > Upgrading"),  # the second one
        ("id15", "Deploying the ingest service > 日本語"),
    ],
)
def test_numbered_titles(anchor: str, heading: str) -> None:
    sections = split_rst((SPHINX / "deploy.rst").read_text(encoding="utf-8"))
    (where,) = [s for s in sections if s.has_anchor(anchor)]
    assert where.heading.endswith(heading)
    # the two "Upgrading" sections are told apart
    first, second = (s.line_start for s in sections if s.heading.endswith("> Upgrading"))
    assert where.line_start == {"id10": first, "upgrading": first, "id14": second}.get(
        anchor, where.line_start
    )


def test_after_an_include_a_number_is_placed_nowhere_rather_than_guessed() -> None:
    sections = split_rst((SPHINX / "runbook.rst").read_text(encoding="utf-8"))
    ids = built_ids("runbook")
    assert ids["id2"] == "id2"  # the second "Checks", numbered 2: the include took 1
    assert landing(sections, "id2") == [] and landing(sections, "id1") == []
    for ident in ("checks", "restart"):
        assert len(landing(sections, ident)) == 1


def _handbook(builder: EstateBuilder) -> None:
    repo = builder.project("acme/handbook")
    files = {
        f"docs/{name}": (SPHINX / name).read_text(encoding="utf-8")
        for name in ("conf.py", "index.rst", "deploy.rst", "runbook.rst", "_snippets/common.rst")
    }
    repo.commit(files, "Add the handbook")
    builder.write()


@pytest.mark.parametrize(
    ("page", "question", "status", "heading", "page_target"),
    [
        ("deploy.html#id7", "Where is the token set on macOS?", "accepted", "macOS", False),
        ("deploy.html#id4", "Where is the token set on Windows?", "accepted", "Windows", False),
        ("deploy/#id10", "How do I upgrade the nodes?", "accepted", "Upgrading", False),
        ("runbook.html#id2", "When do I check the queue depth?", "accepted", None, True),
        ("deploy.html#id99", "How is the ingest service deployed?", "accepted", None, True),
        ("deploy.html#nowhere", "How do I upgrade the nodes?", "rejected", None, False),
    ],
)
def test_a_numbered_anchor_validates_against_its_section_or_the_page(
    tmp_path: Path,
    estate_builder: EstateBuilder,
    page: str,
    question: str,
    status: str,
    heading: str | None,
    page_target: bool,
) -> None:
    _handbook(estate_builder)
    validator, forge, context = local_validator(
        tmp_path, estate_builder, url=SITE, generator="sphinx"
    )
    (reference,) = extract(f"{SITE}{page}", context).references
    verdict = validator.validate(reference, question)
    assert verdict.status == status, verdict.reason
    anchor = page.split("#")[1]
    if status == "rejected":
        assert verdict.reason == f"#{anchor} matches no heading of docs/deploy.rst"
    elif page_target:
        note = f"#{anchor} is an id Sphinx numbered that cannot be placed: the page is the target"
        assert verdict.reason.endswith(note)
        assert verdict.target is not None and "#" not in verdict.target
        resolves = next(c for c in verdict.checks if c.check == "resolves")
        assert resolves.detail.endswith(note)
    else:
        assert heading is not None and all(heading in p.heading for p in verdict.passages)
        assert verdict.target is not None and verdict.target.endswith(f"#{anchor}")
        assert "page is the target" not in verdict.reason
    forge.close()


def test_a_numbered_anchor_on_a_markdown_site_is_not_sphinx_s(
    tmp_path: Path, estate_builder: EstateBuilder
) -> None:
    repo = estate_builder.project("acme/handbook")
    repo.commit({"docs/keys.md": "# Keys\n\nRotate the keys.\n"}, "Add")
    estate_builder.write()
    validator, forge, context = local_validator(
        tmp_path, estate_builder, url=SITE, generator="mkdocs"
    )
    (reference,) = extract(f"{SITE}keys/#id1", context).references
    verdict = validator.validate(reference, "How do I rotate the keys?")
    assert (verdict.status, verdict.reason) == (
        "rejected",
        "#id1 matches no heading of docs/keys.md",
    )
    forge.close()
