"""``scout report --html FILE``: the maintainers' page (gap backlog, signpost audit, index)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime
from scout.errors import UsageError


@click.command()
@click.option(
    "--html",
    "target",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write the page to FILE (- for stdout).",
)
@json_option
@pass_runtime
def report(runtime: Runtime, target: str, as_json: bool) -> None:
    """Write one self-contained HTML page for maintainers; works offline."""
    from scout.report import collect, render_html
    from signposts.audit import rejections, summarise

    store = runtime.store()
    rows = store.signposts()
    url = runtime.config.forge.public_url
    page = render_html(
        collect(
            store,
            summary=summarise(rows, gitlab_url=url),
            rejections=rejections(rows, gitlab_url=url),
            withdrawals=rejections(rows, status="withdrawn", gitlab_url=url),
        )
    )
    if target == "-":
        click.echo(page, nl=False)
        return
    path = Path(target)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        partial.write_text(page, encoding="utf-8")
        partial.replace(path)  # a reader never sees half a page
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise UsageError(f"cannot write {target}: {exc.strerror}") from None
    result = {"html": str(path), "bytes": len(page.encode("utf-8"))}
    emit(result, as_json, lambda r: f"wrote {r['html']} ({r['bytes']} bytes)")
