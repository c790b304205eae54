"""``scout sweep`` and ``scout worker``: the issue-ingest commands."""

from __future__ import annotations

import logging
import sys
import threading
from typing import Any

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime, progress


def run_sweep(runtime: Runtime, stop: threading.Event | None = None) -> dict[str, Any]:
    from ingest.lock import sweep_lock
    from ingest.sweep import Sweep
    from scout.providers import make_provider

    config = runtime.config
    store = runtime.store(create=True)
    with sweep_lock(store.path):
        provider = make_provider(config.answer.provider, model=config.answer.model)
        return (
            Sweep(config, runtime.forge(), store, provider, stop=stop, progress=progress)
            .run()
            .to_json()
        )


def run_cycle(runtime: Runtime, stop: threading.Event) -> dict[str, Any]:
    """One worker cycle: re-index moved projects, then sweep."""
    from scout.corpus.index import index_estate
    from scout.corpus.rules import CorpusRules

    config = runtime.config
    try:
        forge = runtime.forge()
        store = runtime.store(create=True)
        indexed = index_estate(forge, store, CorpusRules(tuple(config.forge.groups), config.corpus))
        return {"index": indexed.to_json(), "sweep": run_sweep(runtime, stop)}
    finally:
        runtime.close()


def _human_sweep(result: dict[str, Any]) -> str:
    rejected = result["rejected"]
    return (
        f"read {result['issues_read']} issue(s) and {result['notes_read']} note(s); "
        f"{result['references']} reference(s): {result['accepted']} accepted, "
        f"{sum(rejected.values())} rejected ("
        + ", ".join(f"{k} {v}" for k, v in rejected.items())
        + f"); {result['withdrawn']} withdrawn in {result['seconds']}s"
    )


@click.command()
@json_option
@pass_runtime
def sweep(runtime: Runtime, as_json: bool) -> None:
    """Read issues updated since the last sweep, validate signposts, re-validate moved ones."""
    emit(run_sweep(runtime), as_json, _human_sweep)


@click.command()
@click.option("--once", is_flag=True, help="Run one cycle (index, then sweep) and exit: for cron.")
@json_option
@pass_runtime
def worker(runtime: Runtime, once: bool, as_json: bool) -> None:
    """Index and sweep on ingest.schedule until SIGTERM or SIGINT."""
    from ingest.worker import Worker
    from scout.safe_text import SafeFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(SafeFormatter("%(asctime)s %(name)s %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler])
    job = Worker(runtime.config.ingest.schedule, lambda stop: run_cycle(runtime, stop))
    if once:
        summary = job.cycle(job.stop)
        emit(summary, as_json, lambda r: _human_sweep(r["sweep"]))
        return
    job.run_forever()
    emit({"cycles": job.cycles}, as_json, lambda r: f"worker stopped after {r['cycles']} cycle(s)")
