"""Stencil's documentation site as passages: a real docs set for retrieval tests.

The archive is the ``docs/`` folder of ionic-team/stencil-site at ``SHA`` (MIT; its licence is
inside the archive, and tests/fixtures/realdocs/README.md says how it was made).
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterator
from pathlib import Path

from scout.corpus.passages import split_document
from scout.store import PassageRecord

ARCHIVE = Path(__file__).parent.parent / "fixtures" / "realdocs" / "stencil-site-docs.tar.xz"
SHA = "bc1f11bcf5b0907ca266a9f691fa06dd4d023fa3"


def records() -> Iterator[PassageRecord]:
    with tarfile.open(ARCHIVE) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.isfile() or not member.name.endswith((".md", ".mdx")):
                continue
            stream = tar.extractfile(member)
            assert stream is not None
            text = stream.read().decode("utf-8")
            for s in split_document(member.name, text):
                url = f"https://gitlab.example/ionic/stencil-site/-/blob/{SHA}/{member.name}"
                yield PassageRecord(
                    "ionic/stencil-site", member.name, SHA, s.line_start, s.line_end,
                    s.heading, s.body, "docs", "corpus", f"{url}#L{s.line_start}-{s.line_end}",
                )  # fmt: skip
