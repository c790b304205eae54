"""``scout backup PATH``: an online, checked copy of the store (``scout.store.backup``)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime


@click.command()
@click.argument("path", type=click.Path(dir_okay=True, path_type=Path))
@json_option
@pass_runtime
def backup(runtime: Runtime, path: Path, as_json: bool) -> None:
    """Copy the store to PATH while other commands run (the question log and verdicts cannot be
    rebuilt from the estate: back them up)."""
    runtime.on_interrupt = "no backup was written (the file at PATH, if any, is as it was)"
    started = time.monotonic()
    store = runtime.store()
    size = store.backup(path)
    result = {
        "path": str(path.absolute()),
        "bytes": size,
        "seconds": round(time.monotonic() - started, 3),
    }
    emit(
        result,
        as_json,
        lambda r: f"backed up {store.path} to {r['path']} ({r['bytes']} bytes, {r['seconds']}s)",
    )
