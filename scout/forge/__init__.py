"""Forges: where the estate's projects, files, history and issues come from.

``open_forge`` picks the implementation by ``forge.kind``; the GitLab one is imported only when
used, so commands that never talk to GitLab do not pay for python-gitlab's import.
"""

from __future__ import annotations

from scout.config import Config
from scout.errors import ConfigError
from scout.forge.base import Forge


def forge_token(config: Config) -> str | None:
    """The token the configured forge needs (None for the local forge); ConfigError naming the
    variable when a GitLab forge's is unset. ``scout worker`` asks at start, not at each cycle."""
    if config.forge.kind != "gitlab":
        return None
    token = config.token()
    if token is None:
        raise ConfigError(
            f"{config.source}: forge.token_env names ${config.forge.token_env}, which is not set: "
            "export it with a GitLab token that can read the groups"
        )
    return token


def open_forge(config: Config) -> Forge:
    forge = config.forge
    if forge.kind == "local":
        from scout.forge.local import LocalForge

        assert forge.path is not None
        return LocalForge(forge.path, forge.groups)
    if forge.kind == "gitlab":
        from scout.forge.gitlab import GitLabForge

        token = forge_token(config)
        assert token is not None
        if forge.api == "rest":
            return GitLabForge(forge.url, token, forge.groups)
        from scout.forge.gitlab_graphql import GitLabGraphQLForge

        return GitLabGraphQLForge(
            forge.url,
            token,
            forge.groups,
            api=forge.api,
            include_archived=config.corpus.include_archived,
        )
    raise ConfigError(f"{config.source}: forge.kind: unknown forge {forge.kind!r}")
