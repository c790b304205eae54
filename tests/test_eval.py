"""``scout eval``: eval files, the figures of a run in scenarios whose answers are known in
advance (the fake ``claude`` on PATH), the demo estate offline, comparing runs, and the cost of
every ``scout ask`` in the question log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scout.cli.main import cli
from scout.evaluation.evalfile import Band
from scout.evaluation.figures import Row, floor_loss, percentile
from scout.providers.base import Usage
from scout.providers.pricing import cost, price
from scout.store import Store
from tests.fakes.corpus import make_store, write_config
from tests.helpers.run import Result
from tests.helpers.samples import EVAL

ANSWER_1 = {"answer": "As the passage says [1].", "cited": [1], "declined": False, "reason": ""}
DECLINE = {"answer": "", "cited": [], "declined": True, "reason": "the passages do not say"}
OUT_OF_RANGE = {"answer": "See [99].", "cited": [99], "declined": False, "reason": ""}


@pytest.fixture
def estate(tmp_path: Path) -> tuple[Path, Path]:
    """A store of known passages, a claude-local config, and the eval file above. Expansion is
    off: these figures count one call a question (expansion's cost in an eval is tested in
    tests/test_expansion_default.py)."""
    make_store(tmp_path).close()
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(EVAL, encoding="utf-8")
    return write_config(tmp_path, provider="claude-local", expand="off"), eval_file


def run_eval(config: Path, *args: str) -> Result:
    done = CliRunner().invoke(cli, ["--config", str(config), "eval", *args])
    return Result(done.exit_code, done.stdout, done.stderr)


def figures(result: Result) -> dict[str, Any]:
    assert (result.code, result.stderr) == (0, ""), result.stderr
    document = result.json()
    document.pop("latency_ms")
    for row in document["rows"]:
        row.pop("latency_ms")
    return document


def bands(*counts: tuple[int, int, int, int]) -> dict[str, dict[str, int]]:
    names = ["answerable", "contradicts", "covered", "unanswerable"]
    return {
        name: dict(zip(["n", "answered", "declined", "correct"], c, strict=True))
        for name, c in zip(names, counts, strict=True)
    }


def calls(record: Path) -> int:
    return len(record.read_text().splitlines()) if record.exists() else 0


def test_every_answer_citing_passage_1(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, eval_file = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(ANSWER_1))
    document = figures(run_eval(config, str(eval_file), "--json"))
    # "weather in Lisbon" matches nothing: declined without a provider call (5 calls, not 6).
    assert calls(claude_bin) == 5
    assert document["bands"] == bands((2, 2, 0, 2), (1, 1, 0, 1), (1, 1, 0, 0), (2, 1, 1, 1))
    # The covered question's citation is inside its expected source (precise, yet not correct);
    # the unanswerable one cites a source nobody expected.
    assert document["citations"] == {"answers": 5, "precise": 4, "precision": 0.8}
    assert document["retrieval"] == {"recall_at_k": 1.0, "k": 8}
    # Per call the fake reports 10 input and 5 output tokens and $0.001.
    assert document["cost"] == {
        "input_tokens": 50,
        "output_tokens": 25,
        "usd": 0.005,
        "usd_per_question": round(0.005 / 6, 6),
    }
    assert (document["provider"], document["model"], document["questions"]) == (
        "claude-local",
        "claude-haiku-4-5",
        6,
    )
    first = document["rows"][0]
    assert first["cited"] == [
        {"project": "acme/config", "path": "docs/credentials.md", "lines": [12, 30]}
    ]
    assert (first["outcome"], first["correct"], first["input_tokens"], first["usd"]) == (
        "answered",
        True,
        10,
        0.001,
    )
    assert first["best_score"] < 0
    lisbon = document["rows"][4]
    assert (lisbon["outcome"], lisbon["reason"], lisbon["best_score"]) == (
        "declined",
        "nothing matched",
        None,
    )


def test_every_question_declined(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, eval_file = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(DECLINE))
    document = figures(run_eval(config, str(eval_file), "--json"))
    assert document["bands"] == bands((2, 0, 2, 0), (1, 0, 1, 0), (1, 0, 1, 1), (2, 0, 2, 2))
    assert document["citations"] == {"answers": 0, "precise": 0, "precision": None}
    # Declining does not hide what retrieval found.
    assert document["retrieval"]["recall_at_k"] == 1.0


def test_out_of_range_citations_are_declines(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, eval_file = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(OUT_OF_RANGE))
    document = figures(run_eval(config, str(eval_file), "--json"))
    assert document["bands"] == bands((2, 0, 2, 0), (1, 0, 1, 0), (1, 0, 1, 1), (2, 0, 2, 2))
    asked = [row for row in document["rows"] if row["reason"] != "nothing matched"]
    assert len(asked) == 5 and all("99" in row["reason"] for row in asked)


def test_mixed_outcomes_per_question(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, eval_file = estate
    monkeypatch.setenv(
        "FAKE_CLAUDE_BY_QUESTION",
        json.dumps(
            {
                "rotate the database keys?": ANSWER_1,
                "backups run nightly": ANSWER_1,
                "three approvals": DECLINE,
                "vault version": DECLINE,
                "on weekends": ANSWER_1,
            }
        ),
    )
    document = figures(run_eval(config, str(eval_file), "--json"))
    assert [row["correct"] for row in document["rows"]] == [True, True, False, True, True, False]
    assert document["bands"] == bands((2, 2, 0, 2), (1, 0, 1, 0), (1, 0, 1, 1), (2, 1, 1, 1))
    assert document["citations"] == {"answers": 3, "precise": 2, "precision": 0.6667}


def test_eval_runs_are_not_logged_as_questions(
    estate: tuple[Path, Path], claude_bin: Path, tmp_path: Path
) -> None:
    config, eval_file = estate
    assert run_eval(config, str(eval_file)).code == 0
    with Store.open(tmp_path / "scout.db") as store:
        assert store.questions() == []


def test_the_text_report_lists_every_band_and_question(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, eval_file = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(ANSWER_1))
    result = run_eval(config, str(eval_file))
    assert result.code == 0
    lines = result.stdout.splitlines()
    assert (
        lines[0] == "Eval: 6 question(s), provider claude-local, model claude-haiku-4-5, 8 passages"
    )
    assert lines[3].split() == ["answerable", "2", "2", "0", "2"]
    assert "6 of 6" not in result.stdout and "5 of 6 correct" not in result.stdout
    assert "4 of 6 correct: answerable 2/2, contradicts 1/1, covered 0/1, unanswerable 1/2" in lines
    header = lines.index(next(line for line in lines if line.split()[:2] == ["ok", "band"]))
    assert sorted(line.split()[0] for line in lines[header + 1 :]) == ["--"] * 2 + ["ok"] * 4


# --- bad eval files: exit 3, naming the file and the entry ---------------------------------------

BAD_FILES = [
    ("[[question]]\nquestion = 'x y'\nband = 'maybe'\n", "question 1: unknown band 'maybe'"),
    (
        "[[question]]\nquestion = 'rotate keys'\nband = 'answerable'\n",
        "question 1: missing `sources`",
    ),
    (
        "[[question]]\nquestion = 'a b'\nband = 'unanswerable'\n"
        "[[question]]\nquestion = 'rotate keys'\nband = 'covered'\nsources = []\n",
        "question 2: missing `sources`",
    ),
    (
        "[[question]]\nquestion = 'a b'\nband = 'unanswerable'\n"
        "sources = [{project = 'acme/x', path = 'a.md'}]\n",
        "question 1: an unanswerable question has no sources",
    ),
    ("[[question]]\nquestion = 'a b'\nband = \n", "not valid TOML"),
    ("", "no questions"),
    ("[[question]]\nband = 'unanswerable'\n", "question 1: `question` must be a non-empty string"),
    ("[[question]]\nquestion = '?!'\nband = 'unanswerable'\n", "question 1: question has no words"),
    (
        "[[question]]\nquestion = 'rotate'\nband = 'answerable'\n"
        "sources = [{project = 'acme/x', path = 'a.md', lines = [9, 3]}]\n",
        "question 1, source 1: `lines` must be [first, last]",
    ),
    (
        "[[question]]\nquestion = 'rotate'\nband = 'answerable'\n"
        "sources = [{project = 'acme/x'}]\n",
        "question 1, source 1: `project` and `path` must be non-empty strings",
    ),
    ("[[question]]\nquestion = 'a'\nband = 'unanswerable'\nsource = 1\n", "unknown key 'source'"),
    ("[[questions]]\nquestion = 'a'\n", "unknown key 'questions'"),
    ("[[question]]\nquestion = 'a b'\n", "question 1: missing `band`"),
]


@pytest.mark.parametrize(("text", "message"), BAD_FILES)
def test_bad_eval_files_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    result = run_eval(config, str(bad))
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"scout: {bad}: ")
    assert message in result.stderr


def test_a_missing_eval_file_and_missing_arguments(tmp_path: Path) -> None:
    make_store(tmp_path).close()
    config = write_config(tmp_path)
    missing = run_eval(config, str(tmp_path / "nope.toml"))
    assert (missing.code, missing.stderr) == (
        2,
        f"scout: {tmp_path / 'nope.toml'}: eval file not found\n",
    )
    assert run_eval(config).code == 2
    assert run_eval(config, "x.toml", "--compare", "a.json", "b.json").code == 2


# --- the demo estate, offline --------------------------------------------------------------------


@pytest.mark.slow
def test_the_demo_prints_its_eval_summary_offline(
    scout: Callable[..., Result], tmp_path: Path
) -> None:
    demo = scout("demo", "--dir", str(tmp_path / "demo"), "--json")
    assert demo.code == 0, demo.stderr
    evaluation = demo.json()["eval"]
    assert evaluation["questions"] >= 20
    assert {name: b["n"] > 0 for name, b in evaluation["bands"].items()} == {
        "answerable": True,
        "contradicts": True,
        "covered": True,
        "unanswerable": True,
    }
    # The offline composer declines what nothing covers, and answers from the pages it cites.
    assert (
        evaluation["bands"]["unanswerable"]["correct"] == evaluation["bands"]["unanswerable"]["n"]
    )
    assert evaluation["citations"]["answers"] > 0
    assert evaluation["cost"]["usd"] == 0.0
    config = tmp_path / "demo" / "scout.toml"
    with Store.open(tmp_path / "demo" / "scout.db") as store:
        logged = len(store.questions())
    # The same file through `scout eval` gives the same figures, and logs nothing.
    from importlib.resources import files

    eval_file = files("scout.demo") / "eval.toml"
    again = scout("eval", str(eval_file), "--json", config=config)
    assert again.code == 0, again.stderr
    strip = lambda d: {k: v for k, v in d.items() if k not in ("latency_ms", "rows")}  # noqa: E731
    assert strip(again.json()) == strip(evaluation)
    with Store.open(tmp_path / "demo" / "scout.db") as store:
        assert len(store.questions()) == logged
    shown = scout("demo", "--dir", str(tmp_path / "shown"))
    assert shown.code == 0, shown.stderr
    text = shown.stdout.splitlines()
    at = text.index(
        "Eval (eval.toml, offline provider): 24 test questions with known right answers, "
        "asked as a user would"
    )
    assert text[at + 1].startswith(
        f"  {sum(b['correct'] for b in evaluation['bands'].values())} of 24 handled right. "
        "Answered, citing the right file: "
    )
    cited = evaluation["citations"]
    assert text[at + 2].startswith(
        f"  {cited['precise']} of {cited['answers']} answers cited only the right files"
    )
    assert text[at + 3].startswith("  What a cut-off on retrieval's score would cost instead")
    # the demo's story in plain words: no check names, and the file only an issue brought in
    story = shown.stdout
    assert "corpus_rules" not in story and "rejected by" not in story
    assert (
        "  src/ledger/rates.py is in the corpus only because issue acme/ledger#1 linked to it "
        "(https://gitlab.acme.example/acme/ledger/-/issues/1); it is listed as the file, "
        "never as the issue"
    ) in text
    # offline mode shows where to look, never an answer, and tells its declines from gaps
    assert (
        "      matching: The ledger rounds FX rates half-even to six decimal places, so that "
        "rounding errors cancel out."
    ) in text
    assert "  answered:" not in story
    assert (
        "  5 refused: they pointed into private, excluded or archived projects, so were never read"
    ) in text
    assert (
        "  not answered in offline mode (no passage covers: long, backups, retained); no model "
        "read the passages, so this is not counted as a documentation gap. Where to look:"
    ) in text
    assert (
        "  declined: nothing matched: no passage shares a word with it, so it is a "
        "documentation gap now (`scout gaps` lists it)"
    ) in text


# --- comparing two runs --------------------------------------------------------------------------


def test_two_runs_side_by_side(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config, eval_file = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(ANSWER_1))
    a = tmp_path / "a.json"
    a.write_text(run_eval(config, str(eval_file), "--json").stdout)
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(DECLINE))
    b = tmp_path / "b.json"
    b.write_text(run_eval(config, str(eval_file), "--json").stdout)
    result = run_eval(config, "--compare", str(a), str(b), "--json")
    assert result.code == 0, result.stderr
    compared = result.json()
    table = {f["figure"]: (f["a"], f["b"]) for f in compared["figures"]}
    assert table["bands.answerable.correct"] == (2, 0)
    assert table["citations.precision"] == (0.8, None)
    assert table["cost.input_tokens"] == (50, 50)
    assert "rows" not in " ".join(table)
    assert {c["question"]: (c["a_correct"], c["b_correct"]) for c in compared["changed"]} == {
        "How do I rotate the database keys?": (True, False),
        "When do backups run nightly?": (True, False),
        "Why do production deploys need three approvals?": (True, False),
        "Which vault version rotates the database keys?": (False, True),
        "Who restores a backup on weekends?": (False, True),
    }
    text = run_eval(config, "--compare", str(a), str(b))
    assert text.code == 0
    assert any(
        line.split() == ["bands.answerable.correct", "2", "0"] for line in text.stdout.splitlines()
    )
    not_eval = tmp_path / "c.json"
    not_eval.write_text('{"outcome": "answered"}')
    bad = run_eval(config, "--compare", str(a), str(not_eval))
    assert (bad.code, bad.stdout) == (3, "")
    assert str(not_eval) in bad.stderr


# --- the figures as pure functions ---------------------------------------------------------------


def row(band: Band, score: float | None) -> Row:
    return Row("q", band, "declined", "x", (), (), False, score, Usage(), 1)


def test_the_floor_figure() -> None:
    # Unanswerable best scores -1..-10: keeping out 90% (9 of 10) puts the floor at relevance 9.
    rows = [row(Band.UNANSWERABLE, -float(n)) for n in range(1, 11)]
    answerable = [row(Band.ANSWERABLE, s) for s in (-2.0, -9.0, -9.5, -30.0, None)]
    # Lost: relevance 2, 9 and 0 (nothing matched) are at or below the floor; 9.5 and 30 are kept.
    assert floor_loss(rows + answerable, Band.UNANSWERABLE) == 0.6
    assert floor_loss(answerable, Band.UNANSWERABLE) is None
    assert floor_loss(rows, Band.UNANSWERABLE) is None


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [([], 50, None), ([7], 95, 7), ([1, 2, 3, 4], 50, 2), (list(range(1, 101)), 95, 95)],
)
def test_percentiles_are_nearest_rank(values: list[int], q: float, expected: int | None) -> None:
    assert percentile(values, q) == expected


# --- what every `scout ask` cost --------------------------------------------------------------


def test_ask_logs_tokens_and_cost_and_gaps_totals_them(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config, _ = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(DECLINE))
    runner = CliRunner()
    for question in ("How do I rotate the database keys?", "what is the weather in Lisbon"):
        done = runner.invoke(cli, ["--config", str(config), "ask", question, "--json"])
        assert done.exit_code == 0, done.stderr
        # The answer's JSON stays docs/design.md's: cost is logged, not printed.
        assert set(json.loads(done.stdout)) == {
            "outcome",
            "answer",
            "reason",
            "citations",
            "passages",
            "cause",
            "where_to_look",
            "expanded",
            "expansion_error",
            "dense_error",
        }
    with Store.open(tmp_path / "scout.db") as store:
        logged = [(q.input_tokens, q.output_tokens, q.usd) for q in store.questions()]
    assert logged == [(10, 5, 0.001), (0, 0, 0.0)]
    gaps = runner.invoke(cli, ["--config", str(config), "gaps"])
    assert gaps.stdout.splitlines()[-1] == (
        "Answering in all: 2 question(s), 0 answered; 10 input + 5 output tokens, $0.0010"
    )
    assert (
        json.loads(runner.invoke(cli, ["--config", str(config), "gaps", "--json"]).stdout)[0][
            "asked"
        ]
        == 1
    )


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-haiku-4-5", (1.0, 5.0)),
        ("claude-haiku-4-5-20251001", (1.0, 5.0)),
        ("claude-opus-4-1-20250805", (15.0, 75.0)),
        ("claude-opus-4-5", (5.0, 25.0)),
        ("claude-haiku-4-50", None),
        ("gpt-4o", None),
    ],
)
def test_model_prices_match_by_family(model: str, expected: tuple[float, float] | None) -> None:
    assert price(model) == expected


def test_token_cost_counts_cache_reads_and_writes() -> None:
    assert cost("claude-haiku-4-5", input_tokens=1_000_000, output_tokens=0) == 1.0
    assert cost(
        "claude-sonnet-4-5",
        input_tokens=0,
        output_tokens=1_000,
        cache_write_tokens=1_000_000,
        cache_read_tokens=1_000_000,
    ) == pytest.approx(3.0 * 1.25 + 3.0 * 0.1 + 0.015)
    assert cost("unknown-model", input_tokens=5, output_tokens=5) is None


def test_nl_is_one_line_per_question_and_per_compared_figure(
    estate: tuple[Path, Path], claude_bin: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    config, eval_file = estate
    monkeypatch.setenv("FAKE_CLAUDE_OUTPUT", json.dumps(DECLINE))
    listed = figures(run_eval(config, str(eval_file), "--json"))["rows"]
    lines = run_eval(config, str(eval_file), "--nl").stdout.splitlines()
    assert len(lines) == len(listed) == 6

    def steady(row: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k != "latency_ms"}  # the one field that varies

    assert [steady(json.loads(line)) for line in lines] == [steady(r) for r in listed]
    run = tmp_path / "a.json"
    run.write_text(run_eval(config, str(eval_file), "--json").stdout)
    compared = run_eval(config, "--compare", str(run), str(run), "--json").json()["figures"]
    nl = run_eval(config, "--compare", str(run), str(run), "--nl").stdout.splitlines()
    assert [json.loads(line) for line in nl] == compared
