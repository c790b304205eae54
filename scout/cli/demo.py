"""``scout demo``."""

from __future__ import annotations

from pathlib import Path

import click

from scout.cli.runtime import emit, json_option


@click.command()
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("scout-demo"),
    show_default=True,
    help="Where to build the demo estate, its config and its database.",
)
@json_option
def demo(directory: Path, as_json: bool) -> None:
    """Build the bundled demo estate and run index, sweep, ask and audit on it (offline)."""
    from scout.demo.run import render, run_demo

    result = run_demo(directory.absolute())
    emit(result, as_json, render)
