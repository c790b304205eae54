"""Translated copies of pages: told apart by path, left out unless their language is listed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from scout.config import load_config
from scout.corpus.index import index_estate
from scout.corpus.rules import CorpusRules
from scout.demo.builder import EstateBuilder
from scout.doc_paths import left_out, translation_language
from scout.errors import ConfigError
from scout.forge.local import LocalForge
from scout.store import Store

PATHS = {
    # GitLab's docs keep translations in doc-locale/<lang-region>/ (the Helm chart does).
    "doc-locale/ja-jp/installation/tls.md": "ja",
    "docs/ja/index.md": "ja",
    "docs/pt-BR/guide.md": "pt",
    "website/i18n/fr/docusaurus-plugin-content-docs/current/intro.md": "fr",
    "locales/zh_Hans/README.md": "zh",
    "content/en/functions/strings/Contains.md": "en",  # Hugo: the English content root
    "docs/page.ja.md": "ja",
    "README.zh-CN.md": "zh",
    # Not translations: folders and suffixes that only look like language codes.
    "docs/api/index.md": None,
    "docs/it/setup.md": None,  # `it` under docs is far more often "IT" than Italian
    "doc/id/tokens.md": None,
    "docs/types.ts.md": None,
    "docs/ja.md": None,
    "src/de/notes.md": "de",
    "charts/de/values.md": None,  # a folder named like a language, not under a docs folder
    "docs/setup.v2.md": None,
    "CHANGELOG.md": None,
}


@pytest.mark.parametrize(("path", "language"), PATHS.items(), ids=PATHS.keys())
def test_translation_language_from_the_path(path: str, language: str | None) -> None:
    assert translation_language(path) == language


@pytest.mark.parametrize(
    ("path", "languages", "dropped"),
    [
        ("doc-locale/ja-jp/a.md", ["en"], "ja"),
        ("doc-locale/ja-jp/a.md", ["en", "ja"], None),
        ("doc-locale/ja-jp/a.md", ["ja-jp"], None),
        ("docs/fr/a.md", ["en"], "fr"),
        ("content/en/a.md", ["en"], None),
        ("content/en/a.md", ["fr"], "en"),
        ("docs/a.md", ["fr"], None),  # an unmarked page is the estate's main language
    ],
)
def test_only_listed_languages_stay(path: str, languages: list[str], dropped: str | None) -> None:
    assert left_out(path, languages) == dropped


def _index(config_path: Path) -> tuple[dict[str, object], Store]:
    config = load_config(config_path)
    assert config.forge.path is not None
    forge = LocalForge(config.forge.path, config.forge.groups)
    store = Store.open(config.store.path, create=True)
    try:
        rules = CorpusRules(tuple(config.forge.groups), config.corpus)
        summary = index_estate(forge, store, rules)
    finally:
        forge.close()
    return summary.to_json(), store


@pytest.mark.parametrize(
    ("languages", "paths", "skipped"),
    [
        (None, ["doc/tls.md"], {"path_translation": 2}),
        (["en", "ja", "fr"], ["doc-locale/ja-jp/tls.md", "doc/tls.md", "docs/tls.fr.md"], {}),
        (["ja"], ["doc-locale/ja-jp/tls.md", "doc/tls.md"], {"path_translation": 1}),
    ],
)
def test_index_leaves_translations_out_and_counts_them(
    estate_builder: EstateBuilder,
    write_config: Callable[..., Path],
    languages: list[str] | None,
    paths: list[str],
    skipped: dict[str, int],
) -> None:
    repo = estate_builder.project("acme/charts")
    repo.commit(
        {
            "doc/tls.md": "# TLS\n\nUse cert-manager to issue certificates.\n",
            "doc-locale/ja-jp/tls.md": "# TLS {#tls}\n\ncert-managerで証明書を発行します。\n",
            "docs/tls.fr.md": "# TLS\n\nUtilisez cert-manager pour émettre les certificats.\n",
        },
        "docs and their translations",
    )
    estate_builder.write()
    corpus = {} if languages is None else {"corpus": {"languages": languages}}
    summary, store = _index(write_config(**corpus))
    assert summary["skipped"] == skipped
    assert sorted({p.path for p in store.passages()}) == sorted(paths)


@pytest.mark.parametrize("languages", ["[]", "['english']", "['e']"])
def test_bad_languages_are_config_errors(tmp_path: Path, languages: str) -> None:
    target = tmp_path / "scout.toml"
    target.write_text(
        "[forge]\nkind = 'gitlab'\nurl = 'https://g.example'\ngroups = ['acme']\n"
        f"[corpus]\nlanguages = {languages}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(target)
    assert "corpus.languages" in str(caught.value)
