"""``scout sweep`` and ``scout worker``: the issue-ingest commands (parse, call, print)."""

from __future__ import annotations

import logging
import os
import sys

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime
from scout.errors import EmbeddingError


@click.command()
@json_option
@pass_runtime
def sweep(runtime: Runtime, as_json: bool) -> None:
    """Read issues updated since the last sweep, validate signposts, re-validate moved ones."""
    from ingest.worker import sweep_once

    runtime.on_interrupt = (
        "every issue committed before the interrupt is kept; "
        "the next sweep carries on from the first one not committed"
    )
    forge, store = runtime.forge(), runtime.store(create=True)
    with runtime.progress() as progress:
        summary = sweep_once(runtime.config, forge, store, progress=progress)
    emit(summary, as_json, lambda result: result.describe())
    if summary.embeddings_error is not None:
        # the sweep's work is committed; the passages it added are searchable by their words
        raise EmbeddingError(summary.embeddings_error)


@click.command()
@click.option("--once", is_flag=True, help="Run one cycle (index, then sweep) and exit: for cron.")
@click.option(
    "--wait-first",
    is_flag=True,
    help="Wait for the schedule's first time before the first cycle (default: one cycle at start).",
)
@json_option
@pass_runtime
def worker(runtime: Runtime, once: bool, wait_first: bool, as_json: bool) -> None:
    """Index and sweep at start, then on ingest.schedule, until SIGTERM or SIGINT."""
    from ingest.worker import Worker, log
    from scout.cli.progress import LogProgress
    from scout.config import load_config
    from scout.progress import Progress
    from scout.safe_text import configure_logging

    configure_logging(logging.INFO, "%(asctime)s %(name)s %(message)s")
    # a worker's stderr is a log (journald, a file): progress is a log line every few seconds
    job = Worker.for_config(
        runtime.config,
        lambda: Progress() if runtime.quiet else LogProgress(log.info),
        load=lambda: load_config(runtime.config_path),
    )
    if once:
        emit(job.cycle(job.config, job.stop), as_json, lambda result: result.describe())
        return
    job.run_forever(wait_first=wait_first)
    if job.fatal is not None:
        raise job.fatal
    emit({"cycles": job.cycles}, as_json, lambda r: f"worker stopped after {r['cycles']} cycle(s)")
    if job.left_running:
        # the cycle left behind may sit in a request; nothing of it is half-written (each write
        # is one transaction), and the interpreter would wait for its pools at exit
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
