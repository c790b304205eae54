"""The offline provider reads like an extract, and declines rather than answer off the point."""

from __future__ import annotations

import pytest

from scout.compose import answer_task
from scout.providers.offline import OfflineProvider, plain, script, sentences
from scout.store import PassageRecord
from tests.fakes.corpus import passage

# PEP 20 (public domain), as its reST source splits.
ZEN = passage(
    "python/peps",
    "peps/pep-0020.rst",
    (10, 14),
    "PEP 20 – The Zen of Python > Abstract",
    "Long time Pythoneer Tim Peters succinctly channels the BDFL's guiding\n"
    "principles for Python's design into 20 aphorisms, only 19 of which have\n"
    "been written down.",
)
# A page that shares 3 of the 5 content words of "how do I rotate the TLS certificate of the
# registry ingress?" (registry, ingress, certificate) and says nothing about rotating TLS.
REGISTRY = passage(
    "acme/charts",
    "doc/registry.md",
    (1, 8),
    "Container registry > Ingress",
    "The registry is served through its own ingress. Set `registry.ingress.enabled` to expose "
    "it; the certificate of the main ingress is reused when no secret is given.",
)


def answer(question: str, *passages: PassageRecord) -> tuple[str, list[int], bool, str]:
    out = OfflineProvider().run(answer_task(question, list(passages)))
    return out.answer, out.cited, out.declined, out.reason


def test_answers_what_is_the_zen_of_python_when_it_ranks_first() -> None:
    assert answer("What is the Zen of Python?", ZEN, REGISTRY) == (
        "Long time Pythoneer Tim Peters succinctly channels the BDFL's guiding principles for "
        "Python's design into 20 aphorisms, only 19 of which have been written down. [1]",
        [1],
        False,
        "",
    )


def test_a_page_sharing_three_of_five_words_does_not_answer() -> None:
    question = "How do I rotate the TLS certificate of the registry ingress?"
    _, cited, declined, reason = answer(question, REGISTRY, ZEN)
    assert (cited, declined, reason) == ([], True, "no passage covers: rotate, tls")


def test_asking_words_are_not_content() -> None:
    # "possible" and "still" ask; "registry", "ingress" and "expose" are the question.
    _, cited, declined, _ = answer("Is it still possible to expose the registry ingress?", REGISTRY)
    assert (cited, declined) == ([1], False)


MARKED_UP = passage(
    "acme/site",
    "docs/publish.md",
    (1, 30),
    "Publishing {#publish}",
    "<!-- TODO: screenshots -->\n"
    '{{< alert type="note" >}}\n'
    "Publishing needs **maintainer** rights on the [project](https://example.com/p).\n"
    "{{< /alert >}}\n\n"
    "!!! warning\n\n"
    "    Indented admonition text is left out with code.\n\n"
    "```yaml\n"
    "pages: publish the site\n"
    "```\n\n"
    "See :ref:`the deploy guide <deploy>` to publish with ``scout publish``.\n\n"
    "| Option | Meaning |\n|---|---|\n| `--site` | publish one site |\n",
)


def test_markup_is_taken_out_of_the_extract() -> None:
    assert answer("Who may publish with maintainer rights?", MARKED_UP) == (
        "Publishing needs maintainer rights on the project. [1]",
        [1],
        False,
        "",
    )
    text, *_ = answer("How do I publish the site?", MARKED_UP)
    assert text == "`--site`; publish one site [1]"


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        ("Use **bold** and *emphasis*.", "Use bold and emphasis."),
        ("Read [the guide](https://x.example/g) first.", "Read the guide first."),
        ("A {{< details >}}hidden{{< /details >}} note.", "A hidden note."),
        ("Heading {#anchor-id}", "Heading "),
        ("See :doc:`/cli-usage` and :ref:`config <cfg>`.", "See /cli-usage and config."),
        ("Set ``ssl_verify`` to a path.", "Set `ssl_verify` to a path."),
        ("`GitHub Pages`_ serves static HTML.", "GitHub Pages serves static HTML."),
        ("<kbd>Ctrl</kbd> + <kbd>C</kbd>", "Ctrl + C"),
        ("```sh\nrm -rf /\n```\nAfter.", "After."),
    ],
)
def test_plain_keeps_the_words_and_drops_the_markup(text: str, prose: str) -> None:
    assert plain(text) == prose


def test_sentences_skip_code_and_tables() -> None:
    text = "One. Two!\n\n```\ncode here\n```\n| a | b |\n|---|---|\n- item three"
    assert sentences(text) == ["One.", "Two!", "a; b", "item three"]


JA = passage(
    "acme/charts",
    "doc-locale/ja-jp/backup.md",
    (1, 6),
    "GitLabのバックアップ > backup-utility",
    "`backup-utility` でバックアップを作成します。Helm チャートの toolbox ポッドで実行します。",
)
EN = passage(
    "acme/charts",
    "doc/backup.md",
    (1, 6),
    "Backing up GitLab > backup-utility",
    "Create a backup with `backup-utility`. It runs in the toolbox pod of the Helm chart.",
)


def test_the_question_language_wins_where_the_corpus_has_a_choice() -> None:
    assert script("How do I run backup-utility in the toolbox?") == "LATIN"
    assert script(JA.body) == "CJK"
    text, cited, declined, _ = answer("How do I run backup-utility in the toolbox?", JA, EN)
    assert (cited, declined) == ([2], False)
    assert text == "It runs in the toolbox pod of the Helm chart. [2]"
