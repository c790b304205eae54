"""Benchmark estates (EstateBuilder): a docs estate for indexing, an issue estate for sweeps.

The main rule: deterministic from a seed, real git underneath, and issues shaped like a real
tracker's (most with no reference, some with several, notes on about a third, many references
pointing at the same few targets, a share of issue links and dead links that validation drops).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.corpus import Vocabulary, markdown_page, passages
from scout.demo.builder import EstateBuilder

GROUP = "acme"


@dataclass(frozen=True)
class IssueEstate:
    root: Path
    issues: int
    with_notes: int
    notes: int
    distinct_targets: int
    projects: int


def build_docs_estate(root: Path, pages: int, seed: int = 1, projects: int = 4) -> int:
    """``pages`` Markdown pages spread over ``projects`` projects; returns the bytes written."""
    builder = EstateBuilder(root, url="https://gitlab.bench.example")
    vocab = Vocabulary(seed)
    stream = passages(pages * 12, seed=seed, vocab=vocab)
    current: list = []
    files: list[dict[str, str]] = [{} for _ in range(projects)]
    size = 0
    page = 0
    for passage in stream:
        if current and passage.page != current[0].page:
            text = markdown_page(current[0].heading.split(":")[0], current)
            files[page % projects][f"docs/page-{page:05d}.md"] = text
            size += len(text.encode("utf-8"))
            page += 1
            current = []
            if page == pages:
                break
        current.append(passage)
    for n, content in enumerate(files):
        repo = builder.project(f"{GROUP}/docs-{n}")
        repo.commit({"README.md": f"# Docs {n}\n\nBenchmark docs.\n", **content}, "Docs")
    builder.write()
    return size


def build_issue_estate(root: Path, url: str, issues: int, seed: int = 1) -> IssueEstate:
    """``issues`` issues over three projects whose docs and code they point at."""
    rng = random.Random(seed)
    builder = EstateBuilder(root, url=url)
    vocab = Vocabulary(seed)
    docs = list(passages(120, seed=seed, vocab=vocab))
    targets: list[str] = []
    paths = ["acme/handbook", "acme/ledger", "acme/gateway"]
    for n, path in enumerate(paths):
        repo = builder.project(path)
        files = {}
        for k in range(20):
            section = docs[(n * 20 + k) % len(docs)]
            files[f"docs/topic-{k}.md"] = markdown_page(section.heading, [section] * 3)
            files[f"src/mod_{k}.py"] = "".join(f"def f{i}():\n    return {i}\n" for i in range(30))
        repo.commit(files, "Docs and code")
        for k in range(20):
            targets.append(f"{url}/{path}/-/blob/main/docs/topic-{k}.md")
            targets.append(f"{url}/{path}/-/blob/main/src/mod_{k}.py#L{k + 1}-{k + 4}")
    builder.project("acme/secrets", visibility="private").commit({"k.md": "# k\n"}, "Keys")
    dead = [f"{url}/acme/ledger/-/blob/main/docs/gone-{k}.md" for k in range(10)]
    start = datetime(2026, 2, 1, tzinfo=UTC)
    used: set[str] = set()
    with_notes = notes_total = 0
    for iid in range(1, issues + 1):
        project = paths[iid % len(paths)]
        words = " ".join(vocab.draw(rng, rng.randint(20, 80)))
        refs = []
        for _ in range(rng.choice((0, 0, 0, 1, 1, 2, 3))):
            roll = rng.random()
            if roll < 0.8:
                refs.append(rng.choice(targets))
            elif roll < 0.9:
                refs.append(rng.choice(dead))
            else:
                refs.append(f"#{rng.randint(1, issues)}")
        used.update(r for r in refs if r.startswith("http") and r not in dead)
        notes = []
        if rng.random() < 0.35:
            for _ in range(rng.randint(1, 4)):
                body = " ".join(vocab.draw(rng, rng.randint(10, 40)))
                if rng.random() < 0.3:
                    target = rng.choice(targets)
                    used.add(target)
                    body += f" see {target}"
                notes.append(body)
            with_notes += 1
            notes_total += len(notes)
        stamp = (start + timedelta(seconds=iid)).strftime("%Y-%m-%dT%H:%M:%SZ")
        builder.issue(
            project,
            iid,
            f"How does {vocab.draw(rng, 1)[0]} work?",
            words + "\n\n" + "\n".join(refs),
            updated_at=stamp,
            notes=notes,
        )
    builder.write()
    distinct = len({t.split("#")[0] for t in used})
    return IssueEstate(root, issues, with_notes, notes_total, distinct, len(paths))
