"""The README's chat bot client (examples/chatbot.py) against the real ``scout serve``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.corpus import BACKUPS, CRED_URL, make_store
from tests.fakes.serving import claude_on_path, running, write_serve_config

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
        "To rotate the database keys, run `vault rotate --all` from the admin host. [1]"
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
