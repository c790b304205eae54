"""A change of corpus rules takes effect at once: no commit needed.

``scout index`` re-reads a project indexed under other rules and withdraws accepted signposts
whose target the new rules keep out; ``scout sweep`` re-checks every accepted signpost after a
rule change; in both cases ``scout ask`` stops answering from what is now excluded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scout.demo.builder import EstateBuilder
from tests.helpers.run import Result

ROUNDING = (
    "# FX rates are rounded half-even to four decimal places in ledger postings,\n"
    "# after conversion and before the posting is balanced.\n"
    "def round_fx(value):\n    return value\n"
)


@pytest.fixture
def estate(estate_builder: EstateBuilder) -> Path:
    ledger = estate_builder.project("acme/ledger")
    ledger.commit(
        {
            "README.md": "# Ledger\n\nPostings and balances.\n",
            "docs/guide.md": "# Guide\n\nPost entries with the ledger CLI.\n",
            "docs/private/salaries.md": "# Salaries\n\nThe quokkaplex salary bands are secret.\n",
            "src/rounding.py": ROUNDING,
        },
        "Start",
    )
    estate_builder.issue(
        "acme/ledger",
        1,
        "How are FX rates rounded in ledger postings?",
        "Is it half-even, and to how many decimal places? See src/rounding.py",
    )
    return estate_builder.write()


def cited(result: Result) -> list[str]:
    assert result.code == 0, result.stderr
    return [c["path"] for c in result.json()["citations"]]


@pytest.mark.slow
def test_index_applies_new_rules_to_passages_and_signpost_targets(
    estate: Path, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    config = write_config(estate)
    assert scout("index", config=config).code == 0
    assert scout("sweep", "--json", config=config).json()["accepted"] == 1
    assert cited(scout("ask", "quokkaplex salary bands", "--json", config=config)) == [
        "docs/private/salaries.md"
    ]
    assert cited(scout("ask", "How are FX rates rounded?", "--json", config=config)) == [
        "src/rounding.py"
    ]

    config = write_config(estate, corpus={"exclude_paths": ["docs/private/*", "src/*"]})
    done = scout("index", "--json", config=config)
    assert done.code == 0, done.stderr
    summary = done.json()
    assert (summary["projects_indexed"], summary["projects_unchanged"]) == (1, 0)
    assert summary["signposts_withdrawn"] == 1
    assert "docs/private/salaries.md" not in cited(
        scout("ask", "quokkaplex salary bands", "--json", config=config)
    )
    assert "src/rounding.py" not in cited(
        scout("ask", "How are FX rates rounded?", "--json", config=config)
    )
    (row,) = scout("signposts", "--status", "withdrawn", "--json", config=config).json()
    assert (row["check"], row["reason"]) == ("corpus_rules", "path_excluded: src/rounding.py")
    # Unchanged rules, unchanged heads: nothing read again.
    again = scout("index", "--json", config=config).json()
    assert (again["projects_unchanged"], again["signposts_withdrawn"]) == (1, 0)


@pytest.mark.slow
def test_a_sweep_after_a_rule_change_rechecks_accepted_signposts(
    estate: Path, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    config = write_config(estate)
    assert scout("sweep", config=config).code == 0
    assert scout("sweep", "--json", config=config).json()["revalidated"] == 0
    config = write_config(estate, corpus={"exclude_paths": ["src/*"]})
    swept = scout("sweep", "--json", config=config).json()
    assert (swept["revalidated"], swept["withdrawn"]) == (1, 1)
    assert "src/rounding.py" not in cited(
        scout("ask", "How are FX rates rounded?", "--json", config=config)
    )


@pytest.mark.slow
@pytest.mark.parametrize("withdrawn_by", ["index", "sweep"])
def test_signposts_the_rules_withdrew_come_back_at_the_next_index_when_the_rules_do(
    estate: Path, write_config: Callable[..., Path], scout: Callable[..., Result], withdrawn_by: str
) -> None:
    config = write_config(estate)
    assert scout("index", config=config).code == 0
    assert scout("sweep", "--json", config=config).json()["accepted"] == 1
    config = write_config(estate, corpus={"exclude_paths": ["src/*"]})
    assert scout(withdrawn_by, config=config).code == 0
    assert scout("signposts", "--status", "accepted", "--json", config=config).json() == []
    # the rules change back; no head moved
    config = write_config(estate)
    done = scout("index", "--json", config=config)
    assert done.code == 0, done.stderr
    assert done.json()["signposts_reinstated"] == 1
    (row,) = scout("signposts", "--status", "accepted", "--json", config=config).json()
    assert row["target"]["path"] == "src/rounding.py"
    assert cited(scout("ask", "How are FX rates rounded?", "--json", config=config)) == [
        "src/rounding.py"
    ]
    # the same rules again: nothing is judged again
    assert scout("index", "--json", config=config).json()["signposts_reinstated"] == 0


@pytest.mark.slow
def test_a_sweep_after_a_change_of_passage_format_rewrites_signposted_passages(
    estate: Path, write_config: Callable[..., Path], scout: Callable[..., Result]
) -> None:
    # As an older Scout left the store: checked by the same rules, cut by an older format, so
    # its signposted file's passages lack what the format added (identifiers' words).
    import sqlite3

    from scout.config import load_config

    config = write_config(estate)
    store = load_config(config).store.path
    assert scout("sweep", config=config).code == 0
    db = sqlite3.connect(store)
    (checked_by,) = db.execute("select value from settings where key = 'sweep_rules'").fetchone()
    assert checked_by.endswith("/passages-4")
    db.execute(
        "update settings set value = ? where key = 'sweep_rules'",
        [checked_by.removesuffix("/passages-4") + "/passages-3"],
    )
    db.execute("update passages set words = 'stale' where origin = 'signpost'")
    db.commit()
    db.close()
    done = scout("sweep", "--json", config=config)
    assert done.code == 0, done.stderr
    swept = done.json()
    assert (swept["revalidated"], swept["withdrawn"]) == (1, 0)
    db = sqlite3.connect(store)
    words = [w for (w,) in db.execute("select words from passages where origin = 'signpost'")]
    assert words and "stale" not in words
    db.close()
    assert scout("sweep", "--json", config=config).json()["revalidated"] == 0
