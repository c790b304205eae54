"""Test stores for the answer path: a few meaningful passages among enough filler rows.

FTS5 floors the idf of any term found in more than half the rows, so a store of three passages
scores everything near zero; the filler rows (each with its own rare words) keep real terms rare.
"""

from __future__ import annotations

from pathlib import Path

from scout.store import PassageRecord, Store

SHA = "0123456789abcdef0123456789abcdef01234567"
WEB = "https://gitlab.acme.example"


def passage(
    project: str,
    path: str,
    lines: tuple[int, int],
    heading: str,
    body: str,
    *,
    source: str = "docs",
    sha: str = SHA,
) -> PassageRecord:
    url = f"{WEB}/{project}/-/blob/{sha}/{path}#L{lines[0]}-{lines[1]}"
    return PassageRecord(
        project, path, sha, lines[0], lines[1], heading, body, source, "corpus", url
    )


CREDENTIALS = passage(
    "acme/config",
    "docs/credentials.md",
    (12, 30),
    "Rotating credentials",
    "To rotate the database keys, run `vault rotate --all` from the admin host. "
    "Rotated keys take effect within five minutes.",
)
BACKUPS = passage(
    "acme/ops",
    "docs/backups.md",
    (1, 9),
    "Backups",
    "Backups run nightly at 02:00 UTC. Restore a backup with `acme-restore --latest`.",
)
DEPLOY = passage(
    "acme/ops",
    "deploy/README.md",
    (3, 14),
    "Deploying",
    "Deploys go through the release pipeline; production deploys need two approvals.",
    source="code",
)


def filler(count: int = 40) -> list[PassageRecord]:
    return [
        passage(
            "acme/misc",
            f"docs/topic{i}.md",
            (1, 5),
            f"Topic zq{i}x",
            f"The widget{i}qq subsystem handles frobnication of gadget{i}zz records.",
        )
        for i in range(count)
    ]


# The citation the CREDENTIALS passage yields in ``scout ask --json`` (docs/design.md's shape).
CRED_URL = f"{WEB}/acme/config/-/blob/{SHA}/docs/credentials.md#L12-30"
CRED_CITATION = {
    "n": 1,
    "project": "acme/config",
    "path": "docs/credentials.md",
    "sha": SHA,
    "lines": [12, 30],
    "url": CRED_URL,
    "source": "docs",
}


def make_store(directory: Path, records: list[PassageRecord] | None = None) -> Store:
    store = Store.open(directory / "scout.db", create=True)
    store.insert_passages([CREDENTIALS, BACKUPS, DEPLOY, *filler()] if records is None else records)
    return store


def write_config(directory: Path, provider: str = "offline", *, expand: str | None = None) -> Path:
    """A config for the test estate; ``expand`` sets ``[retrieval] expand`` (default: the
    config's default, "auto": a model provider is asked for search terms first)."""
    config = directory / "scout.toml"
    retrieval = "" if expand is None else f'\n[retrieval]\nexpand = "{expand}"\n'
    config.write_text(
        '[forge]\nkind = "local"\nurl = "https://gitlab.acme.example"\npath = "estate"\n'
        'groups = ["acme"]\n\n'
        f'[answer]\nprovider = "{provider}"\n\n[store]\npath = "scout.db"\n{retrieval}',
        encoding="utf-8",
    )
    return config
