"""Signpost validation on the demo estate's real git history: every accepted and rejected path."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from ingest.sweep import Sweep, extract_context
from scout.config import load_config
from scout.corpus.index import index_estate
from scout.corpus.rules import CorpusRules
from scout.demo.estate import DemoEstate, build_demo_estate
from scout.forge.local import LocalForge
from scout.providers import make_provider
from scout.store import SignpostRow, Store
from signposts.extract import extract


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoEstate, Store, Counter[str]]:
    root = tmp_path_factory.mktemp("demo")
    demo = build_demo_estate(root / "estate")
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
