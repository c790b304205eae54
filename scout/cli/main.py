"""Entry point: the ``scout`` group, its commands, and the one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from scout.cli.runtime import Runtime
from scout.errors import ScoutError, UsageError
from scout.safe_text import printable


class ScoutGroup(click.Group):
    """Maps ScoutError subclasses to their exit codes with a one-line message on stderr."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ScoutError as exc:
            click.echo(f"scout: {printable(str(exc), 2_000)}", err=True)
            ctx.exit(exc.exit_code)
        except click.exceptions.ClickException:
            raise
        except (click.exceptions.Exit, click.exceptions.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            if os.environ.get("SCOUT_DEBUG") or "pytest" in sys.modules:
                raise
            click.echo(f"scout: internal error: {exc.__class__.__name__}: {exc}", err=True)
            ctx.exit(1)
        finally:
            runtime = ctx.find_object(Runtime)
            if runtime is not None:
                runtime.close()


@click.group(cls=ScoutGroup)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (default: $SCOUT_CONFIG, else ./scout.toml).",
)
@click.version_option(package_name="scout")
@click.pass_context
def cli(ctx: click.Context, config_path: str | None) -> None:
    """Scout answers questions about a GitLab estate from its docs, with checked citations."""
    ctx.obj = Runtime(config_path)


def _register() -> None:
    from scout.cli import commands

    for command in commands.ALL:
        cli.add_command(command)


_register()


def main() -> None:
    # click's own usage errors exit 2, which is also UsageError's code.
    assert UsageError.exit_code == 2
    cli(prog_name="scout")
