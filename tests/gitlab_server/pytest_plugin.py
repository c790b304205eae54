"""Pytest fixtures for the GitLab API test server (registered from tests/conftest.py).

- ``gitlab_server_factory``: ``start(estate_dir, **GitLabServer kwargs) -> GitLabServer``; every
  server it started is stopped at teardown.
- ``gitlab_sample``: a module-wide sample estate (see ``sample.py``) and a server over it, as
  ``GitLabSample(server, estate, shas, token)``; tests that inject faults or change visibility
  must undo it (``clear_faults``) or use their own server from the factory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.gitlab_server.sample import build_sample_estate
from tests.gitlab_server.server import GitLabServer

TOKEN = "glpat-test-token"


@dataclass(frozen=True)
class GitLabSample:
    server: GitLabServer
    estate: Path
    shas: dict[str, str]
    token: str = TOKEN


@pytest.fixture
def gitlab_server_factory() -> Iterator[Callable[..., GitLabServer]]:
    started: list[GitLabServer] = []

    def start(estate: Path, **kwargs: Any) -> GitLabServer:
        server = GitLabServer(estate, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def gitlab_sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitLabSample]:
    estate = tmp_path_factory.mktemp("gitlab-sample") / "estate"
    shas = build_sample_estate(estate)
    with GitLabServer(estate, token=TOKEN) as server:
        yield GitLabSample(server, estate, shas)
