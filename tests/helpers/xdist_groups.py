"""``xdist_group`` marks honoured under ``--dist loadgroup`` on pytest 9.2 (a pytest plugin).

pytest-xdist 3.8 puts a test in its group by appending ``@group`` to the item's ``_nodeid`` on
the worker, and its scheduler reads the group back from the id. pytest 9.2 keeps a node's id in
``_id`` (a structured NodeId), so the suffix is lost and grouped tests are dealt out one by one
like any other, silently (pytest-xdist#1386, open; its fix, #1388, sets the structured id the
same way). Until a release carries it, this sets it; where xdist already did, it does nothing.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):  # set on xdist's workers alone
        return
    for item in items:
        names = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(names))
        if names and not item.nodeid.endswith(suffix):
            item._id = type(item._id).parse(item.nodeid + suffix)
