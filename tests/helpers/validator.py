"""A signpost validator over a local estate, as the sweep builds one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scout.config import load_config
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.forge.local import LocalForge
from scout.providers import make_provider
from signposts.references import ExtractContext, extract_context
from signposts.validate import Validator
from tests.helpers.config import render_config


def local_validator(
    tmp_path: Path, builder: EstateBuilder, **docs: Any
) -> tuple[Validator, LocalForge, ExtractContext]:
    """A validator over a local estate with one docs site (``docs`` overrides its keys), its
    forge, and the extraction context of acme/handbook."""
    config_path = tmp_path / "scout.toml"
    site = {
        "url": "https://docs.acme.example/handbook/",
        "project": "acme/handbook",
        "root": "docs/",
        **docs,
    }
    config_path.write_text(render_config(builder.root, docs_site=[site]))
    config = load_config(config_path)
    forge = LocalForge(builder.root, ["acme"])
    rules = CorpusRules(("acme",), config.corpus)
    validator = Validator(forge, rules, make_provider("offline", model=""), config.docs_site)
    return validator, forge, extract_context(config, "acme/handbook")
