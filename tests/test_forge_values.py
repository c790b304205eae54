"""The values a forge names from a closed set (a project's visibility, a merge request's state)
are read once, where GitLab's answer or the estate enters, into their Literal types; anything
else is bad data (exit 5), never a string that later code compares against."""

from __future__ import annotations

from typing import Any

import pytest

from scout.errors import ForgeError
from scout.forge.base import MERGE_STATES, VISIBILITIES, merge_state, visibility


def test_gitlabs_visibilities_and_merge_states_are_read_as_they_are() -> None:
    # GitLab's doc/api/projects.md (visibility) and doc/api/merge_requests.md (state)
    assert [visibility(v) for v in ("public", "internal", "private")] == list(VISIBILITIES)
    assert [merge_state(s) for s in ("opened", "closed", "merged", "locked")] == list(MERGE_STATES)


@pytest.mark.parametrize(
    "value", ["", "Public", "secret", None, 1, ["public"], "public\x1b[31m", "p" * 100_000]
)
def test_anything_else_is_bad_data(value: Any) -> None:
    for read in (visibility, merge_state):
        with pytest.raises(ForgeError) as caught:
            read(value)
        assert caught.value.reason == "bad data" and caught.value.exit_code == 5
        assert len(str(caught.value)) < 200  # the value itself is never echoed
