"""How the CLI talks to a terminal: every table's exact output at 80 and 160 columns, with and
without colour; a real pty for width, colour, NO_COLOR and the pager; ``--nl``; unquoted
questions; "did you mean"; bare ``scout``.

The expected outputs are files in tests/fixtures/terminal/ (``NAME-WIDTH[-colour].txt``), read
by eye when written: a change to a table shows as a diff of one of them.
"""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scout.audit_records import (
    AcceptedTarget,
    AllRejected,
    IssueCount,
    ReasonCount,
    RejectedTarget,
    Summary,
)
from scout.cli import gaps as gaps_cli
from scout.cli import pager
from scout.cli import search as search_cli
from scout.cli import signposts as signposts_cli
from scout.cli.main import cli
from scout.cli.progress import LogProgress, remaining
from scout.config import load_config
from scout.corpus.index import index_estate
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.evaluation import render as eval_render
from scout.evaluation.compare import Comparison, Figure
from scout.evaluation.evalfile import Band
from scout.evaluation.figures import Cited, EvalReport, Row
from scout.forge.local import LocalForge
from scout.progress import Progress
from scout.providers.base import Usage
from scout.store import Store
from scout.table import Column, Styled, Terminal, cut, table
from scout.verdict import Check, Kind
from signposts.audit import render as audit_render
from tests.conftest import SCOUT, Result, render_config
from tests.fakes.corpus import make_store, write_config
from tests.growth import assert_linear
from tests.test_eval import EVAL as EVAL_FILE
from tests.test_gaps import NEAR as NEAREST

GOLDEN = Path(__file__).parent / "fixtures" / "terminal"
ESC = "\x1b"
SGR = re.compile("\x1b\\[[0-9;]*m")

# --------------------------------------------------------------------------- rows of each table
DOCS = "https://docs.gitlab.com/ee/ci/pipelines"
BLOB = "https://gitlab.acme.example/acme/platform/gateway/-/blob/0123456789abcdef0123456789abcdef01234567"

SEARCH_ROWS = [
    {
        "rank": 1,
        "score": -7.25,
        "project": "acme/platform/gateway",
        "path": "docs/operations/timeouts-and-retries.md",
        "heading": "Timeouts > Upstream connections > How long the gateway waits",
        "lines": [12, 48],
        "url": f"{BLOB}/docs/operations/timeouts-and-retries.md#L12-48",
    },
    {
        "rank": 2,
        "score": -3.5,
        "project": "acme/ops",
        "path": "docs/backups.md",
        # hostile: an escape sequence and rich markup stay inert text
        "heading": "Backups \x1b[2J[bold red]restore[/]",
        "lines": [1, 9],
        "url": "https://gitlab.acme.example/acme/ops/-/blob/0123456789abcdef0123456789abcdef01234567/docs/backups.md#L1-9",
    },
]


def _signpost(
    id_: int, status: str, kind: str, reference: str, check: str | None, reason: str, iid: int
) -> dict[str, Any]:
    return {
        "id": id_,
        "status": status,
        "kind": kind,
        "reference": reference,
        "check": check,
        "reason": reason,
        "issue": {"project": "acme/platform/gateway", "iid": iid},
        "checked_at": f"2026-12-01T09:{id_:02d}:00Z",
    }


SIGNPOST_ROWS = [
    _signpost(
        7,
        "rejected",
        "docs_page",
        f"{DOCS}/schedules.html",
        "resolves",
        "no source file under doc/ builds this page",
        41,
    ),
    _signpost(
        6,
        "rejected",
        "docs_page",
        f"{DOCS}/settings.html",
        "resolves",
        "no source file under doc/ builds this page",
        41,
    ),
    _signpost(
        5,
        "accepted",
        "file",
        "acme/platform/gateway/-/blob/main/docs/timeouts.md#L3",
        None,
        "addresses the issue's question (the target says how long upstream calls wait)",
        12,
    ),
    _signpost(
        4, "withdrawn", "merge_request", "acme/secrets!1", "corpus_rules", "project_private", 9
    ),
]

GAP_ROWS = [
    {
        "question": "What is the office wifi password for the guest network?",
        "wordings": [
            "What is the office wifi password for the guest network?",
            "office wifi password?",
        ],
        "asked": 3,
        "first": "2026-11-28T08:00:00Z",
        "last": "2026-12-01T09:30:00Z",
        "reason": "no passage covers: wifi, password",
        "nearest": [NEAREST],
        "issues": [
            {"project": "acme/handbook", "iid": 12, "url": "https://x/12", "state": "opened"},
            {"project": "acme/it", "iid": 3, "url": "https://x/3", "state": "closed"},
        ],
    },
    {
        "question": "How often are exchange rates fetched?",
        "wordings": ["How often are exchange rates fetched?"],
        "asked": 1,
        "first": "2026-11-30T10:00:00Z",
        "last": "2026-11-30T10:00:00Z",
        "reason": "nothing matched",
        "nearest": [],
        "issues": [],
    },
]
COST = "Answering in all: 4 question(s), 0 answered; 0 input + 0 output tokens, $0.0000"


def _row(question: str, band: Band, outcome: str, score: float | None, n: int) -> Row:
    return Row(
        question=question,
        band=band,
        outcome=outcome,
        reason=None if outcome == "answered" else "nothing matched",
        cited=tuple(Cited("acme/ops", f"docs/runbooks/backup-{i}.md", (1, 9)) for i in range(n)),
        cited_expected=(True,) * n,
        retrieved_expected=bool(n),
        best_score=score,
        usage=Usage(100, 20, None),
        latency_ms=1200,
    )


EVAL = EvalReport(
    provider="claude-local",
    model="claude-haiku-4-5",
    k=8,
    rows=(
        _row("How do I restore last night's backup?", Band.ANSWERABLE, "answered", -7.5, 2),
        _row(
            "Who is on call for the gateway this weekend?", Band.UNANSWERABLE, "declined", None, 0
        ),
        _row("Which vault version rotates the keys?", Band.COVERED, "answered", -2.25, 1),
    ),
)
COMPARISON = Comparison(
    "runs/a.json",
    "runs/b.json",
    (
        Figure("bands.answerable.correct", 2, 1),
        Figure("citations.precision", 0.75, 1.0),
        Figure("cost.usd", None, 0.0123),
    ),
    (),
)

ISSUE_URL = "https://gitlab.acme.example/acme/platform/gateway/-/issues"
SUMMARY = Summary(
    total=4,
    status={"accepted": 1, "rejected": 2, "withdrawn": 1},
    check={"resolves": 2},
    withdrawn_check={"corpus_rules": 1},
    reasons=[ReasonCount("resolves", "no source file under <path> builds <url>", 2)],
    kind={"docs_page": {"accepted": 0, "rejected": 2, "withdrawn": 0}},
    top_issues=[
        IssueCount("acme/platform/gateway", 41, f"{ISSUE_URL}/41", 2, 2),
        IssueCount("acme/platform/gateway", 9, f"{ISSUE_URL}/9", 0, 1),
    ],
    top_accepted_targets=[
        AcceptedTarget("file:acme/platform/gateway:docs/timeouts.md#L3", Kind.FILE, None, None, 1)
    ],
    top_rejected_targets=[
        RejectedTarget(
            None,
            f"{DOCS}/schedules.html",
            Kind.DOCS_PAGE,
            None,
            None,
            Check.RESOLVES,
            "no source file",
            1,
        ),
        RejectedTarget(
            None,
            f"{DOCS}/settings.html",
            Kind.DOCS_PAGE,
            None,
            None,
            Check.RESOLVES,
            "no source file",
            1,
        ),
    ],  # fmt: skip
    all_rejected_issues=AllRejected(1, 3, 0.333),
)

TABLES: dict[str, Callable[[Terminal], str | Styled]] = {
    "search": lambda t: search_cli.render(SEARCH_ROWS, t),
    "signposts": lambda t: signposts_cli._table(SIGNPOST_ROWS, 3, t),
    "signposts-extract": lambda t: table(
        [
            {"kind": "docs_page", "reference": f"{DOCS}/schedules.html"},
            {"kind": "merge_request", "reference": "acme/ledger!3"},
        ],
        signposts_cli.EXTRACTED,
        terminal=t,
    ),
    "gaps": lambda t: gaps_cli.render(GAP_ROWS, COST, t),
    "signposts-summary": lambda t: audit_render(SUMMARY, t),
    "eval": lambda t: eval_render.render(EVAL, t),
    "eval-compare": lambda t: eval_render.render_comparison(COMPARISON, t),
}


def _text(rendered: str | Styled) -> str:
    return rendered.text if isinstance(rendered, Styled) else rendered


def _golden(name: str) -> str:
    return (GOLDEN / f"{name}.txt").read_text(encoding="utf-8").removesuffix("\n")


@pytest.mark.parametrize("colour", [False, True], ids=["plain", "colour"])
@pytest.mark.parametrize("width", [80, 160])
@pytest.mark.parametrize("name", sorted(TABLES))
def test_every_table_has_its_exact_output(name: str, width: int, colour: bool) -> None:
    text = _text(TABLES[name](Terminal(width=width, colour=colour)))
    assert text == _golden(f"{name}-{width}{'-colour' if colour else ''}")
    plain = SGR.sub("", text)
    assert ESC not in plain, "only colours may be escape sequences"
    assert max(len(line) for line in plain.splitlines()) <= width
    if not colour:
        assert text == plain
    else:
        assert plain == _golden(f"{name}-{width}"), "colour changes nothing but colour"


def test_colour_is_for_statuses_and_headers_only() -> None:
    text = _text(TABLES["signposts"](Terminal(width=160, colour=True)))
    assert "\x1b[31mrejected\x1b[0m" in text and "\x1b[32maccepted\x1b[0m" in text
    assert "\x1b[33mwithdrawn\x1b[0m" in text and "\x1b[1mid\x1b[0m" in text
    # the reference and the reason are never coloured, whatever they say
    assert "\x1b[31mresolves" not in text and "acme/secrets!1\x1b" not in text


def test_untrusted_cells_stay_inert() -> None:
    text = _text(TABLES["search"](Terminal(width=160, colour=True)))
    assert "[2J" in text and "\x1b[2J" not in text  # the control character is gone
    assert "[bold red]restore[/]" in text  # rich markup in a heading is text, not style


# --------------------------------------------------------------------------- fitting and cutting
def test_a_docs_url_keeps_its_distinctive_tail() -> None:
    url = "https://docs.gitlab.com/ee/ci/pipelines/schedules"
    assert cut(url, 48, "middle") == "https://docs.gitlab.com/…/ci/pipelines/schedules"
    assert cut(url, 40, "middle") == "docs.gitlab.com/…/ci/pipelines/schedules"
    assert cut(url, 20, "middle") == "…pipelines/schedules"
    assert cut(url, 12, "middle") == "…/schedules"  # a segment boundary, when it costs little
    assert cut("a heading that goes on", 10) == "a heading…"
    assert cut("short", 10, "middle") == "short"


def test_rows_that_differ_only_in_their_tails_stay_distinct_at_any_width() -> None:
    rows = [{"reference": f"{DOCS}/{page}.html"} for page in ("schedules", "settings", "triggers")]
    column = Column("reference", "reference", cut="middle", flex=1)
    for width in range(12, 161, 3):
        lines = _text(table(rows, [column], terminal=Terminal(width=width))).splitlines()[1:]
        assert len(set(lines)) == 3, (width, lines)
        assert all(len(line) <= width for line in lines), (width, lines)


def test_a_column_the_same_on_every_row_is_a_caption_not_a_column() -> None:
    rows = [{"id": i, "kind": "file", "reference": f"docs/{i}.md"} for i in range(3)]
    columns = [Column("id", "id"), Column("kind", "kind"), Column("reference", "reference")]
    assert _text(table(rows, columns, terminal=Terminal(width=80))).splitlines() == [
        "id  reference",
        "0   docs/0.md",
        "1   docs/1.md",
        "2   docs/2.md",
        "kind: file",
    ]
    one = _text(table(rows[:1], columns, terminal=Terminal(width=80)))
    assert one.splitlines()[0] == "id  kind  reference"  # one row: nothing to compare with
    empty = [{**row, "kind": None} for row in rows]  # "-" on every row: no column, no caption
    assert _text(table(empty, columns, terminal=Terminal(width=80))).splitlines()[-1] == (
        "2   docs/2.md"
    )


def test_narrow_terminals_drop_the_least_useful_column_first() -> None:
    header = [
        _text(signposts_cli._table(SIGNPOST_ROWS, 0, Terminal(width=w))).splitlines()[0].split()
        for w in (200, 120, 80)
    ]
    assert header[0] == ["id", "state", "kind", "reference", "check", "reason", "issue", "checked"]
    assert header[1] == ["id", "state", "kind", "reference", "check", "reason", "issue"]
    assert header[2] == ["id", "state", "reference", "check", "reason", "issue"]


@pytest.mark.parametrize(
    "cell",
    ["/" * 40_000, "a" * 40_000, "界" * 40_000, " " * 40_000, "https://" + "x/" * 20_000],
    ids=["slashes", "letters", "wide", "spaces", "url"],
)
def test_fitting_grows_linearly_with_the_rows(cell: str) -> None:
    columns = [Column("c", "c", cut="middle", flex=1), Column("d", "d", flex=1)]
    table([{"c": "x", "d": "y"}], columns, terminal=Terminal(width=80))  # rich imported first

    def draw(n: int) -> Callable[[], object]:
        rows = [{"c": cell + str(i), "d": cell} for i in range(n)]
        return lambda: table(rows, columns, terminal=Terminal(width=80))

    assert_linear(draw, 50)


# --------------------------------------------------------------------------- progress
def test_progress_with_a_total_shows_it_and_an_eta() -> None:
    assert remaining(5, 10, 10.0) == "eta 10s"
    assert remaining(1, 100, 10.0) == "eta 16m30s"
    assert remaining(1, 1000, 10.0) == "eta 2h46m"
    assert remaining(5, None, 10.0) == "" and remaining(0, 10, 1.0) == ""
    lines: list[str] = []
    progress = LogProgress(lines.append, every=0.0)
    progress.phase("projects", 4)
    progress.phase("files")
    progress.advance("files", 3)
    progress.advance("projects")
    assert re.fullmatch(
        r"progress: projects 1/4 \([\d.]+/s, eta \d+s\), files 3 \([\d.]+/s\); \d+s elapsed",
        lines[-1],
    ), lines


# --------------------------------------------------------------------------- a real terminal
@pytest.fixture
def estate(tmp_path: Path) -> Path:
    make_store(tmp_path).close()
    return write_config(tmp_path)


def in_pty(
    args: list[str],
    *,
    columns: int,
    rows: int = 24,
    env: dict[str, str] | None = None,
    stderr: bool = False,
) -> str:
    """Run ``scout ARGS`` with its standard output (or, with ``stderr``, its standard error) on a
    real pseudo-terminal of that size (no COLUMNS or LINES: the size is the terminal's own); what
    it wrote there, with line ends as written."""
    main, child_end = pty.openpty()
    fcntl.ioctl(child_end, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    process = subprocess.Popen(
        [*SCOUT, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL if stderr else child_end,
        stderr=child_end if stderr else subprocess.DEVNULL,
        env={**base, "TERM": "xterm-256color", "SCOUT_PAGER": "", **(env or {})},
    )
    os.close(child_end)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child's end closed
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    assert process.wait(timeout=120) == 0
    return out.decode("utf-8").replace("\r\n", "\n")


QUESTION = ["rotate", "keys", "and", "restore", "a", "backup"]  # unquoted words


@pytest.mark.parametrize("width", [80, 160])
def test_search_on_a_real_terminal_fits_its_width_and_colours(estate: Path, width: int) -> None:
    coloured = in_pty(["--config", str(estate), "search", *QUESTION], columns=width)
    assert coloured.removesuffix("\n") == _golden(f"search-estate-{width}-colour")
    plain = in_pty(
        ["--config", str(estate), "search", *QUESTION], columns=width, env={"NO_COLOR": "1"}
    )
    assert plain.removesuffix("\n") == _golden(f"search-estate-{width}")
    assert SGR.sub("", coloured) == plain
    wide = in_pty(["--config", str(estate), "search", *QUESTION], columns=240)
    assert wide.splitlines()[1].endswith("/docs/backups.md#L1-9")  # the permalink, whole


def test_a_pipe_gets_no_colour_and_no_pager(estate: Path, tmp_path: Path) -> None:
    paged = tmp_path / "paged"
    done = subprocess.run(
        [*SCOUT, "--config", str(estate), "search", *QUESTION],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80", "SCOUT_PAGER": _pager(paged), "TERM": "xterm"},
        check=True,
    )
    assert done.stdout.removesuffix("\n") == _golden("search-estate-80")
    assert not paged.exists()


def _pager(target: Path) -> str:
    """A pager that keeps what it was given (a real child process reading standard input)."""
    script = target.with_suffix(".py")
    script.write_text(
        f"import sys\nopen({str(target)!r}, 'wb').write(sys.stdin.buffer.read())\n",
        encoding="utf-8",
    )
    return f"{sys.executable} {script}"


def test_a_list_taller_than_the_terminal_goes_through_the_pager(
    estate: Path, tmp_path: Path
) -> None:
    paged = tmp_path / "paged"
    args = ["--config", str(estate), "search", *QUESTION]
    shown = in_pty(args, columns=80, rows=3, env={"SCOUT_PAGER": _pager(paged)})
    assert shown == ""  # the pager had it all
    assert SGR.sub("", paged.read_text(encoding="utf-8")).removesuffix("\n") == _golden(
        "search-estate-80"
    )
    paged.unlink()
    direct = in_pty([*args, "--no-pager"], columns=80, rows=3, env={"SCOUT_PAGER": _pager(paged)})
    assert SGR.sub("", direct).removesuffix("\n") == _golden("search-estate-80")
    assert not paged.exists()
    # a list that fits is printed directly; a pager that does not exist is no pager
    fits = in_pty(args, columns=80, rows=40, env={"SCOUT_PAGER": _pager(paged)})
    assert SGR.sub("", fits).removesuffix("\n") == _golden("search-estate-80")
    assert not paged.exists()
    missing = in_pty(args, columns=80, rows=3, env={"SCOUT_PAGER": "/nonexistent/pager"})
    assert SGR.sub("", missing).removesuffix("\n") == _golden("search-estate-80")


# --------------------------------------------------------------------------- --nl and arguments
def invoke(config: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--config", str(config), *args])


def test_nl_is_one_json_object_per_row_of_the_json_list(estate: Path) -> None:
    listed = json.loads(invoke(estate, "search", *QUESTION, "--json").stdout)
    lines = invoke(estate, "search", *QUESTION, "--nl").stdout.splitlines()
    assert len(lines) == len(listed) >= 2
    assert [json.loads(line) for line in lines] == listed
    empty = invoke(estate, "search", "weather", "in", "Lisbon", "--nl")
    assert (empty.exit_code, empty.stdout) == (0, "")


def test_nl_with_json_is_a_usage_error(scout: Callable[..., Result], estate: Path) -> None:
    result = scout("search", "backup", "--nl", "--json", config=estate)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "scout: --json and --nl cannot be given together: choose one\n"


def test_unquoted_words_are_the_same_question_as_quoted(estate: Path) -> None:
    quoted = invoke(estate, "search", " ".join(QUESTION), "--json").stdout
    assert invoke(estate, "search", *QUESTION, "--json").stdout == quoted
    asked = json.loads(invoke(estate, "ask", "How", "do", "I", "rotate", "keys", "--json").stdout)
    assert asked["outcome"] == "answered"


def test_a_question_from_standard_input(estate: Path) -> None:
    quoted = invoke(estate, "search", " ".join(QUESTION), "--json").stdout
    piped = CliRunner().invoke(
        cli, ["--config", str(estate), "search", "-", "--json"], input=" ".join(QUESTION)
    )
    assert piped.stdout == quoted


def test_no_question_is_a_usage_error(scout: Callable[..., Result], estate: Path) -> None:
    result = scout("ask", config=estate)
    assert result.code == 2 and result.stdout == ""
    assert "Missing argument 'QUESTION...'" in result.stderr


@pytest.mark.parametrize(
    ("typed", "meant"),
    # "seach", not "serch": that one is as near to `serve`, and click then names both
    [("seach", "search"), ("gap", "gaps"), ("signpost", "signposts"), ("sumary", "summary")],
)
def test_a_mistyped_command_gets_a_suggestion(
    scout: Callable[..., Result], typed: str, meant: str
) -> None:
    args = ["signposts", typed] if meant == "summary" else [typed]
    result = scout(*args)
    assert result.code == 2 and result.stdout == ""
    assert f"Error: No such command '{typed}'. Did you mean '{meant}'?" in result.stderr


def test_a_command_like_no_other_gets_no_suggestion(scout: Callable[..., Result]) -> None:
    result = scout("xyzzy")
    assert result.code == 2
    assert result.stderr.splitlines()[-1] == "Error: No such command 'xyzzy'."


def test_bare_scout_prints_its_help_and_exits_0(scout: Callable[..., Result]) -> None:
    result = scout()
    assert result.code == 0 and result.stderr == ""
    assert result.stdout.startswith("Usage: scout [OPTIONS] [COMMAND] [ARGS]...")
    assert "Commands:" in result.stdout and "  ask " in result.stdout


# --------------------------------------------------------------------------- index totals
class Recording(Progress):
    """A progress display that keeps what it was told (the core never knows who watches)."""

    def __init__(self) -> None:
        self.phases: dict[str, int | None] = {}
        self.done: dict[str, int] = {}

    def phase(self, name: str, total: int | None = None) -> None:
        self.phases[name] = total if total is not None else self.phases.get(name)

    def advance(self, name: str, done: int = 1) -> None:
        self.done[name] = self.done.get(name, 0) + done


def test_index_progress_has_the_project_total(
    estate_builder: EstateBuilder, tmp_path: Path
) -> None:
    for path in ("acme/one", "acme/two", "acme/three", "acme/secret"):
        repo = estate_builder.project(path, visibility="private" if "secret" in path else "public")
        repo.commit({"docs/a.md": f"# {path}\n\nWords about {path}.\n"}, "init")
    estate_builder.write()
    config_path = tmp_path / "scout.toml"
    config_path.write_text(render_config(tmp_path / "estate"), encoding="utf-8")
    config = load_config(config_path)
    assert config.forge.path is not None
    forge = LocalForge(config.forge.path, config.forge.groups)
    store = Store.open(config.store.path, create=True)
    shown = Recording()
    try:
        index_estate(
            forge, store, CorpusRules(tuple(config.forge.groups), config.corpus), progress=shown
        )
    finally:
        forge.close()
        store.close()
    # every listed project counts towards the total, the one the rules keep out included
    assert shown.phases["projects"] == shown.done["projects"] == 4
    assert shown.phases["files"] is None  # files are counted as found: no total, no ETA


# --------------------------------------------------------------------------- malformed settings
@pytest.mark.parametrize(
    ("columns", "width"),
    [
        ("abc", 160),
        ("", 160),
        ("-5", 40),
        ("0", 160),
        ("10", 40),
        ("99999999", 1_000),
        ("100", 100),
    ],
)
def test_columns_of_any_shape_gives_a_usable_width(
    monkeypatch: pytest.MonkeyPatch, columns: str, width: int
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    assert Terminal.detect(io.StringIO()).width == width


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("", None),
        ("cat", None),
        ("  ", None),
        ("less -R", ["less", "-R"]),
        ("'my pager' --x", ["my pager", "--x"]),
        ("'unbalanced", None),
    ],
)
def test_pager_settings_of_any_shape(
    monkeypatch: pytest.MonkeyPatch, value: str, words: list[str] | None
) -> None:
    monkeypatch.setenv("SCOUT_PAGER", value)
    assert pager.command() == words
    monkeypatch.delenv("SCOUT_PAGER")
    monkeypatch.setenv("PAGER", value)
    assert pager.command() == words
    monkeypatch.delenv("PAGER")
    assert pager.command() == ["less"]


def test_no_color_and_a_dumb_terminal_mean_no_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert Terminal.detect(Tty()).colour and not Terminal.detect(io.StringIO()).colour
    monkeypatch.setenv("NO_COLOR", "")  # empty is unset, as no-color.org says
    assert Terminal.detect(Tty()).colour
    monkeypatch.setenv("NO_COLOR", "1")
    assert not Terminal.detect(Tty()).colour
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    assert not Terminal.detect(Tty()).colour


def test_json_and_nl_never_load_rich(estate: Path) -> None:
    # rich costs tens of milliseconds to import: only a table drawn for a person pays for it
    for flag in ("--json", "--nl"):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "scout", "--config", str(estate)]
            + ["search", *QUESTION, flag],
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout and " rich" not in done.stderr, flag
    table_run = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "scout", "--config", str(estate)]
        + ["search", *QUESTION],
        capture_output=True,
        text=True,
        check=True,
    )
    assert " rich.table" in table_run.stderr  # the probe sees rich when it is loaded


def test_eval_progress_on_a_terminal_counts_against_its_total(estate: Path, tmp_path: Path) -> None:
    questions = tmp_path / "eval.toml"
    questions.write_text(EVAL_FILE, encoding="utf-8")
    shown = in_pty(["--config", str(estate), "eval", str(questions)], columns=100, stderr=True)
    counts = re.findall(r"questions +(\d+)/(\d+)", SGR.sub("", shown))
    assert counts and {total for _, total in counts} == {"6"}
    assert counts[-1] == ("6", "6")  # the last state drawn is the finished one
