"""The one retry policy for GitLab, REST (``gitlab_http.Transport.call``) and GraphQL
(``gitlab_graphql.GraphQLClient.execute``) alike: which answers are final, what a final one is
called, how often a call retries and how long it waits between attempts.

Main rule: a 401 or 403 is ``unauthorized`` and a 404 ``not found``, at once (retrying will not
change them); any other status below 500 but 429 is ``bad data``, at once. A 429 pauses under the
forge's shared rate limiter and does not use up a retry; after ``MAX_THROTTLED`` of them one call
gives up (the limiter's waiting budget bounds the run as a whole). A 5xx, and a failure with no
status that may pass (a timeout, a dropped connection, a body cut short), backs off exponentially
(``backoff * 2**attempt``) for at most ``max_retries`` retries. A refused connection is final:
nothing listens, and waiting will not start GitLab. Each transport keeps its own messages and
what is particular to it: GraphQL's 404 means no GraphQL API; a timed-out query retries free
with a smaller page; errors beside ``data`` and a body that is not GraphQL are retried as a
dropped answer is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scout.errors import ForgeReason

MAX_THROTTLED = 12  # 429s answered to one call before it gives up, whatever the waits

Decision = Literal["throttle", "retry"] | ForgeReason


def judge(status: int | None) -> Decision:
    """What an answer with `status` (None: no answer, or one that could not be read) calls for:
    a pause under the rate limiter, a retry after a backoff, or a final failure of that reason."""
    if status == 429:
        return "throttle"
    if status is None or status >= 500:
        return "retry"
    if status in (401, 403):
        return "unauthorized"
    if status == 404:
        return "not found"
    return "bad data"


@dataclass
class Attempts:
    """One call's attempts so far under the policy; a transport makes one per call."""

    max_retries: int
    backoff: float
    retries: int = 0
    throttled: int = 0

    def backoff_wait(self) -> float | None:
        """Seconds to wait before the next retry, counting it; None when the retries are spent."""
        if self.retries >= max(0, self.max_retries):
            return None
        wait = self.backoff * 2.0**self.retries
        self.retries += 1
        return wait

    def may_throttle(self) -> bool:
        """Whether one more 429 may be waited out, counting it."""
        if self.throttled >= MAX_THROTTLED:
            return False
        self.throttled += 1
        return True

    @property
    def made(self) -> int:
        """Attempts made so far, the first included (what a final message reports)."""
        return self.retries + 1
