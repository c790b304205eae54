"""The README's chat bot client (examples/chatbot.py) against the real ``scout serve``, and its
escaping: documentation text reaches a chat as text, never as a link, mention or ping.

The markup rules followed: Slack's mrkdwn ("Formatting text for app surfaces", api.slack.com/
reference/surfaces/formatting: escape ``&``, ``<`` and ``>``; ``<url|text>`` links, ``<!channel>``
and ``<@U…>`` need a raw ``<``), CommonMark's backslash escapes for Markdown (Mattermost and
Discord render Markdown; a backslash before ASCII punctuation makes it literal), and both chats'
``@everyone``/``@here``/``@channel`` mentions, which a zero-width space after ``@`` breaks.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.corpus import BACKUPS, CRED_URL, filler, make_store, passage
from tests.fakes.serving import claude_on_path, running, write_serve_config
from tests.helpers.growth import assert_linear

CHATBOT = Path(__file__).resolve().parent.parent / "examples" / "chatbot.py"


def chat(url: str, question: str, *args: str, key: str | None = None) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SCOUT_API_KEY"}
    if key:
        env["SCOUT_API_KEY"] = key
    done = subprocess.run(
        [sys.executable, str(CHATBOT), *args, url, question],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return done.returncode, done.stdout, done.stderr


def test_chatbot_posts_answers_with_links_declines_honestly_and_needs_its_key(
    tmp_path: Path,
) -> None:
    make_store(tmp_path).close()
    config = write_serve_config(
        tmp_path, provider="claude-local", api_keys_env="SCOUT_TEST_KEYS", rate_limit="3/hour"
    )
    answer = {
        "answer": "To rotate the database keys, run `vault rotate --all` from the admin host. [1]",
        "cited": [1],
        "declined": False,
        "reason": "",
    }
    env = {
        **claude_on_path(tmp_path),
        "FAKE_CLAUDE_OUTPUT": json.dumps(answer),
        "SCOUT_TEST_KEYS": "bot-key",
    }
    with running(config, env=env) as server:
        answered = chat(server.url, "How do I rotate keys?", key="bot-key")
        slack = chat(server.url, "How do I rotate keys?", "--style", "slack", key="bot-key")
        declined = chat(server.url, "what is the weather in Lisbon", key="bot-key")
        limited = chat(server.url, "How do I rotate keys?", key="bot-key")
        no_key = chat(server.url, "How do I rotate keys?")
    assert answered[0] == 0
    assert answered[1] == (
        "To rotate the database keys, run `vault rotate --all` from the admin host. \\[1\\]"
        f"\n\nSources:\n[1] [acme/config docs/credentials.md lines 12-30]({CRED_URL})\n"
    )
    assert f"[1] <{CRED_URL}|acme/config docs/credentials.md lines 12-30>" in slack[1]
    assert declined == (
        0,
        "The documentation does not cover this, so there is no answer rather than a guess.\n"
        "Reason: nothing matched\n",
        "",
    )
    # a rate limit longer than a chat can wait: one line on stderr, exit 1, no guess
    assert limited[0] == 1 and limited[1] == ""
    assert limited[2].startswith("Scout could not answer (429 rate_limited)")
    assert no_key[0] == 1 and "401 unauthorized" in no_key[2]


def test_chatbot_posts_where_to_look_in_offline_mode(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    with running(write_serve_config(tmp_path)) as server:
        found = chat(server.url, "How do I rotate keys?")
        missed = chat(server.url, "How do I rotate backups to tape storage?")
    assert found == (
        0,
        "Offline mode: no model read these passages; they best match the question.\n\n"
        f"Where to look:\n[1] [acme/config docs/credentials.md lines 12-30]({CRED_URL})\n",
        "",
    )
    assert missed[1].startswith(
        "Not answered in offline mode (no passage covers: rotate, tape, storage); no model read "
        "the passages, so this does not mean the documentation lacks the answer.\n\n"
        f"Where to look:\n[1] [acme/ops docs/backups.md lines 1-9]({BACKUPS.url})\n"
    )


def test_chatbot_says_when_the_server_cannot_be_reached(tmp_path: Path) -> None:
    code, out, err = chat("http://127.0.0.1:9", "How do I rotate keys?")
    assert (code, out) == (1, "") and err.startswith("<urlopen error")


def _chatbot() -> object:
    spec = importlib.util.spec_from_file_location("chatbot", CHATBOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


chatbot = _chatbot()
HOSTILE = (
    "Ping <!channel> and <!here> now; see <https://evil.example|the docs> or "
    "[the docs](https://evil.example) and ![x](https://evil.example/i.png); "
    "hello @everyone, @here, @channel and <@U123> <#C1> <@&42>; &amp; *bold* _it_ ~s~ ||spoiler|| "
    "# heading > quote `code <!channel>` `a`b"
)
HOSTILE_DOC = {
    "outcome": "answered",
    "answer": HOSTILE,
    "reason": None,
    "citations": [
        {
            "n": 1,
            "project": "acme/<!channel>",
            "path": "docs/[x](https://evil.example)|@everyone.md",
            "lines": [1, 2],
            "url": "https://gitlab.example/acme/-/blob/0/a b|<c>(d)&e.md",
        }
    ],
}


def _slack_markup(message: str) -> list[str]:
    """What Slack reads as markup in a message: every ``<...>`` (links, pings, mentions)."""
    return re.findall(r"<[^<>]*>", message)


def _markdown_markup(message: str) -> list[str]:
    """What Markdown reads as links, images or autolinks, and unescaped mentions, outside code."""
    plain = re.sub(r"`[^`\n]+`", "", message)
    found = re.findall(r"(?<!\\)\[[^\]]*(?<!\\)\]\((?!https://gitlab\.(?:acme\.)?example)", plain)
    found += re.findall(r"(?<!\\)<[^<>]*(?<!\\)>", plain)
    found += re.findall(r"@(?:everyone|here|channel|all)\b", plain)
    return found


def test_slack_messages_escape_what_docs_spell_and_keep_only_their_own_links() -> None:
    message = chatbot.format_message(HOSTILE_DOC, style="slack")  # type: ignore[attr-defined]
    # the one <...> left is the source link Scout made, its address and text escaped
    (own,) = _slack_markup(message)
    assert own.startswith("<https://gitlab.example/acme/-/blob/0/a%20b%7C%3Cc%3E%28d%29&amp;e.md|")
    # Slack ends the address at the first "|": what follows is the shown text, escaped
    assert "&lt;!channel&gt;" in message and "&amp;amp;" in message


def test_markdown_messages_escape_what_docs_spell_and_keep_only_their_own_links() -> None:
    message = chatbot.format_message(HOSTILE_DOC, style="markdown")  # type: ignore[attr-defined]
    assert _markdown_markup(message) == []
    assert "@\u200beveryone" in message and "`code <!channel>`" in message
    own = re.findall(r"\]\((https://gitlab\.example[^)]*)\)", message)
    assert own == ["https://gitlab.example/acme/-/blob/0/a%20b%7C%3Cc%3E%28d%29&e.md"]


@pytest.mark.parametrize("style", ["slack", "markdown"])
@pytest.mark.parametrize("unit", ["<!channel>", "`", "`a", "@", "[x](y)", "\\", "&"])
def test_escaping_grows_linearly(style: str, unit: str) -> None:
    escape = chatbot.escape  # type: ignore[attr-defined]
    assert_linear(lambda n: lambda: escape(unit * n, style), 1_000)


def test_a_hostile_page_reaches_the_chat_as_text_through_the_real_server(tmp_path: Path) -> None:
    hostile = passage(
        "acme/ops", "docs/announce.md", (1, 4), "Announcements channel", HOSTILE + "."
    )
    make_store(tmp_path, [hostile, *filler()]).close()
    # a model that quotes the page (offline mode posts where to look, never a passage's text)
    config = write_serve_config(tmp_path, "claude-local", rate_limit="100/minute")
    quoted = {"answer": HOSTILE + " [1]", "cited": [1], "declined": False, "reason": ""}
    env = {**claude_on_path(tmp_path), "FAKE_CLAUDE_OUTPUT": json.dumps(quoted)}
    with running(config, env=env) as server:
        slack = chat(server.url, "announcements channel", "--style", "slack")
        markdown = chat(server.url, "announcements channel")
    assert slack[0] == 0 and markdown[0] == 0
    assert "evil.example" in slack[1]  # the page's words were quoted...
    assert [m for m in _slack_markup(slack[1]) if "evil" in m or "!" in m or "@" in m] == []
    assert _markdown_markup(markdown[1]) == []  # ...as text
