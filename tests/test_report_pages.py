"""The report page, byte for byte: the Jinja2 templates render exactly the page the f-string
renderer made before them (the fixtures in tests/fixtures/report/ are its output), for a report
with every section filled, an empty one, and one of hostile values at the edges.

A change to the page is meant when one of these fails: regenerate the fixture with
``render_html`` and read the diff.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scout.report import Report, render_html
from scout.report.html import MAX_TEXT
from tests.helpers.reports import EDGE, edge_report, empty_report, full_report

PAGES = Path(__file__).parent / "fixtures" / "report"
REPORTS = {"full": full_report, "empty": empty_report, "edge": edge_report}


@pytest.mark.parametrize(("name", "make"), REPORTS.items(), ids=REPORTS)
def test_the_page_is_byte_identical_to_its_fixture(name: str, make: Callable[[], Report]) -> None:
    expected = (PAGES / f"{name}.html").read_bytes()
    assert render_html(make()).encode("utf-8") == expected


def test_edge_values_are_escaped_cut_and_made_printable() -> None:
    page = render_html(edge_report())
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "it&#x27;s &quot;quoted&quot; &amp;" in page
    assert "\u202e" not in page and "\x1b" not in page
    # each value is cut at MAX_TEXT characters (before escaping), then marked with an ellipsis
    shown = page.split('<p class="muted">Generated ', 1)[1].split(".</p>", 1)[0]
    assert shown.endswith("…") and len(EDGE) > MAX_TEXT
    assert 'href="javascript:' not in page and 'href="ftp:' not in page
    assert 'href="HTTPS://gitlab.acme.example/x?a=1&amp;b=&#x27;2&#x27;"' in page


def test_an_unknown_field_fails_the_render_instead_of_blanking_it() -> None:
    import jinja2

    from scout.report.html import environment

    template = environment().from_string("{{ report.no_such_field }}")
    with pytest.raises(jinja2.UndefinedError):
        template.render(report=full_report())
