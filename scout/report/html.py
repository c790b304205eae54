"""The report as one HTML page: inline CSS, no scripts, no external assets.

Main rule: every value reaches the page through :func:`_e` (``html.escape`` with quotes) and
every link through :func:`_link`, which accepts only http(s) URLs. Questions, issue references,
paths and reasons are untrusted text; a Content-Security-Policy that forbids scripts and every
remote load backs the escaping up, so a mistake here still cannot run code or phone home.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from scout.audit_records import RejectionGroup, Summary
from scout.report.model import Report
from scout.safe_text import printable

MAX_TEXT = 500  # characters of any one value shown: a page stays readable and bounded
CHECK_TITLES = {
    "corpus_rules": "Corpus rules: the target is private, excluded, archived or outside the groups",
    "resolves": "Resolves: the target moved on (stale link, reverted or unmerged change)",
    "addresses": "Addresses: the target does not answer the issue's question (a documentation gap)",
}
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'none'"
CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;padding:0 1rem;
color:#1d2329;background:#fff}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:2px solid #d8dee4}
h3{margin-top:1.4rem}h4{margin:1rem 0 .3rem;font-weight:600}
table{border-collapse:collapse;width:100%;margin:.4rem 0 1rem}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #e6e9ec;vertical-align:top}
th{background:#f4f6f8}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,monospace;word-break:break-all}
.muted{color:#5b6570}.cards{display:flex;gap:1rem;flex-wrap:wrap}
.card{border:1px solid #d8dee4;border-radius:6px;padding:.5rem 1rem;min-width:8rem}
.card b{display:block;font-size:1.5rem}nav a{margin-right:1rem}
ul.plain{margin:0;padding:0;list-style:none}ul.plain li{margin-bottom:.3rem}.nw{white-space:nowrap}
"""


def _e(value: Any) -> str:
    # Bidi overrides reorder what a browser shows as surely as a terminal's: taken out here too.
    text = "" if value is None else printable(str(value), MAX_TEXT + 1)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + "…"
    return html.escape(text, quote=True)


def _link(url: str | None, text: Any) -> str:
    """An anchor for an http(s) URL, escaped; any other scheme is shown as plain text."""
    if not url or not url.lower().startswith(("https://", "http://")):
        return _e(text)
    return f'<a href="{_e(url)}" rel="noopener noreferrer">{_e(text)}</a>'


def _table(
    head: Iterable[str], rows: Iterable[Iterable[str]], *, numeric: tuple[int, ...] = ()
) -> str:
    """Cells are HTML already built from escaped parts."""
    cells = "".join(
        f'<th class="n">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(head)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>"


def _count(name: str, value: int) -> str:
    return f'<span id="{_e(name)}">{int(value)}</span>'


def _issue(project: str, iid: int, url: str | None) -> str:
    return _link(url, f"{project}#{iid}")


def _gaps(report: Report) -> str:
    cost = f'<p id="answering-cost">{_e(report.answering.line())}</p>'
    if not report.gaps:
        return cost + "<p>No declined questions.</p>"
    rows = [
        [
            _count(f"gap-{n}-asked", g.asked),
            _wordings(g.question, g.wordings),
            _e(g.reason or "-"),
            f'<span class="nw">{_e(g.first)}</span><br><span class="nw">{_e(g.last)}</span>',
            _nearest(g.nearest),
            _issue_links(g.issues),
        ]
        for n, g in enumerate(report.gaps, start=1)
    ]
    shown = f" (the top {len(rows)} shown)" if report.gaps_total > len(rows) else ""
    return (
        cost + f"<p>{_count('gaps-total', report.gaps_total)} documentation gap(s){_e(shown)}, "
        "most asked first. <b>Nearest passages</b> are what retrieval found and the model "
        "judged not to answer: the page a writer would extend. <b>Issues</b> are threads "
        "GitLab's issue search found for the same words (<code>scout gaps --issues</code>), "
        "where the answer may already be written.</p>"
        + _table(
            [
                "asked",
                "question (latest wording first)",
                "why declined",
                "first / last",
                "nearest passages",
                "issues",
            ],
            rows,
            numeric=(0,),
        )
    )


def _wordings(question: str, wordings: Iterable[str]) -> str:
    latest = " ".join(question.split())
    others = [w for w in wordings if w != latest]
    more = "".join(f'<br><span class="muted">{_e(w)}</span>' for w in others)
    return f"<b>{_e(question)}</b>{more}"


def _nearest(nearest: Iterable[dict[str, Any]]) -> str:
    items = []
    for n in nearest:
        lines = n.get("lines") or [0, 0]
        where = f"{n.get('project')} {n.get('path')} L{lines[0]}-{lines[-1]}"
        heading = f'<br><span class="muted">{_e(n.get("heading"))}</span>'
        items.append(f"<li>{_link(n.get('url'), where)}{heading}</li>")
    return f'<ul class="plain">{"".join(items)}</ul>' if items else "-"


def _issue_links(issues: Iterable[dict[str, Any]]) -> str:
    items = [
        f"<li>{_issue(str(i.get('project')), _iid(i.get('iid')), i.get('url'))} "
        f'<span class="muted">{_e(i.get("state"))}</span></li>'
        for i in issues
    ]
    return f'<ul class="plain">{"".join(items)}</ul>' if items else "-"


def _iid(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _cards(summary: Summary) -> str:
    status, share = summary.status, summary.all_rejected_issues
    cards = [
        f'<div class="card"><b>{_count("signposts-total", summary.total)}</b>signposts</div>',
        *(
            f'<div class="card"><b>{_count(f"status-{name}", n)}</b>{_e(name)}</div>'
            for name, n in status.items()
        ),
        f'<div class="card"><b>{_count("all-rejected-issues", share.issues)}'
        f" of {_count('issues-with-signposts', share.of)}</b>"
        "issues whose every signpost was rejected</div>",
    ]
    return f'<div class="cards">{"".join(cards)}</div>'


def _audit(report: Report) -> str:
    s = report.summary
    if not s.total:
        return "<p>No signposts yet: run <code>scout sweep</code>.</p>"
    parts = [_cards(s), "<h3>Rejections and withdrawals by check</h3>"]
    withdrawn = s.withdrawn_check
    parts.append(
        _table(
            ["check", "rejected", "withdrawn"],
            [
                [_e(c), _count(f"check-{c}", n), _count(f"withdrawn-{c}", withdrawn.get(c, 0))]
                for c, n in s.check.items()
            ],
            numeric=(1, 2),
        )
    )
    parts.append("<h3>By kind</h3>")
    parts.append(
        _table(
            ["kind", "accepted", "rejected", "withdrawn"],
            [
                [
                    _e(k),
                    _count(f"kind-{k}-accepted", c["accepted"]),
                    _count(f"kind-{k}-rejected", c["rejected"]),
                    _count(f"kind-{k}-withdrawn", c.get("withdrawn", 0)),
                ]
                for k, c in s.kind.items()
            ],
            numeric=(1, 2, 3),
        )
    )
    if s.top_issues:
        parts.append("<h3>Issues with the most rejected signposts</h3>")
        parts.append(
            _table(
                ["issue", "rejected", "of"],
                [
                    [_issue(i.project, i.iid, i.url), str(int(i.rejected)), str(int(i.total))]
                    for i in s.top_issues
                ],
                numeric=(1, 2),
            )
        )
    if s.top_accepted_targets:
        parts.append("<h3>Targets most often signposted (accepted)</h3>")
        parts.append(
            _table(
                ["target", "signposts"],
                [
                    [
                        f"<code>{_link(report.target_links.get(t.target), t.target)}</code>",
                        str(int(t.count)),
                    ]
                    for t in s.top_accepted_targets
                ],
                numeric=(1,),
            )
        )
    if s.top_rejected_targets:
        parts.append("<h3>Targets most often rejected</h3>")
        parts.append(
            _table(
                ["reference", "check", "latest reason", "signposts"],
                [
                    [
                        f"<code>{_link(t.url, t.reference)}</code>",
                        _e(t.check),
                        _e(t.reason),
                        str(int(t.count)),
                    ]
                    for t in s.top_rejected_targets
                ],
                numeric=(3,),
            )
        )
    parts.append(_rejections(report.rejections))
    if report.withdrawals:
        parts.append(_rejections(report.withdrawals, "withdrawn"))
    return "".join(parts)


def _rejections(groups: list[RejectionGroup], status: str = "rejected") -> str:
    title = "Rejections" if status == "rejected" else "Withdrawn (accepted, then failed)"
    if not groups:
        return f"<h3>{title}</h3><p>None.</p>"
    parts = [f"<h3>{title}, grouped by check and reason</h3>"]
    check = None
    for n, g in enumerate(groups, start=1):
        if g.check != check:
            check = g.check
            parts.append(f"<h4>{_e(CHECK_TITLES.get(check, check))}</h4>")
        prefix = "rejection" if status == "rejected" else "withdrawal"
        rows = [
            [
                str(int(v.id)),
                _e(v.state),
                _e(v.kind),
                f"<code>{_link(v.reference_url, v.reference)}</code>",
                _e(v.reason),
                _issue(v.issue_project, v.issue_iid, v.issue_url),
                _e(v.checked_at),
            ]
            for v in g.verdicts
        ]
        more = (
            f'<p class="muted">and {int(g.more)} more: '
            f"<code>{_e(g.command)}</code> lists them all</p>"
            if g.more
            else ""
        )
        parts.append(
            f"<p><b>{_count(f'{prefix}-group-{n}', g.count)}</b> × "
            f"<code>{_e(g.reason)}</code></p>"
            + _table(
                ["id", "state", "kind", "reference", "reason", "issue", "checked"],
                rows,
                numeric=(0,),
            )
            + more
        )
    return "".join(parts)


def _index(report: Report) -> str:
    sweep = report.sweep
    with_signposts = report.summary.all_rejected_issues.of
    rows = [
        [
            _link(p.web_url, p.path),
            _e(p.visibility),
            _e(p.default_branch or "-"),
            "<code>"
            + (
                _link(f"{p.web_url}/-/tree/{p.indexed_sha}", p.indexed_sha[:12])
                if p.indexed_sha
                else "-"
            )
            + "</code>",
            _e(p.indexed_at or "-"),
            _count(f"passages-{p.path}", p.passages),
            str(int(p.signpost_passages)),
        ]
        for p in report.projects
    ]
    cursors = "".join(
        f"<li><code>{_e(scope)}</code>: issues updated up to {_e(value)}</li>"
        for scope, value in sweep.cursors.items()
    )
    return (
        f"<p>{_count('projects-total', len(report.projects))} project(s) indexed.</p>"
        + _table(
            [
                "project",
                "visibility",
                "branch",
                "indexed sha",
                "indexed at",
                "passages",
                "from signposts",
            ],
            rows,
            numeric=(5, 6),
        )
        + "<h3>Last sweep</h3>"
        + f"<p>{_count('issues-known', sweep.issues)} issue(s) read by the sweep, "
        + f"{_count('sweep-issues-with-signposts', with_signposts)} of them with signposts "
        + "(issues of private or excluded projects are read for their cursor only); last read "
        f"{_e(sweep.last_read_at or 'never')}; "
        f"last verdict {_e(sweep.last_checked_at or 'never')}.</p>"
        + (f"<ul>{cursors}</ul>" if cursors else "<p>No sweep has run yet.</p>")
    )


def render_html(report: Report) -> str:
    """The whole page, as one string."""
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>Scout report</title>"
        f"<style>{CSS}</style></head><body>"
        "<h1>Scout report</h1>"
        f'<p class="muted">Generated {_e(report.generated_at)}.</p>'
        '<nav><a href="#gaps">Gap backlog</a><a href="#signposts">Signpost audit</a>'
        '<a href="#index">Index</a></nav>'
        f'<section id="gaps"><h2>Gap backlog: what to document next</h2>{_gaps(report)}</section>'
        f'<section id="signposts"><h2>Signpost audit</h2>{_audit(report)}</section>'
        f'<section id="index"><h2>Index</h2>{_index(report)}</section>'
        "</body></html>\n"
    )
