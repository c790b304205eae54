"""The signpost audit: reason classes, summaries, and `scout signposts` list, summary, show,
recheck and extract on a swept demo estate (filters, formats, exit codes)."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scout.cli.main import cli
from scout.demo.builder import EstateBuilder
from scout.store import SignpostRow
from signposts.audit import reason_class, rejection_groups, render, summarise
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result

# One worker runs the module: its swept demo is a module fixture, built once a run rather than
# once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_audit")

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        ("project_private: acme/secrets", "project_private"),
        ("project_outside_groups: globex/tools", "project_outside_groups"),
        ("file_too_large: docs/huge.md", "file_too_large"),
        ("docs/migration-v1.md was deleted since 45f370a64862", "<path> was deleted since <sha>"),
        ("merge request !3 is closed, not merged", "merge request !<n> is closed, not merged"),
        ("commit 2d2d6f01d924 was reverted", "commit <sha> was reverted"),
        (
            "line 900 of src/ledger/posting.py is past its end (48 lines)",
            "line <n> of <path> is past its end (<n> lines)",
        ),
        (
            "no source file under docs/ builds https://docs.acme.example/handbook/security/",
            "no source file under <path> builds <url>",
        ),
        (
            "#rotating-ssh-certificates matches no heading of docs/credentials.md",
            "#<anchor> matches no heading of <path>",
        ),
        (
            "the target shares 2 of 25 question terms (lexical check)",
            "the target shares <n> of <n> question terms (lexical check)",
        ),
        ("the target was defaced", "the target was defaced"),  # hex-looking words stay words
        ("no target project", "no target project"),
        ("two\nlines\x1b[31m " + "x" * 400, "two lines\x1b[31m " + "x" * 185),
    ],
)
def test_reasons_are_grouped_by_class(reason: str, expected: str) -> None:
    assert reason_class(reason) == expected


def _row(
    id: int,
    status: str,
    check: str | None = None,
    reason: str = "ok",
    *,
    issue: tuple[str, int] = ("acme/a", 1),
    kind: str = "file",
    reference: str | None = None,
    target: str | None = None,
    withdrawn_at: str | None = None,
) -> SignpostRow:
    return SignpostRow(
        id=id,
        issue_project=issue[0],
        issue_iid=issue[1],
        issue_url=f"https://gitlab.example/{issue[0]}/-/issues/{issue[1]}",
        kind=kind,
        reference=reference or f"acme/a:doc{id}.md",
        status=status,
        check_name=check,
        reason=reason,
        target_project="acme/a",
        target_path=None,
        target_line_start=None,
        target_line_end=None,
        target_sha=None,
        target=target,
        reference_json="{}",
        checks="[]",
        checked_at=f"2026-11-0{id}T00:00:00Z",
        first_seen_at="2026-11-01T00:00:00Z",
        withdrawn_at=withdrawn_at,
    )


ROWS = [
    _row(1, "accepted", target="file:acme/a:x.md"),
    _row(2, "accepted", issue=("acme/a", 2), target="file:acme/a:x.md", kind="docs_page"),
    _row(3, "rejected", "resolves", "a/x.md was deleted since 0123abc", reference="acme/a:x.md"),
    _row(4, "rejected", "resolves", "b/y.md was deleted since 0123abd", issue=("acme/b", 9)),
    _row(5, "rejected", "corpus_rules", "project_private: acme/s", issue=("acme/b", 9)),
    _row(
        6,
        "rejected",
        "resolves",
        "x.md does not exist",
        issue=("acme/c", 3),
        reference="acme/a:x.md",
        withdrawn_at="2026-11-06T00:00:00Z",
    ),
]


def test_summary_counts_every_dimension() -> None:
    assert summarise(ROWS, top=2).to_json() == {
        "total": 6,
        "status": {"accepted": 2, "rejected": 3, "withdrawn": 1},
        "check": {"corpus_rules": 1, "resolves": 2, "addresses": 0},
        "withdrawn_check": {"corpus_rules": 0, "resolves": 1, "addresses": 0},
        "reasons": [
            {"check": "resolves", "reason": "<path> was deleted since <sha>", "count": 2},
            {"check": "corpus_rules", "reason": "project_private", "count": 1},
        ],
        "kind": {
            "docs_page": {"accepted": 1, "rejected": 0, "withdrawn": 0},
            "file": {"accepted": 1, "rejected": 3, "withdrawn": 1},
        },
        "top_issues": [
            {
                "project": "acme/b",
                "iid": 9,
                "url": "https://gitlab.example/acme/b/-/issues/9",
                "rejected": 2,
                "total": 2,
            },
            {
                "project": "acme/a",
                "iid": 1,
                "url": "https://gitlab.example/acme/a/-/issues/1",
                "rejected": 1,
                "total": 2,
            },
        ],
        "top_accepted_targets": [
            {
                "target": "file:acme/a:x.md",
                "kind": "file",
                "project": "acme/a",
                "path": None,
                "count": 2,
            }
        ],
        "top_rejected_targets": [
            {
                "reference": "acme/a:doc4.md",
                "kind": "file",
                "project": "acme/a",
                "path": None,
                "check": "resolves",
                "reason": "b/y.md was deleted since 0123abd",
                "count": 1,
            },
            {
                "reference": "acme/a:doc5.md",
                "kind": "file",
                "project": "acme/a",
                "path": None,
                "check": "corpus_rules",
                "reason": "project_private: acme/s",
                "count": 1,
            },
        ],
        # acme/c#3's only signpost was withdrawn, not rejected
        "all_rejected_issues": {"issues": 1, "of": 4, "share": 0.25},
    }


def test_rejection_groups_put_checks_in_validation_order() -> None:
    groups = [(c, r, [row.id for row in m]) for c, r, m in rejection_groups(ROWS)]
    assert groups == [
        ("corpus_rules", "project_private", [5]),
        ("resolves", "<path> was deleted since <sha>", [3, 4]),
    ]
    withdrawn = [(c, r, [row.id for row in m]) for c, r, m in rejection_groups(ROWS, "withdrawn")]
    assert withdrawn == [("resolves", "<path> does not exist", [6])]


def test_an_empty_store_summarises_to_zeros() -> None:
    summary = summarise([])
    assert summary.to_json()["all_rejected_issues"] == {"issues": 0, "of": 0, "share": 0.0}
    assert render(summary) == "no signposts yet: run `scout sweep`"


# ---------------------------------------------------------------------- the CLI on the demo
@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo estate, indexed and swept once for the whole module (tests only read it)."""
    root = tmp_path_factory.mktemp("demo")
    demo_estate(root / "estate")
    config = root / "scout.toml"
    config.write_text(DEMO_CONFIG.read_text(), encoding="utf-8")
    for command in ("index", "sweep"):
        assert run(config, command).exit_code == 0
    return config


def run(config: Path, *args: str, input: str | None = None) -> Any:
    return CliRunner().invoke(cli, ["--config", str(config), *args], input=input)


def ids(config: Path, *args: str) -> list[int]:
    result = run(config, "signposts", *args, "--json")
    assert result.exit_code == 0, result.output
    return [row["id"] for row in json.loads(result.stdout)]


def rows(config: Path, *args: str) -> list[dict[str, Any]]:
    return list(json.loads(run(config, "signposts", *args, "--json").stdout))


@pytest.mark.parametrize(
    ("args", "count", "field", "values"),
    [
        ((), 16, "status", {"rejected"}),
        (("--status", "all"), 32, "status", {"accepted", "rejected"}),
        (("--status", "accepted"), 16, "status", {"accepted"}),
        (("--status", "withdrawn"), 0, "status", set()),
        (("--check", "resolves"), 10, "check", {"resolves"}),
        (("--check", "corpus_rules"), 5, "check", {"corpus_rules"}),
        (("--check", "addresses"), 1, "check", {"addresses"}),
        (("--kind", "commit", "--status", "all"), 6, "kind", {"commit"}),
        (("--kind", "merge_request"), 3, "kind", {"merge_request"}),
        (("--reason", "PRIVATE"), 2, "reason", {"project_private: acme/secrets"}),
        (("--since", "2099-01-01", "--status", "all"), 0, "status", set()),
        (("--since", "2000-01-01T00:00:00Z"), 16, "status", {"rejected"}),
        (("--limit", "3"), 3, "status", {"rejected"}),
    ],
)
def test_list_filters(
    demo: Path, args: tuple[str, ...], count: int, field: str, values: set[str]
) -> None:
    found = rows(demo, *args)
    assert len(found) == count
    assert {row[field] for row in found} == values


def test_project_filter_matches_the_issue_or_the_target(demo: Path) -> None:
    found = rows(demo, "--project", "acme/secrets")
    assert [(r["issue"]["project"], r["target"]["project"]) for r in found] == [
        ("acme/ledger", "acme/secrets"),
        ("acme/ledger", "acme/secrets"),
    ]
    assert {r["issue"]["project"] for r in rows(demo, "--project", "acme/handbook")} == {
        "acme/handbook"
    }


def test_list_is_newest_first_with_design_fields(demo: Path) -> None:
    found = rows(demo, "--status", "all")
    assert [(r["checked_at"], r["id"]) for r in found] == sorted(
        ((r["checked_at"], r["id"]) for r in found), reverse=True
    )
    assert set(found[0]) == {
        "id",
        "status",
        "kind",
        "reference",
        "issue",
        "target",
        "check",
        "reason",
        "checked_at",
        "withdrawn_at",
    }


def test_csv_parses_and_matches_json(demo: Path) -> None:
    result = run(demo, "signposts", "--status", "all", "--csv")
    parsed = list(csv.DictReader(io.StringIO(result.stdout)))
    listed = rows(demo, "--status", "all")
    assert [int(r["id"]) for r in parsed] == [r["id"] for r in listed]
    assert [(r["reference"], r["check"], r["issue_url"]) for r in parsed] == [
        (r["reference"], r["check"] or "", r["issue"]["url"]) for r in listed
    ]


def test_table_has_a_header_and_one_line_per_verdict(demo: Path) -> None:
    header, *lines = run(demo, "signposts", "--check", "corpus_rules").stdout.splitlines()
    # what is the same on every row (state, check, issue; the time when the sweep took under a
    # second) is a caption line under the table, not a column
    assert header.split()[:3] == ["id", "kind", "reference"]
    assert not {"state", "check", "issue"} & set(header.split())
    rows, captions = lines[:5], lines[5:]
    assert all(re.match(r" *\d+  (file|merge_request) ", line) for line in rows)
    assert {"state: rejected", "check: corpus_rules", "issue: acme/ledger#4"} <= set(captions)


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_table_fits_the_terminal_and_marks_cuts_with_an_ellipsis(demo: Path, columns: int) -> None:
    result = CliRunner().invoke(
        cli, ["--config", str(demo), "signposts", "--status", "all"], env={"COLUMNS": str(columns)}
    )
    lines = result.stdout.splitlines()
    assert len([line for line in lines if re.match(r" *\d+  ", line)]) == 32
    assert max(len(line) for line in lines) <= columns
    longest = max((r["reference"] for r in rows(demo, "--status", "all")), key=len)
    assert any("…" in line for line in lines) == (columns < 200 or len(longest) > 60)
    cut = [line for line in lines if "…" in line]
    assert all(len(line.split("…")[0]) > 10 for line in cut)
    assert "issue" in lines[0]  # at 80 columns too: it tells verdicts apart
    header = lines[0].split()
    assert "kind" in header or "checked" not in header  # narrow terminals drop the time first
    assert ("kind" in header) == (columns > 80)


def test_table_has_a_default_limit_and_says_how_many_more(demo: Path) -> None:
    def verdicts(lines: list[str]) -> int:
        return sum(bool(re.match(r" *\d+  ", line)) for line in lines)

    many = CliRunner().invoke(cli, ["--config", str(demo), "signposts", "--status", "all"])
    assert verdicts(many.stdout.splitlines()) == 32  # 32 is under the default limit
    cut = run(demo, "signposts", "--status", "all", "--limit", "5").stdout.splitlines()
    assert verdicts(cut) == 5
    assert cut[-1] == "… and 27 more: pass --limit 32 (or --limit 0) for all"
    every = run(demo, "signposts", "--status", "all", "--limit", "0").stdout.splitlines()
    assert verdicts(every) == 32
    assert len(rows(demo, "--status", "all")) == 32  # --json lists everything by default


def test_json_and_csv_together_are_a_usage_error(demo: Path, scout: Callable[..., Result]) -> None:
    result = scout("signposts", "--json", "--csv", config=demo)
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr == "scout: --json and --csv cannot be given together: choose one\n"


def test_summary_json_counts(demo: Path) -> None:
    summary = json.loads(run(demo, "signposts", "summary", "--json").stdout)
    assert summary["total"] == 32
    assert summary["status"] == {"accepted": 16, "rejected": 16, "withdrawn": 0}
    assert summary["check"] == {"corpus_rules": 5, "resolves": 10, "addresses": 1}
    assert summary["kind"] == {
        "docs_page": {"accepted": 3, "rejected": 3, "withdrawn": 0},
        "file": {"accepted": 8, "rejected": 7, "withdrawn": 0},
        "commit": {"accepted": 3, "rejected": 3, "withdrawn": 0},
        "merge_request": {"accepted": 2, "rejected": 3, "withdrawn": 0},
    }
    assert summary["reasons"][:2] == [
        {"check": "corpus_rules", "reason": "project_private", "count": 2},
        {"check": "resolves", "reason": "<path> was deleted since <sha>", "count": 2},
    ]
    assert [(i["project"], i["iid"], i["rejected"]) for i in summary["top_issues"][:2]] == [
        ("acme/ledger", 4, 5),
        ("acme/ledger", 3, 4),
    ]
    assert (
        summary["top_accepted_targets"][0]["target"] == "file:acme/ledger:src/ledger/rates.py#L13"
    )
    assert summary["top_accepted_targets"][0]["count"] == 2
    assert summary["all_rejected_issues"] == {"issues": 1, "of": 7, "share": 0.143}


def test_summary_human_output(demo: Path) -> None:
    lines = run(demo, "signposts", "summary").stdout.splitlines()
    assert lines[:4] == [
        "32 signpost(s): 16 accepted, 16 rejected, 0 withdrawn",
        "rejected by check: corpus_rules 5, resolves 10, addresses 1",
        "by kind: docs_page 3 accepted / 3 rejected, file 8 accepted / 7 rejected, "
        "commit 3 accepted / 3 rejected, merge_request 2 accepted / 3 rejected",
        "issues whose every signpost was rejected: 1 of 7 (14%)",
    ]


def test_show_an_accepted_verdict_in_full(demo: Path) -> None:
    (commit,) = [r for r in rows(demo, "--status", "accepted", "--kind", "commit")][-1:]
    shown = json.loads(run(demo, "signposts", "show", str(commit["id"]), "--json").stdout)
    assert shown["state"] == "accepted" and shown["ref"] == "main"
    assert len(shown["target"]["sha"]) == 40
    assert [(c["check"], c["ok"]) for c in shown["checks"]] == [
        ("corpus_rules", True),
        ("resolves", True),
        ("addresses", True),
    ]
    assert shown["passages"], shown
    for passage in shown["passages"]:
        assert set(passage) == {"heading", "path", "lines", "sha", "url"}
        assert f"/-/blob/{shown['target']['sha']}/" in passage["url"]
    human = run(demo, "signposts", "show", str(commit["id"])).stdout
    assert "  checks:\n    ok   corpus_rules project qualifies\n" in human


def test_show_a_rejected_verdict_names_the_failed_check(demo: Path) -> None:
    (rejected,) = rows(demo, "--check", "addresses")
    shown = json.loads(run(demo, "signposts", "show", str(rejected["id"]), "--json").stdout)
    assert shown["passages"] == []
    assert [(c["check"], c["ok"]) for c in shown["checks"]] == [
        ("corpus_rules", True),
        ("resolves", True),
        ("addresses", False),
    ]


def test_extract_reports_what_it_skipped_on_stderr(
    demo: Path, scout: Callable[..., Result]
) -> None:
    result = scout("signposts", "extract", "-", config=demo, input="see !3 and docs/x.md\n")
    assert (result.code, result.stdout) == (0, "")
    assert result.stderr == "2 short reference(s) need --project\n"
    scoped = scout(
        "signposts", "extract", "--project", "acme/ledger", config=demo, input="see !3\n"
    )
    assert (scoped.stdout, scoped.stderr) == (
        "kind           reference\nmerge_request  acme/ledger!3\n",
        "",
    )


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (
            ("show", "999"),
            2,
            "scout: no signpost with id 999: see `scout signposts --status all`\n",
        ),
        (("recheck",), 2, "scout: give one signpost ID or --all\n"),
        (("recheck", "1", "--all"), 2, "scout: give one signpost ID or --all\n"),
        (
            ("--since", "the day before"),
            2,
            "scout: --since 'the day before' is not a date: use YYYY-MM-DD, 7d, 24h or yesterday\n",
        ),
    ],
)
def test_usage_errors(
    demo: Path, scout: Callable[..., Result], args: tuple[str, ...], code: int, stderr: str
) -> None:
    result = scout("signposts", *args, config=demo)
    assert (result.code, result.stdout, result.stderr) == (code, "", stderr)


# ---------------------------------------------------------------------- recheck
@pytest.fixture
def small(estate_builder: EstateBuilder, write_config: Callable[..., Path]) -> Iterator[Any]:
    """One project, one issue pointing at an existing file and at a missing one; swept."""
    repo = estate_builder.project("acme/tool")
    repo.commit(
        {"README.md": "# Tool\n", "src/export.py": "# export writes ledger rows\n" * 30}, "init"
    )
    estate_builder.issue(
        "acme/tool",
        1,
        "Export writes ledger rows how?",
        "See src/export.py:5 for the export step, and src/import.py:2 for the import.",
        updated_at="2026-03-01T10:00:00Z",
    )
    estate_builder.write()
    config = write_config()
    assert run(config, "index").exit_code == 0
    assert run(config, "sweep").exit_code == 0
    yield repo, config


def _recheck(config: Path, *args: str) -> dict[str, Any]:
    result = run(config, "signposts", "recheck", *args, "--json")
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_recheck_withdraws_then_reinstates_an_accepted_signpost(small: Any) -> None:
    repo, config = small
    (accepted,) = rows(config, "--status", "accepted")
    assert _recheck(config, "--all") == {"rechecked": 2, "changed": []}
    repo.commit({"src/export.py": None}, "remove the exporter")
    changed = _recheck(config, str(accepted["id"]))["changed"]
    assert [(c["before"]["status"], c["after"]["status"], c["stored"]) for c in changed] == [
        ("accepted", "withdrawn", True)
    ]
    assert changed[0]["after"]["check"] == "resolves"
    assert [r["id"] for r in rows(config, "--status", "withdrawn")] == [accepted["id"]]
    repo.commit({"src/export.py": "# export writes ledger rows\n" * 30}, "bring it back")
    again = _recheck(config, "--all")["changed"]
    assert [(c["id"], c["before"]["status"], c["after"]["status"]) for c in again] == [
        (accepted["id"], "withdrawn", "accepted")
    ]
    assert [r["id"] for r in rows(config, "--status", "accepted")] == [accepted["id"]]


def test_recheck_reports_a_rejected_signpost_that_now_resolves_without_storing_it(
    small: Any,
) -> None:
    repo, config = small
    (rejected,) = rows(config)
    assert rejected["check"] == "resolves"
    repo.commit({"src/import.py": "# import\n# reads rows\n"}, "add the importer")
    change, moved = _recheck(config, "--all")["changed"]  # newest verdict first
    assert (moved["before"]["status"], moved["after"]["status"], moved["stored"]) == (
        "accepted",
        "accepted",
        True,
    )
    assert moved["after"]["sha"] == repo.sha() != moved["before"]["sha"]
    assert change["id"] == rejected["id"]
    assert change["stored"] is False
    assert change["after"]["check"] == "addresses"
    assert change["after"]["reason"].startswith("now resolves (src/import.py L2-2 exists at ")
    assert rows(config) == [rejected]
    human = run(config, "signposts", "recheck", "--all").stdout
    assert human.startswith("rechecked 2 signpost(s): 1 changed\n")  # the move is stored now
    assert human.rstrip().endswith("[reported, not stored]")


def test_recheck_waits_for_no_one_while_a_sweep_holds_the_lock(
    small: Any, scout: Callable[..., Result]
) -> None:
    _repo, config = small
    lock = os.open(f"{config.parent / 'scout.db'}.sweep.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.pwrite(lock, b"4242", 0)
        result = scout("signposts", "recheck", "--all", config=config)
    finally:
        os.close(lock)
    assert result.code == 7
    assert "another sweep is running" in result.stderr and "4242" in result.stderr


def test_show_names_a_one_line_target_with_gitlabs_anchor(demo: Path) -> None:
    (one_line,) = [
        r
        for r in rows(demo, "--status", "accepted", "--kind", "file")
        if r["target"]["lines"] == [13, 13]
    ][:1]
    human = run(demo, "signposts", "show", str(one_line["id"])).stdout
    assert "  target    acme/ledger:src/ledger/rates.py#L13\n" in human


def test_nl_lists_the_same_verdicts_as_json(demo: Path, scout: Callable[..., Result]) -> None:
    for args in [("--status", "all"), ("--check", "resolves"), ("--status", "all", "--limit", "3")]:
        lines = run(demo, "signposts", *args, "--nl").stdout.splitlines()
        assert [json.loads(line) for line in lines] == rows(demo, *args)
    assert len(run(demo, "signposts", "--status", "all", "--nl").stdout.splitlines()) == 32
    extracted = scout(
        "signposts", "extract", "--project", "acme/ledger", "--nl", config=demo, input="see !3, !4"
    )
    assert [json.loads(line)["reference"] for line in extracted.stdout.splitlines()] == [
        "acme/ledger!3",
        "acme/ledger!4",
    ]
    both = scout("signposts", "--nl", "--csv", config=demo)
    assert (both.code, both.stdout) == (2, "")
    assert both.stderr == "scout: --nl and --csv cannot be given together: choose one\n"
