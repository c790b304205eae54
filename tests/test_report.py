"""`scout report --html`: one self-contained page, checked as text and rendered in headless
Chromium, with untrusted text (questions, references, URLs) kept inert."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scout.audit_records import (
    AllRejected,
    GroupedVerdict,
    IssueCount,
    RejectedTarget,
    RejectionGroup,
    Summary,
)
from scout.cli.main import cli
from scout.gaps import AnsweringCost, GapGroup
from scout.report import ProjectSummary, Report, render_html
from scout.store import Store, SweepStatus
from scout.verdict import Check, Kind
from signposts.audit import rejections
from tests.helpers.demo import demo_estate
from tests.helpers.run import run_cli

# One worker runs the module: its Chromium and reports are module fixtures, built once a run
# rather than once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_report")

DEMO_CONFIG = Path(__file__).parent.parent / "config" / "demo.toml"
CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = "<script>document.title='pwned'</script> how do I rotate the flux capacitor?"
SCOUT = [sys.executable, "-m", "scout"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the swept demo estate, with a hostile question declined twice."""
    root = tmp_path_factory.mktemp("report")
    demo_estate(root / "estate")
    config = root / "scout.toml"
    config.write_text(DEMO_CONFIG.read_text(), encoding="utf-8")
    for command in ("index", "sweep"):
        done = run_cli(["--config", str(config), command])
        assert done.code == 0, done.stderr
    with Store.open(root / "scout.db") as store:
        for n, (question, outcome) in enumerate(
            [
                (HOSTILE.upper(), "declined"),
                ("where is the on-call rota?", "declined"),
                (HOSTILE, "declined"),  # the latest wording is the one shown
                ("how do I rotate deploy keys?", "answered"),
            ]
        ):
            store.log_question(
                question=question,
                outcome=outcome,
                reason=None if outcome == "answered" else "no passage covers the question",
                provider="offline",
                passages=0,
                latency_ms=1,
                asked_at=f"2026-11-0{n + 1}T00:00:00Z",
            )
    target = root / "report.html"
    done = run_cli(["--config", str(config), "report", "--html", str(target), "--json"])
    assert done.code == 0, done.stderr
    assert done.stdout.startswith('{\n  "html": ')
    return target


def test_the_page_is_self_contained_and_escapes_questions(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in text
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\ssrc=|@import|url\(", text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    hosts = set(re.findall(r'href="https?://([^/"]+)', text))
    assert hosts == {"gitlab.acme.example", "docs.acme.example"}


def _hostile_report() -> Report:
    evil = '"><script>alert(1)</script><a href="'
    return Report(
        generated_at=evil,
        gaps=[
            GapGroup(
                key=evil,
                question=evil,
                wordings=(evil, evil + "x"),
                asked=1,
                first=evil,
                last=evil,
                reason=evil,
                nearest=(
                    {
                        "project": evil,
                        "path": evil,
                        "heading": evil,
                        "lines": [1, 2],
                        "url": "javascript:alert(1)",
                    },
                ),
                issues=(
                    {"project": evil, "iid": evil, "url": "javascript:alert(2)", "state": evil},
                ),
            )
        ],
        gaps_total=1,
        summary=Summary(
            total=1,
            status={"accepted": 0, "rejected": 1, "withdrawn": 0},
            check={"resolves": 1},
            withdrawn_check={},
            reasons=[],
            kind={"file": {"accepted": 0, "rejected": 1}},
            top_issues=[
                IssueCount(project=evil, iid=1, url="javascript:alert(1)", rejected=1, total=1)
            ],
            top_accepted_targets=[],
            top_rejected_targets=[
                RejectedTarget(
                    url=None,
                    reference=evil,
                    kind=Kind.FILE,
                    project=None,
                    path=None,
                    check=Check.RESOLVES,
                    reason=evil,
                    count=1,
                )
            ],
            all_rejected_issues=AllRejected(issues=1, of=1, share=1.0),
        ),
        rejections=[
            RejectionGroup(
                check="resolves",
                reason=evil,
                count=1,
                more=0,
                command="scout signposts --limit 0",
                verdicts=[
                    GroupedVerdict(
                        id=1,
                        state="rejected",
                        kind=Kind.FILE,
                        reference=evil,
                        reference_url="data:text/html,<script>alert(1)</script>",
                        reason=evil,
                        issue_project=evil,
                        issue_iid=1,
                        issue_url=f"https://x.example/{evil}",
                        checked_at=evil,
                    )
                ],
            )
        ],
        target_links={},
        projects=[
            ProjectSummary(
                path=evil,
                visibility=evil,
                default_branch=evil,
                web_url="javascript:alert(1)",
                indexed_sha=evil,
                indexed_at=evil,
                passages=1,
                signpost_passages=0,
            )
        ],
        sweep=SweepStatus(cursors={evil: evil}, issues=1, last_read_at=evil, last_checked_at=None),
        answering=AnsweringCost(evil, 1, 0, 0, 0, 0.0, 0),
    )


def test_every_field_is_escaped_and_only_http_links_are_made() -> None:
    text = render_html(_hostile_report())
    assert "<script" not in text
    assert 'href="javascript:' not in text and 'href="data:' not in text
    assert text.count("&lt;script&gt;") >= 12
    # The one http link keeps its hostile tail inside the attribute, quoted.
    assert 'href="https://x.example/&quot;&gt;&lt;script&gt;' in text


# ---------------------------------------------------------------------- headless Chromium
def _dom(page: Path, tmp_path: Path) -> str:
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is absent: install Debian's chromium (.ci/run does)")
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _counts(dom: str) -> dict[str, Any]:
    return {name: int(n) for name, n in re.findall(r'<span id="([^"]+)">(\d+)</span>', dom)}


def test_chromium_renders_the_counts_and_runs_no_script(page: Path, tmp_path: Path) -> None:
    dom = _dom(page, tmp_path)
    assert "<title>Scout report</title>" in dom  # the hostile question did not retitle it
    assert "<script" not in dom.lower()
    assert "&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom.lower().replace(
        "&#x27;", "'"
    )
    counts = _counts(dom)
    expected = {
        "gaps-total": 2,
        "gap-1-asked": 2,
        "gap-2-asked": 1,
        "signposts-total": 32,
        "status-accepted": 16,
        "status-rejected": 16,
        "status-withdrawn": 0,
        "check-corpus_rules": 5,
        "check-resolves": 10,
        "check-addresses": 1,
        "kind-file-accepted": 8,
        "kind-file-rejected": 7,
        "all-rejected-issues": 1,
        "issues-with-signposts": 7,
        "issues-known": 8,  # one more: an issue of the private project, dropped unread
        "rejection-group-1": 2,
    }
    assert {name: counts.get(name) for name in expected} == expected
    assert counts["projects-total"] == len([n for n in counts if n.startswith("passages-")])
    assert counts["passages-acme/handbook"] > 0


def test_withdrawn_and_rejected_counts_add_up_and_groups_say_how_to_list_the_rest(
    tmp_path: Path,
) -> None:
    """After a recheck withdraws signposts, each state's count is the sum of its by-check row,
    the issues line agrees with the cards, and every group names a command listing all of it."""
    demo_estate(tmp_path / "estate")
    config = tmp_path / "scout.toml"
    config.write_text(DEMO_CONFIG.read_text(), encoding="utf-8")
    runner = CliRunner()

    def run(*args: str) -> Any:
        result = runner.invoke(cli, ["--config", str(config), *args])
        assert result.exit_code == 0, result.output
        return result

    run("index")
    run("sweep")
    handbook = tmp_path / "estate" / "repos" / "acme" / "handbook"
    subprocess.run(["git", "-C", str(handbook), "rm", "-q", "docs/release-process.md"], check=True)
    subprocess.run(
        ["git", "-C", str(handbook), "-c", "user.name=t", "-c", "user.email=t@t"]
        + ["commit", "-qm", "retire"],
        check=True,
    )
    run("signposts", "recheck", "--all")
    listed = json.loads(run("signposts", "--status", "all", "--json").stdout)
    by_state = {s: [r for r in listed if r["status"] == s] for s in ("rejected", "withdrawn")}
    assert len(by_state["withdrawn"]) == 2
    run("report", "--html", str(tmp_path / "r.html"))
    counts = _counts((tmp_path / "r.html").read_text(encoding="utf-8"))
    for state, prefix in (("rejected", "check-"), ("withdrawn", "withdrawn-")):
        assert counts[f"status-{state}"] == len(by_state[state])
        assert sum(n for k, n in counts.items() if k.startswith(prefix)) == len(by_state[state])
        assert len(json.loads(run("signposts", "--status", state, "--json").stdout)) == len(
            by_state[state]
        )
    assert counts["sweep-issues-with-signposts"] == counts["issues-with-signposts"]
    with Store.open(tmp_path / "scout.db") as store:
        rows = store.signposts()
    for state in ("rejected", "withdrawn"):
        groups = rejections(rows, per_group=1, status=state)
        assert groups
        for group in groups:
            command = group.command.split(" ", 1)[1]
            found = json.loads(run(*shlex.split(command), "--json").stdout)
            assert len(found) == group.count, command
    text = (tmp_path / "r.html").read_text(encoding="utf-8")
    # short references (no URL of their own) are links too: acme/secrets!1 is a merge request
    assert (
        'href="https://gitlab.acme.example/acme/secrets/-/merge_requests/1" '
        'rel="noopener noreferrer">acme/secrets!1</a>'
    ) in text
