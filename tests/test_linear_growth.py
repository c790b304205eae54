"""Every module that matches patterns on untrusted text grows linearly on its worst cases.

Worst cases are generated from each module's own compiled patterns (tests/helpers/growth.py: runs of
each character they name, of their openers, nested brackets, a long run between two words) and
placed where that module's patterns look (a front matter value, a title over a short underline,
a role's text, an admonition's title...). Each is timed at n and 4n in the same run: 4n may take
at most 6 times as long (DESIGN.md, "Hostile input is bounded by construction"). The hand-made
cases below are the review's classes, which took quadratic time before their patterns changed.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest

from scout import doc_paths, identifiers, normalise, safe_text, schedule, words
from scout.compose import citations, prompt
from scout.corpus import markdown, markup, passages, rst, rst_ids
from scout.errors import ScoutError
from scout.providers import offline
from scout.providers.base import PromptPassage
from scout.providers.schema import AnswerOutput
from scout.retrieve import lexical, question
from signposts import audit, diffs, docs_map, extract_norm, extract_scan, extract_text, extract_urls
from signposts.extract import extract_issue
from signposts.references import DocsSite, ExtractContext
from tests.helpers.growth import (
    MAX_RATIO,
    Make,
    growth,
    in_context,
    module_patterns,
    slow_cases,
    worst_cases,
)


def _split(path: str) -> Callable[[str], object]:
    return lambda text: passages.split_document(path, text)


def _quiet(run: Callable[[str], object]) -> Callable[[str], object]:
    """`run`, where Scout's own refusal of an input (a question too long) is an outcome too."""

    def guarded(text: str) -> object:
        try:
            return run(text)
        except (ScoutError, ValueError) as exc:  # ValueError: the schedule parser's, for config
            return exc

    return guarded


def _words(text: str) -> object:
    return identifiers.batch_words([text])


_MR = "https://gitlab.acme.example/acme/app/-/merge_requests/12"
_TREE = "https://gitlab.acme.example/acme/app/-/tree/main/"


def _extract(text: str) -> object:
    return extract_issue("", text, (), CONTEXT)


def _answer(text: str) -> object:
    output = AnswerOutput.model_construct(answer=text, cited=[1], declined=False, reason="")
    return citations.check(output, 8)


def _offline(text: str) -> object:
    passage = PromptPassage(n=1, heading="Rotating keys", source_line="a b L1-2 @ x", text=text)
    return offline.compose_answer("how are keys rotated weekly", (passage,)), offline.sentences(
        text
    )


CONTEXT = ExtractContext(
    "https://gitlab.acme.example",
    (DocsSite("https://docs.acme.example/h/", "acme/h", "docs/"),),
    "acme/app",
    max_bytes=10 << 20,
    timeout=600.0,  # the patterns, not the budget, must keep this linear
)

# module -> (its patterns' modules, the function run on untrusted text, where the text goes)
MODULES: dict[str, tuple[tuple[ModuleType, ...], Callable[[str], object], dict[str, str]]] = {
    "markdown": (
        (markdown, markup, passages),
        _split("docs/a.md"),
        {
            "a line": "{}\n",
            "a heading": "# {}\n\ntext\n",
            "a YAML title": "---\ntitle: {}\n---\n# H\n",
            "a TOML title": '+++\ntitle = "{}"\n+++\ntext\n',
            "an admonition": "!!! note {}\n\n    body\n",
            "an admonition title": '!!! note "{}"\n\n    body\n',
            "a container": ":::{}\nbody\n:::\n",
            "a container title": ":::note[{}]\nbody\n:::\n",
            "a shortcode": "{{< tab title={} >}}\n",
            "a MyST role": "Text {ref}`{}` end\n",
            "an HTML comment": "<!-- {}\n",
            "heading attributes": "# Title {#{}}\n\ntext\n",
        },
    ),
    "mdx": (
        (markup,),
        _split("docs/a.mdx"),
        {"a line": "{}\n", "a tab": "<Tab label='{}'>x</Tab>\n"},
    ),
    "rst": (
        (rst, markup, passages, rst_ids),
        _split("docs/a.rst"),
        {
            "a line": "{}\n",
            "a title under a short underline": "{}\n====\n\ntext\n",
            "a role with a target": "Text :ref:`{}<x>` end\n",
            "a role": "Text :class:`{}` end\n",
            "a directive": ".. note:: {}\n\n   body\n",
            "a field list": ":title: {}\n:author: x\n\ntext\n",
            "a PEP header": "PEP: 8\nTitle: {}\n\ntext\n",
            "a list table": ".. list-table:: {}\n   :header-rows: 1\n\n   * - a\n     - b\n",
            "an anonymous target": "T\n=\n\n__ {}\n\nT\n=\n",
            "a footnote": ".. [{}] text [#]_\n",
            "an inline target": "Text _`{}` end\n\nT\n=\n\nT\n=\n",
            "an embedded link": "Text `{} <https://x>`_ end\n",
            "a label": ".. _{}:\n\nT\n=\n",
            "a name option": ".. note:: x\n   :name: {}\n\n   body\n",
        },
    ),
    "plain": ((passages,), _split("README"), {"a line": "{}\n"}),
    "docs_map": (
        (docs_map,),
        lambda text: (
            docs_map.front_matter(text),
            docs_map.page_urls("docs/a.md", "docs/", "hugo", docs_map.front_matter(text).get),
        ),
        {
            "a YAML value": "---\nslug: {}\n---\n",
            "a YAML list": "---\naliases:\n  - {}\n---\n",
            "a YAML flow list": "---\naliases: [{}]\n---\n",
            "a TOML value": "+++\nslug = {}\n+++\n",
        },
    ),
    "docs_map pages": (
        (docs_map,),
        lambda page: (
            docs_map.normalise_page(page, "hugo"),
            docs_map.source_candidates(page, "docs/"),
        ),
        {"a page path": "guide/{}/"},
    ),
    "offline": ((offline,), _offline, {"a passage": "{}", "a sentence": "Keys rotate {}."}),
    "citations": (
        (citations, normalise),
        _answer,
        {"an answer": "{}", "after a marker": "x [1] {}"},
    ),
    "prompt": (
        (prompt, normalise),
        lambda text: (prompt.neutralise(text, limit=1 << 30), normalise.disarm_markers(text)),
        {"a passage": "{}"},
    ),
    "retrieve": (
        (lexical, question, words),
        _quiet(
            lambda q: (
                lexical.compounds(q),
                words.query_terms(q),
                lexical.build_query(q),
                question.code_spans(q),
                question.about_versions(q, words.words(q)),
            )
        ),
        {"a question": "{}"},
    ),
    "identifiers": (
        (identifiers,),
        lambda text: identifiers.batch_words([text]),
        {"a passage": "{}", "an option": "Set `{}` to false."},
    ),
    "audit": ((audit,), audit.reason_class, {"a reason": "{}", "a prefixed reason": "x: {}"}),
    "safe_text": (
        (safe_text,),
        lambda t: (
            safe_text.printable(t, 1 << 30),
            safe_text.printable_block(t),
            safe_text.json_safe(t),
            safe_text.one_line(t, 200),
        ),
        {"a line": "{}"},
    ),
    "diffs": (
        (diffs,),
        lambda d: (diffs.added_lines(d), diffs.map_lines(d, (1, 2))),
        {"a hunk header": "@@ -1,2 +{} @@\n+x\n", "an added line": "@@ -1,2 +1,3 @@\n+{}\n"},
    ),
    "languages": (
        (doc_paths,),
        lambda path: (doc_paths.translation_language(path), doc_paths.left_out(path, ["en"])),
        {"a folder": "docs/{}/page.md", "a suffix": "docs/page.{}.md"},
    ),
    "schedule": (
        (schedule,),
        _quiet(lambda text: schedule.parse_schedule(text)),
        {"a cron field": "{} * * * *", "an interval": "{}m"},
    ),
    "extract": (
        (extract_scan, extract_text, extract_norm, extract_urls),
        lambda text: extract_issue("", text, (), CONTEXT),
        {
            "issue text": "{}",
            "a URL": "https://gitlab.acme.example/acme/app/-/blob/main/{}",
            "a docs URL": "https://docs.acme.example/h/{}",
            "a Markdown link": "[x]({})",
            "after an MR URL": "https://gitlab.acme.example/acme/app/-/merge_requests/12{}",
            "an autolink": "<https://gitlab.acme.example/acme/app/-/commit/{}>",
            "a tree URL": "https://gitlab.acme.example/acme/app/-/tree/main/{}",
            "a relative folder link": "[x]({}/)",
        },
    ),
}


# One test a module and context: each takes a second or two, so parallel workers share them out
# (one test a module kept a worker busy for 34 s while the other had finished).
PLACES = [(module, where) for module, (_, _, contexts) in MODULES.items() for where in contexts]


@pytest.mark.slow
@pytest.mark.parametrize(("module", "where"), PLACES, ids=[f"{m}-{w}" for m, w in PLACES])
def test_generated_worst_cases_grow_linearly(module: str, where: str) -> None:
    patterns_of, run, contexts = MODULES[module]
    cases = in_context(worst_cases(module_patterns(*patterns_of)), {where: contexts[where]})
    assert len(cases) >= 15  # the generator read the module's patterns
    # A line break ends TOML's one-line string, and front matter of more than MAX_TOML_LINES
    # lines is not front matter: at n it is skipped whole, at 4n parsed as Markdown, a ratio of
    # that cap (47x), not of growth. Those lines are the "a line" context's cases already.
    cases = {k: v for k, v in cases.items() if not (k.endswith(" TOML title") and "\\n" in k)}
    assert slow_cases(run, cases) == {}


# The review's classes, by hand: each of these was quadratic before.
HAND_MADE: dict[str, tuple[Callable[[str], object], Make]] = {
    "Markdown front matter value of spaces": (
        _split("a.md"),
        lambda n: "---\ntitle: a" + " " * n + "a\n---\n",
    ),
    "docs-site front matter value of spaces": (
        docs_map.front_matter,
        lambda n: "---\nslug: a" + " " * n + "a\n---\n",
    ),
    "docs-site front matter list item of spaces": (
        docs_map.front_matter,
        lambda n: "---\naliases:\n  - a" + " " * n + "a\n---\n",
    ),
    "docs-site TOML value of spaces": (
        docs_map.front_matter,
        lambda n: "+++\nslug = a" + " " * n + "a\n+++\n",
    ),
    "reST title of emphasis openers under a short underline": (
        _split("a.rst"),
        lambda n: "*a " * (n // 3) + "\n====\n\ntext\n",
    ),
    "reST role text of spaces before a target": (
        _split("a.rst"),
        lambda n: ":ref:`a" + " " * n + "a<x>`\n",
    ),
    "admonition title of spaces": (_split("a.md"), lambda n: "!!! note a" + " " * n + "!\n"),
    "container of spaces": (_split("a.md"), lambda n: ":::" + " " * n + "!\n"),
    "offline table rule of spaces": (offline.sentences, lambda n: " " * n + "!"),
    "a question of one long word": (_quiet(lexical.compounds), lambda n: "a" * n),
    "an answer of digits in an open bracket": (_answer, lambda n: "[" + "1" * n),
    "identifiers: one long token with no hump": (_words, lambda n: "a" * n),
    "identifiers: one long token of humps": (_words, lambda n: "aB" * (n // 2)),
    "identifiers: capitals, then one lower letter": (_words, lambda n: "A" * n + "b"),
    "identifiers: many short humped tokens": (_words, lambda n: "aBc " * (n // 4)),
    # issue 43: Sphinx's numbered ids, counted along the page
    "a page of one title repeated": (_split("a.rst"), lambda n: "T\n=\n\nt [1]_\n\n" * (n // 12)),
    "titles that take the ids the counter would": (
        _split("a.rst"),
        lambda n: "".join(f"ID{k}\n=====\n\n" for k in range(n // 12)) + "T\n=\n\nT\n=\n" * 50,
    ),
    "a run of role-like colons": (_split("a.rst"), lambda n: ":a" * (n // 2) + "\n"),
    "many backquotes before one bracket": (_split("a.rst"), lambda n: "` " * (n // 2) + "<x>`_\n"),
    # issue 43: text glued after a shown URL, read from the URL's start
    "an MR URL with a long bracketed aside": (
        _extract,
        lambda n: f"{_MR}(" + "the fix " * (n // 8) + ")",
    ),
    "many MR URLs, each with an aside": (_extract, lambda n: f"{_MR}(x) " * (n // 60)),
    "a long run of digits after merge_requests/": (_extract, lambda n: _MR + "1" * n + "(x)"),
    "a long run of hex after commit/": (
        _extract,
        lambda n: f"<{_MR.replace('merge_requests/12', 'commit/')}{'a' * n}(x)>",
    ),
    "many tree URLs": (_extract, lambda n: f"{_TREE}docs " * (n // 60)),
    "a relative folder link of many segments": (_extract, lambda n: "[x](" + "a/" * (n // 2) + ")"),
}


@pytest.mark.parametrize("case", HAND_MADE)
def test_hand_made_worst_cases_grow_linearly(case: str) -> None:
    run, make = HAND_MADE[case]
    n, ratio = growth(run, make)
    assert ratio <= MAX_RATIO, f"{case}: {ratio:.1f}x at {n} -> {4 * n}"


def _quadratic(text: str) -> object:
    """A count of the rest of a text from every 16th place. (A search for a missing letter from
    every place is quadratic too, but at these sizes its calls cost more than its scans.)"""
    return [text.count("a", i) for i in range(0, len(text), 16)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("run", "linear"),
    [
        (_quadratic, False),
        (lambda text: sum(1 for _ in text), True),
    ],
    ids=["n^2", "n"],
)
def test_the_growth_check_tells_growth_from_linear_work(
    run: Callable[[str], object], linear: bool
) -> None:
    # What every check above leans on: quadratic work is over the bound however often it is
    # measured again, and linear work under it. (n^1.5 reads 8x alone, and 5.8x once in a loaded
    # parallel run: too near the bound to be a test of the check.)
    n, ratio = growth(run, lambda size: "a" * size)
    assert (ratio <= MAX_RATIO) is linear, f"{ratio:.1f}x at {n}"
