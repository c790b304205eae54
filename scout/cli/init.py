"""``scout init``: write a working config for a GitLab instance or for local repositories."""

from __future__ import annotations

import shlex
from typing import get_args

import click

from scout.cli.runtime import Runtime, emit, json_option, pass_runtime
from scout.errors import UsageError


@click.command()
@click.option(
    "--repo",
    "repos",
    multiple=True,
    metavar="PATH",
    help="A local git repository or plain folder of documentation (repeatable).",
)
@click.option(
    "--gitlab", "url", metavar="URL", help="A GitLab instance, such as https://gitlab.com."
)
@click.option(
    "--group",
    "groups",
    multiple=True,
    metavar="PATH",
    help="With --gitlab: a group to read, subgroups included (repeatable). With --repo: the "
    "group the projects are put in (default: local).",
)
@click.option(
    "--token-env",
    default="GITLAB_TOKEN",
    show_default=True,
    metavar="NAME",
    help="With --gitlab: the variable holding the token (read_api scope).",
)
@click.option(
    "--estate",
    type=click.Path(file_okay=False),
    default=None,
    help="With --repo: the folder for estate.toml (default: scout-estate beside scout.toml).",
)
@click.option(
    "--provider",
    default=None,
    help="answer.provider to write (default: claude-local when `claude` is on PATH, else offline).",
)
@json_option
@pass_runtime
def init(
    runtime: Runtime,
    repos: tuple[str, ...],
    url: str | None,
    groups: tuple[str, ...],
    token_env: str,
    estate: str | None,
    provider: str | None,
    as_json: bool,
) -> None:
    """Write scout.toml (and the estate of local repositories) and print the next command.

    `scout init --repo PATH [--repo PATH]...` for git repositories or plain folders on this
    machine, any layout: docs folders and docs-site URLs are read from mkdocs.yml, conf.py,
    docusaurus.config.* and Hugo's config. `scout init --gitlab URL --group PATH` for a GitLab
    instance: the token (from $GITLAB_TOKEN, or --token-env) is checked with one request a
    group. Never overwrites a file.
    """
    from pathlib import Path

    from scout.config import ProviderName
    from scout.environment import invocation
    from scout.init import config_path, default_provider, init_gitlab, init_local

    if bool(repos) == bool(url):
        raise UsageError("give --repo PATH (local repositories or folders) or --gitlab URL")
    if url and not groups:
        raise UsageError("--gitlab needs --group PATH: the group (or groups) to read")
    if url and estate:
        raise UsageError("--estate is for --repo: a GitLab config has no estate folder")
    if repos and len(groups) > 1:
        raise UsageError("--repo takes one --group: the group its projects are put in")
    names = list(get_args(ProviderName))
    if provider is not None and provider not in names:
        raise UsageError(f"--provider {provider!r}: choose one of {', '.join(names)}")
    chosen = (provider, "chosen with --provider") if provider else default_provider()
    target = config_path(runtime.config_path)
    scout = invocation()
    explicit = runtime.config_path is not None
    next_command = (
        f"{scout} --config {shlex.quote(str(target))} index" if explicit else f"{scout} index"
    )
    if url:
        done = init_gitlab(
            target,
            url,
            list(groups),
            token_env=token_env,
            provider=chosen,
            next_command=next_command,
        )
    else:
        done = init_local(
            target,
            list(repos),
            estate=Path(estate) if estate else None,
            group=groups[0] if groups else "local",
            provider=chosen,
            next_command=next_command,
        )
    emit(done, as_json, render)


def render(done: object) -> str:
    from scout.init import Initialised

    assert isinstance(done, Initialised)
    if done.forge == "gitlab":
        lines = [
            f"Wrote {done.config}: GitLab at {done.url}, group(s) {', '.join(done.groups)} "
            "(the token can see them)."
        ]
    else:
        lines = [
            f"Wrote {done.config} and {done.estate}/estate.toml: "
            f"{len(done.projects)} project(s) on this machine."
        ]
        width = max(len(p.path) for p in done.projects)
        for project in done.projects:
            source = project.source
            read = f"git, branch {source.branch}" if source.kind == "repo" else "a plain folder"
            site = source.site
            if site is None:
                docs = f"docs in {source.docs or 'the top folder'}"
            else:
                docs = f"{site.generator} ({site.config}), docs in {site.root or '/'}"
                docs += f", site {site.url}" if site.url else ", no site URL"
            lines.append(
                f"  {project.path:<{width}}  {source.place}: {read}; {docs}; "
                f"{source.files} documentation file(s)"
            )
        lines += [f"  note: {note}" for note in done.notes]
    lines.append(f"answer.provider = {done.provider}: {done.provider_why}")
    lines.append(f"Next: {done.next}")
    return "\n".join(lines)
