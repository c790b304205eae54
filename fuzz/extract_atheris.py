"""atheris harness: ``signposts.extract.extract_issue`` on arbitrary text (not part of the suite).

atheris is not a dependency of Scout. Run it from a separate virtualenv that has atheris, with
the project on PYTHONPATH:

    PYTHONPATH=.:.venv/lib/python3.11/site-packages <venv>/bin/python fuzz/extract_atheris.py \\
        -max_total_time=90 -timeout=5 -rss_limit_mb=2048 <corpus-dir>
"""

import sys

import atheris

with atheris.instrument_imports():
    from signposts.extract import extract_issue
    from signposts.references import DocsSite, ExtractContext

CONTEXT = ExtractContext(
    "https://gitlab.acme.example",
    (DocsSite("https://docs.acme.example/h/", "acme/h", "docs/"),),
    "acme/app",
)


def one(data: bytes) -> None:
    provider = atheris.FuzzedDataProvider(data)
    title = provider.ConsumeUnicodeNoSurrogates(64)
    body = provider.ConsumeUnicodeNoSurrogates(4096)
    note = provider.ConsumeUnicodeNoSurrogates(512)
    found = extract_issue(title, body, [note], CONTEXT)
    assert len(found.references) <= CONTEXT.max_references
    for reference in found.references:
        assert "\x00" not in reference.reference


atheris.Setup(sys.argv, one)
atheris.Fuzz()
