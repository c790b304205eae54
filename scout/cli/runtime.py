"""What every command shares: the loaded config, the store, and one way to print results.

Results go to stdout (human text, or exactly one JSON document with ``--json``); progress and logs
go to stderr. Commands call :func:`emit` rather than printing, so the two never mix.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scout.cli.progress import make_progress
from scout.config import Config, load_config
from scout.errors import UsageError
from scout.safe_text import json_safe, printable_block
from scout.store import Store

if TYPE_CHECKING:
    # only for annotations: commands that never open a forge do not import it
    from scout.forge.base import Forge
    from scout.progress import Progress
    from scout.table import Styled


@dataclass
class Runtime:
    """Per-invocation state, created by the ``scout`` group and passed to every command."""

    config_path: str | None = None
    # what an interrupted command kept, for the line printed on Ctrl-C (exit 130)
    on_interrupt: str = ""
    quiet: bool = False
    # --no-pager: long lists are printed straight to the terminal
    pager: bool = True
    _stores: list[Store] = field(default_factory=list)
    _forges: list[Forge] = field(default_factory=list)

    @cached_property
    def config(self) -> Config:
        from scout.environment import withhold_from_children

        config = load_config(self.config_path)
        withhold_from_children(config.forge.token_env, config.answer.api_key_env)
        return config

    def store(self, *, create: bool = False, path: Path | None = None) -> Store:
        settings = self.config.store
        store = Store.open(path or settings.path, create=create, busy_timeout=settings.busy_timeout)
        store.keep_questions(settings.question_log_days, settings.question_log_rows)
        self._stores.append(store)
        return store

    def forge(self) -> Forge:
        from scout.forge import open_forge

        forge = open_forge(self.config)
        self._forges.append(forge)
        return forge

    def progress(self) -> Progress:
        """The progress display for this command (closed by the command before it prints)."""
        return make_progress(self.quiet)

    def close(self) -> None:
        for forge in self._forges:
            forge.close()
        self._forges.clear()
        for store in self._stores:
            store.close()
        self._stores.clear()


pass_runtime = click.make_pass_decorator(Runtime)

CONFIG_HELP = "Config file (default: $SCOUT_CONFIG, else ./scout.toml)."


def _config_after(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    # `scout ask --config x.toml Q` means the same as `scout --config x.toml ask Q`
    if value is not None:
        runtime = ctx.find_object(Runtime)
        if runtime is not None:
            runtime.config_path = value


def _quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        runtime = ctx.find_object(Runtime)
        if runtime is not None:
            runtime.quiet = True


QUIET_HELP = "No progress display or progress lines on stderr (errors are still printed)."


def passages_option(name: str, what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A passage-count option (``--passages``, ``--limit``) in the range retrieval accepts."""
    from scout.retrieve.question import MAX_PASSAGES, MIN_PASSAGES

    return click.option(
        name,
        type=click.IntRange(MIN_PASSAGES, MAX_PASSAGES),
        default=None,
        help=f"{what}, {MIN_PASSAGES}-{MAX_PASSAGES} (default: answer.passages).",
    )


def project_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--project GLOB``, repeatable: retrieval only in projects whose full path matches."""
    return click.option(
        "--project",
        "projects",
        multiple=True,
        metavar="GLOB",
        help="Only passages of projects whose full path matches GLOB (repeatable; * ? [..]).",
    )(function)


question_argument = click.argument("question", nargs=-1, required=True)

no_expand_option = click.option(
    "--no-expand",
    is_flag=True,
    help="Search with the question's own words only: do not ask the model for search terms "
    "first (retrieval.expand).",
)


def question_text(words: tuple[str, ...]) -> str:
    """QUESTION as typed, quoted or not (`scout ask How often are rates fetched`); `-` alone
    reads it from standard input."""
    if words == ("-",):
        return sys.stdin.read()
    return " ".join(words)


def provider_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--provider``, one of the registered providers."""
    from scout.providers import REGISTRY

    return click.option("--provider", type=click.Choice(list(REGISTRY)), default=None, help=what)


def json_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """The ``--json`` flag every command takes, with ``--config`` and ``--quiet`` accepted after
    the command as well as before it."""
    function = click.option(
        "--quiet",
        "-q",
        is_flag=True,
        expose_value=False,
        callback=_quiet,
        help=QUIET_HELP,
    )(function)
    function = click.option(
        "--config",
        type=click.Path(dir_okay=False),
        default=None,
        expose_value=False,
        is_eager=True,
        callback=_config_after,
        help=CONFIG_HELP,
    )(function)
    return click.option(
        "--json", "as_json", is_flag=True, help="Print exactly one JSON document on stdout."
    )(function)


def jsonable(value: Any) -> Any:
    """A result as plain JSON values: the one serialisation of typed records, at the edge. A record
    with a ``to_json`` method gives its own document; other dataclasses give their fields."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def _no_pager(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        runtime = ctx.find_object(Runtime)
        if runtime is not None:
            runtime.pager = False


def rows_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--nl`` (exposed as ``as_nl``) and ``--no-pager``, for every command that lists rows;
    apply it above :func:`json_option`."""
    function = click.option(
        "--no-pager",
        is_flag=True,
        expose_value=False,
        callback=_no_pager,
        help="Print a long list straight to the terminal instead of through $PAGER.",
    )(function)
    return click.option(
        "--nl", "as_nl", is_flag=True, help="Print JSON lines: one object per row, nothing else."
    )(function)


Human = Callable[[Any], "str | Styled"]


def emit(result: Any, as_json: bool, human: Human, *, paged: bool = False) -> None:
    """Print a command's result: JSON (one document) or the human rendering (through the pager
    when ``paged``, on a terminal, and taller than it).

    Either way nothing a terminal acts on gets through: results carry repository and model text,
    and this is the last point every command's output passes. A :class:`Styled` rendering is
    already safe (the table helper made each cell so), and keeps its colours.
    """
    if as_json:
        click.echo(
            json_safe(json.dumps(jsonable(result), indent=2, ensure_ascii=False, default=str))
        )
        return
    from scout.table import Styled

    rendered = human(result)
    text = rendered.text if isinstance(rendered, Styled) else printable_block(rendered)
    if not text:
        return
    if paged and _wants_pager():
        from scout.cli.pager import page

        if page(text + "\n"):
            return
    click.echo(text)


def _wants_pager() -> bool:
    ctx = click.get_current_context(silent=True)
    runtime = ctx.find_object(Runtime) if ctx is not None else None
    return runtime is None or runtime.pager


def emit_rows(
    rows: list[Any], as_json: bool, as_nl: bool, human: Human, *, document: Any = None
) -> None:
    """Print a list of rows: one JSON document (``document``, default the rows), JSON lines (one
    compact object per row), or the human table, paged as gh pages long lists."""
    if as_json and as_nl:
        raise UsageError("--json and --nl cannot be given together: choose one")
    if as_nl:
        for row in rows:
            click.echo(json_safe(json.dumps(jsonable(row), ensure_ascii=False, default=str)))
        return
    emit(rows if document is None else document, as_json, human, paged=True)
