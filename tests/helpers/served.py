"""The demo estate served by the GitLab test server, configs that point Scout at it, and the
store states the GitLab suites compare.

The demo estate is built with the server's own URL (``build_demo_estate(url=server.url)``), so its
issue links point at the configured forge. The server is started first on a placeholder
estate.toml (its port is only known then) and re-reads estate.toml when the demo build replaces
it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from scout.cli.main import cli
from scout.demo.estate import DOCS_URL, DemoEstate, build_demo_estate
from tests.gitlab_server.server import GitLabServer
from tests.helpers.run import Result, run_cli

TOKEN_ENV = "SCOUT_TEST_GITLAB_TOKEN"
TOKEN = "glpat-h9-do-not-print-0123456789"


def placeholder(estate: Path) -> Path:
    """An estate directory the server can start on before the real estate is built into it."""
    estate.mkdir(parents=True, exist_ok=True)
    (estate / "estate.toml").write_text('url = "http://placeholder.invalid"\n', encoding="utf-8")
    return estate


def serve_built(
    estate: Path, start: Callable[..., GitLabServer], build: Callable[[Path, str], None]
) -> GitLabServer:
    """A test server over an estate built for its URL (``build(estate, server.url)``): the
    server starts on a placeholder, then the real estate is built into the same folder."""
    server = start(placeholder(estate), token=TOKEN)
    (estate / "estate.toml").unlink()
    build(estate, server.url)
    return server


def config_text(
    url: str,
    *,
    kind: str = "gitlab",
    estate: Path | None = None,
    provider: str = "offline",
    api: str = "rest",
) -> str:
    # forge.api is pinned to REST here: these suites assert REST's requests, path by path;
    # tests/test_graphql.py runs the same estates through GraphQL and compares the stores.
    forge = (
        f'token_env = "{TOKEN_ENV}"\napi = "{api}"' if kind == "gitlab" else f'path = "{estate}"'
    )
    return f"""[forge]
kind = "{kind}"
url = "{url}"
{forge}
groups = ["acme"]

[corpus]
visibility = ["public"]
exclude_projects = ["acme/infra"]

[[docs_site]]
url = "{DOCS_URL}"
project = "acme/handbook"
root = "docs/"

[answer]
provider = "{provider}"

[store]
path = "scout.db"
"""


def run_scout(
    config: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> Result:
    return run_cli(
        ["--config", str(config), *args],
        env={**os.environ, TOKEN_ENV: TOKEN, **(env or {})},
        timeout=timeout,
        cwd=config.parent,
    )


@dataclass
class Served:
    """The demo estate served by a GitLab test server, and configs that point Scout at it."""

    server: GitLabServer
    demo: DemoEstate
    directory: Path

    @property
    def estate(self) -> Path:
        return self.demo.root

    def config(self, name: str = "gitlab", *, kind: str = "gitlab", **options: Any) -> Path:
        folder = self.directory / name
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / "scout.toml"
        text = config_text(self.server.url, kind=kind, estate=self.estate, **options)
        target.write_text(text, encoding="utf-8")
        return target

    def project_id(self, path: str) -> int | None:
        found = self.server.estate.data().project(path)
        return None if found is None else found.id


def serve_demo(
    directory: Path, start: Callable[..., GitLabServer], *, canary: str | None = None, **kw: Any
) -> Served:
    estate = placeholder(directory / "estate")
    server = start(estate, token=TOKEN, **kw)
    (estate / "estate.toml").unlink()
    demo = build_demo_estate(estate, canary=canary, url=server.url)
    return Served(server, demo, directory)


def passages(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return sorted(
            conn.execute(
                "select project, path, sha, line_start, line_end, heading, body, source, origin, "
                "url, target from passages"
            ).fetchall(),
            key=repr,
        )
    finally:
        conn.close()


def state(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Everything index and sweep decide, without ids and timestamps."""
    conn = sqlite3.connect(db)
    try:
        queries = {
            "signposts": "select issue_project, issue_iid, reference, status, check_name, reason, "
            "target_project, target_path, target_line_start, target_line_end, target_sha, target "
            "from signposts",
            "passages": "select project, path, sha, line_start, line_end, heading, body, source, "
            "origin, url, target from passages",
            "issues": "select project, iid, updated_at, refs from issues",
            "cursors": "select scope, value from cursors",
            "projects": "select path, indexed_sha, web_url from projects",
        }
        return {k: sorted(conn.execute(q).fetchall(), key=repr) for k, q in queries.items()}
    finally:
        conn.close()


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("pragma integrity_check").fetchone()[0])
    finally:
        conn.close()


def invoke(config: Path, *args: str) -> Result:
    """The real CLI in-process (no interpreter start-up), with the token in its environment."""
    done = CliRunner(env={TOKEN_ENV: TOKEN}).invoke(cli, ["--config", str(config), *args])
    if done.exception is not None and not isinstance(done.exception, SystemExit):
        raise done.exception
    return Result(done.exit_code, done.stdout, done.stderr)


def reference_state(served: Served, *commands: str) -> dict[str, Any]:
    """The state the local forge reaches on the same estate: what every faulty run must end at."""
    config = served.config("reference", kind="local")
    for command in commands:
        done = run_scout(config, command)
        assert done.code == 0, done.stderr
    return state(config.parent / "scout.db")


def assert_one_line_failure(stderr: str, reason: str) -> None:
    """Retries are logged as warnings before the one line that says why the command stopped
    (``reason`` is a forge failure's, or what a run that read all but some projects says)."""
    lines = stderr.splitlines()
    assert "Traceback" not in stderr
    said = reason if reason.startswith("could not read") else f"forge {reason}: "
    assert lines[-1].startswith(f"scout: {said}"), stderr
    assert all("retry" in line for line in lines[:-1]), stderr
    assert TOKEN not in stderr
