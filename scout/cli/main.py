"""Entry point: the ``scout`` group, its commands, and the one place errors become exit codes."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any

import click

from scout.cli import commands
from scout.cli.progress import log
from scout.cli.runtime import CONFIG_HELP, QUIET_HELP, Runtime
from scout.errors import ScoutError, UsageError
from scout.safe_text import configure_logging, reset_logging

# The shell's convention for a command ended by a signal (128 + its number): SIGINT 130,
# SIGTERM 143; exit 1 is reserved for bugs.
INTERRUPTED = 130
TERMINATED = 143


class Terminated(KeyboardInterrupt):
    """Raised by the SIGTERM handler: unwinds like Ctrl-C (so every path that keeps whole work
    on an interrupt keeps it on a SIGTERM too), then exits 143 instead of 130."""


def kill_children() -> None:
    """Kill the provider children that run in their own session (a Ctrl-C never reaches them)."""
    claude_local = sys.modules.get("scout.providers.claude_local")
    if claude_local is not None:
        claude_local.kill_children()


def _interrupt(signum: int, _frame: object) -> None:
    # Kill children before unwinding: a sweep's pool waits for its running judgements on the way
    # out, and they would otherwise run to their timeout.
    kill_children()
    raise Terminated if signum == signal.SIGTERM else KeyboardInterrupt


class ScoutGroup(click.Group):
    """Maps ScoutError subclasses to their exit codes with a one-line message on stderr, and
    imports a command's module only when that command is wanted (``scout.cli.commands``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        # Scout's own, then any added with cli.add_command (an embedding tool's).
        return [
            *commands.COMMANDS,
            *(n for n in super().list_commands(ctx) if n not in commands.COMMANDS),
        ]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return commands.load(cmd_name) or super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            # click suggests from the commands it holds, and Scout's load when wanted: "did you
            # mean" needs their names
            raise click.exceptions.NoSuchCommand(
                exc.command_name,
                possibilities=self.list_commands(ctx),
                ctx=ctx,
            ) from None

    def invoke(self, ctx: click.Context) -> Any:
        # signal handlers can only be set from the main thread (an embedding caller may not be)
        main = threading.current_thread() is threading.main_thread()
        signals = (signal.SIGINT, signal.SIGTERM)
        previous = {s: signal.signal(s, _interrupt) for s in signals} if main else {}
        configure_logging()  # before any command runs: its logs and warnings are escaped too
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            kill_children()
            runtime = ctx.find_object(Runtime)
            kept = runtime.on_interrupt if runtime is not None else ""
            what = "terminated" if isinstance(exc, Terminated) else "interrupted"
            log(f"scout: {what}{'; ' + kept if kept else ''}")
            ctx.exit(TERMINATED if isinstance(exc, Terminated) else INTERRUPTED)
        except ScoutError as exc:
            log(f"scout: {exc}")
            ctx.exit(exc.exit_code)
        except click.exceptions.ClickException:
            raise
        except (click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Exception as exc:
            if os.environ.get("SCOUT_DEBUG") or "pytest" in sys.modules:
                raise
            log(f"scout: internal error: {exc.__class__.__name__}: {exc}")
            ctx.exit(1)
        finally:
            reset_logging()
            for signum, handler in previous.items():
                signal.signal(signum, handler)
            runtime = ctx.find_object(Runtime)
            if runtime is not None:
                runtime.close()


@click.group(
    cls=ScoutGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
@click.option("--quiet", "-q", is_flag=True, help=QUIET_HELP)
@click.version_option(package_name="scout")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None, quiet: bool) -> None:
    """Scout answers questions about a GitLab estate from its docs, with checked citations."""
    ctx.obj = Runtime(config_path, quiet=quiet)
    if ctx.invoked_subcommand is None:
        # bare `scout` is a request for help, not a mistake (click's default exits 2)
        click.echo(ctx.get_help())
        ctx.exit(0)


def main() -> None:
    # click's own usage errors exit 2, which is also UsageError's code.
    assert UsageError.exit_code == 2
    cli(prog_name="scout")
