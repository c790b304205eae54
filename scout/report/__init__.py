"""The maintainers' report: one self-contained HTML page (gap backlog, signpost audit, index
state) that works offline. :mod:`scout.report.model` gathers the data, :mod:`scout.report.html`
renders it; every piece of text on the page is escaped, because most of it is untrusted.
"""

from scout.report.html import render_html
from scout.report.model import ProjectSummary, Report, collect

__all__ = ["ProjectSummary", "Report", "collect", "render_html"]
