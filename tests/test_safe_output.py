"""Repository text on a screen or in a spreadsheet: no terminal escapes, no formulas.

A repository file named with an OSC hyperlink, a bell, a CSI byte and a bidi override is indexed
and cited; ``scout ask`` (text and JSON) and the audit print it without any character a terminal
acts on. Issue links whose paths start like spreadsheet formulas come out of ``--csv`` as text.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from scout.safe_text import json_safe, one_line, printable, printable_block
from tests.helpers.run import Result

HOSTILE_NAME = "docs/\x1b]8;;https:evil.test\x07zebra\u202etxt.\u2066md\x9b2J.md"
TERMINAL = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200b"]


@pytest.fixture
def estate(estate_builder: EstateBuilder) -> Path:
    # Other pages keep the question's words rare (FTS5 gives a word in most rows no weight).
    files = {
        f"docs/topic{n}.md": f"# Topic {n}\n\nWidget{n} handles gadget{n}.\n" for n in range(12)
    }
    files[HOSTILE_NAME] = "# Zebra crossings\n\nZebra crossings are painted every spring.\n"
    estate_builder.project("acme/handbook").commit(files, "Hostile name")
    return estate_builder.write()


@pytest.mark.slow
def test_ask_prints_no_terminal_control_from_a_file_name(
    estate: Path, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    config = write_config(estate)
    assert scout("index", config=config).code == 0
    text = scout("ask", "When are zebra crossings painted?", config=config)
    as_json = scout("ask", "When are zebra crossings painted?", "--json", config=config)
    assert text.code == as_json.code == 0, text.stderr
    assert "Where to look:" in text.stdout and "zebra" in text.stdout
    for output in (text.stdout, text.stderr, as_json.stdout):
        assert not [c for c in TERMINAL if c in output]
    # JSON keeps the exact name, escaped: a program reading it gets the real path.
    (citation,) = as_json.json()["citations"]
    assert citation["path"] == HOSTILE_NAME


@pytest.mark.parametrize(
    ("text", "line", "block"),
    [
        ("a\x1b]0;title\x07b", "a ]0;title b", "a]0;titleb"),
        ("x\u202ey\u2066z", "x y z", "xyz"),
        ("one\ntwo\tthree", "one two three", "one\ntwo\tthree"),
        ("\x9b31mred", "31mred", "31mred"),
        ("tag\U000e0041s", "tag s", "tags"),
    ],
)
def test_the_one_sanitising_helper(text: str, line: str, block: str) -> None:
    assert (printable(text), printable_block(text)) == (line, block)


def test_json_output_escapes_what_terminals_act_on() -> None:
    assert json_safe('{"p": "a\u202eb\x9bc\U000e0041"}') == (
        '{"p": "a\\u202eb\\u009bc\\udb40\\udc41"}'
    )


def test_csv_cells_are_never_formulas(
    estate_builder: EstateBuilder, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    url = estate_builder.url
    estate_builder.project("acme/ledger").commit({"README.md": "# Ledger\n"}, "Start")
    links = [
        f"{url}/acme/ledger/-/blob/main/=HYPERLINK.md",
        f"{url}/acme/ledger/-/blob/main/+SUM.md",
        f"{url}/acme/ledger/-/blob/main/@SUM.md",
        "[run](-cmd.md)",
    ]
    estate_builder.issue("acme/ledger", 1, "Formulas", " ".join(links))
    config = write_config(estate_builder.write())
    assert scout("sweep", config=config).code == 0
    done = scout("signposts", "--csv", config=config)
    assert done.code == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert sorted(r["target_path"] for r in rows) == ["'+SUM.md", "'-cmd.md", "'=HYPERLINK.md",
                                                      "'@SUM.md"]  # fmt: skip
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), row


def test_one_line_is_the_whitespace_collapsed_prefix_reading_only_what_it_keeps() -> None:
    # the characters str.split() splits on (the C0 separators and NEL among them), and one it
    # does not (U+200B, a format character)
    spaces = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000"
    rng = random.Random(7)
    alphabet = spaces + "ab\u200b-é"
    for _ in range(2_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        limit = rng.randrange(0, 30)
        assert one_line(text, limit) == " ".join(text.split())[:limit], repr(text)
    # a megabyte of words: the words past the limit are never listed
    assert one_line("a " * 500_000, 9) == "a a a a a"
    assert one_line(" " * 1_000_000 + "word", 3) == "wor"
