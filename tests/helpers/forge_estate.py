"""A small GitLab estate for the forge suites: one public project with history, branches, a tag,
merge requests and issues, beside a private, an archived, an empty and an outside project."""

from __future__ import annotations

from pathlib import Path

from scout.demo.builder import EstateBuilder, Symlink

TOKEN = "glpat-test-token"
SECRET = "glpat-SECRET-do-not-print-7f3a"
URL = "https://gitlab.acme.example"


def build_estate(root: Path) -> dict[str, str]:
    """acme/config (public, with history, a branch with a slash, a tag, MRs, issues),
    acme/sub/secret (private), acme/old (archived), acme/empty (no commits), other/outside."""
    estate = EstateBuilder(root, url=URL)
    shas: dict[str, str] = {}
    config = estate.project("acme/config")
    shas["first"] = config.commit(
        {"README.md": "# Config\n\nHow to configure.", "docs/setup.md": "# Setup\n\none\ntwo\n"},
        "Add docs",
    )
    config.branch("feature/x")
    shas["feature"] = config.commit({"docs/new.md": "# New\n"}, "Add new page")
    config.checkout("main")
    shas["merge"] = config.merge("feature/x", "Merge branch 'feature/x'")
    config.tag("v1.0")
    shas["head"] = config.commit(
        {"docs/setup.md": "# Setup\n\none\ntwo\nthree\n", "link.md": Symlink("docs/setup.md")},
        "Add step three",
    )
    estate.merge_request(
        "acme/config",
        1,
        state="merged",
        source_branch="feature/x",
        target_branch="main",
        merge_commit_sha=shas["merge"],
    )
    estate.issue(
        "acme/config",
        1,
        "How do I set up?",
        "See docs/setup.md please",
        updated_at="2026-02-01T10:00:00Z",
        notes=["Try the setup page", {"body": "changed the description", "system": True}],
    )
    estate.issue("acme/config", 2, "Later", "later text", updated_at="2026-02-03T10:00:00Z")
    secret = estate.project("acme/sub/secret", visibility="private")
    shas["secret"] = secret.commit({"docs/a.md": "# Secret\n"}, "Add")
    old = estate.project("acme/old", archived=True)
    old.commit({"README.md": "old\n"}, "Add")
    estate.project("acme/empty")
    outside = estate.project("other/outside")
    outside.commit({"README.md": "outside\n"}, "Add")
    estate.write()
    return shas
