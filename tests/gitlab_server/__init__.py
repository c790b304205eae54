"""A GitLab REST API v4 test server over an estate directory, for tests and benchmarks.

``GitLabServer(estate).start()`` serves the estate on 127.0.0.1 (``server.url`` is the base URL
to give python-gitlab); ``python -m tests.gitlab_server ESTATE`` runs it in the foreground.
"""

from tests.gitlab_server.faults import KINDS as FAULTS
from tests.gitlab_server.server import GitLabServer, Request

__all__ = ["FAULTS", "GitLabServer", "Request"]
