"""A small estate that exercises every endpoint of the test server, built with EstateBuilder.

``build_sample_estate(root)`` returns the shas and facts tests assert against; the same build gives
the same shas on every machine (EstateBuilder fixes authors and dates).
"""

from __future__ import annotations

from pathlib import Path

from scout.demo.builder import EstateBuilder, Symlink

URL = "https://gitlab.acme.example"


def build_sample_estate(root: Path) -> dict[str, str]:
    """Write the sample estate under ``root``; returns named shas (``main``, ``merge``, ...)."""
    b = EstateBuilder(root, url=URL)
    shas: dict[str, str] = {}
    config = b.project("acme/config")
    shas["first"] = config.commit(
        {
            "README.md": "# Config\n",
            "docs/setup.md": "# Setup\n\nInstall it.\nThen run it.\n",
            "docs/guide/intro.md": "# Intro\n",
            "docs/old.md": "old\n",
            "logo.bin": bytes(range(256)),
            "link.md": Symlink("README.md"),
            **{f"notes/n{i:02d}.txt": f"note {i}\n" for i in range(25)},
        },
        "Initial docs\n\nWith a body.",
    )
    config.branch("feature/creds")
    shas["feature"] = config.commit(
        {"docs/setup.md": "# Setup\n\nInstall it.\nSet the credentials.\nThen run it.\n"},
        "Document credentials",
    )
    config.checkout("main")
    shas["merge"] = config.merge("feature/creds", "Merge branch 'feature/creds'")
    config.branch("cleanup")
    shas["cleanup"] = config.commit(
        {"docs/old.md": None, "docs/renamed.md": "# Intro\n", "docs/guide/intro.md": None},
        "Remove and rename",
    )
    config.checkout("main")
    shas["squash"] = config.squash("cleanup", "Remove and rename (squashed)")
    config.tag("v1.0")
    config.branch("wip")
    shas["wip"] = config.commit({"docs/wip.md": "draft\n"}, "Work in progress")
    config.checkout("main")
    shas["main"] = config.sha()
    b.merge_request(
        "acme/config",
        1,
        state="merged",
        source_branch="feature/creds",
        target_branch="main",
        merge_commit_sha=shas["merge"],
    )
    b.merge_request(
        "acme/config",
        2,
        state="merged",
        source_branch="cleanup",
        target_branch="main",
        squash_commit_sha=shas["squash"],
    )
    b.merge_request("acme/config", 3, state="opened", source_branch="wip", target_branch="main")

    api = b.project("acme/platform/api", visibility="private")
    shas["api"] = api.commit({"docs/api.md": "# API\n"}, "API docs")
    infra = b.project("acme/infra", visibility="internal", archived=True)
    shas["infra"] = infra.commit({"README.md": "infra\n"}, "Infra")
    b.project("acme/platform/empty")
    b.project("other/tool").commit({"README.md": "tool\n"}, "Tool")

    b.issue(
        "acme/config",
        1,
        "How to set credentials?",
        "See docs/setup.md",
        updated_at="2026-02-01T10:00:00Z",
        notes=["Try docs/setup.md#L4", {"body": "changed the description", "system": True}],
    )
    b.issue(
        "acme/config",
        2,
        "Old question",
        "Nothing",
        updated_at="2026-01-15T08:00:00Z",
        state="closed",
    )
    b.issue(
        "acme/platform/api",
        5,
        "API?",
        "See !1",
        updated_at="2026-03-01T00:00:00Z",
        notes=["first", "second"],
    )
    b.issue("other/tool", 1, "Elsewhere", "", updated_at="2026-02-10T00:00:00Z")
    b.write()
    return shas
