"""The page at ``/`` in real Chromium (Debian's, driven by Playwright), and its HTML over HTTP.

Asked as a person would: without JavaScript (the form posts), by keyboard only, on a phone's
width; the answer (a model's: the fake ``claude``) shows its Markdown's inline code and lists as
elements and its citations as permalinks with their lines, a decline says it is one, and offline
mode shows where to look, saying it is no model's answer. Accessibility: every field has a
label, every text colour meets WCAG AA contrast (4.5:1) computed from the computed styles, and
Tab reaches the question box first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from scout.serve.page import Block, Part, answer_blocks, answer_parts, inline_parts
from tests.fakes.corpus import BACKUPS, CRED_URL, make_store
from tests.fakes.serving import Server, claude_on_path, running, write_serve_config
from tests.helpers.growth import assert_linear

# One worker runs the module: its server and Chromium are module fixtures, built once a run rather
# than once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_serve_page")

CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)> "quoted" & keys'
# What the model (the fake claude) answers "How do I rotate keys?" with: Markdown a model writes,
# and HTML it may have copied from the docs, which must stay text.
MARKDOWN = (
    "Rotate them with `vault rotate --all` from the admin host [1]:\n\n"
    "- stop `<b>app</b>` first\n"
    "- then <img src=x onerror=alert(3)> restart it\n\n"
    "1. check the keys\n"
    "2. tell the team [1]"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("page")
    make_store(directory).close()
    answer = {"answer": MARKDOWN, "cited": [1], "declined": False, "reason": ""}
    env = {**claude_on_path(directory), "FAKE_CLAUDE_OUTPUT": json.dumps(answer)}
    config = write_serve_config(directory, provider="claude-local", rate_limit="1000/minute")
    with running(config, env=env) as running_server:
        yield running_server


@pytest.fixture(scope="module")
def offline_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("offline")
    make_store(directory).close()
    with running(write_serve_config(directory, rate_limit="1000/minute")) as running_server:
        yield running_server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: install Debian's chromium (.ci/run does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM))
        yield launched
        launched.close()


def _ask(page: Any, question: str) -> None:
    page.fill("#question", question)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def _asked_without_javascript(browser: Any, url: str, question: str) -> tuple[Any, Any]:
    """A fresh context with JavaScript off, its page after asking ``question`` at ``url``."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(url + "/")
    _ask(page, question)
    return context, page


def test_ask_without_javascript_answer_with_citation_links_then_a_decline(
    server: Server, browser: Any
) -> None:
    context, page = _asked_without_javascript(browser, server.url, "How do I rotate keys?")
    assert page.locator("h2#answer-title").inner_text() == "Answer"
    # the answer's Markdown as elements: inline code, a bulleted and a numbered list
    assert page.locator(".prose p code").all_inner_texts() == ["vault rotate --all"]
    assert page.locator(".prose ul > li").all_inner_texts() == [
        "stop <b>app</b> first",
        "then <img src=x onerror=alert(3)> restart it",
    ]
    assert page.locator(".prose ul code").inner_text() == "<b>app</b>"
    numbered = page.locator(".prose ol > li").all_inner_texts()
    assert numbered == ["check the keys", "tell the team [1]"]
    # HTML the answer holds stays text: no element came from it
    assert page.locator(".prose b, .prose img").count() == 0
    link = page.locator("a.citation")
    assert link.count() == 1
    assert link.get_attribute("href") == CRED_URL
    assert link.inner_text() == "acme/config · docs/credentials.md lines 12–30"
    # the prose's [1] jumps to its source
    assert page.locator("a.marker").first.get_attribute("href") == "#source-1"
    assert page.input_value("#question") == "How do I rotate keys?"
    assert page.locator("a.marker").count() == 2
    _ask(page, "what is the weather in Lisbon")
    assert page.locator("h2#decline-title").inner_text() == "Not answered"
    assert "does not cover this question" in page.locator(".decline .honest").inner_text()
    assert page.locator(".decline .reason").inner_text() == "Reason: nothing matched"
    assert page.locator("a.citation").count() == 0
    assert context.cookies() == []
    context.close()


def test_hostile_question_is_shown_as_text_and_runs_nothing(server: Server, browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server.url + "/")
    _ask(page, HOSTILE)
    assert page.input_value("#question") == HOSTILE
    assert page.locator("main script, main img").count() == 0
    assert dialogs == []
    context.close()


def _channel(value: float) -> float:
    value /= 255
    return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4


def _luminance(rgb: tuple[float, float, float]) -> float:
    r, g, b = (_channel(v) for v in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: tuple[float, float, float], bg: tuple[float, float, float]) -> float:
    """WCAG 2's contrast ratio of two sRGB colours."""
    light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def _rgb(css: str) -> tuple[float, float, float]:
    parts = [float(p) for p in re.findall(r"[\d.]+", css)[:3]]
    return (parts[0], parts[1], parts[2])


# Each text element's colour and the background it sits on (the nearest opaque one).
COLOURS = """() => [...document.querySelectorAll('h1,h2,h3,p,label,a,button,li,span,input')]
  .filter(e => e.offsetParent !== null)
  .map(e => {
    let bg = 'rgb(255, 255, 255)';
    for (let n = e; n; n = n.parentElement) {
      const c = getComputedStyle(n).backgroundColor;
      if (c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') { bg = c; break; }
    }
    return {tag: e.tagName, cls: e.className, fg: getComputedStyle(e).color, bg};
  })"""


def test_accessibility_labels_contrast_keyboard_and_phone(server: Server, browser: Any) -> None:
    context = browser.new_context(viewport={"width": 360, "height": 740}, has_touch=True)
    page = context.new_page()
    page.goto(server.url + "/")
    # keyboard only: Tab reaches the question box first, Enter asks
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "question"
    page.keyboard.type("How do I rotate keys?")
    page.keyboard.press("Enter")
    page.wait_for_selector("h2#answer-title")
    # every field has a visible label naming it; the button has text
    fields = page.locator("input:not([type=hidden])")
    for i in range(fields.count()):
        field_id = fields.nth(i).get_attribute("id")
        assert page.locator(f"label[for={field_id}]").inner_text().strip()
    assert page.locator("button[type=submit]").inner_text() == "Ask"
    # contrast of every visible text, from the computed styles
    texts = page.evaluate(COLOURS)
    assert {e["tag"] for e in texts} >= {"H1", "H2", "LABEL", "A", "BUTTON", "P", "INPUT"}
    low = [
        (e["tag"], e["cls"], round(contrast(_rgb(e["fg"]), _rgb(e["bg"])), 2))
        for e in texts
        if contrast(_rgb(e["fg"]), _rgb(e["bg"])) < 4.5
    ]
    assert low == []
    # readable on a phone: the viewport meta is honoured and nothing scrolls sideways
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)") >= 16
    # the answer's citation is reachable by keyboard too
    for _ in range(10):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.className") == "citation":
            break
    assert page.evaluate("document.activeElement.getAttribute('href')") == CRED_URL
    context.close()


def test_offline_mode_shows_where_to_look_and_says_it_is_no_answer(
    offline_server: Server, browser: Any
) -> None:
    context, page = _asked_without_javascript(browser, offline_server.url, "How do I rotate keys?")
    assert page.locator("h2#where-title").inner_text() == "Where to look"
    note = page.locator(".looking .offline").inner_text()
    assert note.startswith("Offline mode: no model read these passages.")
    assert page.locator("#answer-title, .answer, .decline").count() == 0
    link = page.locator("a.citation")
    assert (link.count(), link.get_attribute("href")) == (1, CRED_URL)
    assert link.inner_text() == "acme/config · docs/credentials.md lines 12–30"
    assert page.locator(".looking .heading").inner_text() == "Rotating credentials"
    # the sentences that hold the question's words, under their passage, with code as code
    assert page.locator(".matching").inner_text().startswith("To rotate the database keys, run")
    assert page.locator(".matching code").inner_text() == "vault rotate --all"
    _ask(page, "How do I rotate backups to tape storage?")
    assert page.locator("h2#where-title").inner_text() == "Not answered in offline mode"
    said = page.locator(".looking .offline").inner_text()
    assert "no passage covers: rotate, tape, storage" in said
    assert "does not mean the documentation lacks the answer" in said
    assert "does not cover this question" not in page.content()
    assert page.locator("a.citation").evaluate_all("links => links.map(a => a.href)") == [
        BACKUPS.url,
        CRED_URL,
    ]
    texts = page.evaluate(COLOURS)
    low = [e for e in texts if contrast(_rgb(e["fg"]), _rgb(e["bg"])) < 4.5]
    assert low == []
    context.close()


def test_page_html_has_viewport_csp_stylesheet_and_no_script(server: Server) -> None:
    home = httpx.get(server.url + "/")
    assert home.status_code == 200
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in home.text
    assert "<script" not in home.text and " style=" not in home.text
    assert "style-src 'self'" in home.headers["content-security-policy"]
    css = httpx.get(server.url + "/static/page.css")
    assert css.headers["content-type"].startswith("text/css") and "@media" in css.text
    posted = httpx.post(server.url + "/", data={"question": HOSTILE})
    assert "<script>alert" not in posted.text and "&lt;script&gt;" in posted.text
    assert posted.headers["cache-control"] == "no-store" and "set-cookie" not in posted.headers


@pytest.mark.parametrize(
    ("data", "status", "shown"),
    [
        ({"question": "?!"}, 400, "no words"),
        ({"question": "keys " * 500}, 413, "the limit is 2000"),
        ({}, 400, "no words"),
        ({"question": ["a", "b"], "x": "1", "y": "2", "z": "3"}, 400, "too many fields"),
    ],
)
def test_page_shows_errors_with_their_status(
    server: Server, data: dict[str, Any], status: int, shown: str
) -> None:
    response = httpx.post(server.url + "/", data=data)
    assert response.status_code == status
    assert "Something went wrong" in response.text and shown in response.text


def test_page_body_over_the_limit_is_413(server: Server) -> None:
    form = {"content-type": "application/x-www-form-urlencoded"}
    response = httpx.post(server.url + "/", content=b"question=" + b"a" * 70_000, headers=form)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"


def test_answer_parts_link_only_cited_markers() -> None:
    parts = answer_parts("Do it [1], not [2] nor [12345]. [1]", {1})
    assert [(p.text, p.n) for p in parts] == [
        ("Do it ", None),
        ("[1]", 1),
        (", not [2] nor [12345]. ", None),
        ("[1]", 1),
    ]


@pytest.mark.parametrize("unit", ["[", "[1", "[999", "[1]", "[1234", "[1] x"])
def test_marker_scan_grows_linearly(unit: str) -> None:
    def make(n: int) -> Callable[[], object]:
        text = unit * n
        return lambda: answer_parts(text, {1})

    assert_linear(make, 1_000)


def test_answer_blocks_are_paragraphs_lists_and_inline_code() -> None:
    answer = "Run `a [1]` then [1]:\n- one\n  more\n* two\n\n3. three\n4) four\nafter\n\nlast"
    blocks = answer_blocks(answer, {1})
    assert blocks == [
        Block("p", ((Part("Run "), Part("a [1]", code=True), Part(" then "), Part("[1]", 1),
                     Part(":")),)),
        Block("ul", ((Part("one more"),), (Part("two"),))),
        Block("ol", ((Part("three"),), (Part("four after"),)), start=3),
        Block("p", ((Part("last"),),)),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("``a`b``", ["a`b"]),  # a longer run holds a shorter one
        ("` a `", ["a"]),  # one space each side is taken off
        ("`unclosed and ``two``", ["two"]),
        ("``` never closed", []),
        ("`<script>x</script>`", ["<script>x</script>"]),
    ],
)
def test_code_spans_follow_commonmark(text: str, code: list[str]) -> None:
    parts = inline_parts(text, set())
    assert [p.text for p in parts if p.code] == code
    if not code:  # backticks that open nothing are text, kept as written
        assert "".join(p.text for p in parts) == text


@pytest.mark.parametrize(
    "unit", ["`", "`a", "``a`", "- `x", "1. ` [1]", "\n- a\n  b", "`" * 7 + "a"]
)
def test_answer_markdown_reading_grows_linearly(unit: str) -> None:
    def make(n: int) -> Callable[[], object]:
        text = unit * n
        return lambda: answer_blocks(text, {1})

    assert_linear(make, 1_000)
