"""atheris harness: the passage splitters and the docs-site mapping on arbitrary text (not part
of the suite; tests/test_fuzz.py runs hypothesis over the same functions in CI).

Run it from a separate virtualenv that has atheris, with the project on PYTHONPATH:

    PYTHONPATH=.:.venv/lib/python3.11/site-packages <venv>/bin/python fuzz/split_atheris.py \\
        -max_total_time=90 -timeout=5 -rss_limit_mb=2048 <corpus-dir>

`-timeout=5` is the splitting budget: an input that takes longer is a hang to report.
"""

import sys

import atheris

with atheris.instrument_imports():
    from scout.corpus.passages import MAX_PASSAGE_CHARS, split_document
    from signposts import docs_map

NAMES = ("a.md", "a.mdx", "a.rst", "README")


def one(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    name = NAMES[provider.ConsumeIntInRange(0, len(NAMES) - 1)]
    page = provider.ConsumeUnicodeNoSurrogates(128)
    text = provider.ConsumeUnicodeNoSurrogates(1 << 16)
    for section in split_document(f"docs/{name}", text):
        assert len(section.body) <= MAX_PASSAGE_CHARS
    fields = docs_map.front_matter(text)
    for generator in docs_map.GENERATORS:
        docs_map.page_urls(f"docs/{name}", "docs/", generator, fields.get)
        docs_map.find_source(page, "docs/", generator, [f"docs/{name}"], lambda _path: text)


atheris.Setup(sys.argv, one)
atheris.Fuzz()
