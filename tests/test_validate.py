"""Signpost validation on the demo estate's real git history: every accepted and rejected path."""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from ingest.sweep import Sweep
from scout.config import load_config
from scout.corpus.index import index_estate
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.demo.estate import DemoEstate
from scout.forge.local import LocalForge
from scout.providers import make_provider
from scout.store import SignpostRow, Store
from signposts.extract import extract
from signposts.references import extract_context
from tests.helpers.demo import demo_estate
from tests.helpers.run import Result
from tests.helpers.validator import local_validator

# One worker runs the module: its swept demo is a module fixture, built once a run rather than
# once a worker (--dist loadgroup, as scripts/test runs).
pytestmark = pytest.mark.xdist_group("test_validate")


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoEstate, Store, Counter[str]]:
    root = tmp_path_factory.mktemp("demo")
    demo = demo_estate(root / "estate")
    config_path = root / "scout.toml"
    config_path.write_text(
        (Path(__file__).parent.parent / "config" / "demo.toml").read_text(), encoding="utf-8"
    )
    config = load_config(config_path)
    forge = LocalForge(demo.root, config.forge.groups)
    store = Store.open(config.store.path, create=True)
    index_estate(forge, store, CorpusRules(tuple(config.forge.groups), config.corpus))
    forge.requests.clear()
    Sweep(config, forge, store, make_provider("offline", model="")).run()
    requests = Counter(forge.requests)
    forge.close()
    return demo, store, requests


def _verdict(demo: DemoEstate, store: Store, name: str) -> SignpostRow | None:
    case = demo.cases[name]
    config = load_config(Path(__file__).parent.parent / "config" / "demo.toml")
    found = extract(case.text, extract_context(config, case.project)).references
    if not found:
        return None
    rows = [
        row
        for row in store.signposts(status=None)
        if row.reference == found[0].reference
        and (row.issue_project, row.issue_iid) == (case.project, case.iid)
    ]
    assert len(rows) <= 1, f"{name}: {found[0].reference} has {len(rows)} verdicts"
    return rows[0] if rows else None


def test_every_planted_case_gets_its_designed_outcome(
    swept: tuple[DemoEstate, Store, Counter[str]],
) -> None:
    demo, store, _requests = swept
    wrong = []
    for name, case in sorted(demo.cases.items()):
        row = _verdict(demo, store, name)
        got = None if row is None else ("accepted" if row.status == "accepted" else row.check_name)
        expected = None if case.expect == "ignored" else case.expect
        if got != expected:
            wrong.append(f"{name}: expected {expected}, got {got} ({row.reason if row else '-'})")
    assert wrong == [], "\n".join(wrong)


def test_accepted_targets_are_cited_at_the_head_by_permalink(
    swept: tuple[DemoEstate, Store, Counter[str]],
) -> None:
    demo, store, _requests = swept
    accepted = store.signposts(status="accepted")
    assert accepted
    heads = {path: row.indexed_sha for path, row in store.projects().items()}
    for row in accepted:
        assert row.target_sha == heads[row.target_project]
        for passage in store.target_passages(row.target or ""):
            assert passage.sha == row.target_sha
            assert f"/-/blob/{row.target_sha}/{passage.path}#L" in passage.url
            assert "/-/issues/" not in passage.url


def test_reasons_say_what_failed(swept: tuple[DemoEstate, Store, Counter[str]]) -> None:
    demo, store, _requests = swept
    expected = {
        "commit_reverted": "was reverted",
        "commit_superseded": "was superseded",
        "commit_unmerged_branch": "not on the default branch",
        "mr_closed": "is closed, not merged",
        "mr_opened": "is opened, not merged",
        "file_deleted": "deleted since",
        "file_line_past_end": "past its end",
        "docs_anchor_bad": "matches no heading",
        "private_project": "project_private",
        "excluded_project": "project_excluded",
        "archived_project": "project_archived",
        "outside_group": "project_outside_groups",
    }
    for name, fragment in expected.items():
        row = _verdict(demo, store, name)
        assert row is not None and fragment in row.reason, (name, row and row.reason)


def _one_file_estate(builder: EstateBuilder) -> None:
    repo = builder.project("acme/handbook")
    body = "".join(f"Step {n}: rotate the signing keys in the vault.\n" for n in range(1, 61))
    repo.commit({"docs/keys.md": f"# Rotating keys\n\n{body}", "src/keys.py": body}, "init")
    builder.write()


def test_fifty_references_to_one_file_cost_one_lookup(
    tmp_path: Path, estate_builder: EstateBuilder
) -> None:
    _one_file_estate(estate_builder)
    validator, forge, context = local_validator(tmp_path, estate_builder)
    text = " ".join(f"src/keys.py:{n}" for n in range(1, 51))
    references = extract(text, context).references
    assert len(references) == 50
    verdicts = [validator.validate(r, "How do I rotate the signing keys?") for r in references]
    assert {v.status for v in verdicts} == {"accepted"}
    assert forge.requests["files"] == 1 and forge.requests["head"] == 1
    assert forge.requests["project"] == 1
    forge.close()


@pytest.mark.slow
def test_validation_is_deterministic_across_processes(
    tmp_path: Path, scout: Callable[..., Result]
) -> None:
    # Two processes with different hash seeds (set and dict order of str keys changes between
    # them; within one process it never does): the demo's whole sweep must give the same verdicts,
    # ids, reasons and targets, and its answers the same citations.
    runs = []
    for seed in ("1", "2"):
        folder = tmp_path / f"seed{seed}"
        demo = scout("demo", "--dir", str(folder), "--json", env={"PYTHONHASHSEED": seed})
        assert demo.code == 0, demo.stderr
        result = demo.json()
        sweep = {k: v for k, v in result["sweep"].items() if k != "seconds"}
        listed = scout("signposts", "--status", "all", "--json", config=folder / "scout.toml")
        # listed newest first: rows checked in the same second keep id order, but where a second
        # ends depends on the machine's speed, so the verdicts are compared in id order
        rows = sorted(listed.json(), key=lambda row: row["id"])
        verdicts = [{k: v for k, v in row.items() if k != "checked_at"} for row in rows]
        runs.append((sweep, verdicts, result["answers"]))
    assert len(runs[0][1]) == runs[0][0]["references"] > 20
    assert runs[0] == runs[1]


class _Docs(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.path.startswith("/handbook/keys/"):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"<h1>Rotating keys</h1>")
        elif self.path.startswith("/handbook/moved/"):
            self.send_response(301)
            self.send_header("Location", "https://evil.test/phish")
            self.end_headers()
        else:
            self.send_response(404)
            self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(
    ("page", "status", "reason"),
    [
        ("keys/", "accepted", None),
        ("keys/#rotating-keys", "accepted", None),
        ("keys/#nowhere", "rejected", "matches no heading"),
        ("moved/", "rejected", "no source file"),
    ],
)
def test_docs_pages_map_to_sources_and_can_be_checked_live(
    tmp_path: Path, estate_builder: EstateBuilder, page: str, status: str, reason: str | None
) -> None:
    _one_file_estate(estate_builder)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Docs)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        site = f"http://127.0.0.1:{server.server_address[1]}/handbook/"
        validator, forge, context = local_validator(
            tmp_path, estate_builder, url=site, check_live=True
        )
        (reference,) = extract(f"{site}{page}", context).references
        verdict = validator.validate(reference, "How do I rotate the signing keys?")
        assert verdict.status == status, verdict.reason
        assert reason is None or reason in verdict.reason
        forge.close()
    finally:
        server.shutdown()
        server.server_close()


def test_a_live_check_that_answers_404_or_redirects_off_site_fails(
    tmp_path: Path, estate_builder: EstateBuilder
) -> None:
    repo = estate_builder.project("acme/handbook")
    repo.commit(
        {
            f"docs/{name}.md": "# Rotating keys\n\nRotate the signing keys.\n"
            for name in ("gone", "moved")
        },
        "init",
    )
    estate_builder.write()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Docs)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        site = f"http://127.0.0.1:{server.server_address[1]}/handbook/"
        validator, forge, context = local_validator(
            tmp_path, estate_builder, url=site, check_live=True
        )
        for page, reason in (("gone/", "answered 404"), ("moved/", "redirects off the docs site")):
            (reference,) = extract(f"{site}{page}", context).references
            verdict = validator.validate(reference, "How do I rotate the signing keys?")
            assert (verdict.status, verdict.check) == ("rejected", "resolves")
            assert reason in verdict.reason
        forge.close()
    finally:
        server.shutdown()
        server.server_close()
