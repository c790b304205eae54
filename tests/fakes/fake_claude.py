"""A fake ``claude`` CLI (print mode) for tests. Stdlib only; run as a script.

It records its argv and stdin as JSON to the file named by ``FAKE_CLAUDE_RECORD`` (appending one
line per call) and replies like Claude Code 2.1 per ``FAKE_CLAUDE_MODE``:

  success            is_error false, exit 0, structured_output from FAKE_CLAUDE_OUTPUT (JSON)
  is_error           subtype "success", is_error true, exit 1 (how auth and API failures look)
  missing_structured is_error false, exit 0, no structured_output
  schema_invalid     is_error false, exit 0, structured_output not matching the schema
  hang               sleeps far longer than any test timeout
  nonzero            prints to stderr only, exit 1 (how bad arguments look)
  invalid_json       prints non-JSON on stdout, exit 0
  echo               like success, but the question (the prompt's ``Question:`` line) is copied
                     into every free-text field it returns (``result`` and the output's strings):
                     what a real model that quotes the question would do
  echo_error         is_error true, exit 1, the question echoed into ``result`` and stderr

The record line also lists the names (never the values) of the environment variables it got.

In success mode, ``FAKE_CLAUDE_BY_QUESTION`` (a JSON object) picks the structured output by the
first of its keys found in the prompt on stdin, so one run can answer each question differently;
without a matching key, ``FAKE_CLAUDE_OUTPUT`` or the default for the task's schema applies
(an answer, an addresses judgement, or search terms no test corpus uses).

``FAKE_CLAUDE_EXPAND_MODE``, when set, is the mode of the search-terms calls alone (their schema
asks for ``terms``), so a test can break expansion and keep the answer.

``FAKE_CLAUDE_DELAY`` (seconds) slows every reply down, like a model at work; the fake's pid is
appended to the file named by ``FAKE_CLAUDE_PIDS`` while it runs, so tests can see it die, and
its start and end times to ``FAKE_CLAUDE_SPANS`` when it ends, so tests can count overlaps.
"""

from __future__ import annotations

import json
import os
import sys
import time

DEFAULT_ANSWER = {
    "answer": "Run `vault rotate` from the admin host [1].",
    "cited": [1],
    "declined": False,
    "reason": "",
}
DEFAULT_ADDRESSES = {"addresses": True, "reason": "the passage gives the steps"}
# Search terms for [retrieval] expand (on by default with a model): words no test corpus uses,
# so a test about something else ranks as it would by the question's words.
DEFAULT_TERMS = {"terms": ["zzfaketerm", "qqfaketerm"]}


def _schema(argv: list[str]) -> dict:
    if "--json-schema" in argv:
        return json.loads(argv[argv.index("--json-schema") + 1])
    return {}


def main() -> int:
    argv = sys.argv[1:]
    stdin = sys.stdin.read()
    record = os.environ.get("FAKE_CLAUDE_RECORD")
    if record:
        with open(record, "a", encoding="utf-8") as f:
            call = {"argv": argv, "stdin": stdin, "cwd": os.getcwd(), "env": sorted(os.environ)}
            f.write(json.dumps(call) + "\n")
    pids = os.environ.get("FAKE_CLAUDE_PIDS")
    if pids:
        with open(pids, "a", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
    started = time.time()
    time.sleep(float(os.environ.get("FAKE_CLAUDE_DELAY", "0")))
    spans = os.environ.get("FAKE_CLAUDE_SPANS")
    if spans:
        with open(spans, "a", encoding="utf-8") as f:
            f.write(f"{started} {time.time()}\n")
    mode = os.environ.get("FAKE_CLAUDE_MODE", "success")
    if "terms" in _schema(argv).get("properties", {}):
        mode = os.environ.get("FAKE_CLAUDE_EXPAND_MODE", mode)
    envelope = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "",
        "num_turns": 1,
        "total_cost_usd": 0.001,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    question = next(
        (line[len("Question: ") :] for line in stdin.splitlines() if line.startswith("Question: ")),
        "",
    )
    if mode == "echo_error":
        envelope.update(is_error=True, result=f"cannot judge: {question}")
        print(json.dumps(envelope))
        print(f"error about {question}", file=sys.stderr)
        return 1
    if mode == "hang":
        time.sleep(60)
        return 0
    if mode == "nonzero":
        print("error: unknown option '--bogus'", file=sys.stderr)
        return 1
    if mode == "invalid_json":
        print("this is not json {")
        return 0
    if mode == "is_error":
        envelope.update(is_error=True, result="Invalid API key · Please run /login")
        print(json.dumps(envelope))
        return 1
    if mode == "missing_structured":
        envelope["result"] = "I think the answer is to rotate keys."
        print(json.dumps(envelope))
        return 0
    if mode == "schema_invalid":
        envelope["structured_output"] = {"answer": 42, "cited": "one"}
        print(json.dumps(envelope))
        return 0
    by_question = json.loads(os.environ.get("FAKE_CLAUDE_BY_QUESTION", "{}"))
    chosen = [value for key, value in by_question.items() if key in stdin]
    if chosen:
        output = chosen[0]
    elif "FAKE_CLAUDE_OUTPUT" in os.environ:
        output = json.loads(os.environ["FAKE_CLAUDE_OUTPUT"])
    elif "addresses" in _schema(argv).get("properties", {}):
        output = DEFAULT_ADDRESSES
    elif "terms" in _schema(argv).get("properties", {}):
        output = DEFAULT_TERMS
    else:
        output = DEFAULT_ANSWER
    if mode == "echo":
        output = {
            key: (f"{question} [1]" if key == "answer" else question)
            if isinstance(value, str)
            else value
            for key, value in output.items()
        }
    envelope["structured_output"] = output
    envelope["result"] = question if mode == "echo" else json.dumps(output)
    print(json.dumps(envelope))
    return 0


if __name__ == "__main__":
    sys.exit(main())
